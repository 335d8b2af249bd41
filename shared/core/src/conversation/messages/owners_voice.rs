//! The follow-up in the owner's voice: when the owner rewrote a task's first touch by hand,
//! its later touches are written to follow what they wrote (and wait for their review, see
//! `rails::step::owner_reviews_follow_ups`). Without a model, the follow-up refers back to
//! the owner's own message — its first question, else its subject — in the words of
//! `words/owners_voice.toml`, never the canned follow-up of the cadence.

use serde::Deserialize;

use crate::task::Draft;

/// The lines of `words/owners_voice.toml`, compiled in.
pub const OWNERS_VOICE_WORDS: &str = include_str!("../../../../../words/owners_voice.toml");

/// The most characters of the owner's question said back to the member.
const MAX_QUESTION_CHARS: usize = 160;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Lines {
    with_question: String,
    with_subject: String,
    plain: String,
}

fn lines() -> Result<Lines, String> {
    let lines: Lines = toml::from_str(OWNERS_VOICE_WORDS).map_err(|e| e.to_string())?;
    if !lines.with_question.contains("{question}") || !lines.with_subject.contains("{subject}") {
        return Err("with_question must hold {question} and with_subject {subject}".into());
    }
    Ok(lines)
}

/// The first question the owner asked in `body` (past its greeting), as they wrote it.
fn first_question(body: &str) -> Option<String> {
    body.lines()
        .skip(1)
        .flat_map(|line| line.split_inclusive(['.', '!', '?']))
        .map(str::trim)
        .find(|s| s.ends_with('?') && s.split_whitespace().count() >= 3 && s.chars().count() <= MAX_QUESTION_CHARS)
        .map(str::to_owned)
}

/// What the follow-up says to follow `owners` (the message the owner approved), between the
/// greeting and the sign-off.
pub fn follow_up(owners: Option<&Draft>) -> String {
    let Ok(lines) = lines() else {
        tracing::error!("words/owners_voice.toml does not parse; its plain line is used");
        return "I wanted to come back to my last message.".to_owned();
    };
    let Some(owners) = owners else {
        return lines.plain;
    };
    if let Some(question) = first_question(&owners.body) {
        return lines.with_question.replace("{question}", &question);
    }
    let subject = owners.subject.trim();
    if subject.is_empty() {
        lines.plain
    } else {
        lines.with_subject.replace("{subject}", subject)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_file_parses() {
        lines().expect("words/owners_voice.toml parses and holds its placeholders");
    }

    /// Alex's owner asked about his shoulder: the follow-up comes back to that question, not
    /// to "my last note".
    #[test]
    fn the_follow_up_refers_back_to_the_owners_own_question() {
        let owners = Draft {
            subject: "Your shoulder".into(),
            body: "Hi Alex,\n\nIs your shoulder still bugging you? We could do some mobility work on Tuesday.\n\nRosa".into(),
        };
        let said = follow_up(Some(&owners));
        assert!(said.contains("\"Is your shoulder still bugging you?\""), "{said}");
        assert!(!said.to_lowercase().contains("just following up"), "{said}");
        let no_question = Draft {
            subject: "Tuesday mobility".into(),
            body: "Hi Alex,\n\nWe are running mobility on Tuesday.\n\nRosa".into(),
        };
        assert!(follow_up(Some(&no_question)).contains("\"Tuesday mobility\""));
        assert!(!follow_up(None).is_empty());
    }
}

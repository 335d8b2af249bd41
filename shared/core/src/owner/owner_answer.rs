//! The owner's answer in words: a reply to an owner mail, read
//! for the decision it names. "yes", "send it" approve; "no", "skip" skip; "later", "tomorrow"
//! put it off a day; "done" says the owner took care of it; on an escalation any other words
//! are the owner's guidance. The words are data, `words/owner_answers.toml`; only the reply's
//! first line decides, whole, so "yes, but not before Monday" is never a yes. Pure.

use crate::owner::action_link::LinkAction;

/// The phrases of `words/owner_answers.toml`, compiled in.
pub const OWNER_ANSWER_WORDS: &str = include_str!("../../../../words/owner_answers.toml");

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerFile {
    approve: Vec<String>,
    skip: Vec<String>,
    snooze: Vec<String>,
    done: Vec<String>,
}

/// Each action with its phrases, normalized as replies are.
fn parse_answers(text: &str) -> Result<Vec<(LinkAction, Vec<String>)>, String> {
    let file: AnswerFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let lists = [
        (LinkAction::Approve, file.approve),
        (LinkAction::Skip, file.skip),
        (LinkAction::Snooze, file.snooze),
        (LinkAction::Done, file.done),
    ];
    let lists: Vec<(LinkAction, Vec<String>)> = lists
        .into_iter()
        .map(|(action, phrases)| (action, phrases.iter().map(|p| normalize(p)).collect()))
        .collect();
    let mut seen = std::collections::BTreeMap::new();
    for (action, phrases) in &lists {
        for phrase in phrases {
            if phrase.is_empty() {
                return Err(format!("an empty phrase under {}", action.as_str()));
            }
            if let Some(other) = seen.insert(phrase.clone(), *action)
                && other != *action
            {
                return Err(format!("\"{phrase}\" is under both {} and {}", other.as_str(), action.as_str()));
            }
        }
    }
    Ok(lists)
}

/// What is understood if the file were ever shipped broken (a test holds it parsing).
fn fallback() -> Vec<(LinkAction, Vec<String>)> {
    let words = |w: &[&str]| w.iter().map(|p| (*p).to_owned()).collect();
    vec![
        (LinkAction::Approve, words(&["yes", "ok", "send it"])),
        (LinkAction::Skip, words(&["no", "skip"])),
        (LinkAction::Snooze, words(&["later", "tomorrow"])),
        (LinkAction::Done, words(&["done"])),
    ]
}

static ANSWERS: std::sync::LazyLock<Vec<(LinkAction, Vec<String>)>> = std::sync::LazyLock::new(|| {
    parse_answers(OWNER_ANSWER_WORDS).unwrap_or_else(|e| {
        tracing::error!(error = %e, "words/owner_answers.toml does not parse; only the fallback words are understood");
        fallback()
    })
});

/// What a reply says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// One of the decisions, in so many words.
    Act(LinkAction),
    /// Anything else: the owner's own words (an escalation's guidance), the whole reply.
    Words(String),
    /// Nothing written above the quoted mail.
    Nothing,
}

/// The decision `reply` (the owner's new text, quotes removed) names.
pub fn read(reply: &str) -> Answer {
    let reply = reply.trim();
    let Some(first) = reply.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Answer::Nothing;
    };
    match action_of(&normalize(first)) {
        Some(action) => Answer::Act(action),
        None => Answer::Words(reply.to_owned()),
    }
}

fn action_of(line: &str) -> Option<LinkAction> {
    ANSWERS
        .iter()
        .find(|(_, phrases)| phrases.iter().any(|p| p == line))
        .map(|(action, _)| *action)
}

/// Which of several items a reply is about, by the member it names: `names[i]` are the ways
/// item `i`'s member is called (a first name, a full name). `Some((i, the rest of the line))`
/// when exactly one item's member is named on the reply's first line ("Sam: yes", "skip
/// Dana"); the rest is read as [`read`] reads a reply.
pub fn about_whom(reply: &str, names: &[Vec<String>]) -> Option<(usize, String)> {
    let first = normalize(reply.lines().map(str::trim).find(|l| !l.is_empty())?);
    let words: Vec<&str> = first.split(' ').collect();
    let mut found: Option<(usize, String)> = None;
    for (i, item_names) in names.iter().enumerate() {
        // The longest of its names that the line holds as whole words.
        let mut ways: Vec<String> = item_names.iter().map(|n| normalize(n)).filter(|n| !n.is_empty()).collect();
        ways.sort_by_key(|n| std::cmp::Reverse(n.len()));
        let Some(rest) = ways.iter().find_map(|name| name_removed(&words, name)) else {
            continue;
        };
        if found.as_ref().is_some_and(|(j, _)| *j != i) {
            // Two members named: not one item.
            return None;
        }
        found = Some((i, rest));
    }
    found
}

/// The reply `text` as the owner wrote it, without the member's name that [`about_whom`] found
/// (`rest`: its first line without the name, normalized): a leading "Sam:" or "Sam," is taken
/// off in the owner's own case and the rest kept whole (guidance keeps every line); a name
/// anywhere else leaves the first line as `rest`.
pub fn without_name(text: &str, names: &[String], rest: &str) -> String {
    let text = text.trim();
    let (first, more) = text.split_once('\n').unwrap_or((text, ""));
    for name in names {
        let name = name.trim().to_lowercase();
        let head: String = first.chars().take(name.chars().count()).collect();
        if head.to_lowercase() == name
            && let Some(c) = first[head.len()..].chars().next()
            && matches!(c, ':' | ',' | '-' | ' ')
        {
            let kept = first[head.len() + c.len_utf8()..].trim();
            return if more.trim().is_empty() {
                kept.to_owned()
            } else {
                format!("{kept}\n{more}")
            };
        }
    }
    if more.trim().is_empty() {
        rest.to_owned()
    } else {
        format!("{rest}\n{more}")
    }
}

/// `words` without the whole words of `name` (and a "to" or "for" before it): `None` if the
/// line does not hold it.
fn name_removed(words: &[&str], name: &str) -> Option<String> {
    let name: Vec<&str> = name.split(' ').collect();
    let at = words.windows(name.len()).position(|w| w == name.as_slice())?;
    let mut start = at;
    if start > 0 && matches!(words[start - 1], "to" | "for") {
        start -= 1;
    }
    let rest: Vec<&str> = words[..start].iter().chain(&words[at + name.len()..]).copied().collect();
    Some(normalize(&rest.join(" ")))
}

/// Lower case, straight apostrophes, single-spaced, without commas, colons, semicolons and
/// the punctuation at its ends (a lone emoji stays).
fn normalize(text: &str) -> String {
    let lower = text
        .to_lowercase()
        .replace(['\u{2019}', '\u{2018}'], "'")
        .replace([',', ':', ';'], " ");
    let spaced = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    match spaced.trim_matches(|c: char| c.is_ascii_punctuation() || c == ' ') {
        "" => spaced,
        trimmed => trimmed.to_owned(),
    }
}

/// The line of an owner mail saying it can be answered in words: for an item of its own (an
/// escalation takes guidance too), or for a mail of several items, by a member's name.
pub fn reply_hint(escalation: bool) -> String {
    if escalation {
        "Or reply to this mail: \"done\", \"skip\", \"tomorrow\", or what the agent should tell them, in your own words.\n".into()
    } else {
        "Or reply to this mail: \"yes\" to send it as drafted, \"skip\", or \"tomorrow\".\n".into()
    }
}

/// [`reply_hint`] for a mail of several items, its example naming `name` (a member it lists).
pub fn reply_hint_naming(name: Option<&str>) -> String {
    match name {
        Some(name) => format!(
            "\nOr reply to this mail with a member's name and your choice: \"{name}: yes\", \"{name}: skip\", \"{name}: tomorrow\".\n"
        ),
        None => "\nOr reply to this mail with a member's name and your choice (\"yes\", \"skip\", \"tomorrow\", \"done\").\n".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_words_parse_and_each_phrase_names_one_decision() {
        let lists = parse_answers(OWNER_ANSWER_WORDS).expect("words/owner_answers.toml parses");
        assert_eq!(lists.len(), 4);
        assert!(parse_answers("approve = [\"yes\"]\nskip = [\"Yes!\"]\nsnooze = []\ndone = []").is_err());
        assert!(parse_answers("approve = [\"\"]\nskip = []\nsnooze = []\ndone = []").is_err());
    }

    #[test]
    fn plain_words_decide_and_anything_more_is_the_owners_own() {
        for (reply, action) in [
            ("yes", LinkAction::Approve),
            ("Yes!", LinkAction::Approve),
            ("  OK, send it.\n\nSent from my iPhone", LinkAction::Approve),
            ("Send it", LinkAction::Approve),
            ("👍", LinkAction::Approve),
            ("No.", LinkAction::Skip),
            ("skip", LinkAction::Skip),
            ("Don’t send", LinkAction::Skip),
            ("tomorrow", LinkAction::Snooze),
            ("Later!", LinkAction::Snooze),
            ("Done", LinkAction::Done),
            ("I took care of it.", LinkAction::Done),
        ] {
            assert_eq!(read(reply), Answer::Act(action), "{reply:?}");
        }
        for reply in [
            "yes, but tell her about Saturday",
            "Tell her we can freeze her membership",
            "no idea, what do you think?",
            "send it tomorrow",
        ] {
            assert_eq!(read(reply), Answer::Words(reply.to_owned()), "{reply:?}");
        }
        assert_eq!(read("\n  \n"), Answer::Nothing);
    }

    #[test]
    fn a_reply_about_several_items_is_about_the_one_member_it_names() {
        let names = vec![
            vec!["Sam".to_owned(), "Sam Lee".to_owned()],
            vec!["Dana".to_owned(), "Dana Cruz".to_owned()],
            vec!["Samantha".to_owned()],
        ];
        assert_eq!(about_whom("Sam: yes", &names), Some((0, "yes".into())));
        assert_eq!(about_whom("skip Dana Cruz", &names), Some((1, "skip".into())));
        assert_eq!(about_whom("yes to Samantha!", &names), Some((2, "yes".into())));
        assert_eq!(about_whom("yes", &names), None, "no one named");
        assert_eq!(about_whom("yes Sam and Dana", &names), None, "two named");
        assert_eq!(about_whom("Samuel yes", &names), None, "a name is a whole word");
        let note = "Dana: Tell her kids over 12 are welcome.\nAnd the 9am is best.";
        let (i, rest) = about_whom(note, &names).expect("Dana");
        assert_eq!(
            without_name(note, &names[i], &rest),
            "Tell her kids over 12 are welcome.\nAnd the 9am is best.",
            "guidance keeps the owner's words and lines"
        );
        assert_eq!(without_name("yes to Sam", &names[0], "yes"), "yes");
    }
}

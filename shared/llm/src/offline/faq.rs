//! Questions the gym's own facts answer: the owner's memories of category `faq` ("Your first
//! class is free.") against a member's question, by the topics of `words/faq.toml`. The
//! offline agent answers only what a fact clearly answers — every asking sentence names a
//! topic, and one or two facts name the same — and never writes a price, a time or a policy
//! of its own: the answer is the owner's facts, as written.

use openloop_core::conversation::opt_out::{contains_phrase, normalize};

/// The topics of `words/faq.toml`, compiled in.
pub const FAQ_WORDS: &str = include_str!("../../../../words/faq.toml");

/// At most this many facts answer one question; more that could all be meant is not clear.
const MAX_FACTS: usize = 2;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FaqFile {
    topic: Vec<Topic>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Topic {
    #[allow(dead_code, reason = "the file names each topic for its reader")]
    name: String,
    asks: Vec<String>,
    facts: Vec<String>,
}

fn parse(text: &str) -> Result<Vec<Topic>, String> {
    let file: FaqFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut topics = file.topic;
    for topic in &mut topics {
        for phrase in topic.asks.iter_mut().chain(topic.facts.iter_mut()) {
            *phrase = normalize(phrase);
            if phrase.is_empty() {
                return Err(format!("topic {:?}: an empty phrase would match everything", topic.name));
            }
        }
    }
    Ok(topics)
}

/// Broken, the file answers nothing: every question goes to the owner (a test holds it parsing).
static TOPICS: std::sync::LazyLock<Vec<Topic>> = std::sync::LazyLock::new(|| {
    parse(FAQ_WORDS).unwrap_or_else(|e| {
        tracing::error!(error = %e, "words/faq.toml does not parse; no question is answered from the gym's facts");
        Vec::new()
    })
});

/// `phrase` in the normalized `text`: at word boundaries, or anywhere for one that starts with
/// a symbol ("$", "/month").
fn names(text: &str, phrase: &str) -> bool {
    if phrase.starts_with(|c: char| !c.is_alphanumeric()) {
        text.contains(phrase)
    } else {
        contains_phrase(text, phrase, false)
    }
}

/// The facts that answer `question` (its asking sentences), in the order given, or `None`
/// when any asking sentence is not clearly answered by one or two of them.
pub fn answer<'a>(question: &str, facts: &'a [String]) -> Option<Vec<&'a str>> {
    let facts: Vec<(&'a str, String)> = facts
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .map(|f| (f, normalize(f)))
        .collect();
    let sentences: Vec<String> = question
        .split_inclusive(['?', '.', '!', '\n'])
        .map(normalize)
        .filter(|s| s.chars().any(char::is_alphanumeric))
        .collect();
    if facts.is_empty() || sentences.is_empty() {
        return None;
    }
    let mut chosen: Vec<&'a str> = Vec::new();
    for sentence in &sentences {
        let topics: Vec<&Topic> = TOPICS.iter().filter(|t| t.asks.iter().any(|a| names(sentence, a))).collect();
        if topics.is_empty() {
            return None;
        }
        let answering: Vec<&'a str> = facts
            .iter()
            .filter(|(_, f)| topics.iter().any(|t| t.facts.iter().any(|c| names(f, c))))
            .map(|(original, _)| *original)
            .collect();
        if answering.is_empty() || answering.len() > MAX_FACTS {
            return None;
        }
        for fact in answering {
            if !chosen.contains(&fact) {
                chosen.push(fact);
            }
        }
    }
    Some(chosen)
}

/// The answer's words: the facts, each a sentence.
pub fn words(facts: &[&str]) -> String {
    facts
        .iter()
        .map(|f| {
            if f.ends_with(['.', '!', '?']) {
                (*f).to_owned()
            } else {
                format!("{f}.")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(list: &[&str]) -> Vec<String> {
        list.iter().map(|f| (*f).to_owned()).collect()
    }

    #[test]
    fn the_shipped_file_parses_with_every_topic_asking_and_answering() {
        let topics = parse(FAQ_WORDS).expect("words/faq.toml parses");
        assert!(topics.len() >= 8);
        assert!(topics.iter().all(|t| !t.asks.is_empty() && !t.facts.is_empty()));
        assert!(parse("[[topic]]\nname = \"x\"\nasks = [\" \"]\nfacts = [\"y\"]\n").is_err());
    }

    #[test]
    fn a_question_one_fact_answers_is_answered_with_that_fact() {
        let gym = facts(&[
            "Your first class is free",
            "Memberships are $149/month, or $20 a class.",
            "There is free parking behind the building.",
        ]);
        assert_eq!(answer("Is the first class free?", &gym), Some(vec!["Your first class is free"]));
        assert_eq!(
            answer("how much is it per month?", &gym),
            Some(vec!["Memberships are $149/month, or $20 a class."])
        );
        assert_eq!(
            answer("Where do I park?", &gym),
            Some(vec!["There is free parking behind the building."])
        );
        assert_eq!(
            answer("How much is it? And is there parking?", &gym),
            Some(vec![
                "Memberships are $149/month, or $20 a class.",
                "There is free parking behind the building."
            ])
        );
        assert_eq!(
            words(&["Your first class is free", "Parking is free."]),
            "Your first class is free. Parking is free."
        );
    }

    #[test]
    fn anything_not_clearly_answered_is_not_answered() {
        let gym = facts(&["Your first class is free.", "Memberships are $149 a month."]);
        // A booking, and a topic no fact covers.
        assert_eq!(answer("Can I come Thursday at 6pm? Is the first class free?", &gym), None);
        assert_eq!(answer("Do you have showers?", &gym), None);
        // "open" alone is not the opening hours.
        assert_eq!(answer("Is the class open to beginners?", &facts(&["We're open 6am to 8pm."])), None);
        // No facts, or three that could all be meant.
        assert_eq!(answer("How much is it?", &[]), None);
        let three = facts(&["Drop-in is $20.", "Ten classes cost $180.", "Memberships are $149 a month."]);
        assert_eq!(answer("How much is it?", &three), None);
    }
}

//! Legal threats and abuse in a member's reply (spec §17.1: "member is angry or threatening —
//! immediate escalate, flag as high-priority, no auto-retry"; §28.4: "lawsuit", "attorney",
//! "BBB" — critical, suppress the member, tell us). Read on every member reply before any AI,
//! beside the stop rule: such a reply is never answered by the agent. The member is
//! suppressed, the task goes to the owner at once with a critical notice, and the operator
//! hears of it.
//!
//! Phrases are matched on whole words of the member's own words (the quoted history is
//! already cut), lower-cased: "sue you" and "lawsuit", never a "Sue" signing off.

use crate::task::reason::Reason;

/// What kind of threat a reply makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threat {
    /// Legal action: a lawyer, a suit, a regulator, the Better Business Bureau.
    Legal,
    /// Abuse or a threat of harm.
    Abuse,
}

impl Threat {
    /// The escalation's reason.
    pub fn reason(self) -> Reason {
        match self {
            Threat::Legal => Reason::LegalThreat,
            Threat::Abuse => Reason::AbusiveReply,
        }
    }
}

/// Phrases that threaten legal action.
const LEGAL: &[&str] = &[
    "lawsuit",
    "law suit",
    "lawyer",
    "lawyers",
    "attorney",
    "attorneys",
    "solicitor",
    "solicitors",
    "legal action",
    "legal proceedings",
    "sue you",
    "sue your",
    "sue the gym",
    "sue this gym",
    "i will sue",
    "i'll sue",
    "ill sue",
    "going to sue",
    "gonna sue",
    "suing you",
    "suing the gym",
    "take you to court",
    "see you in court",
    "small claims",
    "class action",
    "cease and desist",
    "bbb",
    "better business bureau",
    "consumer protection",
    "trading standards",
    "attorney general",
    "report you to",
    "chargeback",
    // Spanish, French, German, Portuguese
    "abogado",
    "demandar",
    "demanda judicial",
    "avocat",
    "poursuite judiciaire",
    "porter plainte",
    "anwalt",
    "klage",
    "verklagen",
    "advogado",
    "processar",
];

/// Phrases that are abusive or threaten harm.
const ABUSE: &[&str] = &[
    "fuck you",
    "fuck off",
    "f*** you",
    "f off",
    "screw you",
    "go to hell",
    "piece of shit",
    "shut up",
    "kill you",
    "kill yourself",
    "hurt you",
    "i know where you live",
    "you'll regret",
    "you will regret",
    "watch your back",
    "burn your gym",
    "burn the gym",
];

/// Whether `words` (the member's own words, as read) threaten legal action or are abusive.
/// Legal comes first: a reply that is both is a legal matter.
pub fn read(words: &str) -> Option<Threat> {
    let text = normalise(words);
    if LEGAL.iter().any(|p| contains_phrase(&text, p)) {
        Some(Threat::Legal)
    } else if ABUSE.iter().any(|p| contains_phrase(&text, p)) {
        Some(Threat::Abuse)
    } else {
        None
    }
}

/// Lower case, curly apostrophes straightened, runs of whitespace as one space.
fn normalise(text: &str) -> String {
    text.to_lowercase()
        .replace(['\u{2019}', '\u{2018}'], "'")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `phrase` in `text` with a word boundary on each side.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '\'';
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_threats_are_read_in_many_wordings() {
        for reply in [
            "If you email me again I'll sue",
            "My lawyer will be in touch.",
            "I am reporting you to the BBB",
            "This is harassment, I'm contacting my attorney",
            "See you in court.",
            "I will take legal action against your gym",
            "Voy a llamar a mi abogado",
        ] {
            assert_eq!(read(reply), Some(Threat::Legal), "{reply}");
        }
    }

    #[test]
    fn abuse_is_read() {
        assert_eq!(read("Fuck off and leave me be"), Some(Threat::Abuse));
        assert_eq!(read("I know where you live"), Some(Threat::Abuse));
    }

    #[test]
    fn ordinary_replies_and_names_are_not_threats() {
        for reply in [
            "Thanks Sue, see you Monday!",
            "Sure, I'll come in this week",
            "My sister is a lawyerly type, ha", // not the word
            "I've been busy with court-side seats at the game",
            "Can you pause my membership?",
            "No thanks",
        ] {
            assert_eq!(read(reply), None, "{reply}");
        }
    }
}

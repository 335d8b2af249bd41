//! Why a member cancelled, read from the reason's words: the class (`moving`, `medical`,
//! `financial`, `schedule`, `dissatisfied`, `other`) decides what follows a cancellation — no
//! win-back for a member who moved away, nothing for a month to a member who is recovering and
//! then a care-first note, only the gym's own offers to a member who could not afford it — and
//! the owner sees it on the member (`GET /api/v1/members/{id}`'s `cancellation`).
//!
//! The words are data an owner or the team can edit: `words/cancellation.toml`, compiled in.

use std::sync::OnceLock;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::members::event::MemberStatus;
use crate::members::member::MemberFacts;

pub const CANCELLATION_WORDS: &str = include_str!("../../../../words/cancellation.toml");

/// What a cancellation reason says the member left for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CancellationClass {
    Moving,
    Medical,
    Financial,
    Schedule,
    Dissatisfied,
    Other,
}

impl CancellationClass {
    pub const ALL: [CancellationClass; 6] = [
        CancellationClass::Moving,
        CancellationClass::Medical,
        CancellationClass::Financial,
        CancellationClass::Schedule,
        CancellationClass::Dissatisfied,
        CancellationClass::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CancellationClass::Moving => "moving",
            CancellationClass::Medical => "medical",
            CancellationClass::Financial => "financial",
            CancellationClass::Schedule => "schedule",
            CancellationClass::Dissatisfied => "dissatisfied",
            CancellationClass::Other => "other",
        }
    }

    fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The class of a reason's words; `other` when none, or no reason, is given.
    pub fn of(reason: Option<&str>) -> Self {
        reason.map_or(CancellationClass::Other, |r| rules().read(r))
    }
}

/// A member's cancellation as the owner sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Cancellation {
    /// The reason as given, if one was.
    pub reason: Option<String>,
    pub class: CancellationClass,
    /// When the member last became cancelled.
    pub at: Timestamp,
}

impl Cancellation {
    /// The cancellation of a member who is cancelled now (none for one who came back).
    pub fn of(facts: &MemberFacts) -> Option<Self> {
        if facts.status != Some(MemberStatus::Cancelled) {
            return None;
        }
        Some(Self {
            reason: facts.cancellation_reason.clone(),
            class: CancellationClass::of(facts.cancellation_reason.as_deref()),
            at: facts.cancelled_at?,
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    class: Vec<ClassWords>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassWords {
    name: String,
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    phrases: Vec<String>,
}

/// The rules, in the order a reason is tried against them.
#[derive(Debug, Default)]
struct Rules {
    classes: Vec<(CancellationClass, ClassWords)>,
}

/// A reason's words: lower case, split on anything but letters, digits and apostrophes (a
/// typographic one read as `'`).
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('\u{2019}', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn word_matches(pattern: &str, word: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(stem) => word.starts_with(stem),
        None => word == pattern,
    }
}

impl ClassWords {
    fn matches(&self, said: &[String]) -> bool {
        self.words.iter().any(|p| said.iter().any(|w| word_matches(p, w)))
            || self.phrases.iter().any(|phrase| {
                let phrase = words(phrase);
                !phrase.is_empty() && said.windows(phrase.len()).any(|run| run == phrase.as_slice())
            })
    }
}

impl Rules {
    fn parse(text: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut classes = Vec::new();
        for words in file.class {
            let class = CancellationClass::named(&words.name)
                .filter(|c| *c != CancellationClass::Other)
                .ok_or_else(|| format!("unknown cancellation class {:?}", words.name))?;
            classes.push((class, words));
        }
        Ok(Self { classes })
    }

    fn read(&self, reason: &str) -> CancellationClass {
        let said = words(reason);
        self.classes
            .iter()
            .find(|(_, words)| words.matches(&said))
            .map_or(CancellationClass::Other, |(class, _)| *class)
    }
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        Rules::parse(CANCELLATION_WORDS).unwrap_or_else(|e| {
            tracing::error!(error = %e, "words/cancellation.toml does not parse; every reason reads as other");
            Rules::default()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_file_parses_and_names_every_class_but_other() {
        let rules = Rules::parse(CANCELLATION_WORDS).expect("words/cancellation.toml parses");
        for class in CancellationClass::ALL.into_iter().filter(|c| *c != CancellationClass::Other) {
            assert!(rules.classes.iter().any(|(c, _)| *c == class), "{class:?} has no words");
        }
    }

    #[test]
    fn a_reason_is_read_by_its_words() {
        let cases = [
            ("Moving to Portland for a new job", CancellationClass::Moving),
            ("We're relocating to Denver", CancellationClass::Moving),
            ("Knee surgery, doctor says no training for 3 months", CancellationClass::Medical),
            ("Pregnant! Back after the baby", CancellationClass::Medical),
            ("hurt my back", CancellationClass::Medical),
            ("Too expensive right now", CancellationClass::Financial),
            ("lost my job, can't afford it", CancellationClass::Financial),
            ("I'm broke until spring", CancellationClass::Financial),
            ("Work shifts changed, class times don't fit", CancellationClass::Schedule),
            ("too busy with the kids", CancellationClass::Schedule),
            ("Coaches were rude and the place is dirty", CancellationClass::Dissatisfied),
            ("Not seeing results", CancellationClass::Dissatisfied),
            ("no reason", CancellationClass::Other),
            ("", CancellationClass::Other),
        ];
        for (reason, class) in cases {
            assert_eq!(CancellationClass::of(Some(reason)), class, "{reason:?}");
        }
        assert_eq!(CancellationClass::of(None), CancellationClass::Other);
    }

    #[test]
    fn a_member_who_came_back_has_no_cancellation() {
        let at: Timestamp = "2026-11-01T09:00:00Z".parse().expect("time");
        let mut facts = MemberFacts::new(crate::kernel::ids::MemberId::parse("m_1").expect("id"));
        facts.status = Some(MemberStatus::Cancelled);
        facts.cancelled_at = Some(at);
        facts.cancellation_reason = Some("Moving to Portland for a new job".into());
        let cancellation = Cancellation::of(&facts).expect("cancelled");
        assert_eq!((cancellation.class, cancellation.at), (CancellationClass::Moving, at));
        facts.status = Some(MemberStatus::Active);
        assert_eq!(Cancellation::of(&facts), None);
    }
}

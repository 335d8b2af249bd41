//! The owner's edits: what the owner changed
//! in the agent's draft before approving it, told apart by kind — deterministically, from the
//! original and the sent text — so that consistent edits of one kind become a suggestion
//! (3 weak, 5 moderate, 8 strong). The kinds are account-private, like the texts they come from.

use serde::{Deserialize, Serialize};

use crate::task::Draft;

/// One kind of change an owner makes to a draft.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// The body lost at least a fifth of its length.
    Shortened,
    /// The body grew by at least a fifth.
    Lengthened,
    /// Exclamation marks taken out.
    RemovedExclamations,
    /// The subject rewritten.
    ChangedSubject,
    /// The first line (the greeting) rewritten.
    ChangedGreeting,
    /// The last line (the sign-off) rewritten.
    ChangedSignOff,
}

impl EditKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shortened => "shortened",
            Self::Lengthened => "lengthened",
            Self::RemovedExclamations => "removed_exclamations",
            Self::ChangedSubject => "changed_subject",
            Self::ChangedGreeting => "changed_greeting",
            Self::ChangedSignOff => "changed_sign_off",
        }
    }

    /// What the agent should remember when the owner keeps making this change.
    pub fn lesson(self) -> &'static str {
        match self {
            Self::Shortened => "The owner keeps shortening the agent's drafts: write shorter messages.",
            Self::Lengthened => "The owner keeps adding to the agent's drafts: messages may be fuller and more personal.",
            Self::RemovedExclamations => "The owner keeps removing exclamation marks: write in a calmer tone, without them.",
            Self::ChangedSubject => "The owner keeps rewriting the subject line: keep subjects plain and specific.",
            Self::ChangedGreeting => "The owner keeps rewriting the greeting: open the way the owner does in the business profile.",
            Self::ChangedSignOff => "The owner keeps rewriting the sign-off: sign off exactly as the business profile says.",
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default()
}

fn last_line(text: &str) -> &str {
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or_default()
}

/// The kinds of change from `original` to `sent` (none if they are the same).
pub fn classify(original: &Draft, sent: &Draft) -> Vec<EditKind> {
    let mut kinds = Vec::new();
    let (before, after) = (original.body.chars().count(), sent.body.chars().count());
    if after * 5 <= before * 4 {
        kinds.push(EditKind::Shortened);
    } else if after * 5 >= before * 6 && before > 0 {
        kinds.push(EditKind::Lengthened);
    }
    let bangs = |t: &str| t.matches('!').count();
    if bangs(&sent.body) < bangs(&original.body) {
        kinds.push(EditKind::RemovedExclamations);
    }
    if original.subject.trim() != sent.subject.trim() {
        kinds.push(EditKind::ChangedSubject);
    }
    let lines = |t: &str| t.lines().filter(|l| !l.trim().is_empty()).count();
    if lines(&original.body) > 1 && lines(&sent.body) > 1 {
        if first_line(&original.body) != first_line(&sent.body) {
            kinds.push(EditKind::ChangedGreeting);
        }
        if last_line(&original.body) != last_line(&sent.body) {
            kinds.push(EditKind::ChangedSignOff);
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(subject: &str, body: &str) -> Draft {
        Draft {
            subject: subject.into(),
            body: body.into(),
        }
    }

    #[test]
    fn an_edit_is_told_apart_by_kind() {
        let original = draft(
            "We miss you!",
            "Hey Sam!\nIt has been a while since we saw you at the 6am class, and the whole crew keeps asking!\nCheers, the team",
        );
        let sent = draft("We miss you!", "Hi Sam,\nSee you at 6am?\nCoach Mike");
        assert_eq!(
            classify(&original, &sent),
            [
                EditKind::Shortened,
                EditKind::RemovedExclamations,
                EditKind::ChangedGreeting,
                EditKind::ChangedSignOff
            ]
        );
        assert!(classify(&original, &original).is_empty());
        assert_eq!(
            classify(&original, &draft("A question", &original.body)),
            [EditKind::ChangedSubject]
        );
    }
}

//! Suggestions the owner decides on:
//! what an evaluation found — a fact to remember, an instruction for the agent, a calibration —
//! with the evidence it rests on, never applied until the owner accepts it (and every applied
//! change can be undone). A suggestion is made once per account and [`fingerprint`]: the same
//! finding from a later run is not suggested again, whatever the owner did with the first.
//!
//! [`fingerprint`]: Suggestion::fingerprint

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::AccountId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SuggestionKind {
    Memory,
    Skill,
    Rubric,
    Prompt,
    Calibration,
    /// A task type the owner approves as drafted, offered for `autopilot_types`.
    Autopilot,
}

/// How much evidence there is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    Weak,
    Moderate,
    Strong,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SuggestionStatus {
    Pending,
    Applied,
    Dismissed,
}

impl SuggestionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Applied => "applied",
            Self::Dismissed => "dismissed",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Pending, Self::Applied, Self::Dismissed]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// What accepting the suggestion changes, structured enough to apply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProposedChange {
    /// A business memory (source `evaluator` or `owner_edit`).
    Memory {
        content: String,
        #[serde(default)]
        category: Option<String>,
    },
    /// An instruction added to the owner's additions for `agent` (`*` for all) and
    /// `task_type` (none for all of the agent's types).
    Prompt {
        agent: String,
        #[serde(default)]
        task_type: Option<String>,
        instruction: String,
    },
    /// Guidance for handling `task_type`'s situations, joined to its skill for this account.
    Skill { task_type: String, guidance: String },
    /// Criteria a good result of `task_type` meets, joined to how it is judged.
    Rubric { task_type: String, criteria: Vec<String> },
    /// One of the account's thresholds set to `value` (within its safe bounds).
    Calibration {
        threshold: crate::owner::calibration::Threshold,
        value: u16,
    },
    /// `task_type` added to the account's `autopilot_types`.
    Autopilot { task_type: String },
}

/// What accepting changed, kept so it can be undone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AppliedChange {
    Memory {
        memory_id: ulid::Ulid,
    },
    Prompt {
        agent: String,
        #[serde(default)]
        task_type: Option<String>,
        instruction: String,
    },
    /// A skill or rubric stored for the account under the suggestion's id: undo removes it.
    Learned {
        suggestion_id: ulid::Ulid,
    },
    /// The threshold was `before` and is `after`: undo sets `before` again.
    Calibration {
        threshold: crate::owner::calibration::Threshold,
        before: u16,
        after: u16,
    },
    /// `task_type` went on autopilot: undo takes it off.
    Autopilot {
        task_type: String,
    },
}

/// How many approvals of a type in a row, none edited, make the autopilot suggestion.
pub const AUTOPILOT_APPROVALS: u32 = 5;

/// The suggestion to put `task_type` (its label `label`) on autopilot, after `approvals`
/// unedited approvals in a row: made once per account and type.
pub fn autopilot(task_type: &str, label: &str, approvals: u32) -> SuggestionDraft {
    SuggestionDraft {
        kind: SuggestionKind::Autopilot,
        title: format!("Send {label} messages without waiting for you?"),
        body: format!(
            "You approved the last {approvals} {label} messages as drafted, without an edit. On autopilot its drafts go out \
             without your review, even where the member's value or tenure alone would have asked for it; a member's question, \
             a complaint, a threat and a payment still wait for you, and the ramp and the daily caps still apply. You can undo it \
             at any time."
        ),
        evidence: serde_json::json!({"approvals_without_an_edit": approvals}),
        strength: Strength::Moderate,
        confidence: 80,
        fingerprint: format!("autopilot:{task_type}"),
        change: ProposedChange::Autopilot {
            task_type: task_type.to_owned(),
        },
    }
}

/// What an evaluator proposes; the engine makes it a [`Suggestion`].
#[derive(Clone, Debug, PartialEq)]
pub struct SuggestionDraft {
    pub kind: SuggestionKind,
    pub title: String,
    pub body: String,
    /// Counts and rates, as the owner reads them.
    pub evidence: serde_json::Value,
    pub strength: Strength,
    /// 0–100.
    pub confidence: u8,
    /// The finding's identity: the same finding has the same fingerprint in every run.
    pub fingerprint: String,
    pub change: ProposedChange,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    /// Stored as `suggestion_kind` (the store's items name their entity in `kind`).
    #[serde(rename = "suggestion_kind")]
    pub kind: SuggestionKind,
    pub title: String,
    pub body: String,
    pub evidence: serde_json::Value,
    pub strength: Strength,
    pub confidence: u8,
    pub status: SuggestionStatus,
    pub created_at: Timestamp,
    pub fingerprint: String,
    /// `post_task`, `weekly_batch` or `edit_analysis`.
    pub source: String,
    pub change: ProposedChange,
    /// Hidden from the pending list until then (`remind`: back in 7 days).
    #[serde(default)]
    pub remind_at: Option<Timestamp>,
    #[serde(default)]
    pub decided_at: Option<Timestamp>,
    #[serde(default)]
    pub applied: Option<AppliedChange>,
    /// The applied change was undone by the owner.
    #[serde(default)]
    pub undone_at: Option<Timestamp>,
    /// Applied without review (the trust gradient), so listed in the weekly notice.
    #[serde(default)]
    pub auto_applied: bool,
    pub version: u64,
}

impl Suggestion {
    pub fn new(account_id: AccountId, draft: SuggestionDraft, source: &str, id: ulid::Ulid, now: Timestamp) -> Self {
        Self {
            id,
            account_id,
            kind: draft.kind,
            title: draft.title,
            body: draft.body,
            evidence: draft.evidence,
            strength: draft.strength,
            confidence: draft.confidence.min(100),
            status: SuggestionStatus::Pending,
            created_at: now,
            fingerprint: draft.fingerprint,
            source: source.to_owned(),
            change: draft.change,
            remind_at: None,
            decided_at: None,
            applied: None,
            undone_at: None,
            auto_applied: false,
            version: 1,
        }
    }

    /// Saved without review: a strong memory suggestion of at
    /// least [`crate::kernel::limits::AUTO_SAVE_MIN_CONFIDENCE`], for an owner who opted in
    /// (`opted_in`) on an account at least [`crate::kernel::limits::AUTO_SAVE_AFTER_DAYS`] old.
    pub fn saves_itself(&self, opted_in: bool, account_created: Timestamp, now: Timestamp) -> bool {
        let old_enough = now.duration_since(account_created).as_hours() >= 24 * crate::kernel::limits::AUTO_SAVE_AFTER_DAYS;
        opted_in
            && old_enough
            && self.kind == SuggestionKind::Memory
            && self.strength == Strength::Strong
            && self.confidence >= crate::kernel::limits::AUTO_SAVE_MIN_CONFIDENCE
    }

    /// Shown in the pending list at `now` (not snoozed).
    pub fn is_due(&self, now: Timestamp) -> bool {
        self.status == SuggestionStatus::Pending && self.remind_at.is_none_or(|at| at <= now)
    }
}

/// The instruction `text` appended to `additions` (kept once).
pub fn add_instruction(additions: Option<&str>, text: &str) -> String {
    match additions.map(str::trim).filter(|a| !a.is_empty()) {
        Some(current) if current.lines().any(|l| l.trim() == text.trim()) => current.to_owned(),
        Some(current) => format!("{current}\n{}", text.trim()),
        None => text.trim().to_owned(),
    }
}

/// `additions` without the instruction `text` (`None` when nothing is left).
pub fn remove_instruction(additions: Option<&str>, text: &str) -> Option<String> {
    let kept: Vec<&str> = additions.unwrap_or_default().lines().filter(|l| l.trim() != text.trim()).collect();
    let joined = kept.join("\n");
    (!joined.trim().is_empty()).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_is_added_once_and_removed_without_touching_the_owners_own() {
        let owner = "Sign off as Coach Mike.";
        let added = add_instruction(Some(owner), "Send in the evening.");
        assert_eq!(added, "Sign off as Coach Mike.\nSend in the evening.");
        assert_eq!(add_instruction(Some(&added), "Send in the evening."), added);
        assert_eq!(remove_instruction(Some(&added), "Send in the evening.").as_deref(), Some(owner));
        assert_eq!(remove_instruction(Some("Send in the evening."), "Send in the evening."), None);
    }
}

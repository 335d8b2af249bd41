//! The owner's word on a task: a thumbs up or down, with an
//! optional comment, on a closed or escalated task; and the correction of a closed task's
//! outcome. Both are logged (so the daily metrics count them and learning reads them);
//! the correction also re-values the task, and attribution stops watching it — the owner's
//! word settles it. Pure: `engine/business/feedback.rs` reads and commits.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::task::attribution;
use crate::task::reason::Reason;
use crate::task::task_type::TaskTypeDef;
use crate::task::transition::Why;
use crate::task::{Task, TaskStatus};

/// The longest comment or note kept.
pub const COMMENT_MAX_CHARS: usize = 2_000;

crate::kernel::bounded::bounded_text! {
    /// The owner's comment, note or reason (kept trimmed; empty is none).
    pub Comment = crate::kernel::bounded::TextRule::text(COMMENT_MAX_CHARS, "invalid_comment");
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    pub fn reason(self) -> Reason {
        match self {
            Rating::Up => Reason::OwnerFeedbackUp,
            Rating::Down => Reason::OwnerFeedbackDown,
        }
    }
}

/// Why a thumbs-down: kept on the task and in its
/// learning record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FeedbackReason {
    NeverCameBack,
    WouldHaveAnyway,
    WrongMember,
    WrongTone,
    WrongTiming,
    Other,
}

impl FeedbackReason {
    pub const ALL: [FeedbackReason; 6] = [
        FeedbackReason::NeverCameBack,
        FeedbackReason::WouldHaveAnyway,
        FeedbackReason::WrongMember,
        FeedbackReason::WrongTone,
        FeedbackReason::WrongTiming,
        FeedbackReason::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackReason::NeverCameBack => "never_came_back",
            FeedbackReason::WouldHaveAnyway => "would_have_anyway",
            FeedbackReason::WrongMember => "wrong_member",
            FeedbackReason::WrongTone => "wrong_tone",
            FeedbackReason::WrongTiming => "wrong_timing",
            FeedbackReason::Other => "other",
        }
    }

    /// As the owner reads it.
    pub fn label(self) -> &'static str {
        match self {
            FeedbackReason::NeverCameBack => "Never came back",
            FeedbackReason::WouldHaveAnyway => "Would have come back anyway",
            FeedbackReason::WrongMember => "Wrong member",
            FeedbackReason::WrongTone => "Wrong tone",
            FeedbackReason::WrongTiming => "Wrong timing",
            FeedbackReason::Other => "Other",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// The owner's latest rating of a task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerFeedback {
    pub rating: Rating,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Why, for a thumbs-down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<FeedbackReason>,
    pub at: Timestamp,
}

/// A reason goes with a thumbs-down only.
pub fn check_reason(rating: Rating, reason: Option<FeedbackReason>) -> Result<(), InvalidInput> {
    if rating == Rating::Up && reason.is_some() {
        return Err(InvalidInput::new(
            "invalid_reason",
            "a reason goes with a thumbs-down (rating \"down\")",
        ));
    }
    Ok(())
}

/// Whether the owner may rate a task in `status`: once it is closed or escalated (§28.5).
pub fn may_rate(status: TaskStatus) -> bool {
    status.is_terminal() || status == TaskStatus::Escalated
}

/// An owner's comment, checked: trimmed, at most [`COMMENT_MAX_CHARS`]; empty is none.
pub fn comment(text: Option<&str>) -> Result<Option<String>, InvalidInput> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > COMMENT_MAX_CHARS {
        return Err(InvalidInput::new(
            "invalid_comment",
            format!("the comment is at most {COMMENT_MAX_CHARS} characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

/// The task rated, and why for its log (the status stays).
pub fn rate(task: &Task, rating: Rating, comment: Option<String>, reason: Option<FeedbackReason>, now: Timestamp) -> (Task, Why) {
    let mut next = task.clone();
    let mut detail = format!("outcome {}", task.outcome.as_deref().unwrap_or("none"));
    if let Some(r) = reason {
        detail = format!("{detail} ({})", r.as_str());
    }
    if let Some(c) = &comment {
        detail = format!("{detail}: {c}");
    }
    next.feedback = Some(OwnerFeedback {
        rating,
        comment,
        reason,
        at: now,
    });
    (next, Why::new(rating.reason()).detail(detail))
}

/// A closed task's outcome as the owner says it is: one of its type's outcomes,
/// valued at the member's price ([`attribution::Price`]); no longer provisional, and attribution stops watching it.
/// The status stays: the outcome changes, not the lifecycle.
pub fn correct(
    task: &Task,
    def: &TaskTypeDef,
    outcome: &str,
    note: Option<&str>,
    price: attribution::Price,
) -> Result<(Task, Why), InvalidInput> {
    if def.outcome(outcome).is_none() {
        let codes: Vec<&str> = def.goal.outcomes.iter().map(|o| o.code).collect();
        return Err(InvalidInput::new(
            "invalid_outcome",
            format!("outcome {outcome:?} is not one of {} outcomes: {}", def.key, codes.join(", ")),
        ));
    }
    let mut next = task.clone();
    let from = task.outcome.as_deref().unwrap_or("none");
    next.outcome = Some(outcome.to_owned());
    next.attributed_value = attribution::value_of(def, outcome, price.monthly);
    next.value_source = next.attributed_value.map(|_| price.source);
    next.provisional = false;
    next.attribution_until = None;
    let mut detail = format!(
        "{from} → {outcome}; attributed {}",
        next.attributed_value.map_or("nothing".to_owned(), |v| format!("{v:.2}"))
    );
    if let Some(note) = note {
        detail = format!("{detail}: {note}");
    }
    Ok((next, Why::new(Reason::OwnerCorrectedOutcome).detail(detail)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::attribution::{Price, ValueSource};

    const AVERAGE: Price = Price {
        monthly: 150.0,
        source: ValueSource::Average,
    };
    use crate::task::task_type::definition;
    use crate::testing::{at, sample_task};

    #[test]
    fn only_closed_or_escalated_tasks_are_rated() {
        let rated: Vec<TaskStatus> = TaskStatus::ALL.into_iter().filter(|s| may_rate(*s)).collect();
        assert_eq!(rated, [TaskStatus::Completed, TaskStatus::Escalated, TaskStatus::Cancelled]);
    }

    #[test]
    fn comments_are_trimmed_and_bounded() {
        assert_eq!(comment(Some("  good call ")), Ok(Some("good call".into())));
        assert_eq!(comment(Some("   ")), Ok(None));
        assert_eq!(comment(None), Ok(None));
        assert!(comment(Some(&"x".repeat(COMMENT_MAX_CHARS + 1))).is_err());
    }

    #[test]
    fn a_correction_revalues_and_settles_the_task() {
        let mut task = sample_task(TaskStatus::Completed);
        task.task_type = "churn_risk".into();
        task.outcome = Some("verbal_commitment".into());
        task.provisional = true;
        task.attribution_until = Some(at("2026-11-20T00:00:00Z"));
        let churn = definition("churn_risk");
        let (next, why) = correct(&task, churn, "retained", Some("she came in"), AVERAGE).expect("valid");
        assert_eq!(next.outcome.as_deref(), Some("retained"));
        assert_eq!(next.attributed_value, attribution::value_of(churn, "retained", 150.0));
        assert!(next.attributed_value.is_some());
        assert!(!next.provisional);
        assert_eq!(next.attribution_until, None);
        assert_eq!(next.status, TaskStatus::Completed);
        assert_eq!(why.reason, Reason::OwnerCorrectedOutcome);
        assert!(
            why.detail
                .as_deref()
                .unwrap_or_default()
                .starts_with("verbal_commitment → retained")
        );
        let (none, _) = correct(&task, churn, "unresponsive", None, AVERAGE).expect("valid");
        assert_eq!(none.attributed_value, None, "an outcome that credits nothing zeroes the value");
        assert_eq!(
            correct(&task, churn, "paid", None, AVERAGE)
                .map(|_| ())
                .expect_err("not a churn outcome")
                .code,
            "invalid_outcome"
        );
    }
}

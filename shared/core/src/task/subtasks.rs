//! Subtasks: a parent task holds a goal, its subtasks the steps toward it, and
//! the parent's state is derived from theirs. Only required subtasks can block or escalate
//! the parent; optional ones that fail are noted, best-effort ones ignored.

use serde::{Deserialize, Serialize};

use crate::kernel::ids::TaskId;
use crate::task::TaskStatus;

/// How a subtask's result bears on its parent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    /// The parent cannot complete without it; its failure escalates the parent.
    #[default]
    Required,
    /// The parent can complete without it; its failure is noted.
    Optional,
    /// Nice to have; its failure is ignored.
    BestEffort,
}

/// A parent's record of one of its subtasks: listed before the subtask exists, so the
/// subtask limits are exact under concurrency, and with its message budget, so the parent's
/// ceiling holds by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubtaskRef {
    pub id: TaskId,
    pub requirement: Requirement,
    pub messages_max: u32,
}

/// The parent's state as its subtasks make it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derived {
    /// A required subtask is with the owner: so is the parent.
    Escalated,
    /// A subtask is ready or running.
    Executing,
    /// A required or optional subtask waits (for a reply, a follow-up, a signal).
    Waiting,
    /// A subtask waits for the owner's review.
    PendingReview,
    /// Every subtask is done one way or another: was the parent's goal met?
    NeedsEvaluation,
}

/// Derive the parent's state from `(requirement, status)` of each subtask.
pub fn derive(subtasks: &[(Requirement, TaskStatus)]) -> Derived {
    use TaskStatus::*;
    if subtasks.iter().any(|(r, s)| *r == Requirement::Required && *s == Escalated) {
        return Derived::Escalated;
    }
    if subtasks.iter().any(|(_, s)| matches!(s, Executing | Ready)) {
        return Derived::Executing;
    }
    if subtasks
        .iter()
        .any(|(r, s)| *r != Requirement::BestEffort && matches!(s, Waiting | Dormant))
    {
        return Derived::Waiting;
    }
    if subtasks.iter().any(|(_, s)| *s == PendingReview) {
        return Derived::PendingReview;
    }
    // An escalated optional or best-effort subtask counts as given up for the parent; a
    // waiting best-effort one is not waited for.
    let settled = subtasks
        .iter()
        .all(|(r, s)| s.is_terminal() || (*r != Requirement::Required && matches!(s, Escalated | Waiting | Dormant)));
    if settled { Derived::NeedsEvaluation } else { Derived::Executing }
}

/// A subtask's status as its parent counts it: one the owner closed before it ever ran (the
/// owner resolving a task still in review or ready closes it as cancelled, since it never
/// started) counts as completed when the owner gave it a positive outcome — the owner did it.
pub fn counted_status(task: &crate::task::Task) -> TaskStatus {
    let positive = task
        .outcome
        .as_deref()
        .and_then(|code| crate::task::task_type::definition(&task.task_type).outcome(code))
        .is_some_and(|o| o.kind == crate::task::task_type::OutcomeKind::Positive);
    if task.status == TaskStatus::Cancelled && positive {
        TaskStatus::Completed
    } else {
        task.status
    }
}

/// The verdict on a parent whose subtasks are all settled: met when every required subtask
/// completed (and, if none is required, when at least one subtask completed).
pub fn goal_met(subtasks: &[(Requirement, TaskStatus)]) -> bool {
    let required: Vec<_> = subtasks.iter().filter(|(r, _)| *r == Requirement::Required).collect();
    if required.is_empty() {
        subtasks.iter().any(|(_, s)| *s == TaskStatus::Completed)
    } else {
        required.iter().all(|(_, s)| *s == TaskStatus::Completed)
    }
}

#[cfg(test)]
mod tests {
    use super::Requirement::{BestEffort, Optional, Required};
    use super::*;
    use TaskStatus::*;

    #[test]
    fn a_required_escalation_escalates_the_parent_and_an_optional_one_does_not() {
        assert_eq!(derive(&[(Required, Escalated), (Optional, Ready)]), Derived::Escalated);
        assert_eq!(derive(&[(Optional, Escalated), (Required, Completed)]), Derived::NeedsEvaluation);
        assert_eq!(derive(&[(BestEffort, Escalated), (Required, Waiting)]), Derived::Waiting);
    }

    #[test]
    fn running_beats_waiting_beats_review() {
        assert_eq!(derive(&[(Required, Waiting), (BestEffort, Executing)]), Derived::Executing);
        assert_eq!(derive(&[(Optional, Waiting), (Required, PendingReview)]), Derived::Waiting);
        assert_eq!(derive(&[(Required, Completed), (Required, PendingReview)]), Derived::PendingReview);
    }

    #[test]
    fn a_waiting_best_effort_subtask_is_not_waited_for() {
        assert_eq!(derive(&[(BestEffort, Waiting), (Required, Completed)]), Derived::NeedsEvaluation);
    }

    #[test]
    fn a_subtask_the_owner_resolved_before_it_ran_counts_by_its_outcome() {
        let mut handled = crate::testing::sample_task(PendingReview);
        handled.status = Cancelled;
        handled.outcome = Some("owner_handled".into());
        assert_eq!(counted_status(&handled), Completed);
        handled.outcome = Some("skipped".into());
        assert_eq!(counted_status(&handled), Cancelled, "a skipped task was not done");
        handled.outcome = None;
        assert_eq!(counted_status(&handled), Cancelled);
    }

    #[test]
    fn the_goal_is_met_when_every_required_subtask_completed() {
        let done = [(Required, Completed), (Optional, Cancelled), (BestEffort, Escalated)];
        assert_eq!(derive(&done), Derived::NeedsEvaluation);
        assert!(goal_met(&done));
        let failed = [(Required, Cancelled), (Optional, Completed)];
        assert_eq!(derive(&failed), Derived::NeedsEvaluation);
        assert!(!goal_met(&failed));
        assert!(goal_met(&[(Optional, Completed), (Optional, Cancelled)]));
        assert!(!goal_met(&[(Optional, Cancelled)]));
    }
}

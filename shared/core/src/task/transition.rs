//! The one function that changes a task's status.
//!
//! It validates the move against the table in [`TaskStatus::can_move_to`], bumps `version`
//! (the store writes the result only if nobody else bumped it first) and returns the decision
//! log entry that explains the change; the store commits both in one transaction. Decisions
//! that keep the status (a deferral, a rescheduled check) go through [`record`], which bumps
//! the version and logs the same way. Every entry names a [`Reason`]; the log keeps its code.

use jiff::Timestamp;

use crate::kernel::ids::new_ulid;
use crate::task::error::EngineError;
use crate::task::reason::GateReason;
use crate::task::reason::Reason;
use crate::task::{LogEntry, Task, TaskStatus};

/// Why a task changes: the [`Reason`], an optional human detail, and for closing moves the
/// outcome code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub reason: Reason,
    pub detail: Option<String>,
    pub outcome: Option<String>,
    /// Closing on words, not on a signal: the outcome is provisional.
    pub provisional: bool,
}

impl Why {
    pub fn new(reason: Reason) -> Self {
        Self {
            reason,
            detail: None,
            outcome: None,
            provisional: false,
        }
    }
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
    pub fn outcome(mut self, outcome: impl Into<String>) -> Self {
        self.outcome = Some(outcome.into());
        self
    }
    /// Mark a closing outcome provisional: attribution verifies it by the goal's signal.
    pub fn provisional(mut self) -> Self {
        self.provisional = true;
        self
    }
}

/// Move `task` to `to`, or refuse with [`EngineError::InvalidTransition`].
pub fn transition(task: &Task, to: TaskStatus, now: Timestamp, why: Why) -> Result<(Task, LogEntry), EngineError> {
    let from = task.status;
    if !from.can_move_to(to) {
        return Err(EngineError::InvalidTransition { from, to });
    }
    // A held-out member's task is only watched, whatever path reaches it (a reopen, the
    // owner's guidance, run-now): it never moves to a status that sends.
    if task.is_held_out() && !matches!(to, TaskStatus::HeldOut | TaskStatus::Completed | TaskStatus::Cancelled) {
        return Err(EngineError::InvalidTransition { from, to });
    }
    let mut next = task.clone();
    next.status = to;
    if to.is_terminal() {
        next.resolved_at = Some(now);
        next.next_action_at = None;
        next.outcome = why.outcome.clone().or(next.outcome);
        next.outcome_reason = Some(why.reason.to_string());
        next.provisional = why.provisional && to == TaskStatus::Completed;
        // A close on the goal is when the goal showed, unless its caller knows the signal's
        // own time (`Engine::complete_on_goal`).
        if next.goal_at.is_none() && !next.provisional && crate::task::holdout::succeeded(&next.task_type, next.outcome.as_deref()) {
            next.goal_at = Some(now);
        }
        next.attribution_until = crate::task::attribution::watch_until(&next);
    }
    if to == TaskStatus::PendingReview && from != TaskStatus::PendingReview {
        next.review_since = Some(now);
    }
    if from == TaskStatus::Escalated {
        // The escalation timer's schedule ends with the escalation; whoever takes the task
        // on schedules its next step.
        next.next_action_at = None;
    }
    if to == TaskStatus::Escalated {
        // The escalation timer (spec §17.5): remind the owner, later give up.
        next.next_action_at = Some(now + crate::kernel::limits::ESCALATION_REMINDER_AFTER);
        next.outcome_reason = Some(why.reason.to_string());
        // Whatever escalated it, the task says why in words (`task/escalation.rs`); the reply
        // path adds what it read.
        if from != TaskStatus::Escalated {
            next.escalation = Some(crate::task::escalation::context(task, &why, now));
        }
    }
    // The owner holds an escalated task and nothing is left to send from a closed one: an
    // unsent answer or an unread reply is theirs to see in the conversation.
    if to == TaskStatus::Escalated || to.is_terminal() {
        next.answer = None;
        next.awaiting = None;
        next.held_question = None;
        next.parting = None;
    }
    if from == TaskStatus::Escalated && to == TaskStatus::Executing {
        next.escalation = None;
    }
    if to == TaskStatus::Executing && next.execution_started_at.is_none() {
        next.execution_started_at = Some(now);
    }
    Ok(bump(next, from, now, why))
}

/// The log entry for a task's creation.
pub fn created(task: &Task, why: Why) -> LogEntry {
    created_by_gate(task, GateReason::Fixed(why.reason), why.detail)
}

/// The log entry for a task's creation, logged with the confidence gate's reason — which,
/// for the confidence comparison, carries its numbers (see [`GateReason`]).
pub fn created_by_gate(task: &Task, reason: GateReason, detail: Option<String>) -> LogEntry {
    LogEntry {
        id: new_ulid(task.created_at),
        at: task.created_at,
        from_status: None,
        to_status: task.status,
        reason: reason.to_string(),
        detail,
    }
}

/// Start `task` on the way to a move decided for `reason` that the table has no direct edge
/// for (a ready task cannot escalate without having started). The step is logged as
/// `<reason>_handling`, as it always has been: a code derived from the [`Reason`], not one of
/// its own.
pub fn start_handling(task: &Task, now: Timestamp, reason: Reason) -> Result<(Task, LogEntry), EngineError> {
    let (started, mut log) = transition(task, TaskStatus::Executing, now, Why::new(reason))?;
    log.reason = format!("{reason}_handling");
    Ok((started, log))
}

/// Log a decision that keeps the status (deferral, reschedule, draft edit), bumping the version.
pub fn record(task: &Task, now: Timestamp, why: Why) -> (Task, LogEntry) {
    bump(task.clone(), task.status, now, why)
}

fn bump(mut next: Task, from: TaskStatus, now: Timestamp, why: Why) -> (Task, LogEntry) {
    next.version += 1;
    next.updated_at = now;
    let entry = LogEntry {
        id: new_ulid(now),
        at: now,
        from_status: Some(from),
        to_status: next.status,
        reason: why.reason.to_string(),
        detail: why.detail,
    };
    (next, entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_task;

    #[test]
    fn a_valid_move_bumps_the_version_and_explains_itself() {
        let task = sample_task(TaskStatus::PendingReview);
        let now = task.created_at;
        let (next, log) = transition(&task, TaskStatus::Ready, now, Why::new(Reason::OwnerApproved)).expect("valid");
        assert_eq!(next.version, task.version + 1);
        assert_eq!(
            (log.from_status, log.to_status, log.reason.as_str()),
            (Some(TaskStatus::PendingReview), TaskStatus::Ready, "owner_approved")
        );
    }

    #[test]
    fn an_invalid_move_is_refused_and_changes_nothing() {
        let task = sample_task(TaskStatus::Completed);
        let err = transition(&task, TaskStatus::Executing, task.created_at, Why::new(Reason::FirstTouchDue)).expect_err("should fail");
        assert!(matches!(
            err,
            EngineError::InvalidTransition {
                from: TaskStatus::Completed,
                to: TaskStatus::Executing
            }
        ));
    }

    #[test]
    fn the_step_through_executing_is_logged_as_handling_its_reason() {
        let task = sample_task(TaskStatus::Ready);
        let (started, log) = start_handling(&task, task.created_at, Reason::MissingMemberEmail).expect("valid");
        assert_eq!(started.status, TaskStatus::Executing);
        assert_eq!(log.reason, "missing_member_email_handling");
    }

    #[test]
    fn an_escalation_keeps_its_reason_code_as_the_outcome_reason() {
        let task = sample_task(TaskStatus::Waiting);
        let (next, log) = transition(
            &task,
            TaskStatus::Escalated,
            task.created_at,
            Why::new(Reason::LowConfidenceOnReply),
        )
        .expect("valid");
        assert_eq!(next.outcome_reason.as_deref(), Some("low_confidence_on_reply"));
        assert_eq!(log.reason, "low_confidence_on_reply");
    }

    #[test]
    fn closing_records_the_outcome_and_clears_the_schedule() {
        let mut task = sample_task(TaskStatus::Waiting);
        task.next_action_at = Some(task.created_at);
        let (next, _) = transition(
            &task,
            TaskStatus::Cancelled,
            task.created_at,
            Why::new(Reason::BudgetTimeExpired).outcome("unresponsive"),
        )
        .expect("valid");
        assert_eq!(next.outcome.as_deref(), Some("unresponsive"));
        assert_eq!(next.next_action_at, None);
        assert_eq!(next.resolved_at, Some(task.created_at));
    }

    #[test]
    fn every_move_to_escalated_explains_itself_whatever_the_reason() {
        for reason in crate::task::reason::Reason::ALL {
            let task = crate::testing::sample_task(TaskStatus::Waiting);
            let now = crate::testing::at("2026-11-03T10:00:00Z");
            let (next, _) = transition(&task, TaskStatus::Escalated, now, Why::new(*reason).detail("seen")).expect("escalate");
            let context = next.escalation.expect("a context");
            assert_eq!(context.reason, reason.as_str());
            assert!(
                context.summary.ends_with(". Seen.") && !context.suggested_next_step.is_empty(),
                "{reason}"
            );
        }
    }
}

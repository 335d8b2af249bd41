//! Every outbound webhook event Openloop emits, built in one place (CONTRACT.md "For other
//! programs"): `task.escalated`, `task.closed`, `member.retained`, `todo.created` and
//! `brief.ready`, each `{"type", "timestamp", "data"}` under its id.
//!
//! An event is never lost between the change that caused it and the `deliveries` queue: it is
//! written durably first, as an [`OutboxItem`], then queued. A task's events ride in the
//! task's own commit ([`of_commit`], written by both stores in the commit's transaction), a
//! to-do's in the to-do's creation; the consumer deletes the item once the event is in its
//! endpoints' backlogs, and the tick queues again what is still there after [`OUTBOX_GRACE`]
//! (a refused send, a crash before it). The ids of a task's and a to-do's events come from
//! what caused them, so the commit's item and the engine's send are one event.
//!
//! Whether a change writes its events at all is one rule, [`written_for`]: every path that
//! closes or escalates a task or makes a to-do asks it of the account it read.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::ids::AccountId;
use crate::owner::account::Account;
use crate::owner::brief::Brief;
use crate::owner::outbound_webhook::{EventType, OutboundEvent};
use crate::task::commit::TaskCommit;
use crate::task::todo::Todo;
use crate::task::{Task, TaskStatus};

/// How long an event written to the outbox waits for its first send to be consumed before
/// the tick queues it again.
pub const OUTBOX_GRACE: SignedDuration = SignedDuration::from_mins(2);
/// The longest wait between two sends of an event still in the outbox.
pub const OUTBOX_RETRY_MAX: SignedDuration = SignedDuration::from_hours(1);

/// An event written before it is queued, kept until the `deliveries` consumer took it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutboxItem {
    pub event: OutboundEvent,
    /// When the tick queues it again if it is still here.
    pub due_at: Timestamp,
    /// How many times the tick queued it.
    #[serde(default)]
    pub attempts: u32,
}

impl OutboxItem {
    /// `event`, due for the tick [`OUTBOX_GRACE`] after it was made.
    pub fn new(event: OutboundEvent) -> Self {
        Self {
            due_at: event.timestamp + OUTBOX_GRACE,
            event,
            attempts: 0,
        }
    }

    /// Queued again by the tick at `now`: the next look doubles its wait, up to [`OUTBOX_RETRY_MAX`].
    pub fn resent(&self, now: Timestamp) -> Self {
        let attempts = self.attempts.saturating_add(1);
        let wait = OUTBOX_GRACE
            .checked_mul(1_i32 << attempts.min(10))
            .map_or(OUTBOX_RETRY_MAX, |w| w.min(OUTBOX_RETRY_MAX));
        Self {
            event: self.event.clone(),
            due_at: now + wait,
            attempts,
        }
    }
}

/// Whether a change of `account`'s writes its webhook events to the outbox (and queues them):
/// unless the account, as the change's path read it, has no endpoint
/// ([`Account::may_have_webhooks`]); an account the path did not read (`None`) may have one.
/// An account with none pays no outbox write, queue message or consumer run.
pub fn written_for(account: Option<&Account>) -> bool {
    account.is_none_or(Account::may_have_webhooks)
}

impl TaskCommit {
    /// Every path that closes or escalates a task (its step, the owner's actions, a member's
    /// reply, a suppression) sets the change's webhook events by the account it read, through
    /// [`written_for`]. (Here, not in `task/`: the rule reads the owner's account.)
    pub fn webhooks_for(mut self, account: Option<&Account>) -> Self {
        self.webhooks = written_for(account);
        self
    }
}

fn member(task: &Task) -> serde_json::Value {
    json!({"id": task.member.id, "name": task.member.name, "email": task.member.email})
}

/// A task's event of `event_type` at its current version: one id however often it is built.
fn of_task(task: &Task, event_type: EventType, data: serde_json::Value) -> OutboundEvent {
    OutboundEvent {
        id: format!("msg_{}v{}.{}", task.id, task.version, event_type.as_str()),
        account_id: task.account_id,
        event_type,
        timestamp: task.updated_at,
        task_id: Some(task.id),
        data,
    }
}

/// `task.escalated`: the task and what its escalation tells the owner.
pub fn task_escalated(task: &Task) -> OutboundEvent {
    of_task(
        task,
        EventType::TaskEscalated,
        json!({
            "task_id": task.id, "task_type": task.task_type, "status": task.status,
            "member": member(task), "escalation": task.escalation,
        }),
    )
}

/// A closed task's events: `task.closed` with its outcome and value, and `member.retained`
/// when it retained revenue Openloop caused (as the scorecard counts a member retained).
pub fn task_closed(task: &Task) -> Vec<OutboundEvent> {
    let mut events = vec![of_task(
        task,
        EventType::TaskClosed,
        json!({
            "task_id": task.id, "task_type": task.task_type, "status": task.status, "member": member(task),
            "outcome": task.outcome, "outcome_reason": task.outcome_reason, "value": task.attributed_value,
        }),
    )];
    let value = task.attributed_value.unwrap_or(0.0);
    if value > 0.0 && !task.is_held_out() {
        events.push(of_task(
            task,
            EventType::MemberRetained,
            json!({
                "member": member(task), "task_id": task.id, "task_type": task.task_type,
                "outcome": task.outcome, "value": value,
            }),
        ));
    }
    events
}

/// `todo.created`: the new to-do with the member to reach.
pub fn todo_created(todo: &Todo) -> OutboundEvent {
    OutboundEvent {
        id: format!("msg_{}.{}", todo.id, EventType::TodoCreated.as_str()),
        account_id: todo.account_id,
        event_type: EventType::TodoCreated,
        timestamp: todo.created_at,
        task_id: Some(todo.task_id),
        data: json!({
            "todo_id": todo.id, "task_id": todo.task_id, "kind": todo.kind, "what": todo.what,
            "member": {"id": todo.member.id, "name": todo.member.name, "phone": todo.member.phone, "email": todo.member.email},
            "due_at": todo.due_at,
        }),
    }
}

/// `brief.ready`: the day's brief in counts, and where to read it (`url`). `id` is the
/// caller's (`msg_{ulid}`).
pub fn brief_ready(account: AccountId, brief: &Brief, url: String, id: String, now: Timestamp) -> OutboundEvent {
    OutboundEvent {
        id,
        account_id: account,
        event_type: EventType::BriefReady,
        timestamp: now,
        task_id: None,
        data: json!({
            "date": brief.date, "url": url,
            "actions": brief.actions.len(), "todos": brief.todos.len(), "at_risk": brief.at_risk.len(),
            "payments": brief.payments.len(), "planned_today": brief.planned_today, "review_expired": brief.review_expired,
        }),
    }
}

/// Whether `commit` moves its task to `escalated` (from anything else).
pub fn escalation_began(commit: &TaskCommit) -> bool {
    commit
        .log
        .iter()
        .any(|l| l.to_status == TaskStatus::Escalated && l.from_status != Some(TaskStatus::Escalated))
}

/// Whether `commit` closes its task (a move into a terminal status from an open one).
pub fn closes(commit: &TaskCommit) -> bool {
    commit.task.status.is_terminal()
        && commit
            .log
            .iter()
            .any(|l| l.to_status.is_terminal() && !l.from_status.is_some_and(|s| s.is_terminal()))
}

/// The events `commit` causes, written in its transaction: an escalation that began, a close.
pub fn of_commit(commit: &TaskCommit) -> Vec<OutboundEvent> {
    let mut events = Vec::new();
    if escalation_began(commit) {
        events.push(task_escalated(&commit.task));
    }
    if closes(commit) {
        events.extend(task_closed(&commit.task));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::transition::{Why, transition};
    use crate::testing::{at, sample_task};

    #[test]
    fn a_commit_that_escalates_or_closes_carries_its_events_under_stable_ids() {
        let task = sample_task(TaskStatus::Waiting);
        let now = at("2026-03-10T12:00:00Z");
        let (escalated, log) = transition(
            &task,
            TaskStatus::Escalated,
            now,
            Why::new(crate::task::reason::Reason::AgentEscalatedReply),
        )
        .expect("escalate");
        let commit = TaskCommit::new(escalated.clone(), log);
        let events = of_commit(&commit);
        assert_eq!(events.iter().map(|e| e.event_type).collect::<Vec<_>>(), [EventType::TaskEscalated]);
        assert_eq!(
            events[0],
            task_escalated(&escalated),
            "the commit's event is the one the engine queues"
        );

        let (mut closed, log) = transition(
            &escalated,
            TaskStatus::Completed,
            now,
            Why::new(crate::task::reason::Reason::OwnerResolved).outcome("retained"),
        )
        .expect("close");
        closed.attributed_value = Some(120.0);
        let events = of_commit(&TaskCommit::new(closed.clone(), log));
        assert_eq!(
            events.iter().map(|e| e.event_type).collect::<Vec<_>>(),
            [EventType::TaskClosed, EventType::MemberRetained]
        );
        assert!(events.iter().all(|e| e.id.starts_with("msg_") && e.timestamp == closed.updated_at));
        assert_ne!(events[0].id, events[1].id);

        let (waiting, log) = crate::task::transition::record(&task, now, Why::new(crate::task::reason::Reason::MemberReplyWait));
        assert!(
            of_commit(&TaskCommit::new(waiting, log)).is_empty(),
            "a step that closes nothing emits nothing"
        );
    }

    #[test]
    fn an_event_left_in_the_outbox_is_sent_again_later_each_time() {
        let task = sample_task(TaskStatus::Escalated);
        let item = OutboxItem::new(task_escalated(&task));
        assert_eq!(item.due_at, task.updated_at + OUTBOX_GRACE);
        let now = at("2026-03-10T12:00:00Z");
        let again = item.resent(now);
        assert_eq!((again.attempts, again.due_at), (1, now + SignedDuration::from_mins(4)));
        let late = (0..20).fold(again, |i, _| i.resent(now));
        assert_eq!(late.due_at, now + OUTBOX_RETRY_MAX);
    }
}

//! The conformance of the outbound webhooks' outbox ([`WebhookStore`]): a task's events are
//! written by the commit that caused them and a to-do's by its creation, each kept until the
//! consumer deletes it, found by when the tick should queue it again, postponed only while it
//! is still there.
//!
//! [`WebhookStore`]: crate::ports::WebhookStore

use jiff::SignedDuration;

use crate::kernel::error::Conflict;
use crate::kernel::ids::AccountId;
use crate::owner::outbound_webhook::EventType;
use crate::owner::webhook_event::{self, OUTBOX_GRACE, OutboxItem};
use crate::ports::TaskStore;
use crate::task::TaskStatus;
use crate::task::commit::TaskCommit;
use crate::task::open_loop::OpenLoop;
use crate::task::reason::Reason;
use crate::task::transition::{Why, transition};

use super::{base, is_conflict, new_task};

/// The account's outbox items due by a day from the base time.
async fn outbox_of(store: &dyn TaskStore, account: AccountId) -> Vec<OutboxItem> {
    store
        .due_outbox(base() + SignedDuration::from_hours(24), 1_000)
        .await
        .expect("outbox")
        .into_iter()
        .filter(|i| i.event.account_id == account)
        .collect()
}

pub(super) async fn webhook_events_are_kept_from_the_write_that_caused_them_until_taken(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_hooked", TaskStatus::Waiting).await;
    assert!(outbox_of(store, account).await.is_empty(), "outbox: a creation emits nothing");

    let (escalated, log) = transition(&task, TaskStatus::Escalated, base(), Why::new(Reason::AgentEscalatedReply)).expect("valid");
    store.commit(&TaskCommit::new(escalated.clone(), log)).await.expect("escalate");
    let kept = outbox_of(store, account).await;
    assert_eq!(
        kept,
        vec![OutboxItem::new(webhook_event::task_escalated(&escalated))],
        "outbox: the escalation's event, written by its commit"
    );
    assert_eq!(kept[0].due_at, escalated.updated_at + OUTBOX_GRACE);

    let later = base() + SignedDuration::from_mins(1);
    let (closed, log) = transition(&escalated, TaskStatus::Cancelled, later, Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    let mut first = super::todos::todo(account, "task:hooked:created", 0);
    first.created_at = base() + SignedDuration::from_secs(30);
    let wait = OpenLoop::for_todo(account, first.member.id.clone(), &first.id.to_string(), false, base(), base()).for_task(first.task_id);
    assert!(store.create_todo_with_loop(&first, &wait, true).await.expect("todo"));
    let types: Vec<EventType> = outbox_of(store, account).await.iter().map(|i| i.event.event_type).collect();
    assert_eq!(
        types,
        [EventType::TaskEscalated, EventType::TodoCreated, EventType::TaskClosed],
        "outbox: the close's and the to-do's events too, soonest due first"
    );

    // The tick postpones what it queued again; the consumer deletes what it took.
    let again = kept[0].resent(later);
    store.postpone_outbox(&again).await.expect("postpone");
    let kept = outbox_of(store, account).await;
    assert_eq!(kept.last(), Some(&again), "outbox: postponed, due later");
    assert!(
        store.delete_outbox(account, &again.event.id).await.expect("delete"),
        "outbox: taken"
    );
    assert!(
        !store.delete_outbox(account, &again.event.id).await.expect("delete"),
        "outbox: taken once"
    );
    assert!(
        is_conflict(store.postpone_outbox(&again).await, Conflict::Version),
        "outbox: a taken event is not put back by a late postpone"
    );
    assert_eq!(outbox_of(store, account).await.len(), 2);

    // An event no commit writes is put on its own.
    let other = AccountId::generate(base());
    let event = webhook_event::todo_created(&super::todos::todo(other, "x", 0));
    store.put_outbox(&OutboxItem::new(event.clone())).await.expect("put");
    assert_eq!(outbox_of(store, other).await, vec![OutboxItem::new(event)], "outbox: per account");

    // A change the step knew had no endpoint to reach writes no event.
    let quiet = AccountId::generate(base());
    let task = new_task(store, quiet, "m_quiet", TaskStatus::Waiting).await;
    let (escalated, log) = transition(&task, TaskStatus::Escalated, base(), Why::new(Reason::AgentEscalatedReply)).expect("valid");
    let commit = TaskCommit {
        webhooks: false,
        ..TaskCommit::new(escalated, log)
    };
    store.commit(&commit).await.expect("escalate");
    assert!(outbox_of(store, quiet).await.is_empty(), "outbox: nothing without an endpoint");
    let todo = super::todos::todo(quiet, "m_quiet", 0);
    let wait = OpenLoop::for_todo(quiet, todo.member.id.clone(), &todo.id.to_string(), false, base(), base());
    assert!(store.create_todo_with_loop(&todo, &wait, false).await.expect("todo"));
    assert!(
        outbox_of(store, quiet).await.is_empty(),
        "outbox: nor a to-do's without an endpoint"
    );
}

//! Accepting a member event from its webhook: the event is queued for the signals consumer,
//! then its webhook id claimed, so a repeated delivery is answered as a duplicate; a queue that
//! refuses it, or a function that dies before the claim, leaves nothing claimed, so the
//! sender's retry is accepted.

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::engine::Accepted;
use crate::members::event::{Parsed, parse_event};
use crate::ports::{Clock, Queue, QueueError};
use crate::task::error::EngineError;

fn payment_failed(at: Timestamp) -> WebhookEvent {
    let body = serde_json::json!({"type": "payment.failed", "timestamp": at,
        "data": {"member_id": "m_pay", "amount": 150, "currency": "USD", "failed_at": at, "reason": "card_declined"}});
    match parse_event(body.to_string().as_bytes()).expect("event") {
        Parsed::Known(event) => event,
        Parsed::UnknownType(kind) => panic!("{kind} is a known type"),
    }
}

/// A queue that refuses its first send and takes the rest.
#[derive(Default)]
struct RefusesOnce {
    refused: AtomicBool,
    taken: RecordingQueue,
}

#[async_trait::async_trait]
impl Queue for RefusesOnce {
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), QueueError> {
        if !self.refused.swap(true, Ordering::SeqCst) {
            return Err(QueueError {
                queue,
                message: "injected: throttled".into(),
            });
        }
        self.taken.send(queue, messages).await
    }
}

#[tokio::test]
async fn a_member_event_is_queued_once_per_webhook_id() {
    let w = world().await;
    let now = w.clock.now();

    let first = w.engine.accept_member_event(w.account.id, "wh_1", payment_failed(now), now).await;
    let redelivered = w.engine.accept_member_event(w.account.id, "wh_1", payment_failed(now), now).await;

    assert_eq!(
        (first.expect("first"), redelivered.expect("again")),
        (Accepted::Queued, Accepted::Duplicate)
    );
    let queued = w.queue.0.lock().expect("queue").clone();
    let envelope: SignalEnvelope = serde_json::from_str(&queued[0].1).expect("envelope");
    assert_eq!(
        (queued[0].0, envelope.account_id, envelope.webhook_id.as_str(), envelope.received_at),
        (QueueName::Signals, w.account.id, "wh_1", now)
    );
    // The repeated delivery's copy was queued before its claim was found: applied, both
    // copies are one event.
    assert_eq!(queued.len(), 2, "{queued:?}");
    for (_, body) in &queued {
        let envelope: SignalEnvelope = serde_json::from_str(body).expect("envelope");
        w.engine.apply_signal(&envelope).await.expect("applied");
    }
    let query = crate::ports::TaskQuery {
        status: None,
        member_id: None,
        limit: 10,
        cursor: None,
    };
    let tasks = w.store.list_tasks(w.account.id, &query).await.expect("tasks").0;
    assert_eq!(tasks.len(), 1, "one task for the event: {tasks:?}");
}

/// The function dies after the event is queued and before its claim is written (here the
/// claim's write fails): the sender's retry is queued and answered as accepted, never as a
/// duplicate of an event nobody claimed.
#[tokio::test]
async fn a_member_event_queued_by_a_function_that_died_before_its_claim_is_accepted_again() {
    let fail = Arc::new(AtomicBool::new(false));
    let store = {
        let fail = fail.clone();
        Arc::new(crate::memory::MemoryStore::with_faults(Arc::new(move || {
            fail.swap(false, Ordering::SeqCst)
                .then(|| crate::kernel::error::StoreError::Unavailable("injected: the function died".into()))
        })))
    };
    let mut w = world().await;
    store.create_account(&w.account, "hash").await.expect("account");
    w.engine.store = store;
    let now = w.clock.now();

    fail.store(true, Ordering::SeqCst);
    let died = w.engine.accept_member_event(w.account.id, "wh_3", payment_failed(now), now).await;
    let retried = w.engine.accept_member_event(w.account.id, "wh_3", payment_failed(now), now).await;

    assert!(died.is_err(), "{died:?}");
    assert_eq!(retried.expect("retry"), Accepted::Queued);
    assert_eq!(w.queue.0.lock().expect("queue").len(), 2, "both attempts queued it");
}

#[tokio::test]
async fn a_member_event_the_queue_refused_is_accepted_when_the_sender_retries() {
    let mut w = world().await;
    let queue = Arc::new(RefusesOnce::default());
    w.engine.queue = queue.clone();
    let now = w.clock.now();

    let refused = w.engine.accept_member_event(w.account.id, "wh_2", payment_failed(now), now).await;
    let retried = w.engine.accept_member_event(w.account.id, "wh_2", payment_failed(now), now).await;

    assert!(matches!(refused, Err(EngineError::Dependency(_))), "{refused:?}");
    assert_eq!(retried.expect("retry"), Accepted::Queued);
    assert_eq!(queue.taken.0.lock().expect("queue").len(), 1);
}

fn parsed(body: serde_json::Value) -> WebhookEvent {
    match parse_event(body.to_string().as_bytes()).expect("event") {
        Parsed::Known(event) => event,
        Parsed::UnknownType(kind) => panic!("{kind} is a known type"),
    }
}

/// Given a member's creation and their cancellation sent with the same `timestamp` and accepted
/// in that order in the same instant (the clock stands still), whatever their webhook ids, when
/// the signals consumer gets them the other way round, then the member is cancelled — and a
/// redelivery of the creation changes nothing.
#[tokio::test]
async fn events_of_one_second_apply_in_the_order_they_were_accepted() {
    for (created_id, cancelled_id) in [("wh_b", "wh_a"), ("wh_c", "wh_d")] {
        let w = world().await;
        let now = w.clock.now();
        let created = parsed(serde_json::json!({"type": "member.created", "timestamp": now,
            "data": {"member_id": "m_ian", "email": "ian@example.com", "first_name": "Ian", "status": "active", "joined_at": "2025-01-01T00:00:00Z"}}));
        let cancelled = parsed(serde_json::json!({"type": "member.status_changed", "timestamp": now,
            "data": {"member_id": "m_ian", "status": "cancelled", "previous_status": "active",
                     "cancellation_reason": "Moving to Portland for a new job"}}));
        w.engine
            .accept_member_event(w.account.id, created_id, created, now)
            .await
            .expect("created");
        w.engine
            .accept_member_event(w.account.id, cancelled_id, cancelled, now)
            .await
            .expect("cancelled");
        let queued: Vec<SignalEnvelope> = w
            .queue
            .0
            .lock()
            .expect("queue")
            .iter()
            .map(|(_, body)| serde_json::from_str(body).expect("envelope"))
            .collect();
        assert!(queued[0].received_at < queued[1].received_at, "accepted in order: {queued:?}");
        for envelope in queued.iter().rev().chain(queued.iter().take(1)) {
            w.engine.apply_signal(envelope).await.expect("applied");
        }
        let ian = MemberId::parse("m_ian").expect("id");
        let (facts, _) = w.store.get_member(w.account.id, &ian).await.expect("read").expect("facts");
        assert_eq!(
            facts.status,
            Some(crate::members::event::MemberStatus::Cancelled),
            "{created_id} then {cancelled_id}"
        );
        assert_eq!(facts.cancellation_reason.as_deref(), Some("Moving to Portland for a new job"));
    }
}

//! The local runtime killed and started again on the emulator goes on where it was: its
//! clock, every mail and text it accepted (`/_local/outbox`), and the gyms' work.

use std::sync::Arc;

use openloop_core::task::work::QueueName;
use openloop_local::kept::Kept;
use openloop_local::queues::{Inbox, SqsInbox};
use openloop_tests::{Stack, events};
use serde_json::{Value, json};

async fn texts(stack: &Stack) -> Vec<Value> {
    let (status, body) = stack.call(reqwest::Method::GET, "/_local/outbox?channel=sms", None, None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

/// A long walk: on a thread with room (`with_room`).
#[test]
fn a_runtime_started_again_keeps_its_clock_its_outbox_and_its_work() {
    openloop_tests::with_room(started_again);
}

async fn started_again() {
    let stack = Stack::on_emulator("restart").await;
    let day = openloop_tests::morning(3);
    stack.set_clock(&day.to_string()).await;
    // A member mailed…
    let gym = stack.create_account("manual").await;
    let address = stack.member(&gym, "m_kept", "Kim", day).await;
    let task = stack.approved_task(&gym, "churn_risk", "m_kept").await;
    stack.run().await;
    let mailed = stack.outbox_to(&address).await;
    assert_eq!(mailed.len(), 1, "Kim's first touch: {mailed:?}");
    // …and one texted.
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"sms": {"enabled": true, "origination_identity": "+18885550142", "daily_limit": 20}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let tess = stack.texting_member_task(&gym, "+15555550142", None).await;
    stack.run_when_due(&gym, &tess).await;
    let texted = texts(&stack).await;
    assert!(!texted.is_empty(), "Tess was texted");
    let before = stack.now().await;

    let stack = stack.restarted().await;
    assert!(stack.now().await >= before, "the clock went on from {before}");
    assert_eq!(stack.outbox_to(&address).await, mailed, "the mail accepted before");
    assert_eq!(texts(&stack).await, texted, "the texts accepted before");
    // The work goes on: Kim's next touch, in her thread, once.
    stack.run_when_due(&gym, &task).await;
    let now = stack.outbox_to(&address).await;
    assert_eq!(now.len(), 2, "{now:?}");
    assert_eq!(now[0], mailed[0]);
    assert_eq!(now[1]["in_reply_to"], mailed[0]["message_id"], "{now:?}");
}

/// A runtime killed while it held a message (received, not yet handled): the next one hands
/// it back to its queue at once and handles it on its first run, where SQS alone would keep
/// it out of sight for the visibility timeout.
#[test]
fn a_message_a_killed_runtime_held_is_handled_by_the_next_one_at_once() {
    openloop_tests::with_room(held_then_handled);
}

async fn held_then_handled() {
    let stack = Stack::on_emulator_without_consumer("held").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await.to_string();
    let (status, body) = stack
        .webhook(&gym, "evt_held", events::member_created("m_held", "held@example.com", "Hal", &at))
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    let (status, body) = stack.webhook(&gym, "evt_held_failed", events::payment_failed("m_held", &at)).await;
    assert_eq!(status, 202, "{body}");
    // The runtime's consumer receives the event, and the runtime dies before handling it.
    let names = &stack.scratch.as_ref().unwrap_or_else(|| panic!("on the emulator")).names;
    let clients = openloop_tests::clients(&openloop_tests::test_config()).await;
    let sqs = clients.sqs();
    let mut urls = std::collections::HashMap::new();
    for queue in QueueName::ALL {
        let url = sqs
            .get_queue_url()
            .queue_name(names.queue(queue))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e:?}"))
            .queue_url
            .unwrap_or_default();
        urls.insert(queue, url);
    }
    let consumer = SqsInbox {
        client: sqs,
        urls,
        kept: Arc::new(Kept::new(clients.dynamodb.clone(), &names.table)),
    };
    let held = consumer.receive(QueueName::Signals).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(held.len(), 1, "the failed payment was queued: {held:?}");
    drop(consumer);

    let stack = stack.restarted().await;
    stack.run().await;
    let (_, tasks) = stack.get("/api/v1/tasks?member_id=m_held", &gym.token).await;
    assert_eq!(
        tasks["tasks"][0]["task_type"], "payment_recovery",
        "the event the killed runtime held was handled on the first run: {tasks}"
    );
}

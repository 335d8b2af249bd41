//! The local runtime killed and started again on the emulator goes on where it was: its
//! clock, every mail and text it accepted (`/_local/outbox`), and the gyms' work.

use openloop_tests::Stack;
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

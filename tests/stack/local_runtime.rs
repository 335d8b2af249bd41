//! The local-only endpoints: the outbox read per recipient and from
//! a position, and `/_local/run` leaving attribution out when nothing changed since the last.

use openloop_tests::{Stack, events};
use serde_json::json;

/// Given mail to two members, when the outbox is read whole, per recipient and past a
/// position, then each read holds exactly what it names, oldest first; a bad query is a 400.
#[tokio::test]
async fn the_outbox_is_read_whole_per_recipient_and_from_a_position() {
    let stack = Stack::start("outbox").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let mut emails = Vec::new();
    for m in ["m_ob_1", "m_ob_2"] {
        emails.push(stack.member(&gym, m, "Jo", day0).await);
        stack.approved_task(&gym, "churn_risk", m).await;
    }
    stack.run().await;
    let (status, all) = stack.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
    assert_eq!(status, 200, "{all}");
    let all = all.as_array().cloned().unwrap_or_default();
    assert_eq!(all.len(), 2, "{all:?}");
    for email in &emails {
        let mine = stack.outbox_to(email).await;
        assert_eq!(mine.len(), 1);
        assert!(mine[0]["message_id"].is_string() && mine[0]["sent_at"].is_string(), "{mine:?}");
    }
    let (_, rest) = stack.call(reqwest::Method::GET, "/_local/outbox?after=1", None, None).await;
    assert_eq!(rest.as_array().map(Vec::len), Some(1));
    assert_eq!(rest[0], all[1], "past the first, oldest first");
    let (status, refused) = stack.call(reqwest::Method::GET, "/_local/outbox?after=x", None, None).await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (400, Some("invalid_query")),
        "{refused}"
    );
}

/// Given a stack, when `/_local/run` is called twice with nothing in between, then the second
/// run leaves attribution out; a member event (a write) brings it back on the next run.
#[tokio::test]
async fn a_run_with_nothing_changed_leaves_attribution_out() {
    let stack = Stack::start("idle-run").await;
    let gym = stack.create_account("manual").await;
    assert!(stack.run().await["attribution"].is_object(), "the first run attributes");
    let idle = stack.run().await;
    assert!(idle["attribution"].is_null(), "{idle}");
    let now = stack.now().await;
    let (status, _) = stack
        .webhook(
            &gym,
            "evt_idle",
            events::member_created("m_idle", "idle@example.com", "Ida", &now.to_string()),
        )
        .await;
    assert_eq!(status, 202);
    assert!(stack.run().await["attribution"].is_object(), "a write brings it back");
    let (status, _) = stack
        .post(
            "/_local/clock",
            "",
            json!({"now": (now + jiff::SignedDuration::from_hours(1)).to_string()}),
        )
        .await;
    assert_eq!(status, 200);
    assert!(stack.run().await["attribution"].is_object(), "so does moving the clock");
}

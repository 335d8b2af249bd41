//! The account's credentials over time on the local runtime: the API token and the inbound
//! webhook secret rotated by the owner, the old one working through the overlap (24 hours on
//! the test clock) and not after; and "Email me a sign-in link" answering a known and an
//! unknown address with the same work — one queued message, nothing looked up — before the
//! queue mails the owner.

use openloop_tests::{Stack, events};
use reqwest::StatusCode;
use serde_json::json;

use crate::dashboard::ask_for_link_without_run;

/// Given a rotated API token, both tokens work for 24 hours; after them only the new one.
#[tokio::test]
async fn a_rotated_api_token_works_through_its_overlap_and_not_after() {
    let stack = Stack::start("rotate-token").await;
    let gym = stack.create_account("manual").await;
    let (status, rotated) = stack.post("/api/v1/settings/api-token/rotate", &gym.token, json!({})).await;
    assert_eq!(status, 200, "{rotated}");
    let new = rotated["api_token"].as_str().unwrap_or_default().to_owned();
    assert!(new.starts_with("olk_") && new != gym.token, "{rotated}");
    for token in [&gym.token, &new] {
        assert_eq!(stack.get("/api/v1/settings", token).await.0, 200, "both work in the overlap");
    }
    let expires: jiff::Timestamp = rotated["previous_token_expires_at"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{rotated}"));
    assert!(
        expires.duration_since(stack.now().await) > jiff::SignedDuration::from_hours(23),
        "a day of overlap"
    );
    stack.set_clock(&(expires + jiff::SignedDuration::from_secs(1)).to_string()).await;
    assert_eq!(stack.get("/api/v1/settings", &gym.token).await.0, 401, "the old token has stopped");
    assert_eq!(stack.get("/api/v1/settings", &new).await.0, 200);
    // Rotated again with the new token: the new one retires in its turn.
    let (status, again) = stack.post("/api/v1/settings/api-token/rotate", &new, json!({})).await;
    assert_eq!(status, 200, "{again}");
}

/// Issue 47: given a rotated API token, the rotated-out token still reads in its overlap but
/// cannot rotate the token or the webhook secret again (401 `current_token_required`, nothing
/// changed): the owner's new token keeps its life and the secret stays the owner's.
#[tokio::test]
async fn a_rotated_out_token_cannot_change_the_credentials() {
    let stack = Stack::start("rotate-retired").await;
    let gym = stack.create_account("manual").await;
    let (status, rotated) = stack.post("/api/v1/settings/api-token/rotate", &gym.token, json!({})).await;
    assert_eq!(status, 200, "{rotated}");
    let new = rotated["api_token"].as_str().unwrap_or_default().to_owned();
    assert_eq!(stack.get("/api/v1/settings", &gym.token).await.0, 200, "the old token still reads");
    for path in ["/api/v1/settings/api-token/rotate", "/api/v1/settings/webhook-secret/rotate"] {
        let (status, body) = stack.post(path, &gym.token, json!({})).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (401, Some("current_token_required")),
            "{path}: {body}"
        );
    }
    // The owner's new token did not retire: a day and more later it still works.
    stack
        .set_clock(&(stack.now().await + jiff::SignedDuration::from_hours(25)).to_string())
        .await;
    assert_eq!(stack.get("/api/v1/settings", &new).await.0, 200, "the new token lives on");
    let (status, body) = stack.post("/api/v1/settings/webhook-secret/rotate", &new, json!({})).await;
    assert_eq!(status, 200, "the current token rotates: {body}");
}

/// Given a rotated webhook secret, deliveries signed with either are accepted for 24 hours;
/// after them, the old secret's are refused.
#[tokio::test]
async fn a_rotated_webhook_secret_is_accepted_through_its_overlap_and_not_after() {
    let stack = Stack::start("rotate-secret").await;
    let mut gym = stack.create_account("manual").await;
    let old = gym.webhook_secret.clone();
    let (status, rotated) = stack.post("/api/v1/settings/webhook-secret/rotate", &gym.token, json!({})).await;
    assert_eq!(status, 200, "{rotated}");
    let new = rotated["webhook_secret"].as_str().unwrap_or_default().to_owned();
    assert!(new.starts_with("whsec_") && new != old);
    let at = stack.now().await;
    let event = |n: u32| events::member_created(&format!("m_{n}"), &format!("m{n}@example.com"), "Sam", &at.to_string());
    for (n, secret) in [(1, &old), (2, &new)] {
        gym.webhook_secret = secret.clone();
        let (status, body) = stack.webhook(&gym, &format!("evt_rot_{n}"), event(n)).await;
        assert_eq!(status, 202, "secret {n} in the overlap: {body}");
    }
    let expires: jiff::Timestamp = rotated["previous_secret_expires_at"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{rotated}"));
    stack.set_clock(&(expires + jiff::SignedDuration::from_secs(1)).to_string()).await;
    gym.webhook_secret = old.clone();
    let (status, body) = stack.webhook(&gym, "evt_rot_3", event(3)).await;
    assert_eq!(status, 401, "the old secret has stopped: {body}");
    gym.webhook_secret = new.clone();
    let (status, body) = stack.webhook(&gym, "evt_rot_4", event(4)).await;
    assert_eq!(status, 202, "{body}");
}

/// Given a known owner address and an unknown one, asking for a sign-in link answers both
/// with the same page and the same work — one message queued, nothing mailed yet — and only
/// the queue, afterwards, mails the owner.
#[tokio::test]
async fn a_known_and_an_unknown_address_are_answered_with_the_same_work() {
    let stack = Stack::start_without_consumer("sign-in-alike").await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    stack.run().await;

    let before = stack.outbox_to(&owner).await.len();
    let mut answers = Vec::new();
    for email in [owner.as_str(), "stranger@nowhere.example"] {
        let mailed = stack.outbox_to(&owner).await.len();
        let (status, page) = ask_for_link_without_run(&stack, email).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(stack.outbox_to(&owner).await.len(), mailed, "nothing mailed in the request");
        let ran = stack.run().await;
        // What the page says (its CSRF tokens are fresh each time).
        let notice = page
            .split("role=\"status\">")
            .nth(1)
            .and_then(|rest| rest.split("</p>").next())
            .unwrap_or_else(|| panic!("a notice in {page}"))
            .to_owned();
        answers.push((notice, ran["queues"].clone()));
    }
    assert_eq!(answers[0].0, answers[1].0, "the same page");
    assert_eq!(
        answers[0].1["signals"],
        json!({"processed": 1, "retrying": 0}),
        "{:?}",
        answers[0].1
    );
    assert_eq!(answers[0].1, answers[1].1, "the same queued work for both");
    let mail = stack.outbox_to(&owner).await;
    assert_eq!(mail.len(), before + 1, "the owner's link, mailed from the queue");
    assert!(mail[before]["text"].as_str().unwrap_or_default().contains("/app/login/link?token="));
}

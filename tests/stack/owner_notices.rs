//! The owner's notifications through CONTRACT.md and the README: the feed at
//! `GET /api/v1/notifications` is the account's alone and pages; an escalation reaches the
//! settings' `owner_email` through SES at once, an opt-out and the tasks awaiting approval in
//! the digest, and the day's summary the next morning — while the account is paused too.

use jiff::{SignedDuration, Timestamp};
use openloop_tests::{Account, Client, Stack};
use serde_json::{Value, json};

use crate::morning;

/// The account's feed, newest first: `(notifications, next_cursor)`.
async fn feed(stack: &Stack, gym: &Account, query: &str) -> (Vec<Value>, Option<String>) {
    let (status, body) = stack.get(&format!("/api/v1/notifications{query}"), &gym.token).await;
    assert_eq!(status, 200, "{body}");
    (
        body["notifications"].as_array().cloned().unwrap_or_default(),
        body["next_cursor"].as_str().map(str::to_owned),
    )
}

fn kinds(notices: &[Value]) -> Vec<&str> {
    notices.iter().filter_map(|n| n["kind"].as_str()).collect()
}

/// A gym whose owner reads mail at a unique address; returns it with the address.
async fn gym_with_owner(stack: &Stack) -> (Account, String) {
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    (gym, owner)
}

/// The path and query of the one-click unsubscribe link in a mail's `List-Unsubscribe`.
fn unsubscribe_path(mail: &Value) -> String {
    let header = mail["list_unsubscribe"].as_str().unwrap_or_default();
    let start = header.find("/unsubscribe?token=").unwrap_or_else(|| panic!("no link in {header}"));
    header[start..].split('>').next().unwrap_or_default().to_owned()
}

/// Given an owner with an address, when a member's question escalates a task, then the feed
/// shows it and the mail is in SES's outbox for the owner at once; another account sees none
/// of it; the feed pages. Then the owner pauses the account: a member's unsubscribe and a new
/// task awaiting approval still reach the owner in the next digest (members get nothing), and
/// the next morning the morning brief follows.
#[tokio::test]
async fn the_owner_hears_of_escalations_opt_outs_and_approvals_by_feed_and_mail() {
    let stack = Stack::start("owner-notices").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let (gym, owner) = gym_with_owner(&stack).await;
    let stranger = stack.create_account("manual").await;
    let asks = stack.member(&gym, "m_asks", "Sam", day0).await;
    let leaves = stack.member(&gym, "m_leaves", "Pat", day0).await;
    stack.run().await;
    let asks_task = stack.approved_task(&gym, "churn_risk", "m_asks").await;
    stack.approved_task(&gym, "churn_risk", "m_leaves").await;
    stack.run().await;
    assert!(stack.outbox_to(&owner).await.is_empty(), "nothing to tell yet");

    let mail = stack.outbox_to(&asks).await;
    let (status, _) = stack
        .inbound(&Client::reply_to(
            &mail[0],
            "ask-1@mail.example.net",
            "Do you still run the Saturday 9am class?",
        ))
        .await;
    assert_eq!(status, 202);
    let (notices, _) = feed(&stack, &gym, "").await;
    let escalation = notices
        .iter()
        .find(|n| n["kind"] == "escalation")
        .unwrap_or_else(|| panic!("{notices:?}"));
    assert_eq!(
        (escalation["delivery"].as_str(), escalation["task_id"].as_str()),
        (Some("email"), Some(asks_task.as_str())),
        "{escalation}"
    );
    let owner_mail = stack.outbox_to(&owner).await;
    assert_eq!(owner_mail.len(), 1, "the escalation is mailed at once: {owner_mail:?}");
    assert!(
        owner_mail[0]["subject"].as_str().is_some_and(|s| s.contains("needs you")),
        "{}",
        owner_mail[0]
    );
    assert!(
        owner_mail[0]["text"].as_str().is_some_and(|t| t.contains("Saturday 9am class")),
        "{}",
        owner_mail[0]
    );

    // Scoped: another account's key sees none of it.
    assert!(feed(&stack, &stranger, "").await.0.is_empty());
    // Paged: one at a time, newest first, the cursor leads to the next.
    let (all, _) = feed(&stack, &gym, "").await;
    assert!(all.len() >= 2, "approvals and the escalation: {all:?}");
    let (first, cursor) = feed(&stack, &gym, "?limit=1").await;
    let cursor = cursor.unwrap_or_else(|| panic!("a next page"));
    let (second, _) = feed(&stack, &gym, &format!("?limit=1&cursor={cursor}")).await;
    assert_eq!(
        [first[0]["id"].clone(), second[0]["id"].clone()],
        [all[0]["id"].clone(), all[1]["id"].clone()]
    );
    let (status, body) = stack.get("/api/v1/notifications?limit=0", &gym.token).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_limit")), "{body}");

    // Paused: members hear nothing, the owner still does.
    let (status, body) = stack.post("/api/v1/pause", &gym.token, json!({})).await;
    assert_eq!((status, body["paused"].as_bool()), (200, Some(true)), "{body}");
    let leaves_mail = stack.outbox_to(&leaves).await;
    let (status, _) = stack
        .call(reqwest::Method::POST, &unsubscribe_path(&leaves_mail[0]), None, None)
        .await;
    assert_eq!(status, 200);
    stack.member(&gym, "m_new", "Lee", day0).await;
    let body = json!({"task_type": "win_back", "member_id": "m_new", "goal": "Win them back", "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!((status, created["status"].as_str()), (201, Some("pending_review")), "{created}");
    let (notices, _) = feed(&stack, &gym, "").await;
    assert_eq!(kinds(&notices[..2]), ["approval_needed", "member_opted_out"], "{notices:?}");
    let digest_at: Timestamp = notices[0]["digest_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("waits for a digest: {}", notices[0]));
    assert_eq!(stack.outbox_to(&owner).await.len(), 1, "batched: not mailed on their own");

    stack.set_clock(&digest_at.to_string()).await;
    stack.run().await;
    let owner_mail = stack.outbox_to(&owner).await;
    assert_eq!(owner_mail.len(), 2, "one digest, paused or not: {owner_mail:?}");
    let digest = owner_mail[1]["text"].as_str().unwrap_or_default();
    assert!(digest.contains("will get no more mail"), "{digest}");
    assert!(digest.contains("1 task needs your review"), "{digest}");
    assert_eq!(stack.outbox_to(&leaves).await.len(), 1, "no acknowledgment to the member");

    // The next morning, from brief_hour: the morning brief (in place of the daily summary), once.
    stack.set_clock(&(day0 + SignedDuration::from_mins(23 * 60 + 30)).to_string()).await;
    stack.run().await;
    stack.run().await;
    let briefs: Vec<Value> = stack
        .outbox_to(&owner)
        .await
        .into_iter()
        .filter(|m| m["text"].as_str().is_some_and(|s| s.contains("Your morning brief")))
        .collect();
    assert_eq!(briefs.len(), 1, "{briefs:?}");
    let text = briefs[0]["text"].as_str().unwrap_or_default();
    // Two first touches and the holding reply to Sam's question.
    for expected in ["3 mails sent", "1 task waits for your approval", "Do this now:"] {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
    stack.running.stop();
}

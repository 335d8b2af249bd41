//! The owner's day through the contract, for what the engine tests check on the in-memory
//! ports alone: owner notices hold through the quiet hours (a critical one does not), and a
//! review item left undecided closes as `review_expired` on day 7, said in the next brief.

use jiff::SignedDuration;
use openloop_tests::{Stack, morning};
use serde_json::{Value, json};

async fn owner_mail(stack: &Stack, owner: &str, containing: &str) -> Vec<Value> {
    stack
        .outbox_to(owner)
        .await
        .into_iter()
        .filter(|m| m["subject"].as_str().is_some_and(|s| s.contains(containing)))
        .collect()
}

/// Given quiet hours around now, when a member's question escalates a task, then the owner's
/// mail about it waits until the quiet hours end; a member's legal threat is mailed at once.
#[tokio::test]
async fn notices_hold_through_quiet_hours_and_a_critical_one_does_not() {
    let stack = Stack::start("day-quiet").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let hour = day0.to_zoned(openloop_tests::new_york()).hour();
    let quiet = json!({"quiet_hours": {"start": hour, "end": (hour + 3) % 24}});
    let (status, settings) = stack
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&gym.token), Some(quiet))
        .await;
    assert_eq!(status, 200, "{settings}");

    crate::dashboard::escalated_task(&stack, &gym, "m_q", "Quinn", "Do you still run the Saturday 9am class?", day0).await;
    stack.run().await;
    assert!(owner_mail(&stack, &owner, "Quinn").await.is_empty(), "held in the quiet hours");
    crate::dashboard::escalated_task(&stack, &gym, "m_t", "Tara", "My lawyer will be in touch about this.", day0).await;
    stack.run().await;
    let all: Vec<Value> = stack.outbox_to(&owner).await.into_iter().map(|m| m["subject"].clone()).collect();
    assert_eq!(
        owner_mail(&stack, &owner, "Urgent: Tara").await.len(),
        1,
        "a critical notice goes at once: {all:?}"
    );

    stack
        .set_clock(&(day0 + SignedDuration::from_hours(3) - SignedDuration::from_mins(5)).to_string())
        .await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&owner).await.len(), 1, "still quiet: only the urgent mail");
    stack.set_clock(&(day0 + SignedDuration::from_hours(3)).to_string()).await;
    stack.run().await;
    let mail = stack.outbox_to(&owner).await;
    assert_eq!(mail.len(), 2, "what waited leaves when the quiet hours end, together: {mail:?}");
    let text = mail[1]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Quinn Tester needs you"), "{text}");
    assert!(!text.contains("Details:") && !text.contains("confidence"), "plain words: {text}");
    stack.running.stop();
}

/// Given a task left in the review queue, then a minute before day 7 it waits, and on day 7
/// it is closed as `review_expired` with nothing sent, and the brief counts it.
#[tokio::test]
async fn a_review_item_expires_on_day_seven_and_the_brief_says_so() {
    let stack = Stack::start("day-expiry").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_w", "Wes", day0).await;
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_w", "goal": "Bring Wes back",
                "draft": {"subject": "Hi Wes", "body": "Hi Wes, see you Thursday?"}}),
        )
        .await;
    assert_eq!((status, task["status"].as_str()), (201, Some("pending_review")), "{task}");
    let id = task["id"].as_str().unwrap_or_default().to_owned();

    stack
        .set_clock(&(day0 + SignedDuration::from_hours(24 * 7) - SignedDuration::from_mins(1)).to_string())
        .await;
    stack.run().await;
    let (_, waiting) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(waiting["status"], "pending_review", "{waiting}");

    stack.set_clock(&(day0 + SignedDuration::from_hours(24 * 7 + 1)).to_string()).await;
    stack.run().await;
    let (_, closed) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (closed["status"].as_str(), closed["outcome"].as_str()),
        (Some("cancelled"), Some("review_expired")),
        "{closed}"
    );
    assert!(stack.outbox_to(&email).await.is_empty(), "nothing was sent to the member");
    let (_, brief) = stack.get("/api/v1/brief", &gym.token).await;
    assert_eq!(brief["review_expired"], 1, "{brief}");
    stack.running.stop();
}

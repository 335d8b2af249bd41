//! The spec's §19.3 walkthrough, through HTTP only, with the test clock:
//! a failed payment → review → approve (with the owner's edit) → first mail → a follow-up a day
//! later, held for the owner's review because they rewrote the first, then threaded on it → the
//! two-message budget holds → escalated when the touches run out.

use jiff::SignedDuration;
use openloop_tests::{Stack, reasons};

use crate::morning;

#[tokio::test]
async fn urgent_payment_recovery_escalates_after_its_two_messages() {
    let stack = Stack::start("payment").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;

    // Given a member whose payment failed.
    let email = stack.sarahs_payment_failed(&gym, &day0.to_string()).await;
    stack.run().await;

    // The owner reviews it first: payment recovery always needs a human's yes.
    let (_, list) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let tasks = list["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 1, "one task for the failed payment: {list}");
    let task = &tasks[0];
    assert_eq!(task["task_type"], "payment_recovery");
    assert_eq!(task["member"]["email"], email.as_str());
    assert_eq!(task["budget"]["messages_max"], 2);
    assert!(
        task["draft"]["body"].as_str().is_some_and(|b| b.contains("Sarah")),
        "a first draft greets the member: {task}"
    );
    let id = task["id"].as_str().unwrap_or_default().to_owned();
    assert!(stack.outbox_to(&email).await.is_empty(), "nothing is sent before approval");

    // When the owner approves with an edit, the first mail goes out at the next run.
    let edited = serde_json::json!({"subject": "About your membership payment", "body": "Hi Sarah, your card was declined. Could you update it? Coach Mike"});
    let (status, approved) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, edited).await;
    assert_eq!((status, approved["status"].as_str()), (200, Some("ready")), "{approved}");
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "the first touch: {mail:?}");
    assert_eq!(mail[0]["subject"], "About your membership payment");
    assert!(mail[0]["text"].as_str().is_some_and(|t| t.contains("your card was declined")));
    assert!(mail[0]["reply_to"].as_str().is_some_and(|r| r.starts_with("reply+")));
    assert!(
        mail[0]["list_unsubscribe"]
            .as_str()
            .is_some_and(|u| u.contains("/unsubscribe?token="))
    );
    let (_, after_first) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(after_first["status"], "waiting");
    assert_eq!(after_first["budget"]["messages_used"], 1);
    let day1 = day0 + SignedDuration::from_hours(24);
    let next: jiff::Timestamp = after_first["next_action_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{after_first}"));
    // Urgent cadence: a day later, in the afternoon hours (spec §29.3).
    openloop_tests::assert_follow_up_on(next, day1);
    assert_eq!(next, stack.due_at(&gym, &id).await);

    // Nothing happens before it is due.
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1);

    // A day later, when it is due: the owner rewrote the first mail, so the follow-up is
    // drafted to follow it and waits for their review (issue 42) instead of going out canned;
    // approved, it goes out, threaded on the first mail.
    stack.set_clock(&next.to_string()).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "nothing canned went out");
    let (_, held) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(held["status"], "pending_review", "{held}");
    let (status, approved) = stack
        .post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, serde_json::json!({}))
        .await;
    assert_eq!(status, 200, "{approved}");
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 2, "the follow-up: {mail:?}");
    // The member never answered: the same subject, no "Re:".
    assert_eq!(mail[1]["subject"], "About your membership payment");
    assert_eq!(mail[1]["in_reply_to"], mail[0]["message_id"]);
    assert!(
        mail[1]["references"].as_array().is_some_and(|r| r.contains(&mail[0]["message_id"])),
        "{:?}",
        mail[1]
    );
    assert_eq!(
        mail[1]["reply_to"], mail[0]["reply_to"],
        "replies to either mail reach the same task"
    );

    // Two days after that the next touch is due, but the budget of two messages is spent:
    // the urgent cadence hands the task to the owner instead of sending a third.
    // Looked at when the task says (two days after the second mail left), however slow the
    // machine: a look at exactly day 3 could come before it.
    let (_, after_second) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let next: jiff::Timestamp = after_second["next_action_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{after_second}"));
    assert!(next >= day0 + SignedDuration::from_hours(72), "day 3 at the earliest, not {next}");
    stack.set_clock(&next.to_string()).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 2, "never more than the budget");
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(done["status"], "escalated", "{done}");
    assert_eq!(done["budget"]["messages_used"], 2);
    assert_eq!(done["outcome_reason"], "budget_messages_exhausted");

    // Every step is in the log, oldest first, and the conversation holds both messages.
    let expected = [
        "manual_mode_requires_review",
        "owner_approved_with_edits",
        "first_touch_due",
        "send_reserved",
        "message_sent",
        "follow_up_due",
        "owners_voice_follow_up",
        "owner_approved",
        "follow_up_due",
        "send_reserved",
        "message_sent",
        "budget_messages_exhausted",
    ];
    assert_eq!(reasons(&done), expected, "{done}");
    let log = done["log"].as_array().cloned().unwrap_or_default();
    assert!(
        log.first()
            .is_some_and(|e| e["from_status"].is_null() && e["to_status"] == "pending_review")
    );
    assert!(
        log.last()
            .is_some_and(|e| e["from_status"] == "waiting" && e["to_status"] == "escalated")
    );
    let agent_messages = done["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "agent").count())
        .unwrap_or(0);
    assert_eq!(agent_messages, 2);

    // A week later nothing more has been sent.
    stack.set_clock(&(day0 + SignedDuration::from_hours(24 * 8)).to_string()).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 2);
    stack.running.stop();
}

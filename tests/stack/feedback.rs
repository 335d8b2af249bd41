//! The owner's word on outcomes through CONTRACT.md (spec §27.4, §28.5,
//! §37.6): thumbs up or down on a closed or escalated task, refused on any other; a closed
//! task's outcome corrected, with its value, the scorecard and the daily metrics following.

use jiff::SignedDuration;
use openloop_tests::{Client, Stack, reasons};
use serde_json::{Value, json};

use crate::morning;

async fn task(stack: &Stack, token: &str, id: &str) -> Value {
    let (status, body) = stack.get(&format!("/api/v1/tasks/{id}"), token).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The daily metrics' totals for today, once the hourly fold has read the log.
async fn totals(stack: &Stack, token: &str) -> Value {
    let later = stack.now().await + SignedDuration::from_mins(10);
    stack.set_clock(&later.to_string()).await;
    stack.run().await;
    let (status, body) = stack.get("/api/v1/metrics", token).await;
    assert_eq!(status, 200, "{body}");
    body["totals"].clone()
}

/// Given an open task, feedback is refused (409 `invalid_state`) and changes nothing; on an
/// escalated and on a closed task it is stored, shown, logged, and counted in the metrics.
#[tokio::test]
async fn the_owner_rates_closed_and_escalated_tasks_and_the_metrics_count_it() {
    let stack = Stack::start("feedback-rate").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_fb", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_fb").await;
    stack.run().await;

    let before = task(&stack, &gym.token, &id).await;
    assert_eq!(before["status"], "waiting", "{before}");
    let (status, refused) = stack
        .post(&format!("/api/v1/tasks/{id}/feedback"), &gym.token, json!({"rating": "up"}))
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (409, Some("invalid_state")),
        "{refused}"
    );
    let unchanged = task(&stack, &gym.token, &id).await;
    assert_eq!(
        (unchanged["version"].clone(), unchanged.get("feedback")),
        (before["version"].clone(), None)
    );

    let mail = stack.outbox_to(&email).await;
    let question = Client::reply_to(&mail[0], "fb-1@mail.example.net", "Do you still run the Saturday 9am class?");
    assert_eq!(stack.inbound(&question).await.0, 202);
    assert_eq!(task(&stack, &gym.token, &id).await["status"], "escalated");

    for (body, code) in [
        (json!({"rating": "meh"}), 422),
        (json!({"rating": "up", "stars": 5}), 422),
        (json!({"rating": "up", "comment": "x".repeat(2_001)}), 422),
    ] {
        let (status, error) = stack.post(&format!("/api/v1/tasks/{id}/feedback"), &gym.token, body).await;
        assert_eq!(status, code, "{error}");
    }
    let (status, theirs) = stack
        .post(&format!("/api/v1/tasks/{id}/feedback"), &other.token, json!({"rating": "up"}))
        .await;
    assert_eq!(status, 404, "another account's task: {theirs}");

    let (status, rated) = stack
        .post(
            &format!("/api/v1/tasks/{id}/feedback"),
            &gym.token,
            json!({"rating": "up", "comment": "Right to ask me <b>first</b>"}),
        )
        .await;
    assert_eq!(status, 200, "{rated}");
    assert_eq!(
        (
            rated["status"].as_str(),
            rated["feedback"]["rating"].as_str(),
            rated["feedback"]["comment"].as_str()
        ),
        (Some("escalated"), Some("up"), Some("Right to ask me <b>first</b>")),
        "stored as the owner wrote it, and the status stays"
    );
    let detail = task(&stack, &gym.token, &id).await;
    assert_eq!(reasons(&detail).last().copied(), Some("owner_feedback_up"), "{detail}");

    let (status, closed) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{closed}");
    let (status, down) = stack
        .post(
            &format!("/api/v1/tasks/{id}/feedback"),
            &gym.token,
            json!({"rating": "down", "comment": "Never came back"}),
        )
        .await;
    assert_eq!((status, down["feedback"]["rating"].as_str()), (200, Some("down")), "{down}");

    let totals = totals(&stack, &gym.token).await;
    assert_eq!(
        (totals["feedback_up"].as_u64(), totals["feedback_down"].as_u64()),
        (Some(1), Some(1)),
        "{totals}"
    );
}

/// Given a task closed unanswered, the owner corrects its outcome: the value follows the new
/// outcome, the scorecard counts it, the log and the metrics say so; an open task's outcome is
/// not corrected (409) and an outcome its type lacks is refused (422).
#[tokio::test]
async fn the_owner_corrects_a_closed_tasks_outcome_and_attribution_follows() {
    let stack = Stack::start("feedback-outcome").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_oc", "Ana", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_oc").await;
    stack.run().await;

    let (status, open) = stack
        .post(&format!("/api/v1/tasks/{id}/outcome"), &gym.token, json!({"outcome": "retained"}))
        .await;
    assert_eq!((status, open["error"]["code"].as_str()), (409, Some("invalid_state")), "{open}");

    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let (status, bad) = stack
        .post(&format!("/api/v1/tasks/{id}/outcome"), &gym.token, json!({"outcome": "paid"}))
        .await;
    assert_eq!((status, bad["error"]["code"].as_str()), (422, Some("invalid_outcome")), "{bad}");

    let (status, corrected) = stack
        .post(
            &format!("/api/v1/tasks/{id}/outcome"),
            &gym.token,
            json!({"outcome": "retained", "note": "She came back at the front desk"}),
        )
        .await;
    assert_eq!(status, 200, "{corrected}");
    assert_eq!(
        (
            corrected["status"].as_str(),
            corrected["outcome"].as_str(),
            corrected["provisional"].as_bool()
        ),
        (Some("cancelled"), Some("retained"), Some(false)),
        "the outcome changes, not the lifecycle"
    );
    assert!(corrected["attributed_value"].as_f64().is_some_and(|v| v > 0.0), "{corrected}");
    let detail = task(&stack, &gym.token, &id).await;
    assert_eq!(reasons(&detail).last().copied(), Some("owner_corrected_outcome"));
    assert!(
        detail["messages"].as_array().is_some_and(|m| m
            .iter()
            .any(|m| m["role"] == "owner" && m["content"] == "She came back at the front desk")),
        "{detail}"
    );

    let (status, card) = stack.get("/api/v1/scorecard", &gym.token).await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(card["outcomes"]["retained"], 1, "{card}");

    let totals = totals(&stack, &gym.token).await;
    assert_eq!(totals["outcome_corrections"].as_u64(), Some(1), "{totals}");
}

/// Through the contract: the owner takes over an escalated task with
/// `POST /api/v1/tasks/{id}/resolve` — it closes as completed with their outcome, the move
/// from `escalated` logged as theirs, and nothing more is sent to the member; taking over a
/// task that is not escalated or open is refused and changes nothing.
#[tokio::test]
async fn the_owner_takes_over_an_escalated_task_and_it_closes_completed() {
    let stack = Stack::start("feedback-take-over").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let id = crate::dashboard::escalated_task(&stack, &gym, "m_over", "Oli", "Can I pause my membership?", day0).await;
    let body = json!({"outcome": "owner_handled", "note": "Called Oli myself"});
    let (status, done) = stack.post(&format!("/api/v1/tasks/{id}/resolve"), &gym.token, body.clone()).await;
    assert_eq!(status, 200, "{done}");
    let closed = task(&stack, &gym.token, &id).await;
    assert_eq!(
        (closed["status"].as_str(), closed["outcome"].as_str()),
        (Some("completed"), Some("owner_handled")),
        "{closed}"
    );
    let log = closed["log"].as_array().cloned().unwrap_or_default();
    let last = log.last().cloned().unwrap_or_default();
    assert_eq!(
        (last["from_status"].as_str(), last["to_status"].as_str(), last["reason"].as_str()),
        (Some("escalated"), Some("completed"), Some("owner_resolved")),
        "{last}"
    );
    let (status, again) = stack.post(&format!("/api/v1/tasks/{id}/resolve"), &gym.token, body).await;
    assert_eq!(status, 409, "a closed task cannot be taken over: {again}");
    assert_eq!(task(&stack, &gym.token, &id).await, closed, "the refusal changed nothing");
    stack
        .set_clock(&(day0 + jiff::SignedDuration::from_hours(24 * 4)).to_string())
        .await;
    stack.run().await;
    let email = closed["member"]["email"].as_str().unwrap_or_default().to_owned();
    let mail = stack.outbox_to(&email).await;
    assert_eq!(
        mail.len(),
        2,
        "the first touch and the holding reply, before the take-over: {mail:?}"
    );
    assert!(
        mail[1]["text"].as_str().is_some_and(|t| t.contains("get back to you soon")),
        "{mail:?}"
    );
}

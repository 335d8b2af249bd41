//! Bad input gets a clear error in CONTRACT.md's shape and changes nothing.

use openloop_tests::{Stack, events};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn forged_stale_malformed_unknown_and_repeated_webhooks() {
    let stack = Stack::start("refusals").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await.as_second();
    let body = events::payment_failed("m_9", &stack.now().await.to_string()).to_string();

    let forged = openloop_tests::sign("whsec_Zm9yZ2Vk", "evt_1", now, body.as_bytes());
    let (status, error) = stack.webhook_signed(&gym, "evt_1", now, &body, Some(forged)).await;
    assert_eq!(status, 401, "forged: {error}");
    assert_eq!(error["error"]["code"], "unauthorized");

    let (status, _) = stack.webhook_signed(&gym, "evt_1", now - 330, &body, None).await;
    assert_eq!(status, 401, "stale timestamps are refused");
    let (status, _) = stack.webhook_signed(&gym, "evt_1", now + 330, &body, None).await;
    assert_eq!(status, 401, "future timestamps are refused");

    let (status, error) = stack.webhook_signed(&gym, "evt_2", now, "{not json", None).await;
    assert_eq!((status, error["error"]["code"].as_str()), (400, Some("malformed_json")), "{error}");
    let (status, error) = stack
        .webhook_signed(
            &gym,
            "evt_3",
            now,
            &json!({"type": "payment.failed", "timestamp": "2026-11-02T14:00:00Z", "data": {}}).to_string(),
            None,
        )
        .await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (422, Some("invalid_event")),
        "well-formed JSON that is not a valid event: {error}"
    );

    let (status, _) = stack
        .webhook(
            &gym,
            "evt_4",
            json!({"type": "class.scheduled", "timestamp": "2026-11-02T14:00:00Z", "data": {}}),
        )
        .await;
    assert_eq!(status, 202, "unknown types are accepted and ignored");

    let (status, _) = stack.webhook_signed(&gym, "evt_5", now, &body, None).await;
    assert_eq!(status, 202);
    let (status, repeat) = stack.webhook_signed(&gym, "evt_5", now, &body, None).await;
    assert_eq!(status, 200, "a repeated webhook-id is accepted and changes nothing: {repeat}");
    stack.run().await;
    let (_, list) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(
        list["tasks"].as_array().map(Vec::len),
        Some(1),
        "only the first delivery made a task: {list}"
    );

    let (status, _) = stack
        .call(
            Method::POST,
            "/webhooks/pushpress/01JD0000000000000000000000",
            None,
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 404, "an unknown account");
    stack.running.stop();
}

#[tokio::test]
async fn owner_calls_are_scoped_checked_and_atomic() {
    let stack = Stack::start("owner").await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;

    let (status, error) = stack.call(Method::GET, "/api/v1/tasks", None, None).await;
    assert_eq!((status, error["error"]["code"].as_str()), (401, Some("unauthorized")));
    let (status, _) = stack.get("/api/v1/tasks", "olk_not_a_token").await;
    assert_eq!(status, 401);
    let (status, _) = stack.post("/api/v1/accounts", &gym.token, json!({"name": "x"})).await;
    assert_eq!(status, 401, "owners are not admins");

    let (status, task) = stack.post("/api/v1/tasks", &gym.token, json!({"task_type": "ad_hoc", "member_id": "m_1", "goal": "Ask about the new schedule", "draft": {"subject": "New schedule", "body": "Hi! Does the new schedule work for you?"}})).await;
    assert_eq!(status, 201, "{task}");
    assert_eq!(task["status"], "pending_review", "ad hoc tasks are always reviewed");
    let id = task["id"].as_str().unwrap_or_default().to_owned();

    let (status, again) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "ad_hoc", "member_id": "m_1", "goal": "Again"}),
        )
        .await;
    assert_eq!(
        (status, again["id"].as_str()),
        (200, Some(id.as_str())),
        "one active task per member and type: {again}"
    );

    let (status, _) = stack.get(&format!("/api/v1/tasks/{id}"), &other.token).await;
    assert_eq!(status, 404, "another account's task is not found");
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &other.token, json!({})).await;
    assert_eq!(status, 404);

    let (status, error) = stack
        .call(Method::POST, "/api/v1/tasks", Some(&gym.token), Some(json!("{bad")))
        .await;
    assert_eq!(status, 422, "{error}");
    let (status, error) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "ad_hoc", "member_id": "m#1", "goal": "x"}),
        )
        .await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (422, Some("invalid_member_id")),
        "{error}"
    );
    let (status, error) = stack
        .post(&format!("/api/v1/tasks/{id}/resolve"), &gym.token, json!({"outcome": "made_up"}))
        .await;
    assert_eq!((status, error["error"]["code"].as_str()), (422, Some("invalid_outcome")), "{error}");

    let (status, skipped) = stack.post(&format!("/api/v1/tasks/{id}/skip"), &gym.token, json!({})).await;
    assert_eq!((status, skipped["status"].as_str()), (200, Some("cancelled")));
    let (status, error) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (409, Some("invalid_transition")),
        "{error}"
    );
    let (_, detail) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(detail["status"], "cancelled", "the refused approval changed nothing");
    assert_eq!(detail["log"].as_array().map(Vec::len), Some(2));

    let (status, settings) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"daily_send_limit": 5, "timezone": "Europe/Berlin"})),
        )
        .await;
    assert_eq!(
        (
            status,
            settings["daily_send_limit"].as_u64(),
            settings["member_weekly_limit"].as_u64()
        ),
        (200, Some(5), Some(3)),
        "{settings}"
    );
    let (status, error) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"daily_send_limit": 7, "timezone": "Mars/Olympus"})),
        )
        .await;
    assert_eq!((status, error["error"]["code"].as_str()), (422, Some("invalid_timezone")));
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (settings["daily_send_limit"].as_u64(), settings["timezone"].as_str()),
        (Some(5), Some("Europe/Berlin")),
        "a refused update changes nothing"
    );

    let (status, _) = stack.call(Method::GET, "/health", None, None).await;
    assert_eq!(status, 200);
    let (status, error) = stack
        .call(Method::POST, "/_local/clock", None, Some(json!({"now": "2001-01-01T00:00:00Z"})))
        .await;
    assert_eq!((status, error["error"]["code"].as_str()), (409, Some("clock_backwards")));
    stack.running.stop();
}

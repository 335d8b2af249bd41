//! The gates of issue 3 through CONTRACT.md with the test clock: the account kill switch,
//! autonomy (ramp, dry run, plan), and the stale guard.

use openloop_tests::{Stack, events};
use serde_json::{Value, json};

use crate::morning;

fn reasons(task: &Value) -> Vec<String> {
    task["log"]
        .as_array()
        .map(|l| l.iter().filter_map(|e| e["reason"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Given an owner who pulled their account's kill switch, when an approved task comes due,
/// then nothing is sent and the step is deferred with the reason; after resuming, it sends.
#[tokio::test]
async fn the_account_kill_switch_holds_every_send_until_the_owner_resumes() {
    let stack = Stack::start("gates-kill").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = format!("kill+{}@example.com", gym.id.to_ascii_lowercase());
    let (status, _) = stack
        .webhook(&gym, "evt_kill", events::member_created("m_kill", &email, "Kim", &day0.to_string()))
        .await;
    assert_eq!(status, 202);
    stack.run().await;

    let (status, paused) = stack.post("/api/v1/pause", &gym.token, json!({})).await;
    assert_eq!((status, paused["paused"].as_bool()), (200, Some(true)), "{paused}");
    let (status, created) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_kill", "goal": "Bring Kim back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    assert!(stack.outbox_to(&email).await.is_empty(), "nothing leaves a paused account");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert!(reasons(&task).iter().any(|r| r == "account_paused"), "{task}");
    let (_, state) = stack.get("/api/v1/pause", &gym.token).await;
    assert_eq!(state["paused"], true);

    let (status, resumed) = stack.post("/api/v1/resume", &gym.token, json!({})).await;
    assert_eq!((status, resumed["paused"].as_bool()), (200, Some(false)));
    stack.set_clock(&(day0 + jiff::SignedDuration::from_hours(1)).to_string()).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "sent once resumed");
    stack.running.stop();
}

/// The admin can pull any account's switch; an owner token cannot use the admin route.
#[tokio::test]
async fn the_admin_pauses_an_account_and_owners_cannot_use_the_admin_route() {
    let stack = Stack::start("gates-admin-kill").await;
    let gym = stack.create_account("manual").await;
    let path = format!("/api/v1/admin/accounts/{}/pause", gym.id);
    let (status, body) = stack.post(&path, &gym.token, json!({})).await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = stack.post(&path, &stack.admin_token, json!({})).await;
    assert_eq!((status, body["paused"].as_bool()), (200, Some(true)), "{body}");
    let (status, body) = stack
        .post(
            "/api/v1/admin/accounts/01ARZ3NDEKTSV4RRFFQ69G5FAV/pause",
            &stack.admin_token,
            json!({}),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    stack.running.stop();
}

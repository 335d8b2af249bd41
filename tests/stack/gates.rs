//! The gates through CONTRACT.md with the test clock: the account kill switch,
//! autonomy (ramp, dry run, plan), and the stale guard.

use openloop_tests::{Stack, events, reasons};
use serde_json::json;

use crate::morning;

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
    assert!(reasons(&task).contains(&"account_paused"), "{task}");
    let (_, state) = stack.get("/api/v1/pause", &gym.token).await;
    assert_eq!(state["paused"], true);

    let (status, resumed) = stack.post("/api/v1/resume", &gym.token, json!({})).await;
    assert_eq!((status, resumed["paused"].as_bool()), (200, Some(false)));
    // The pause held it an hour, past a first touch's morning hours: it goes at the next ones.
    let held = stack.run_when_due(&gym, &id).await;
    let an_hour = day0 + jiff::SignedDuration::from_hours(1);
    assert!(held.duration_since(an_hour).abs() < jiff::SignedDuration::from_mins(1), "{held}");
    assert!(stack.outbox_to(&email).await.is_empty(), "10:00 is past the morning hours");
    let due = stack.run_when_due(&gym, &id).await;
    assert_eq!(due.to_zoned(openloop_tests::new_york()).hour(), 8, "{due}");
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

/// Given a gym, when the owner asks for a dry run and for a plan through the API, then the
/// dry run walks the pipeline without mail and the plan waits for review with its steps;
/// and `GET /api/v1/autonomy` shows the ramp.
#[tokio::test]
async fn dry_run_and_plan_tasks_through_the_api() {
    let stack = Stack::start("gates-modes").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("limited_auto").await;
    let email = format!("modes+{}@example.com", gym.id.to_ascii_lowercase());
    let (status, _) = stack
        .webhook(
            &gym,
            "evt_modes",
            events::member_created("m_modes", &email, "Mo", &day0.to_string()),
        )
        .await;
    assert_eq!(status, 202);
    stack.run().await;

    let (status, dry) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_modes", "goal": "Bring Mo back", "confidence": 90, "execution_mode": "dry_run"}),
        )
        .await;
    assert_eq!((status, dry["execution_mode"].as_str()), (201, Some("dry_run")), "{dry}");
    let id = dry["id"].as_str().unwrap_or_default().to_owned();
    if dry["status"] == "pending_review" {
        let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200);
    }
    stack.run().await;
    assert!(stack.outbox_to(&email).await.is_empty(), "a dry run never mails");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert!(reasons(&task).contains(&"dry_run_would_send"), "{task}");
    assert_eq!(task["touch"], 1);

    let (status, planned) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "payment_recovery", "member_id": "m_modes", "goal": "Fix the card", "confidence": 90, "execution_mode": "plan"}),
        )
        .await;
    assert_eq!(status, 201, "{planned}");
    assert_eq!(planned["status"], "pending_review");
    assert_eq!(
        planned["plan"]["steps"].as_array().map(Vec::len),
        Some(2),
        "one step per allowed touch: {planned}"
    );

    let (status, bad) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "win_back", "member_id": "m_modes", "goal": "x", "execution_mode": "yolo"}),
        )
        .await;
    assert!(status == 400 || status == 422, "{status} {bad}");

    let (status, autonomy) = stack.get("/api/v1/autonomy", &gym.token).await;
    assert_eq!((status, autonomy["phase"].as_str()), (200, Some("full")), "{autonomy}");
    let (status, settings) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"agent_ramps": {"sales": day0.to_string()}})),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    let (_, autonomy) = stack.get("/api/v1/autonomy", &gym.token).await;
    assert_eq!(autonomy["agents"]["sales"]["phase"], "shadow", "{autonomy}");
    assert_eq!(autonomy["agents"]["retention"]["phase"], "full");
    stack.running.stop();
}

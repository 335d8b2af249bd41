//! The creation rails and the escalation timer through CONTRACT.md: the owner API answers 429
//! `limited` past the flood limits, and an ignored escalation is reminded at 48
//! hours and cancelled at 7 days (§17.5).

use openloop_core::kernel::limits;
use openloop_tests::Stack;
use serde_json::json;

/// Given a gym that created its 50 tasks today, the owner's 51st gets CONTRACT.md's 429.
#[tokio::test]
async fn the_owner_api_answers_429_limited_past_the_daily_limit() {
    let stack = Stack::start("limited").await;
    let gym = stack.create_account("manual").await;
    let body = |n: u32| {
        json!({"task_type": "ad_hoc", "member_id": format!("m_{n}"), "goal": "Say hello",
        "draft": {"subject": "Hello", "body": "Hi there"}})
    };
    for n in 0..limits::MAX_TASKS_PER_ACCOUNT_PER_DAY {
        let (status, created) = stack.post("/api/v1/tasks", &gym.token, body(n)).await;
        assert_eq!(status, 201, "{created}");
    }
    let (status, refused) = stack.post("/api/v1/tasks", &gym.token, body(999)).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (429, Some("limited")), "{refused}");
    let (_, list) = stack.get("/api/v1/tasks?member_id=m_999", &gym.token).await;
    assert_eq!(list["tasks"].as_array().map(Vec::len), Some(0), "nothing half-applied: {list}");
}

/// Given a staff to-do the owner never acts on, it escalates; 48 hours later the owner gets
/// a reminder in its conversation and log, and 7 days after escalating it is cancelled as
/// `escalation_timeout`.
#[tokio::test]
async fn an_ignored_escalation_is_reminded_then_cancelled() {
    let stack = Stack::start("escalation-timeout").await;
    let gym = stack.create_account("manual").await;
    let (status, created) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "staff_call_member", "member_id": "m_ignored", "goal": "Call Dana about her shoulder"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let start = stack.now().await;
    let mut escalated_at = None;
    for day in 1..=4 {
        stack
            .set_clock(&(start + jiff::SignedDuration::from_hours(24 * day + 1)).to_string())
            .await;
        stack.run().await;
        let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
        if task["status"] == "escalated" {
            escalated_at = Some(stack.now().await);
            break;
        }
    }
    let escalated_at = escalated_at.unwrap_or_else(|| panic!("the to-do never escalated"));
    let (stack, path, token) = (&stack, format!("/api/v1/tasks/{id}"), gym.token.clone());
    let task_at = |hours: i64| {
        let (path, token) = (path.clone(), token.clone());
        async move {
            stack
                .set_clock(&(escalated_at + jiff::SignedDuration::from_hours(hours)).to_string())
                .await;
            stack.run().await;
            stack.get(&path, &token).await.1
        }
    };
    let reminders = |task: &serde_json::Value| {
        task["log"]
            .as_array()
            .map_or(0, |l| l.iter().filter(|e| e["reason"] == "escalation_reminder").count())
    };

    let before = task_at(47).await;
    assert_eq!((before["status"].as_str(), reminders(&before)), (Some("escalated"), 0), "{before}");
    let reminded = task_at(49).await;
    assert_eq!(
        (reminded["status"].as_str(), reminders(&reminded)),
        (Some("escalated"), 1),
        "{reminded}"
    );
    assert!(
        reminded["messages"].as_array().is_some_and(|m| m
            .iter()
            .any(|m| m["role"] == "system" && m["content"].as_str().is_some_and(|c| c.starts_with("Reminder")))),
        "{reminded}"
    );
    let waiting = task_at(24 * 6).await;
    assert_eq!(
        (waiting["status"].as_str(), reminders(&waiting)),
        (Some("escalated"), 1),
        "one reminder"
    );
    let closed = task_at(24 * 7 + 1).await;
    assert_eq!(closed["status"], "cancelled", "{closed}");
    assert_eq!(closed["outcome_reason"], "escalation_timeout", "{closed}");
}

/// Through the contract: `GET /api/v1/settings` shows the sending phase and
/// today's cap — a gym onboarded 10 days ago is in the ramp's limited phase (10 a day) and the
/// warm-up's second week (5 a day): the lower, 5, is today's cap; switching a gym with no
/// onboarding date to limited auto starts it at shadow (nothing sent).
#[tokio::test]
async fn the_settings_show_the_sending_phase_and_todays_cap() {
    let stack = Stack::start("settings-sending").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let onboarded = day0 - jiff::SignedDuration::from_hours(24 * 10);
    let body = json!({"name": "Warm Gym", "timezone": "America/New_York", "execution_mode": "limited_auto",
        "onboarded_at": onboarded.to_string()});
    let (status, gym) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    assert_eq!(status, 201, "{gym}");
    let token = gym["api_token"].as_str().unwrap_or_default().to_owned();
    let (status, settings) = stack.get("/api/v1/settings", &token).await;
    assert_eq!(status, 200, "{settings}");
    assert_eq!(
        (
            settings["sending"]["ramp_phase"].as_str(),
            settings["sending"]["warmup_cap"].as_u64(),
            settings["sending"]["daily_send_cap"].as_u64()
        ),
        (Some("limited"), Some(5), Some(5)),
        "{settings}"
    );

    let body = json!({"name": "New Gym", "timezone": "America/New_York", "execution_mode": "manual"});
    let (status, gym) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    assert_eq!(status, 201, "{gym}");
    let token = gym["api_token"].as_str().unwrap_or_default().to_owned();
    let (status, _) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&token),
            Some(json!({"execution_mode": "limited_auto"})),
        )
        .await;
    assert_eq!(status, 200);
    let (_, settings) = stack.get("/api/v1/settings", &token).await;
    assert_eq!(
        (
            settings["sending"]["ramp_phase"].as_str(),
            settings["sending"]["daily_send_cap"].as_u64()
        ),
        (Some("shadow"), Some(0)),
        "{settings}"
    );
}

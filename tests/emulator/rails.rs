//! The creation rails and the escalation timer on DynamoDB: concurrent creators never get
//! past the flood limits (spec §7.9), the owner API answers 429 `limited`, and an ignored
//! escalation is reminded at 48 hours and cancelled at 7 days (§17.5) through CONTRACT.md.

use std::sync::Arc;

use openloop_core::engine::{AccountSecrets, Created, NewAccount, NewTask};
use openloop_core::error::EngineError;
use openloop_core::flood::Limit;
use openloop_core::gate::GateContext;
use openloop_core::ids::MemberId;
use openloop_core::limits;
use openloop_core::task::{Draft, TriggerType};
use openloop_tests::{Scratch, Stack, unique_prefix};
use serde_json::json;

/// Given 12 creators racing to make 80 tasks for one gym on DynamoDB, then exactly the
/// day's limit of tasks exists and every other creation was refused by it.
#[tokio::test]
async fn concurrent_creators_never_exceed_the_daily_limit() {
    let scratch = Scratch::new("flood");
    let (engine, _, _clock) = scratch.engine(None).await;
    let secrets = AccountSecrets {
        api_token: "t".into(),
        api_token_hash: unique_prefix("hash"),
        webhook_secret: "whsec_dGVzdA==".into(),
    };
    let input: NewAccount =
        serde_json::from_value(json!({"name": "Flood Gym", "timezone": "America/New_York"})).unwrap_or_else(|e| panic!("{e}"));
    let account = Arc::new(engine.create_account(input, secrets).await.unwrap_or_else(|e| panic!("{e}")));
    let engine = Arc::new(engine);
    let mut workers = Vec::new();
    for worker in 0..12 {
        let (engine, account) = (engine.clone(), account.clone());
        workers.push(tokio::spawn(async move {
            let (mut made, mut refused) = (0u32, 0u32);
            for n in (worker..80).step_by(12) {
                let input = NewTask {
                    task_type: "churn_risk".into(),
                    member_id: MemberId::parse(&format!("m_flood{n}")).unwrap_or_else(|e| panic!("{e}")),
                    goal: "Re-engage".into(),
                    confidence: Some(80),
                    draft: Some(Draft {
                        subject: "Checking in".into(),
                        body: "We miss you".into(),
                    }),
                    trigger_type: TriggerType::Manual,
                    trigger_event_id: None,
                    gate: GateContext::default(),
                    context: serde_json::Value::Null,
                };
                match engine.create_task(&account, input).await {
                    Ok(Created::New(_)) => made += 1,
                    Err(EngineError::Limited(r)) if r.limit == Limit::DailyTasks => refused += 1,
                    other => panic!("unexpected: {other:?}"),
                }
            }
            (made, refused)
        }));
    }
    let (mut made, mut refused) = (0, 0);
    for worker in workers {
        let (m, r) = worker.await.unwrap_or_else(|e| panic!("{e}"));
        made += m;
        refused += r;
    }
    assert_eq!(
        (made, refused),
        (limits::MAX_TASKS_PER_ACCOUNT_PER_DAY, 80 - limits::MAX_TASKS_PER_ACCOUNT_PER_DAY)
    );
    let query = openloop_core::ports::TaskQuery {
        limit: 200,
        ..Default::default()
    };
    let (tasks, _) = engine.list_tasks(account.id, &query).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tasks.len() as u32, limits::MAX_TASKS_PER_ACCOUNT_PER_DAY, "stored tasks");
    println!("flood race: 12 creators, 80 asks, {made} created, {refused} refused by the daily limit");
}

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

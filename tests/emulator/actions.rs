//! Automation tasks and the action executor (spec §15, §31.5, §32) on DynamoDB: through the
//! owner API as CONTRACT.md describes it, and with the real PushPress client against a local
//! stub while workers race over one task and one action key.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use openloop_aws::pushpress::{PushPress, PushPressConfig};
use openloop_core::action::{Action, ActionClaim, ActionRecord, ActionState, ActionType, idempotency_key};
use openloop_core::engine::{CreateOptions, NewTask};
use openloop_core::gate::GateContext;
use openloop_core::ids::MemberId;
use openloop_core::ports::{Clock, TaskStore};
use openloop_core::task::{TaskStatus, TriggerType};
use openloop_core::work::WorkItem;
use openloop_tests::{Scratch, Stack, reasons};
use serde_json::json;

/// Given the owner API, when automation tasks are created, then bad action lists are refused
/// with clear codes, a good one is shown on the task, and once approved the internal actions
/// run and the task completes — while PushPress changes without a configured connector go to
/// the owner with the reason.
#[tokio::test]
async fn automation_tasks_are_made_and_run_through_the_api() {
    let stack = Stack::start("actions-api").await;
    let gym = stack.create_account("manual").await;
    for (body, code) in [
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Tidy up"}),
            "actions_required",
        ),
        (
            json!({"task_type": "churn_risk", "member_id": "m_a", "goal": "Bring back", "actions": [{"type": "tag_member", "tag": "vip"}]}),
            "actions_not_allowed",
        ),
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Mail", "actions": [{"type": "send_email"}]}),
            "unsupported_action",
        ),
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Go", "actions": [{"type": "launch"}]}),
            "unknown_action_type",
        ),
    ] {
        let (status, error) = stack.post("/api/v1/tasks", &gym.token, body).await;
        assert_eq!((status, error["error"]["code"].as_str()), (422, Some(code)), "{error}");
    }
    let (_, none) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(none["tasks"].as_array().map(Vec::len), Some(0), "refusals create nothing: {none}");

    let body = json!({"task_type": "member_update", "member_id": "m_a", "goal": "Note the freeze",
        "actions": [{"type": "log_note", "text": "Asked to freeze in December"}, {"type": "research_member"}]});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["status"], "pending_review");
    assert_eq!(
        created["actions"][0],
        json!({"type": "log_note", "text": "Asked to freeze in December"})
    );
    let id = created["id"].as_str().expect("id").to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str()),
        (Some("completed"), Some("executed")),
        "{done}"
    );
    let messages: Vec<&str> = done["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(messages.iter().any(|m| m.contains("Asked to freeze in December")), "{messages:?}");

    let body = json!({"task_type": "member_update", "member_id": "m_b", "goal": "Tag",
        "actions": [{"type": "tag_member", "tag": "vip"}]});
    let (_, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    let id = created["id"].as_str().expect("id").to_owned();
    stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    stack.run().await;
    let (_, escalated) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(escalated["status"], "escalated", "{escalated}");
    assert!(reasons(&escalated).contains(&"no_connector_configured"), "{escalated}");
}

/// What the PushPress stub was asked: method, path and idempotency key.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

async fn pushpress_stub() -> (String, Seen) {
    async fn answer(State(seen): State<Seen>, method: Method, uri: Uri, headers: HeaderMap) -> axum::Json<serde_json::Value> {
        let key = headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        seen.lock().expect("lock").push((method.to_string(), uri.path().to_owned(), key));
        // Slow enough that racing workers overlap.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        axum::Json(json!({"ok": true}))
    }
    let seen: Seen = Arc::default();
    let app = Router::new().fallback(answer).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v3"), seen)
}

/// Given an approved member_update with three tags on DynamoDB and the real PushPress client,
/// when six workers run its step at once (duplicate deliveries), then one claims the run,
/// PushPress sees each tag exactly once with its own key, and the action log holds three
/// finished records; and eight racers claiming one action key get exactly one claim.
#[tokio::test]
async fn racing_workers_run_each_action_once() {
    let scratch = Scratch::new("actions-race");
    let (mut engine, store, clock) = scratch.engine(None).await;
    let (base, seen) = pushpress_stub().await;
    let config = PushPressConfig::new(&base, Some(secrecy::SecretString::from("pp-key"))).expect("config");
    engine.connector = Some(Arc::new(PushPress::new(config).expect("client")));
    let now = clock.now();
    let account = openloop_core::testing::sample_account(now);
    store.create_account(&account, "actions-race-token").await.expect("account");

    let member = MemberId::parse("m_race").expect("member");
    let input = NewTask {
        task_type: "member_update".into(),
        member_id: member.clone(),
        goal: "Tag for the spring party".into(),
        confidence: Some(100),
        draft: None,
        trigger_type: TriggerType::Manual,
        trigger_event_id: None,
        gate: GateContext::default(),
        context: serde_json::Value::Null,
    };
    let tags = ["vip", "spring", "early-bird"];
    let actions = tags.iter().map(|t| Action::TagMember { tag: (*t).into() }).collect();
    let options = CreateOptions::default().with_actions(actions);
    let task = engine
        .create_task_with(&account, input, options)
        .await
        .expect("create")
        .task()
        .clone();
    engine.approve(account.id, task.id, None).await.expect("approve");

    let item = WorkItem {
        account_id: account.id,
        task_id: task.id,
        due_at: now,
    };
    let runs = (0..6).map(|_| engine.execute(&item));
    let outcomes = futures::future::join_all(runs).await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");

    let done = store.get_task(account.id, task.id).await.expect("read").expect("task");
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some("executed"));
    let mut asked = seen.lock().expect("lock").clone();
    asked.sort();
    let mut expected: Vec<(String, String, String)> = tags
        .iter()
        .enumerate()
        .map(|(i, _)| {
            (
                "POST".to_owned(),
                "/v3/customers/m_race/tags".to_owned(),
                idempotency_key(task.id, ActionType::TagMember, &i.to_string()),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(asked, expected, "each tag once, with its own key");
    let log = store.task_actions(account.id, task.id).await.expect("actions");
    assert_eq!(log.len(), 3);
    assert!(log.iter().all(|r| r.state == ActionState::Done));

    let record = ActionRecord {
        account_id: account.id,
        task_id: task.id,
        key: idempotency_key(task.id, ActionType::LogNote, "race"),
        member_id: member,
        action: Action::LogNote { text: "race".into() },
        state: ActionState::Started,
        result: None,
        error: None,
        started_at: now,
        finished_at: None,
    };
    let claims = futures::future::join_all((0..8).map(|_| store.claim_action(&record))).await;
    let won = claims.iter().filter(|c| matches!(c, Ok(ActionClaim::Claimed))).count();
    assert_eq!(won, 1, "{claims:?}");
}

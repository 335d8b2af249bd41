//! The action executor (spec §15.3, §32.2) on DynamoDB, with the real PushPress client against
//! a local stub, while workers race over one task and one action key.

use std::sync::Arc;

use openloop_core::engine::{CreateOptions, Engine, NewTask};
use openloop_core::kernel::ids::MemberId;
use openloop_core::ports::{AccountStore, Clock, Idempotency, Tasks};
use openloop_core::rails::gate::GateContext;
use openloop_core::task::action::{Action, ActionClaim, ActionRecord, ActionState, ActionType, idempotency_key};
use openloop_core::task::work::WorkItem;
use openloop_core::task::{TaskStatus, TriggerType};
use openloop_pushpress::{PushPress, PushPressConfig};
use openloop_tests::{Scratch, pushpress_stub};

/// Given an approved member_update with three tags on DynamoDB and the real PushPress client,
/// when six workers run its step at once (duplicate deliveries), then one claims the run,
/// PushPress sees each tag exactly once with its own key, and the action log holds three
/// finished records; and eight racers claiming one action key get exactly one claim.
#[tokio::test]
async fn racing_workers_run_each_action_once() {
    let scratch = Scratch::new("actions-race");
    let (mut ports, config, store, clock) = scratch.ports(None).await;
    let (base, seen) = pushpress_stub().await;
    let pushpress = PushPressConfig::new(&base, Some(secrecy::SecretString::from("pp-key"))).expect("config");
    ports.connector = Some(Arc::new(PushPress::new(pushpress).expect("client")));
    let engine = Engine::new(ports, config);
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

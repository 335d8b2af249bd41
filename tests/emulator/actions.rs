//! The action executor on DynamoDB while workers race over one task and
//! one action key. Tags are Openloop's own member annotations (PushPress has none): the
//! annotation item takes concurrent changes under its version.

use openloop_core::engine::{CreateOptions, Engine, NewTask};
use openloop_core::kernel::ids::MemberId;
use openloop_core::ports::{AccountStore, AnnotationStore, Clock, Idempotency, TaskReads};
use openloop_core::rails::gate::GateContext;
use openloop_core::task::action::{Action, ActionClaim, ActionRecord, ActionState, ActionType, idempotency_key};
use openloop_core::task::work::WorkItem;
use openloop_core::task::{TaskStatus, TriggerType};
use openloop_tests::Scratch;

/// Given an approved member_update with three tags on DynamoDB, when six workers run its step
/// at once (duplicate deliveries), then one claims the run, the member holds the three tags,
/// and the action log holds three finished records, each under its own key; and eight racers
/// claiming one action key get exactly one claim.
#[tokio::test]
async fn racing_workers_run_each_action_once() {
    let scratch = Scratch::new("actions-race");
    let (ports, config, store, clock) = scratch.ports(None).await;
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
    let annotations = store.member_annotations(account.id, &member).await.expect("annotations");
    let mut expected_tags: Vec<&str> = tags.to_vec();
    expected_tags.sort_unstable();
    assert_eq!(annotations.tags.iter().map(String::as_str).collect::<Vec<_>>(), expected_tags);
    let log = store.task_actions(account.id, task.id).await.expect("actions");
    assert_eq!(log.len(), 3);
    let mut keys: Vec<String> = log.iter().map(|r| r.key.clone()).collect();
    keys.sort();
    let mut expected: Vec<String> = (0..tags.len())
        .map(|i| idempotency_key(task.id, ActionType::TagMember, &i.to_string()))
        .collect();
    expected.sort();
    assert_eq!(keys, expected, "each tag once, with its own key");
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

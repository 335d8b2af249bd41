//! The member item's open tasks on DynamoDB: kept by the transactions that open and close a
//! task, also when several of one member's tasks open and close at once; and backfilled for an
//! account from before they were kept (`openloop-admin backfill-tallies`).

use aws_sdk_dynamodb::types::AttributeValue;
use openloop_core::engine::NewTask;
use openloop_core::kernel::ids::{AccountId, MemberId, TaskId};
use openloop_core::ports::prelude::*;
use openloop_core::rails::gate::GateContext;
use openloop_core::task::reason::Reason;
use openloop_core::task::transition::{Why, created};
use openloop_core::task::{Draft, TaskStatus, TriggerType};
use openloop_tests::{Scratch, unique_prefix};

const TYPES: [&str; 4] = ["churn_risk", "payment_recovery", "win_back", "onboarding"];

fn task_for(member: &MemberId, task_type: &str) -> NewTask {
    NewTask {
        task_type: task_type.into(),
        member_id: member.clone(),
        goal: "Keep the member".into(),
        confidence: Some(80),
        draft: Some(Draft {
            subject: "Hello".into(),
            body: "Hi!".into(),
        }),
        trigger_type: TriggerType::Manual,
        trigger_event_id: None,
        gate: GateContext::default(),
        context: serde_json::Value::Null,
    }
}

/// The open tasks the send snapshot reads for `member`, and the tasks whose guards are held.
async fn kept_and_guarded(
    store: &openloop_aws::dynamo::DynamoStore,
    account: AccountId,
    member: &MemberId,
) -> (Option<Vec<TaskId>>, Vec<TaskId>) {
    let date = openloop_tests::morning(1).to_zoned(jiff::tz::TimeZone::UTC).date();
    let snapshot = store
        .send_snapshot(account, member, None, date)
        .await
        .unwrap_or_else(|e| panic!("snapshot: {e}"));
    let guarded = store
        .member_active_tasks(account, member)
        .await
        .unwrap_or_else(|e| panic!("guards: {e}"))
        .into_iter()
        .map(|t| t.id)
        .collect();
    (snapshot.member_open_tasks, guarded)
}

/// Given one member, when four tasks of theirs (four types) are created at once, then the
/// member item lists all four, as the guards do; when all four are cancelled at once, then it
/// lists none.
#[tokio::test]
async fn a_members_tasks_opened_and_closed_at_once_are_kept_on_the_member_item() {
    let scratch = Scratch::new("open-tasks-race");
    let (engine, store, _) = scratch.engine(None).await;
    let account = crate::loop_fixtures::gym(&engine, "Race Gym").await;
    let member = MemberId::parse("m_many").unwrap_or_else(|e| panic!("{e}"));
    let created = futures::future::join_all(TYPES.iter().map(|t| engine.create_task(&account, task_for(&member, t)))).await;
    let mut ids: Vec<TaskId> = created
        .into_iter()
        .map(|c| c.unwrap_or_else(|e| panic!("create: {e}")).task().id)
        .collect();
    ids.sort();
    let (kept, guarded) = kept_and_guarded(&store, account.id, &member).await;
    assert_eq!(guarded, ids, "every creation holds its guard");
    assert_eq!(kept, Some(ids.clone()), "and the member item lists every one");

    let cancelled = futures::future::join_all(ids.iter().map(|id| engine.cancel(account.id, *id))).await;
    for c in cancelled {
        c.unwrap_or_else(|e| panic!("cancel: {e}"));
    }
    let (kept, guarded) = kept_and_guarded(&store, account.id, &member).await;
    assert_eq!((kept, guarded), (Some(Vec::new()), Vec::new()), "every close took its task");
}

/// Given an account from before the member items kept open tasks (not marked, no `open_tasks`
/// on its member items), the snapshot says nothing is known (the step reads the guards); after
/// the backfill, the member item lists the member's open tasks and the account is marked; a
/// second backfill changes nothing.
#[tokio::test]
async fn a_backfill_keeps_an_older_accounts_open_tasks_on_its_member_items() {
    let scratch = Scratch::new("open-tasks-backfill");
    let (config, clients) = scratch.provision().await;
    let store = openloop_aws::dynamo::DynamoStore::new(clients.dynamodb.clone(), config.table.clone());
    let base = openloop_tests::morning(1);
    // As written before: the account unmarked, its member item without the open tasks.
    let mut account = openloop_core::testing::sample_account(base);
    account.member_open_tasks_kept = false;
    store
        .create_account(&account, &unique_prefix("hash"))
        .await
        .unwrap_or_else(|e| panic!("account: {e}"));
    let member = MemberId::parse("m_old").unwrap_or_else(|e| panic!("{e}"));
    let mut ids = Vec::new();
    for t in &TYPES[..2] {
        let mut task = openloop_core::testing::sample_task_for(account.id, member.clone(), TaskStatus::Ready, base);
        task.task_type = (*t).into();
        let log = created(&task, Why::new(Reason::ManualModeRequiresReview));
        store.create_task(&task, &log, &[]).await.unwrap_or_else(|e| panic!("create: {e}"));
        ids.push(task.id);
    }
    ids.sort();
    clients
        .dynamodb
        .update_item()
        .table_name(&config.table)
        .key("PK", AttributeValue::S(openloop_aws::keys::account_pk(account.id)))
        .key("SK", AttributeValue::S(openloop_aws::keys::member_sk(&member)))
        .update_expression("REMOVE open_tasks")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (kept, guarded) = kept_and_guarded(&store, account.id, &member).await;
    assert_eq!((kept, guarded), (None, ids.clone()), "not kept: the step reads the guards");

    assert_eq!(
        store.backfill_member_open_tasks(account.id).await.unwrap_or_else(|e| panic!("{e}")),
        1
    );
    let (kept, _) = kept_and_guarded(&store, account.id, &member).await;
    assert_eq!(kept, Some(ids.clone()), "backfilled");
    let marked = store
        .get_account(account.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("account"));
    assert!(marked.member_open_tasks_kept, "and marked");
    assert_eq!(
        store.backfill_member_open_tasks(account.id).await.unwrap_or_else(|e| panic!("{e}")),
        1
    );
    assert_eq!(kept_and_guarded(&store, account.id, &member).await.0, Some(ids), "again: the same");
}

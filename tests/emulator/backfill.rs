//! `openloop-admin backfill-tallies` on DynamoDB: a table written before the tallies existed
//! gets every task's tally, while the functions keep writing the same tasks.

use aws_sdk_dynamodb::types::AttributeValue;
use jiff::SignedDuration;
use openloop_aws::dynamo::DynamoStore;
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::ports::TaskQuery;
use openloop_core::ports::prelude::*;
use openloop_core::task::commit::TaskCommit;
use openloop_core::task::reason::Reason;
use openloop_core::task::tally::TaskTally;
use openloop_core::task::transition::{Why, created, transition};
use openloop_core::task::{Task, TaskStatus};
use openloop_core::testing::sample_task_for;
use openloop_tests::Scratch;

/// Removes every tally of `account`, as on a table from before them.
async fn forget_tallies(client: &aws_sdk_dynamodb::Client, table: &str, account: AccountId) {
    let pk = openloop_aws::keys::account_pk(account);
    let out = client
        .query()
        .table_name(table)
        .key_condition_expression("PK = :pk AND begins_with(SK, :tally)")
        .expression_attribute_values(":pk", AttributeValue::S(pk.clone()))
        .expression_attribute_values(":tally", AttributeValue::S("TALLY#".into()))
        .send()
        .await
        .expect("query");
    for item in out.items.unwrap_or_default() {
        client
            .delete_item()
            .table_name(table)
            .key("PK", AttributeValue::S(pk.clone()))
            .key("SK", item.get("SK").cloned().expect("SK"))
            .send()
            .await
            .expect("delete");
    }
}

fn expected(tasks: &[Task]) -> Vec<TaskTally> {
    let mut open: Vec<_> = tasks.iter().filter(|t| !t.status.is_terminal()).map(TaskTally::of).collect();
    open.sort_by_key(|t| t.task_id);
    let mut closed: Vec<_> = tasks.iter().filter(|t| t.status.is_terminal()).collect();
    closed.sort_by_key(|t| (TaskTally::closed_at(t), t.id));
    open.extend(closed.into_iter().map(TaskTally::of));
    open
}

#[tokio::test]
async fn a_backfill_tallies_every_task_even_while_they_are_written() {
    let scratch = Scratch::new("backfill");
    let (config, clients) = scratch.provision().await;
    let store = DynamoStore::new(clients.dynamodb.clone(), config.table.clone());
    let base = openloop_tests::morning(1);
    let account = AccountId::generate(base);
    let mut tasks = Vec::new();
    for i in 0..40 {
        let task = sample_task_for(
            account,
            MemberId::parse(&format!("m_bf_{i}")).expect("id"),
            TaskStatus::PendingReview,
            base + SignedDuration::from_secs(i),
        );
        store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        tasks.push(task);
    }
    forget_tallies(&clients.dynamodb, &config.table, account).await;
    let since = base - SignedDuration::from_hours(1);
    assert!(store.tallies(account, since).await.expect("tallies").is_empty());
    let review = TaskQuery {
        status: Some(TaskStatus::PendingReview),
        limit: 200,
        ..TaskQuery::default()
    };
    assert!(
        store.list_tasks(account, &review).await.expect("list").0.is_empty(),
        "the gap the backfill closes"
    );

    // The owner skips every other task while the backfill runs.
    let closing = async {
        let mut closed = Vec::new();
        for task in tasks.iter().step_by(2) {
            let (skipped, log) = transition(
                task,
                TaskStatus::Cancelled,
                base + SignedDuration::from_mins(5),
                Why::new(Reason::OwnerSkipped),
            )
            .expect("valid");
            store.commit(&TaskCommit::new(skipped.clone(), log)).await.expect("skip");
            closed.push(skipped);
        }
        closed
    };
    let (backfilled, closed) = tokio::join!(store.backfill_tallies(account), closing);
    let (tallied, moved) = backfilled.expect("backfill");
    assert_eq!(tallied + moved, 40, "every task tallied or written meanwhile");
    for c in closed {
        let at = tasks.iter().position(|t| t.id == c.id).expect("made");
        tasks[at] = c;
    }
    assert_eq!(
        store.tallies(account, since).await.expect("tallies"),
        expected(&tasks),
        "each tally is its task's last write"
    );
    let (pending, _) = store.list_tasks(account, &review).await.expect("list");
    assert_eq!(pending.len(), 20, "the review queue lists the tasks from before the tallies");

    // Again: the same tallies.
    assert_eq!(store.backfill_tallies(account).await.expect("again"), (40, 0));
    assert_eq!(store.tallies(account, since).await.expect("tallies"), expected(&tasks));
}

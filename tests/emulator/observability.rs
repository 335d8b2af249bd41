//! Through CONTRACT.md on DynamoDB: a closed task leaves its learning record, and the
//! hourly run (at the end of `/_local/run`) folds the day's decisions into the account's
//! daily metrics, once.

use jiff::SignedDuration;
use openloop_aws::dynamo::DynamoStore;
use openloop_core::ids::{AccountId, TaskId};
use openloop_core::ports::TaskStore;
use openloop_tests::Stack;
use serde_json::json;

#[tokio::test]
async fn a_cancelled_task_leaves_its_learning_record_and_the_day_its_metrics() {
    let stack = Stack::start("observability").await;
    let gym = stack.create_account("manual").await;
    stack.set_clock(&crate::morning(1).to_string()).await;
    let now = stack.now().await;
    stack.member(&gym, "m_obs", "Dana", now).await;
    let task = stack.approved_task(&gym, "churn_risk", "m_obs").await;
    stack.run().await;
    let (status, cancelled) = stack.post(&format!("/api/v1/tasks/{task}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{cancelled}");
    let later = stack.now().await + SignedDuration::from_mins(10);
    stack.set_clock(&later.to_string()).await;
    stack.run().await;

    let (config, clients) = stack.scratch.provision().await;
    let store = DynamoStore::new(clients.dynamodb.clone(), config.table);
    let account: AccountId = gym.id.parse().expect("account id");
    let task_id: TaskId = task.parse().expect("task id");
    let record = store
        .interaction_outcome(account, task_id)
        .await
        .expect("read")
        .expect("the close wrote the learning record");
    assert_eq!(record.shared.task_type, "churn_risk");
    assert_eq!(record.shared.touches, 1);
    assert_eq!(record.private.member_id.as_str(), "m_obs");
    assert!(record.private.message_sent.is_some());

    let tz = jiff::tz::TimeZone::get("America/New_York").expect("tz");
    let today = openloop_core::limits::local_date(later, &tz);
    let day = store.daily_metrics(account, today).await.expect("read");
    assert_eq!(
        (day.tasks_created, day.owner_approvals, day.messages_sent, day.tasks_cancelled),
        (1, 1, 1, 1),
        "{day:?}"
    );
    // Another run folds nothing twice.
    stack.run().await;
    assert_eq!(store.daily_metrics(account, today).await.expect("read"), day);
}

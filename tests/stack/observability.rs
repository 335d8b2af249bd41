//! Through CONTRACT.md on DynamoDB: a closed task leaves its learning record, and the
//! hourly run (at the end of `/_local/run`) folds the day's decisions into the account's
//! daily metrics, once.

use jiff::SignedDuration;
use openloop_core::kernel::ids::{AccountId, TaskId};
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

    let store = stack.running.store.clone();
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
    let today = openloop_core::kernel::limits::local_date(later, &tz);
    let day = store.daily_metrics(account, today).await.expect("read");
    assert_eq!(
        (day.tasks_created, day.owner_approvals, day.messages_sent, day.tasks_cancelled),
        (1, 1, 1, 1),
        "{day:?}"
    );
    // Another run folds nothing twice.
    stack.run().await;
    assert_eq!(store.daily_metrics(account, today).await.expect("read"), day);

    // The operator's platform aggregate counts the record, and names no one.
    let month = openloop_core::learning::interaction::month_of(later);
    let (status, learning) = stack
        .get(&format!("/api/v1/admin/learning?month={month}"), &stack.admin_token)
        .await;
    assert_eq!(status, 200, "{learning}");
    assert_eq!(
        (learning["records"].as_u64(), learning["complete"].as_bool()),
        (Some(1), Some(true))
    );
    let churn = &learning["task_types"][0];
    assert_eq!(
        (churn["task_type"].as_str(), churn["sent"].as_u64(), churn["succeeded"].as_u64()),
        (Some("churn_risk"), Some(1), Some(0))
    );
    let text = learning.to_string();
    for secret in [gym.id.as_str(), "m_obs", task.as_str()] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let (status, _) = stack.get("/api/v1/admin/learning", &gym.token).await;
    assert_eq!(status, 401, "owners never read across tenants");
    let (status, refused) = stack.get("/api/v1/admin/learning?month=2026-13", &stack.admin_token).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (422, Some("invalid_month")));
}

/// `GET /api/v1/metrics`: the owner reads the days the hourly fold wrote, by range in the
/// account's time zone; bad dates and over-long ranges are malformed requests, and another
/// account sees only its own days.
#[tokio::test]
async fn the_owner_reads_the_daily_metrics_by_range_over_http() {
    let stack = Stack::start("metrics-api").await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;
    stack.set_clock(&crate::morning(1).to_string()).await;
    let now = stack.now().await;
    stack.member(&gym, "m_met", "Robin", now).await;
    stack.approved_task(&gym, "churn_risk", "m_met").await;
    stack.run().await;
    let later = stack.now().await + SignedDuration::from_mins(10);
    stack.set_clock(&later.to_string()).await;
    stack.run().await;

    let tz = jiff::tz::TimeZone::get("America/New_York").expect("tz");
    let today = openloop_core::kernel::limits::local_date(later, &tz);
    let week_ago = today.checked_sub(jiff::Span::new().days(6)).expect("date");
    let (status, body) = stack.get(&format!("/api/v1/metrics?from={week_ago}&to={today}"), &gym.token).await;
    assert_eq!(status, 200, "{body}");
    let days = body["days"].as_array().expect("days");
    assert_eq!(days.len(), 7, "every day of the range: {body}");
    let last = &days[6];
    assert_eq!(last["date"], today.to_string());
    assert_eq!(
        (last["tasks_created"].as_u64(), last["messages_sent"].as_u64()),
        (Some(1), Some(1)),
        "{last}"
    );
    assert_eq!(body["totals"]["owner_approvals"], 1);
    assert_eq!(body["totals"]["rates"]["member_reply_rate"], 0.0);
    assert_eq!(body["timezone"], "America/New_York");

    let (status, default) = stack.get("/api/v1/metrics", &gym.token).await;
    assert_eq!(status, 200, "{default}");
    assert_eq!(default["days"].as_array().map(Vec::len), Some(30), "the last 30 days by default");
    assert_eq!(
        (default["to"].as_str(), default["totals"]["messages_sent"].as_u64()),
        (Some(today.to_string().as_str()), Some(1))
    );

    let (status, theirs) = stack.get(&format!("/api/v1/metrics?from={today}&to={today}"), &other.token).await;
    assert_eq!(
        (status, theirs["totals"]["messages_sent"].as_u64()),
        (200, Some(0)),
        "scoped to the token's account"
    );

    for (query, code) in [
        ("from=2026-02-30", "invalid_date"),
        ("from=11/01/2026", "invalid_date"),
        ("from=2026-01-01&to=2026-04-03", "invalid_range"),
        ("from=2026-05-02&to=2026-05-01", "invalid_range"),
    ] {
        let (status, refused) = stack.get(&format!("/api/v1/metrics?{query}"), &gym.token).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (400, Some(code)), "{query}: {refused}");
        assert!(refused["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let (status, _) = stack.get("/api/v1/metrics", "not-a-token").await;
    assert_eq!(status, 401);
}

//! The risk scan: over a seeded gym of 500 members it creates no more tasks than
//! the flood limits allow (§7.9), the most urgent first; and the local runtime fires it from
//! `/_local/run` once the test clock passes its 6-hourly slot. (Its DynamoDB request counts
//! are `make bench`'s.)

use jiff::SignedDuration;
use openloop_core::engine::{AccountSecrets, NewAccount};
use openloop_core::kernel::limits;
use openloop_core::ports::{Clock, TaskQuery};
use openloop_core::task::TaskStatus;
use openloop_core::task::task_type::Priority;
use openloop_tests::{Stack, gym, memory_engine, unique_prefix};
use serde_json::json;

/// Given a gym of 500 members of whom 150 need attention, when the scan runs every 6 hours
/// for a day, then it creates 25 a run and 50 in the day — all high priority while high
/// ones are left — and a run on a full day reads no members.
#[tokio::test]
async fn a_scan_of_500_members_creates_no_more_than_the_flood_limits_allow() {
    let (engine, store, clock) = memory_engine();
    let secrets = AccountSecrets {
        api_token: "t".into(),
        api_token_hash: unique_prefix("hash"),
        webhook_secret: "whsec_dGVzdA==".into(),
    };
    let input: NewAccount =
        serde_json::from_value(json!({"name": "Big Gym", "timezone": "America/New_York"})).unwrap_or_else(|e| panic!("{e}"));
    let account = engine.create_account(input, secrets).await.unwrap_or_else(|e| panic!("{e}"));
    gym::seed(store.as_ref(), account.id, 500, clock.now())
        .await
        .unwrap_or_else(|e| panic!("seed: {e}"));

    let mut created = Vec::new();
    for run in 0..4 {
        let report = engine.analyze_account(&account).await.unwrap_or_else(|e| panic!("scan: {e}"));
        println!(
            "analysis run {run}: scanned {}, findings {}, created {}, stopped by {:?}",
            report.members_scanned, report.findings, report.created, report.stopped_by,
        );
        if run == 0 {
            assert_eq!(report.findings, gym::findings(500));
        }
        assert!(report.created <= limits::MAX_TASKS_PER_RUN);
        created.push(report.created);
        clock
            .set(clock.now() + limits::ANALYSIS_PERIOD)
            .unwrap_or_else(|e| panic!("clock: {e}"));
        if run == 2 {
            assert_eq!(report.members_scanned, 0, "a full day reads no members");
        }
    }
    assert_eq!(created[..3], [25, 25, 0], "{created:?}");
    let query = TaskQuery {
        limit: 200,
        ..Default::default()
    };
    let (tasks, _) = engine.list_tasks(account.id, &query).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tasks.len(), created.iter().sum::<usize>());
    let first_day: Vec<_> = tasks
        .iter()
        .filter(|t| t.created_at < crate::morning(1) + SignedDuration::from_hours(18))
        .collect();
    assert_eq!(first_day.len() as u32, limits::MAX_TASKS_PER_ACCOUNT_PER_DAY);
    assert!(
        first_day.iter().all(|t| t.priority <= Priority::High),
        "the most urgent first: {:?}",
        first_day.iter().map(|t| (&t.task_type, t.priority)).collect::<Vec<_>>()
    );
    assert!(tasks.iter().all(|t| t.status == TaskStatus::PendingReview));
}

/// Given members told through signed webhooks — a new one, a lead, one who stopped coming,
/// one who cancelled for their schedule (not a move, which gets no win-back) and a regular — when the test clock passes the scan's slot and
/// `/_local/run` is called, then one task of each kind is waiting for review.
#[tokio::test]
async fn local_run_fires_the_scan_once_its_slot_has_passed() {
    let stack = Stack::start("analysis-run").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await;
    let ago = |d: i64| (now - SignedDuration::from_hours(24 * d)).to_string();
    let email = |id: &str| format!("{id}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-");
    let created = |id: &str, status: &str, joined: String| {
        json!({"type": "member.created", "timestamp": joined.clone(), "data": {"member_id": id, "email": email(id), "first_name": "Alex",
            "last_name": "Tester", "status": status, "joined_at": joined, "monthly_value": 150}})
    };
    let events = vec![
        created("m_new", "active", ago(2)),
        created("m_lead", "lead", ago(5)),
        created("m_gone", "active", ago(300)),
        json!({"type": "checkin.created", "timestamp": ago(20), "data": {"member_id": "m_gone", "checked_in_at": ago(20)}}),
        created("m_left", "active", ago(300)),
        json!({"type": "checkin.created", "timestamp": ago(30), "data": {"member_id": "m_left", "checked_in_at": ago(30)}}),
        json!({"type": "member.status_changed", "timestamp": ago(10), "data": {"member_id": "m_left", "status": "cancelled",
            "previous_status": "active", "cancellation_reason": "work got too busy"}}),
        created("m_regular", "active", ago(300)),
        json!({"type": "checkin.created", "timestamp": ago(1), "data": {"member_id": "m_regular", "checked_in_at": ago(1)}}),
    ];
    for (n, event) in events.into_iter().enumerate() {
        let (status, body) = stack.webhook(&gym, &format!("evt_scan_{n}"), event).await;
        assert_eq!(status, 202, "{body}");
    }
    let ran = stack.run().await;
    assert!(ran["analysis"].is_null(), "not due before its slot: {ran}");

    stack
        .set_clock(&(now + limits::ANALYSIS_PERIOD + SignedDuration::from_hours(1)).to_string())
        .await;
    let ran = stack.run().await;
    assert!(!ran["analysis"].is_null(), "{ran}");
    let ran_again = stack.run().await;
    assert!(ran_again["analysis"].is_null(), "once per slot: {ran_again}");

    let (_, list) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let mut kinds: Vec<(String, String)> = list["tasks"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| {
                    (
                        t["member"]["id"].as_str().unwrap_or_default().to_owned(),
                        t["task_type"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    kinds.sort();
    let expected: Vec<(String, String)> = [
        ("m_gone", "churn_risk"),
        ("m_lead", "lead_followup"),
        ("m_left", "win_back"),
        ("m_new", "onboarding"),
    ]
    .iter()
    .map(|(m, t)| (m.to_string(), t.to_string()))
    .collect();
    assert_eq!(kinds, expected, "{list}");
    let churn = list["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["task_type"] == "churn_risk"))
        .cloned()
        .unwrap_or_default();
    assert!(
        churn["confidence"].as_u64().is_some_and(|c| c < 50),
        "one check-in is sparse data: {churn}"
    );
}

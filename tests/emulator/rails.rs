//! The creation rails on DynamoDB: concurrent creators never get past the flood limits
//!.

use std::sync::Arc;

use openloop_core::engine::{Created, NewTask};
use openloop_core::kernel::ids::MemberId;
use openloop_core::kernel::limits;
use openloop_core::rails::gate::GateContext;
use openloop_core::task::error::EngineError;
use openloop_core::task::flood::Limit;
use openloop_core::task::{Draft, TriggerType};
use openloop_tests::Scratch;

/// Given 12 creators racing to make 80 tasks for one gym on DynamoDB, then exactly the
/// day's limit of tasks exists and every other creation was refused by it.
#[tokio::test]
async fn concurrent_creators_never_exceed_the_daily_limit() {
    let scratch = Scratch::new("flood");
    let (engine, _, _clock) = scratch.engine(None).await;
    let account = Arc::new(crate::loop_fixtures::gym(&engine, "Flood Gym").await);
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

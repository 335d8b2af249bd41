//! What a step costs in DynamoDB requests, counted by the store on the emulator: a first
//! touch and an exhaustion that goes to the owner take at most 5 each.

use openloop_core::engine::StepOutcome;
use openloop_core::ports::prelude::*;
use openloop_core::task::TaskStatus;
use openloop_tests::Scratch;

use crate::concurrency::approved_task;

/// The task of [`approved_task`] as a payment recovery, whose cadence escalates when spent.
async fn payment_recovery(
    engine: &openloop_core::engine::Engine,
    store: &openloop_aws::dynamo::DynamoStore,
) -> openloop_core::task::work::WorkItem {
    let (item, _) = approved_task(engine, store).await;
    let mut task = store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("the task vanished"));
    task.task_type = "payment_recovery".into();
    store.import_tasks(&[task]).await.unwrap_or_else(|e| panic!("{e}"));
    item
}

/// Given an approved task, its first touch takes at most 5 requests; then, at each later
/// step when the engine scheduled it, the cadence's exhaustion (escalated, with the owner's
/// to-do and notice) takes at most 5 too.
#[tokio::test]
async fn a_first_touch_and_an_exhaustion_take_at_most_five_requests_each() {
    let scratch = Scratch::new("step-cost");
    let (engine, store, clock) = scratch.engine(None).await;
    let item = payment_recovery(&engine, &store).await;
    let before = store.requests();
    let outcome = engine.execute(&item).await.unwrap_or_else(|e| panic!("execute: {e}"));
    assert!(matches!(outcome, StepOutcome::Sent { touch: 0 }), "{outcome:?}");
    assert!(
        store.requests() - before <= 5,
        "first touch: {} requests",
        store.requests() - before
    );
    // Every later touch, then the step that finds the cadence spent.
    for _ in 0..10 {
        let task = store
            .get_task(item.account_id, item.task_id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("the task vanished"));
        if task.status != TaskStatus::Waiting {
            break;
        }
        clock
            .set(task.next_action_at.unwrap_or_else(|| panic!("nothing scheduled")))
            .unwrap_or_else(|t| panic!("clock at {t}"));
        let before = store.requests();
        let outcome = engine.follow_up(&item).await.unwrap_or_else(|e| panic!("follow-up: {e}"));
        if let StepOutcome::Moved { to, .. } = outcome {
            assert_eq!(to, TaskStatus::Escalated, "a payment recovery escalates when its touches are spent");
            assert!(store.requests() - before <= 5, "exhaustion: {} requests", store.requests() - before);
            return;
        }
    }
    panic!("the cadence never ran out");
}

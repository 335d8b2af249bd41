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
    // With its own type's budget, as a payment recovery is made: its cadence's messages.
    task.budget.messages_max = openloop_core::task::task_type::definition("payment_recovery").budget.max_messages;
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

/// Given a first touch sent, the second touch — drafted by the agent, through the AI budget —
/// takes at most 5 requests: the task with its conversation, the snapshot (with the owner's
/// template, the connection, the day's AI calls, and the member's open tasks on the member
/// item, so no query of the guards), the claim with the AI call counted, the reservation and
/// the record of the send.
#[tokio::test]
async fn an_agent_drafted_second_touch_takes_at_most_five_requests() {
    let scratch = Scratch::new("step-cost-second");
    let (engine, store, clock) = scratch.engine(None).await;
    let item = payment_recovery(&engine, &store).await;
    let outcome = engine.execute(&item).await.unwrap_or_else(|e| panic!("execute: {e}"));
    assert!(matches!(outcome, StepOutcome::Sent { touch: 0 }), "{outcome:?}");
    let task = store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("the task vanished"));
    clock
        .set(task.next_action_at.unwrap_or_else(|| panic!("nothing scheduled")))
        .unwrap_or_else(|t| panic!("clock at {t}"));
    let before = store.requests();
    let outcome = engine.follow_up(&item).await.unwrap_or_else(|e| panic!("follow-up: {e}"));
    let spent = store.requests() - before;
    assert!(matches!(outcome, StepOutcome::Sent { touch: 1 }), "{outcome:?}");
    assert!(spent <= 5, "second touch: {spent} requests");
    let task = store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("the task vanished"));
    assert_eq!(task.ai_calls, 1, "the drafted touch counted its AI call on the task");
    let today = openloop_core::kernel::limits::local_date(
        openloop_core::ports::Clock::now(clock.as_ref()),
        &jiff::tz::TimeZone::get("America/New_York").unwrap_or_else(|e| panic!("{e}")),
    );
    assert_eq!(
        store.ai_calls(item.account_id, today).await.unwrap_or_else(|e| panic!("{e}")),
        1,
        "and on the account's day"
    );
}

/// An approved automation task with two actions (a note, the member's research) runs in at
/// most 6 requests: the task, the snapshot, the claim with both actions' claims, and the
/// close with both outcomes — every action still claimed once under its key.
#[tokio::test]
async fn an_automation_step_with_two_actions_takes_at_most_six_requests() {
    use openloop_core::task::action::{Action, ActionState};
    let scratch = Scratch::new("step-cost-automation");
    let (engine, store, _clock) = scratch.engine(None).await;
    let (first, _) = approved_task(&engine, &store).await;
    let account = engine.account(first.account_id).await.unwrap_or_else(|e| panic!("{e}"));
    let input = openloop_core::engine::NewTask {
        task_type: "member_update".into(),
        member_id: openloop_core::kernel::ids::MemberId::parse("m_race").unwrap_or_else(|e| panic!("{e}")),
        goal: "Note the member's preference".into(),
        confidence: Some(100),
        draft: None,
        trigger_type: openloop_core::task::TriggerType::Manual,
        trigger_event_id: None,
        gate: Default::default(),
        context: serde_json::Value::Null,
    };
    let actions = vec![
        Action::LogNote {
            text: "Prefers mornings".into(),
        },
        Action::ResearchMember,
    ];
    let options = openloop_core::engine::CreateOptions::default().with_actions(actions);
    let created = engine
        .create_task_with(&account, input, options)
        .await
        .unwrap_or_else(|e| panic!("create: {e}"));
    let id = created.task().id;
    let approved = engine
        .approve(account.id, id, None)
        .await
        .unwrap_or_else(|e| panic!("approve: {e}"));
    let item = openloop_core::task::work::WorkItem {
        account_id: account.id,
        task_id: id,
        due_at: approved.next_action_at.unwrap_or(approved.created_at),
    };
    let before = store.requests();
    let outcome = engine.execute(&item).await.unwrap_or_else(|e| panic!("execute: {e}"));
    let spent = store.requests() - before;
    assert!(
        matches!(&outcome, StepOutcome::Moved { to, .. } if *to == TaskStatus::Completed),
        "{outcome:?}"
    );
    assert!(spent <= 6, "automation step, two actions: {spent} requests");
    let records = store.task_actions(account.id, id).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(records.iter().all(|r| r.state == ActionState::Done), "{records:?}");
    // Run again, nothing runs twice.
    let again = engine.execute(&item).await.unwrap_or_else(|e| panic!("execute again: {e}"));
    assert!(matches!(again, StepOutcome::Skipped(_)), "{again:?}");
}

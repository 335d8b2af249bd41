//! SES refuses a send (here: the sender's domain has no identity, so SES answers
//! `MessageRejected`): nothing was sent, so the reservation is given back and the step is
//! retried with backoff; after the retries the owner gets the task. Never sent twice.

use jiff::SignedDuration;
use openloop_core::engine::StepOutcome;
use openloop_core::limits::local_date;
use openloop_core::ports::Clock;
use openloop_core::ports::prelude::*;
use openloop_core::task::TaskStatus;
use openloop_tests::Scratch;

use crate::concurrency::{approved_task, sent_to};

#[tokio::test]
async fn a_refused_send_is_retried_with_backoff_then_escalated() {
    let scratch = Scratch::new("sesfail");
    let (engine, store, clock) = scratch.engine(Some("outreach@unverified.example.net")).await;
    let (item, email) = approved_task(&engine, &store).await;
    let tz = jiff::tz::TimeZone::get("America/New_York").unwrap_or_else(|e| panic!("{e}"));

    let outcome = engine.execute(&item).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&outcome, StepOutcome::Deferred { reason, .. } if reason == "send_rejected"),
        "{outcome:?}"
    );
    let task = store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("task"));
    assert_eq!(
        (task.status, task.attempts, task.budget.messages_used, task.touch),
        (TaskStatus::Waiting, 1, 0, 0),
        "consistent and given back"
    );
    assert_eq!(
        store
            .daily_sends(item.account_id, local_date(clock.now(), &tz))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
        0
    );
    let retry_at = task.next_action_at.unwrap_or_else(|| panic!("scheduled"));
    assert_eq!(retry_at.duration_since(clock.now()).as_mins(), 0, "first retry a minute later");

    // The retries run on the followup worker (the task is waiting now); each backs off more.
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        clock
            .set(clock.now() + SignedDuration::from_hours(2))
            .unwrap_or_else(|e| panic!("clock: {e}"));
        outcomes.push(engine.follow_up(&item).await.unwrap_or_else(|e| panic!("{e}")));
    }
    assert!(
        matches!(
            outcomes.last(),
            Some(StepOutcome::Moved {
                to: TaskStatus::Escalated,
                ..
            })
        ),
        "{outcomes:?}"
    );
    let task = store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("task"));
    assert_eq!(task.status, TaskStatus::Escalated);
    assert_eq!(task.budget.messages_used, 0);
    assert_eq!(sent_to(&email).await, 0, "nothing was ever sent");
}

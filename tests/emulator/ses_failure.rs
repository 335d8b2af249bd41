//! SES refuses a send (here: the sender's domain has no identity, so SES answers
//! `MessageRejected`): nothing was sent, so the reservation is given back and the step is
//! retried with backoff; after the retries the owner gets the task. Never sent twice.

use jiff::SignedDuration;
use openloop_core::engine::StepOutcome;
use openloop_core::kernel::limits::local_date;
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

    // The retries run on the followup worker (the task is waiting now), each when it was
    // scheduled; each backs off more (5 minutes, then an hour). The last retry falls past a
    // first touch's morning hours, so it waits for the next ones (spec §29.3).
    let mut outcomes = Vec::new();
    let mut backoffs = Vec::new();
    for _ in 0..6 {
        let due = store
            .get_task(item.account_id, item.task_id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .and_then(|t| t.next_action_at)
            .unwrap_or_else(|| panic!("scheduled"));
        clock.set(due).unwrap_or_else(|e| panic!("clock: {e}"));
        let outcome = engine.follow_up(&item).await.unwrap_or_else(|e| panic!("{e}"));
        if let StepOutcome::Deferred { until, reason } = &outcome
            && reason == "send_rejected"
        {
            // To the minute: the test clock runs on between the reads.
            backoffs.push((until.duration_since(due) + SignedDuration::from_secs(30)).as_mins());
        }
        let escalated = matches!(
            outcome,
            StepOutcome::Moved {
                to: TaskStatus::Escalated,
                ..
            }
        );
        outcomes.push(outcome);
        if escalated {
            break;
        }
    }
    assert_eq!(backoffs, [5, 60], "{outcomes:?}");
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

//! The gates of issue 3 on the in-memory store: kill switch, anomalies, autonomy (ramp,
//! dry run, plan), the stale guard, subtasks, priorities, escalation timeouts.

use super::*;
use crate::ports::{Clock, TaskCommit};
use crate::task::{ConversationMessage, Role};
use crate::transition::{Why, record};

/// Given a task that has written to a member who then replied three times without the task
/// closing, when its follow-up comes due, then it is escalated as a possible loop.
#[tokio::test]
async fn three_member_replies_without_resolution_escalate_as_an_anomaly() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_loop").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
    let current = w.task(&task).await;
    let (next, log) = record(&current, w.clock.now(), Why::new("member_replied"));
    let mut commit = TaskCommit::new(next, log);
    for n in 0..3 {
        commit.messages.push(ConversationMessage {
            id: crate::ids::new_ulid(w.clock.now()),
            at: w.clock.now(),
            role: Role::Member,
            content: format!("reply {n}"),
        });
    }
    w.store.commit(&commit).await.expect("commit");
    w.clock.advance(days(3));
    w.run().await;
    let after = w.task(&task).await;
    assert_eq!(after.status, TaskStatus::Escalated);
    assert_eq!(after.outcome_reason.as_deref(), Some("anomaly_member_replies_without_resolution"));
    assert_eq!(w.mailer.sent().len(), 1, "no follow-up went out");
}

/// Given an owner who paused their account, when a task comes due, then it waits (deferred,
/// logged) and goes out once they resume.
#[tokio::test]
async fn the_account_kill_switch_defers_and_resuming_sends() {
    let w = world().await;
    w.engine.set_account_paused(w.account.id, true, "owner").await.expect("pause");
    let task = w.approved("churn_risk", "m_kill").await;
    w.run().await;
    assert!(w.mailer.sent().is_empty());
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    assert!(history.log.iter().any(|l| l.reason == "account_paused"));
    w.engine.set_account_paused(w.account.id, false, "owner").await.expect("resume");
    w.clock.advance(SignedDuration::from_hours(1));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
}

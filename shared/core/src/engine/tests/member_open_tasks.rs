//! A step's guards over the member's other tasks read them from the member item's open tasks
//! when the account keeps them, and from the active guards when it does not (an account made
//! before they were kept, not yet backfilled): the same decisions either way.

use super::*;
use crate::ports::Clock;

/// Given an account whose member items keep their open tasks, the send snapshot lists the
/// member's open tasks and the step yields to the more urgent one; given the same account
/// marked as not keeping them, the snapshot lists nothing known and the step, reading the
/// guards, still yields.
#[tokio::test]
async fn the_more_urgent_task_goes_first_whether_or_not_the_member_item_keeps_the_open_tasks() {
    for kept in [true, false] {
        let w = world().await;
        let mut account = w.engine.account(w.account.id).await.expect("account");
        account.member_open_tasks_kept = kept;
        account.version += 1;
        w.store.save_account(&account).await.expect("save");
        let churn = w.approved("churn_risk", "m_both").await;
        let payment = w.approved("payment_recovery", "m_both").await;
        let date = w.clock.now().to_zoned(jiff::tz::TimeZone::UTC).date();
        let snapshot = w
            .store
            .send_snapshot(account.id, &churn.member.id, None, date)
            .await
            .expect("snapshot");
        let mut both = vec![churn.id, payment.id];
        both.sort();
        assert_eq!(snapshot.member_open_tasks, kept.then_some(both), "kept: {kept}");
        let yielded = w.engine.execute(&w.item(&churn)).await.expect("step");
        assert!(
            matches!(&yielded, StepOutcome::Deferred { reason, .. } if *reason == Reason::YieldingToHigherPriority),
            "kept: {kept}: {yielded:?}"
        );
        w.engine.execute(&w.item(&payment)).await.expect("step");
        assert_eq!(w.task(&payment).await.touch, 1, "kept: {kept}: the critical task went first");
    }
}

//! Lift a small gym can read: the monthly cross-business evaluation pools the contacted and
//! held-out members of gyms of one business type that share their learning — three give a
//! figure, two do not, a gym that does not share is left out — and `lift` shows it beside the
//! gym's own numbers, even for a type the gym has none of yet.

use super::*;
use crate::owner::account::Account;
use crate::task::commit::TaskCommit;
use crate::task::holdout::{Arm, Holdout};
use crate::task::transition::{Why, created, transition};
use crate::testing::sample_task_for;

const MONTH: &str = "2026-10";

async fn gym(w: &World, share: bool) -> Account {
    let mut account = crate::testing::sample_account(day0());
    account.settings.profile.business_type = Some("CrossFit box".into());
    account.settings.share_learning = share;
    account.settings.holdout_percent = 10;
    account.webhook_secret = crate::owner::account::WebhookSecret::new(format!("whsec_{}", account.id));
    w.store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    account
}

/// October's churn tasks of a gym: ten contacted (six back), five held out (one back).
async fn october(w: &World, account: &Account) {
    for i in 0..15 {
        let (arm, back) = if i < 10 { (Arm::Contacted, i < 6) } else { (Arm::HeldOut, i == 10) };
        let created_at: Timestamp = format!("2026-10-{:02}T12:00:00Z", 2 + i).parse().expect("time");
        let member = MemberId::parse(&format!("m_pool_{i}")).expect("member");
        let mut task = sample_task_for(account.id, member, TaskStatus::Waiting, created_at);
        task.task_type = "churn_risk".into();
        task.trigger_type = TriggerType::CronAnalysis;
        task.holdout = Some(Holdout {
            arm,
            bucket: if arm == Arm::HeldOut { 5 } else { 5_000 },
            generation: 0,
        });
        w.store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        let (to, reason, outcome) = if back {
            (TaskStatus::Completed, Reason::GoalSignalCheckin, "retained")
        } else {
            (TaskStatus::Cancelled, Reason::MessageBudgetExhausted, "unresponsive")
        };
        let (done, log) = transition(&task, to, created_at + days(5), Why::new(reason).outcome(outcome)).expect("close");
        w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
    }
}

async fn pooled_of(w: &World, account: &Account) -> Option<crate::owner::pooled_lift::PooledLift> {
    let report = w
        .engine
        .lift(account.id, Some("2026-10-01"), Some("2026-11-01"), None)
        .await
        .expect("lift");
    report
        .groups
        .iter()
        .find(|g| g.task_type == "churn_risk")
        .and_then(|g| g.pooled.clone())
}

#[tokio::test]
async fn three_sharing_gyms_give_a_pooled_lift_two_do_not_and_a_gym_that_does_not_share_is_left_out() {
    let w = world().await;
    let (a, b) = (gym(&w, true).await, gym(&w, true).await);
    let private = gym(&w, false).await;
    let small = gym(&w, true).await;
    for g in [&a, &b, &private] {
        october(&w, g).await;
    }
    let two = w.engine.evaluate_network(MONTH).await.expect("monthly");
    assert_eq!(two.pooled_lifts, 0, "two sharing gyms are not enough: {two:?}");
    assert_eq!(pooled_of(&w, &a).await, None);

    let c = gym(&w, true).await;
    october(&w, &c).await;
    let three = w.engine.evaluate_network(MONTH).await.expect("monthly");
    assert_eq!(three.pooled_lifts, 1, "{three:?}");
    let pooled = pooled_of(&w, &a).await.expect("a pooled figure beside the gym's own");
    assert_eq!(pooled.gyms, 3, "the gym that does not share is left out");
    assert_eq!((pooled.contacted.n, pooled.contacted.succeeded), (30, 18));
    assert_eq!((pooled.held_out.n, pooled.held_out.succeeded), (15, 3));
    assert_eq!(pooled.difference, 0.4);
    assert!(pooled.ci95[0] > 0.0 && pooled.ci95[1] > pooled.ci95[0], "{pooled:?}");
    assert!(
        pooled
            .summary
            .starts_with("across 3 gyms like yours, outreach of this type adds 40.0 points"),
        "{}",
        pooled.summary
    );
    // A gym with no churn tasks of its own sees the figure alone, beside its empty groups.
    let report = w.engine.lift(small.id, None, None, Some("churn_risk")).await.expect("lift");
    let [mine] = report.groups.as_slice() else {
        panic!("one type: {report:?}")
    };
    assert_eq!((mine.contacted.n, mine.held_out.n), (0, 0));
    assert_eq!(mine.pooled.as_ref().map(|p| p.gyms), Some(3));
    // The gym that does not share still sees what gyms like it found.
    assert_eq!(pooled_of(&w, &private).await.map(|p| p.gyms), Some(3));
}

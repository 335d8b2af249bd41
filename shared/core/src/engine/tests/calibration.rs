//! Calibration through the evaluation and the risk scan, on the virtual
//! clock: a gym whose flagged members come back on their own is offered a longer no-check-in
//! gap with the exact counts; accepting it changes what the next scan flags, undo restores it;
//! an account whose sure-of-itself drafts the owner keeps correcting is offered a higher
//! confidence threshold, and dismissing that changes nothing.

use super::*;
use crate::learning::suggestion::{SuggestionKind, SuggestionStatus};
use crate::members::event::MemberStatus;
use crate::owner::account::Account;
use crate::owner::calibration::Calibration;
use crate::task::commit::TaskCommit;
use crate::task::transition::{Why, created, record, transition};
use crate::testing::sample_task_for;

/// How one seeded task ended.
struct Ended {
    task_type: &'static str,
    /// The risk scan opened it, `gap_days` after the member's last check-in.
    flagged_gap_days: Option<i64>,
    confidence: u8,
    touched: bool,
    owner_edited: bool,
    status: TaskStatus,
    reason: Reason,
    outcome: &'static str,
}

const CAME_BACK: Ended = Ended {
    task_type: "churn_risk",
    flagged_gap_days: Some(15),
    confidence: 65,
    touched: false,
    owner_edited: false,
    status: TaskStatus::Completed,
    reason: Reason::GoalSignalCheckin,
    outcome: "self_resolved",
};

/// A closed task of `account`, created `day` days before day0, ended as `how`.
async fn ended(w: &World, account: &Account, i: usize, day: i64, how: &Ended) {
    let created_at = day0() - days(day);
    let member = MemberId::parse(&format!("m_cal_{i}")).expect("member");
    let mut task = sample_task_for(account.id, member, TaskStatus::Waiting, created_at);
    task.task_type = how.task_type.into();
    task.confidence = how.confidence;
    if let Some(gap) = how.flagged_gap_days {
        task.trigger_type = TriggerType::CronAnalysis;
        task.trigger_context = serde_json::json!({
            "source": "risk_scan",
            "last_checkin_at": (created_at - days(gap)).to_string(),
        });
    }
    w.store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    let mut current = task.clone();
    if how.touched {
        let sent_at = created_at + SignedDuration::from_hours(2);
        let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
        sent.touch = 1;
        sent.execution_started_at = Some(sent_at);
        sent.owner_edited = how.owner_edited;
        w.store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
        current = sent;
    }
    let (done, log) = transition(
        &current,
        how.status,
        created_at + days(3),
        Why::new(how.reason).outcome(how.outcome),
    )
    .expect("close");
    w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
}

/// An active member whose last check-in was `gap` days ago, with too few check-ins for a rhythm.
async fn away_for(w: &World, id: &str, gap: i64) {
    let now = w.engine.now();
    let mut facts = crate::members::member::MemberFacts::new(MemberId::parse(id).expect("id"));
    facts.email = Email::parse(&format!("{}@example.com", id.replace('_', "-"))).ok();
    facts.first_name = Some("Pat".into());
    facts.status = Some(MemberStatus::Active);
    facts.joined_at = Some(now - days(400));
    facts.checkins = [now - days(gap + 30), now - days(gap)].into_iter().collect();
    facts.checkin_count = 2;
    facts.last_checkin_at = facts.checkins.last().copied();
    facts.version = 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
}

async fn calibration(w: &World) -> Calibration {
    w.engine.account(w.account.id).await.expect("account").settings.calibration
}

#[tokio::test]
async fn flagged_members_who_come_back_on_their_own_lengthen_the_gap_the_scan_flags_after() {
    let w = world().await;
    let gym = w.account.clone();
    // Ten members the scan flagged 15 days after their last check-in: seven came back by
    // themselves before any outreach, three never answered.
    for i in 0..7 {
        ended(&w, &gym, i, 2 + i as i64, &CAME_BACK).await;
    }
    let unanswered = Ended {
        touched: true,
        status: TaskStatus::Cancelled,
        reason: Reason::MessageBudgetExhausted,
        outcome: "unresponsive",
        ..CAME_BACK
    };
    for i in 7..10 {
        ended(&w, &gym, i, 2 + i as i64, &unanswered).await;
    }

    let (tasks, made) = w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("evaluate");
    assert_eq!((tasks, made), (10, 1));
    let pending = w.engine.list_suggestions(gym.id, None).await.expect("list");
    let found = &pending[0];
    assert_eq!(found.kind, SuggestionKind::Calibration);
    let e = &found.evidence;
    assert_eq!(
        (
            &e["flagged"],
            &e["came_back_unprompted"],
            &e["median_gap_days"],
            &e["current_gap_days"],
            &e["suggested_gap_days"],
            &e["rate"]
        ),
        (
            &serde_json::json!(10),
            &serde_json::json!(7),
            &serde_json::json!(15),
            &serde_json::json!(14),
            &serde_json::json!(22),
            &serde_json::json!(0.7)
        ),
        "{e}"
    );
    assert_eq!(e["task_ids"].as_array().map(Vec::len), Some(10));
    assert_eq!(
        (found.strength, found.confidence),
        (crate::learning::suggestion::Strength::Weak, 23)
    );

    // A member 16 days away: past the default, within this gym's rhythm once calibrated.
    away_for(&w, "m_pat", 16).await;
    let applied = w.engine.accept_suggestion(gym.id, found.id).await.expect("accept");
    assert_eq!(applied.status, SuggestionStatus::Applied);
    assert_eq!(calibration(&w).await.risk_gap_days, 22);
    assert_eq!(w.engine.analyze().await.expect("scan").created, 0, "16 days is normal here now");
    assert_eq!(
        w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("again").1,
        0,
        "at 22 days already: nothing more to suggest"
    );

    w.engine.undo_suggestion(gym.id, found.id).await.expect("undo");
    assert_eq!(calibration(&w).await, Calibration::default(), "undo restores the default");
    assert_eq!(w.engine.analyze().await.expect("scan").created, 1, "flagged at the default again");
}

#[tokio::test]
async fn sure_drafts_the_owner_keeps_correcting_raise_the_confidence_threshold_and_dismissing_changes_nothing() {
    let w = world().await;
    let gym = w.account.clone();
    let sure = Ended {
        task_type: "payment_recovery",
        flagged_gap_days: None,
        confidence: 90,
        touched: true,
        owner_edited: false,
        status: TaskStatus::Completed,
        reason: Reason::GoalSignalPaymentSucceeded,
        outcome: "recovered",
    };
    let edited = Ended {
        owner_edited: true,
        ..sure
    };
    let skipped = Ended {
        touched: false,
        status: TaskStatus::Cancelled,
        reason: Reason::OwnerSkipped,
        outcome: "skipped",
        ..sure
    };
    let plan = [(&edited, 4), (&skipped, 2), (&sure, 4)];
    let mut i = 0;
    for (how, n) in plan {
        for _ in 0..n {
            ended(&w, &gym, i, 2 + i as i64, how).await;
            i += 1;
        }
    }
    w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("evaluate");
    let pending = w.engine.list_suggestions(gym.id, None).await.expect("list");
    let found = pending
        .iter()
        .find(|s| s.kind == SuggestionKind::Calibration)
        .unwrap_or_else(|| panic!("a calibration: {pending:?}"));
    let e = &found.evidence;
    assert_eq!(
        (
            &e["high_confidence"],
            &e["edited"],
            &e["skipped"],
            &e["contradicted"],
            &e["off"],
            &e["current_raise"],
            &e["suggested_raise"]
        ),
        (
            &serde_json::json!(10),
            &serde_json::json!(4),
            &serde_json::json!(2),
            &serde_json::json!(0),
            &serde_json::json!(6),
            &serde_json::json!(0),
            &serde_json::json!(10)
        ),
        "{e}"
    );
    w.engine.dismiss_suggestion(gym.id, found.id).await.expect("dismiss");
    assert_eq!(calibration(&w).await, Calibration::default(), "dismissing changes nothing");

    // However it is set, the threshold stays within its safe bounds.
    let mut bolder = w.engine.account(gym.id).await.expect("account");
    bolder.settings.calibration = bolder
        .settings
        .calibration
        .with(crate::owner::calibration::Threshold::ConfidenceRaise, 20)
        .expect("bounds");
    assert!(bolder.settings.validate().is_ok());
    bolder.settings.calibration.confidence_raise = 25;
    assert!(bolder.settings.validate().is_err(), "out of its safe bounds");
}

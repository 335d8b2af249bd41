//! Learning from outcomes through the store and the evaluation, on the virtual clock: the
//! learning record keeps the first message's subject style and template, an outcome pattern
//! becomes a suggestion whose evidence names it, no pattern makes none, and members who
//! cancelled without ever being flagged shorten the risk gap (within its bounds).

use super::*;
use crate::learning::suggestion::{ProposedChange, SuggestionKind};
use crate::owner::account::Account;
use crate::owner::calibration::Threshold;
use crate::task::commit::TaskCommit;
use crate::task::transition::{Why, created, record, transition};
use crate::testing::sample_task_for;
use serde_json::json;

/// A second gym, with its own secret.
async fn another(w: &World) -> Account {
    let account = crate::testing::sample_account(day0());
    w.store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    account
}

/// A closed churn task of `account`, created `day` days before day0, whose first message had
/// `subject` and was written from `template`; the member came back or not (replies alike).
async fn written(w: &World, account: &Account, i: usize, day: i64, subject: &str, template: &str, back: bool) {
    let created_at = day0() - days(day);
    let member = MemberId::parse(&format!("m_out_{i}")).expect("member");
    let mut task = sample_task_for(account.id, member, TaskStatus::Waiting, created_at);
    task.task_type = "churn_risk".into();
    task.member.name = Some("Dana Reyes".into());
    w.store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    let sent_at = created_at + SignedDuration::from_hours(2);
    let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
    sent.touch = 1;
    sent.execution_started_at = Some(sent_at);
    sent.thread_subject = Some(subject.into());
    sent.message_template = Some(template.into());
    sent.budget.turns_used = u32::from(i.is_multiple_of(2));
    w.store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
    let (to, reason, outcome) = if back {
        (TaskStatus::Completed, Reason::GoalSignalCheckin, "retained")
    } else {
        (TaskStatus::Cancelled, Reason::MessageBudgetExhausted, "unresponsive")
    };
    let (done, log) = transition(&sent, to, created_at + days(3), Why::new(reason).outcome(outcome)).expect("close");
    w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
}

#[tokio::test]
async fn members_back_more_often_after_a_question_subject_make_a_suggestion_whose_evidence_names_the_pattern() {
    let w = world().await;
    let gym = w.account.clone();
    // Twelve members whose subject asked a question, ten back; twelve plain ones, two back.
    for i in 0..12 {
        written(&w, &gym, i, 2 + i as i64 % 20, "Coming back this week?", "default", i < 10).await;
        written(&w, &gym, 100 + i, 2 + i as i64 % 20, "A note from the gym", "default", i < 2).await;
    }
    let records = w.store.recent_outcomes(gym.id, day0() - days(30), 100).await.expect("records");
    assert!(
        records
            .iter()
            .all(|r| r.shared.template.as_deref() == Some("default") && r.shared.subject_style.is_some())
    );
    let (tasks, made) = w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("evaluate");
    assert_eq!((tasks, made), (24, 1));
    let found = &w.engine.list_suggestions(gym.id, None).await.expect("list")[0];
    assert_eq!(found.kind, SuggestionKind::Prompt);
    let e = &found.evidence;
    assert_eq!((&e["measure"], &e["pattern"]), (&json!("outcome"), &json!("subject_style")), "{e}");
    assert_eq!(e["groups"], json!(["question", "plain"]));
    assert_eq!((&e["question"]["succeeded"], &e["plain"]["succeeded"]), (&json!(10), &json!(2)));
    let low = e["ci95"][0].as_f64().expect("interval");
    assert!(low > 0.0, "the interval excludes zero: {e}");
    assert!(found.body.contains("10 of 12") && found.body.contains("2 of 12"), "{}", found.body);
    assert!(
        matches!(&found.change, ProposedChange::Prompt { instruction, .. } if instruction.contains("question")),
        "{:?}",
        found.change
    );
}

#[tokio::test]
async fn the_owners_template_bringing_fewer_back_than_the_shipped_one_is_a_finding_and_no_pattern_is_none() {
    let w = world().await;
    let gym = w.account.clone();
    let own = "owner@2026-10-20T09:00:00Z";
    for i in 0..12 {
        written(&w, &gym, i, 2 + i as i64, "A note from the gym", own, i < 3).await;
        written(&w, &gym, 100 + i, 2 + i as i64, "A note from the gym", "default", i < 11).await;
    }
    w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("evaluate");
    let listed = w.engine.list_suggestions(gym.id, None).await.expect("list");
    let found = listed
        .iter()
        .find(|s| s.evidence["pattern"] == "template_version")
        .unwrap_or_else(|| panic!("a template finding: {listed:?}"));
    assert_eq!(found.evidence["task_type"], "churn_risk");
    assert_eq!(
        (&found.evidence[own]["sent"], &found.evidence[own]["succeeded"]),
        (&json!(12), &json!(3))
    );
    assert!(
        found.title.starts_with("The shipped template brings more churn risk members back"),
        "{}",
        found.title
    );
    assert!(found.body.contains("your own template (as of 2026-10-20)"), "{}", found.body);

    // Another gym: the same wording either way, half back in each group — nothing to suggest.
    let other = another(&w).await;
    for i in 0..12 {
        written(
            &w,
            &other,
            200 + i,
            2 + i as i64,
            "Coming back this week?",
            own,
            i.is_multiple_of(2),
        )
        .await;
        written(
            &w,
            &other,
            300 + i,
            2 + i as i64,
            "A note from the gym",
            "default",
            !i.is_multiple_of(2),
        )
        .await;
    }
    let (tasks, made) = w.engine.evaluate_account(other.id, "weekly_batch").await.expect("evaluate");
    assert_eq!((tasks, made), (24, 0), "no pattern, no suggestion");
}

/// A win-back the scan opened for a member away `away` days when they cancelled.
async fn cancelled_after(w: &World, account: &Account, i: usize, away: i64) {
    let created_at = day0() - days(3 + i as i64);
    let cancelled_at = created_at - SignedDuration::from_hours(8);
    let member = MemberId::parse(&format!("m_gone_{i}")).expect("member");
    let mut task = sample_task_for(account.id, member, TaskStatus::Waiting, created_at);
    task.task_type = "win_back".into();
    task.trigger_type = TriggerType::CronAnalysis;
    task.trigger_context = json!({
        "source": "risk_scan",
        "last_checkin_at": (cancelled_at - days(away)).to_string(),
        "cancelled_at": cancelled_at.to_string(),
    });
    w.store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    let (done, log) = transition(
        &task,
        TaskStatus::Cancelled,
        created_at + days(2),
        Why::new(Reason::MessageBudgetExhausted).outcome("unresponsive"),
    )
    .expect("close");
    w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
}

#[tokio::test]
async fn members_who_cancel_without_ever_being_flagged_shorten_the_gap_within_its_bounds() {
    let w = world().await;
    let gym = w.account.clone();
    // The gym had lengthened its gap to 28 days.
    w.engine
        .change_account(gym.id, |a| {
            a.settings.calibration = a.settings.calibration.with(Threshold::RiskGapDays, 28)?;
            Ok(true)
        })
        .await
        .expect("calibrated");
    // Ten cancelled: six away 17–22 days (never flagged at 28, caught at 17), two away 3
    // days (no gap catches them), two away 35 days.
    for (i, away) in [17, 18, 19, 20, 21, 22, 3, 3, 35, 35].into_iter().enumerate() {
        cancelled_after(&w, &gym, i, away).await;
    }
    let (tasks, made) = w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("evaluate");
    assert_eq!((tasks, made), (10, 1));
    let found = &w.engine.list_suggestions(gym.id, None).await.expect("list")[0];
    assert_eq!(found.kind, SuggestionKind::Calibration);
    let e = &found.evidence;
    assert_eq!(
        (
            &e["cancelled"],
            &e["cancelled_unflagged"],
            &e["current_gap_days"],
            &e["suggested_gap_days"]
        ),
        (&json!(10), &json!(6), &json!(28), &json!(18)),
        "{e}"
    );
    w.engine.accept_suggestion(gym.id, found.id).await.expect("accept");
    let now = w.engine.account(gym.id).await.expect("account").settings.calibration;
    assert_eq!(now.risk_gap_days, 18, "shorter, within its bounds");

    // At the shortest gap already, cancellations say nothing more.
    let fresh = another(&w).await;
    for (i, away) in [15, 16, 17, 18, 19, 20, 21, 22].into_iter().enumerate() {
        cancelled_after(&w, &fresh, 50 + i, away).await;
    }
    assert_eq!(
        w.engine.evaluate_account(fresh.id, "weekly_batch").await.expect("evaluate").1,
        0,
        "14 days is the shortest gap: nobody was missed"
    );
}

/// The brief says which group each member back was in: one retained after outreach, one
/// held-out member back with nothing sent — not counted as retained.
#[tokio::test]
async fn the_brief_counts_a_held_out_member_back_apart_from_those_retained() {
    use crate::task::holdout::{Arm, Holdout};
    let w = world().await;
    for (i, arm) in [Arm::Contacted, Arm::HeldOut].into_iter().enumerate() {
        let created_at = day0() - days(5);
        let member = MemberId::parse(&format!("m_brief_{i}")).expect("member");
        let mut task = sample_task_for(w.account.id, member, TaskStatus::Waiting, created_at);
        task.task_type = "churn_risk".into();
        task.holdout = Some(Holdout {
            arm,
            bucket: 1,
            generation: 0,
        });
        w.store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        let closed_at = day0() - SignedDuration::from_hours(20);
        let (done, log) = transition(
            &task,
            TaskStatus::Completed,
            closed_at,
            Why::new(Reason::GoalSignalCheckin).outcome("retained"),
        )
        .expect("close");
        w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
    }
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert_eq!(
        (brief.yesterday.retained, brief.yesterday.held_out_back),
        (1, 1),
        "{:?}",
        brief.yesterday
    );
    let json = serde_json::to_value(&brief.yesterday).expect("json");
    assert_eq!(json["held_out_back"], 1);
}

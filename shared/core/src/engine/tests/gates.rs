//! The gates on the in-memory store: kill switch, anomalies, autonomy (ramp,
//! dry run, plan), the stale guard, subtasks, priorities, escalation timeouts.

use super::*;
use crate::ports::Clock;
use crate::task::commit::TaskCommit;
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::task::{ConversationMessage, Role};
use crate::testing::at;

/// Given a task that has written to a member who then replied three times without the task
/// closing, when its follow-up comes due, then it is escalated as a possible loop.
#[tokio::test]
async fn three_member_replies_without_resolution_escalate_as_an_anomaly() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_loop").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
    let current = w.task(&task).await;
    let (next, log) = record(&current, w.clock.now(), Why::new(Reason::MemberReplied));
    let mut commit = TaskCommit::new(next, log);
    for n in 0..3 {
        commit.messages.push(ConversationMessage {
            id: crate::kernel::ids::new_ulid(w.clock.now()),
            at: w.clock.now(),
            role: Role::Member,
            content: format!("reply {n}"),
            original: None,
        });
    }
    w.store.commit(&commit).await.expect("commit");
    let due = w.run_when_due(&task).await;
    w.assert_follow_up_on_day(due, 3);
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
    // The pause held it past the morning hours: it goes at the next ones (spec §29.3).
    let resumed = w.run_when_due(&task).await;
    assert!(w.mailer.sent().is_empty(), "10:00 is past a first touch's morning hours");
    assert_eq!(resumed, day0() + SignedDuration::from_hours(1), "the pause waited an hour");
    let due = w.run_when_due(&task).await;
    assert_eq!(w.mailer.sent().len(), 1);
    let local = w.local(due);
    assert_eq!(
        (local.date(), local.hour()),
        (w.local(day0() + days(1)).date(), 8),
        "the next morning"
    );
}

async fn set_onboarded(w: &World, days_ago: i64, mode: ExecutionMode) -> crate::owner::account::Account {
    let patch = super::super::SettingsPatch {
        onboarded_at: Some(w.clock.now() - days(days_ago)),
        execution_mode: Some(mode),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    w.engine.account(w.account.id).await.expect("account")
}

/// Given a gym on day 1 of its ramp in limited_auto, when a confident task is made, then the
/// shadow phase sends it to review; once approved it drafts and records what it would send,
/// the cadence moves on, and no mail, member ledger or daily counter is touched.
#[tokio::test]
async fn the_shadow_phase_reviews_everything_and_never_sends() {
    let w = world().await;
    let account = set_onboarded(&w, 0, ExecutionMode::LimitedAuto).await;
    let input = w.new_task("churn_risk", "m_shadow").await;
    let task = w.engine.create_task(&account, input).await.expect("create").task().clone();
    assert_eq!(task.status, TaskStatus::PendingReview);
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    assert_eq!(history.log[0].reason, "ramp_shadow_requires_review");
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "shadow never sends");
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    assert_eq!((history.task.status, history.task.touch), (TaskStatus::Waiting, 1));
    assert!(history.log.iter().any(|l| l.reason == "shadow_would_send"));
    assert!(
        history
            .messages
            .iter()
            .any(|m| m.role == Role::System && m.content.starts_with("[shadow] would send"))
    );
    assert!(history.outbound.is_empty());
    let (_, ledger) = w
        .store
        .get_member(w.account.id, &task.member.id)
        .await
        .expect("read")
        .expect("member");
    assert!(ledger.sends.is_empty(), "the member's real capacity is untouched");
    let today = crate::kernel::limits::local_date(w.clock.now(), &w.account.settings.time_zone());
    assert_eq!(w.store.daily_sends(w.account.id, today).await.expect("daily"), 0);
}

/// Given a guided-phase gym (day 5), then at most 3 mails go out a day whatever its own limit.
#[tokio::test]
async fn the_guided_phase_caps_the_day_at_three_sends() {
    let w = world().await;
    set_onboarded(&w, 4, ExecutionMode::Manual).await;
    for n in 0..5 {
        w.approved("churn_risk", &format!("m_g{n}")).await;
    }
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 3);
}

/// Given a dry-run task on a gym past its ramp, when it runs its whole cadence, then every
/// touch is recorded on the cadence's days, the gates still apply (the send window), nothing
/// is mailed, and the task ends the way a live one would.
#[tokio::test]
async fn a_dry_run_walks_the_whole_cadence_without_sending() {
    let w = world().await;
    let input = w.new_task("churn_risk", "m_dry").await;
    let options = super::super::CreateOptions {
        mode: crate::task::controls::TaskMode::DryRun,
        ..Default::default()
    };
    let task = w
        .engine
        .create_task_with(&w.account, input, options)
        .await
        .expect("create")
        .task()
        .clone();
    assert_eq!(task.controls.mode, crate::task::controls::TaskMode::DryRun);
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    // 22:00 in New York: outside the window, the dry run waits for it like a live send.
    w.clock.set(at("2026-11-03T03:00:00Z"));
    w.run().await;
    assert_eq!(w.task(&task).await.touch, 0, "the window gate holds for dry runs too");
    for n in 1..=16 {
        w.clock.set(day0() + days(n));
        w.run().await;
    }
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    assert!(w.mailer.sent().is_empty());
    let recorded = history.log.iter().filter(|l| l.reason == "dry_run_would_send").count();
    assert_eq!(recorded, 3, "{:?}", history.log);
    assert_eq!(history.task.status, TaskStatus::Cancelled);
    assert_eq!(history.task.outcome.as_deref(), Some("unresponsive"));
}

/// Given a plan-mode task, then it waits for review with a plan of one step per touch; once
/// the owner approves the plan it runs live.
#[tokio::test]
async fn a_plan_is_reviewed_then_runs_live() {
    let w = world().await;
    let account = set_onboarded(&w, 60, ExecutionMode::LimitedAuto).await;
    let input = w.new_task("churn_risk", "m_plan").await;
    let options = super::super::CreateOptions {
        mode: crate::task::controls::TaskMode::Plan,
        ..Default::default()
    };
    let task = w
        .engine
        .create_task_with(&account, input, options)
        .await
        .expect("create")
        .task()
        .clone();
    assert_eq!(task.status, TaskStatus::PendingReview, "confident, but a plan is always reviewed");
    let plan = task.controls.plan.clone().expect("plan");
    assert_eq!(plan.steps.len(), 3);
    assert_eq!(plan.steps[2].timing, "day 8 if no reply");
    assert!(plan.steps.iter().all(|s| s.draft_content.is_some()));
    let approved = w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    assert_eq!(approved.controls.mode, crate::task::controls::TaskMode::Live);
    assert!(approved.controls.plan.as_ref().is_some_and(|p| p.approved_at.is_some()));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
}

/// Given a churn task approved two days after it was made, when the member checked in
/// meanwhile, then the stale guard completes it as self-resolved and nothing is sent.
#[tokio::test]
async fn the_stale_guard_completes_a_churn_task_whose_member_came_back() {
    let w = world().await;
    let input = w.new_task("churn_risk", "m_back").await;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    w.clock.advance(days(1));
    let (mut facts, _) = w
        .store
        .get_member(w.account.id, &task.member.id)
        .await
        .expect("read")
        .expect("member");
    facts.last_checkin_at = Some(w.clock.now());
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    w.clock.advance(days(1));
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    assert!(w.mailer.sent().is_empty());
    let after = w.task(&task).await;
    assert_eq!(after.status, TaskStatus::Completed);
    assert_eq!(after.outcome.as_deref(), Some("self_resolved"));
    assert_eq!(after.outcome_reason.as_deref(), Some("member_checked_in_before_outreach"));
}

/// Given a payment-recovery conversation, when the payment goes through before the
/// follow-up, then the follow-up is not sent and the task completes as recovered.
#[tokio::test]
async fn the_stale_guard_stops_a_follow_up_once_the_payment_went_through() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_pay").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
    let (mut facts, _) = w
        .store
        .get_member(w.account.id, &task.member.id)
        .await
        .expect("read")
        .expect("member");
    facts.last_payment_failed_at = Some(day0() - days(1));
    facts.last_payment_succeeded_at = Some(w.clock.now() + SignedDuration::from_hours(2));
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    let due = w.run_when_due(&task).await;
    w.assert_follow_up_on_day(due, 1);
    assert_eq!(w.mailer.sent().len(), 1, "no follow-up");
    let after = w.task(&task).await;
    assert_eq!(
        (after.status, after.outcome.as_deref(), after.outcome_reason.as_deref()),
        (TaskStatus::Completed, Some("recovered"), Some("payment_resolved_before_follow_up"))
    );
}

/// Given a task that has made all the AI calls a task may make, when its follow-up is due,
/// then it goes to the owner instead of drafting.
#[tokio::test]
async fn a_task_out_of_ai_calls_goes_to_the_owner() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_chatty").await;
    w.run().await;
    let current = w.task(&task).await;
    let (mut next, log) = record(&current, w.clock.now(), Why::new(Reason::ReplyDrafted));
    next.ai_calls = crate::kernel::limits::AI_CALLS_PER_TASK;
    w.store.commit(&TaskCommit::new(next, log)).await.expect("commit");
    let due = w.run_when_due(&task).await;
    w.assert_follow_up_on_day(due, 3);
    let after = w.task(&task).await;
    assert_eq!(
        (after.status, after.outcome_reason.as_deref()),
        (TaskStatus::Escalated, Some("ai_budget_exhausted"))
    );
    assert_eq!(w.mailer.sent().len(), 1);
}

/// Given an account that used today's AI calls, when a follow-up needs a draft, then it waits
/// for the account's next day and goes out then — delayed, not lost.
#[tokio::test]
async fn an_account_out_of_ai_calls_today_waits_for_tomorrow() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_later").await;
    w.run().await;
    let due = w.due(&task).await;
    w.assert_follow_up_on_day(due, 3);
    w.clock.set(due);
    let tz = w.account.settings.time_zone();
    let today = crate::kernel::limits::local_date(w.clock.now(), &tz);
    for _ in 0..crate::kernel::limits::AI_CALLS_PER_ACCOUNT_PER_DAY {
        w.store
            .count_ai_call(w.account.id, today, crate::kernel::limits::AI_CALLS_PER_ACCOUNT_PER_DAY)
            .await
            .expect("count");
    }
    w.run().await;
    let waiting = w.task(&task).await;
    assert_eq!(waiting.status, TaskStatus::Waiting);
    assert_eq!(w.mailer.sent().len(), 1, "no draft, no follow-up today");
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    assert!(history.log.iter().any(|l| l.reason == "ai_daily_limit"));
    w.clock
        .set(waiting.next_action_at.expect("scheduled") + SignedDuration::from_hours(9));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2, "sent the next day");
    assert_eq!(w.task(&task).await.ai_calls, 1, "the follow-up's draft is counted on the task");
}

/// Given a member with an approved churn task (high) and an approved payment task (critical)
/// both due, when the churn task's step runs first, then it yields the day to the payment
/// task (logged, touch kept); the payment mails go first and the churn mail on the first
/// day the payment task does not want the slot.
#[tokio::test]
async fn the_more_urgent_task_gets_the_members_message_of_the_day() {
    let w = world().await;
    let churn = w.approved("churn_risk", "m_both").await;
    let payment = w.approved("payment_recovery", "m_both").await;
    let yielded = w.engine.execute(&w.item(&churn)).await.expect("step");
    assert!(
        matches!(&yielded, StepOutcome::Deferred { reason, .. } if *reason == Reason::YieldingToHigherPriority),
        "{yielded:?}"
    );
    let waiting = w.task(&churn).await;
    assert_eq!((waiting.status, waiting.touch), (TaskStatus::Ready, 0), "delayed, not skipped");
    w.engine.execute(&w.item(&payment)).await.expect("step");
    assert_eq!(w.mailer.sent().len(), 1);
    assert_eq!(w.task(&payment).await.touch, 1, "the critical task went first");

    // The next morning the churn task is due, and the payment task's urgent follow-up is
    // planned for the afternoon (spec §29.3): the day is still the payment task's.
    w.clock.set(day0() + days(1) + SignedDuration::from_mins(5));
    w.run().await;
    assert_eq!((w.task(&payment).await.touch, w.task(&churn).await.touch), (1, 0));
    let due = w.run_when_due(&payment).await;
    w.assert_follow_up_on_day(due, 1);
    assert_eq!((w.task(&payment).await.touch, w.task(&churn).await.touch), (2, 0));
    // The day after, the payment task waits (its next touch is two days out): churn goes.
    w.clock.set(day0() + days(2) + SignedDuration::from_mins(10));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 3);
    assert_eq!(w.task(&churn).await.touch, 1);
}

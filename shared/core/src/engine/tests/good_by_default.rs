//! A new gym's first weeks: a stop is a stop for every source of tasks, the ramp
//! and a day's review capacity start without a setting, and every escalation explains itself
//! to the owner — a threatening reply at once.

use super::*;
use crate::members::member::MemberFacts;
use crate::owner::owner_notice::{NoticeDelivery, NoticeKind};
use crate::ports::Clock;
use crate::task::error::EngineError;
use crate::testing::MailerMode;

/// A regular who stopped coming `gap` days ago, paying `value` a month.
async fn lapsed(w: &World, id: &str, value: f64) -> MemberId {
    let now = w.clock.now();
    let member = MemberId::parse(id).expect("id");
    let mut facts = MemberFacts::new(member.clone());
    facts.email = Email::parse(&format!("{}@example.com", id.replace('_', "-"))).ok();
    facts.first_name = Some("Pat".into());
    facts.status = Some(crate::members::event::MemberStatus::Active);
    facts.joined_at = Some(now - days(400));
    facts.monthly_value = Some(value);
    let last = now - days(25);
    facts.checkins = (0..12).map(|k| last - days(3 * k)).collect();
    facts.checkin_count = 12;
    facts.last_checkin_at = facts.checkins.last().copied();
    facts.version = 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    member
}

async fn all_tasks(w: &World) -> Vec<Task> {
    let query = crate::ports::TaskQuery {
        limit: 10_000,
        ..Default::default()
    };
    w.store.list_tasks(w.account.id, &query).await.expect("list").0
}

async fn ai_calls_today(w: &World) -> u32 {
    let today = crate::kernel::limits::local_date(w.clock.now(), &w.account.settings.time_zone());
    w.store.ai_calls(w.account.id, today).await.expect("calls")
}

/// Given a member who asked to stop, when the owner, the risk scan or a webhook would open a
/// task for them, then none is opened, the owner's call is refused with `member_suppressed`,
/// and no AI call is spent.
#[tokio::test]
async fn no_source_opens_a_task_for_a_suppressed_member() {
    let w = world().await;
    let member = lapsed(&w, "m_pay", 150.0).await;
    let email = Email::parse("m-pay@example.com").expect("email");
    w.store
        .put_suppression(w.account.id, &email, "member_request", w.clock.now())
        .await
        .expect("suppress");

    let manual = NewTask {
        draft: None,
        member_id: member.clone(),
        ..w.new_task("churn_risk", "m_pay").await
    };
    let refused = w.engine.create_task(&w.account, manual).await;
    assert!(
        matches!(&refused, Err(EngineError::MemberSuppressed { member: m }) if *m == member),
        "{refused:?}"
    );
    let body = crate::contract::error_body(&refused.expect_err("refused"));
    assert_eq!(body.error.code, "member_suppressed");

    let scan = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!((scan.findings, scan.created, scan.suppressed), (1, 0, 1), "{scan:?}");

    let envelope = SignalEnvelope {
        account_id: w.account.id,
        webhook_id: "wh_pay".into(),
        received_at: w.clock.now(),
        event: WebhookEvent {
            timestamp: w.clock.now(),
            event: MemberEvent::PaymentFailed {
                member_id: member.clone(),
                amount: 150.0,
                currency: "USD".into(),
                failed_at: w.clock.now(),
                reason: None,
            },
        },
    };
    let outcome = w.engine.apply_signal(&envelope).await.expect("applied, not an error");
    assert!(
        matches!(outcome, crate::engine::SignalOutcome::Applied { task_created: None }),
        "{outcome:?}"
    );

    assert!(all_tasks(&w).await.is_empty(), "no task for a suppressed member");
    assert_eq!(ai_calls_today(&w).await, 0, "no AI call spent on them");
}

/// Given a gym onboarded today (its shadow phase) with 40 lapsed members of different
/// values, when the first risk scan runs, then it proposes a day's review capacity — the 10
/// most valuable — drafting no more than it proposes; later scans that day propose nothing,
/// and the next day the next 10.
#[tokio::test]
async fn the_first_scan_proposes_a_days_review_capacity_most_valuable_first() {
    let mut w = world().await;
    let patch = crate::engine::SettingsPatch {
        onboarded_at: Some(w.clock.now()),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    w.account = w.engine.account(w.account.id).await.expect("account");
    for n in 0..40 {
        lapsed(&w, &format!("m_{n:03}"), 50.0 + f64::from(n) * 5.0).await;
    }

    let first = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!(first.created, 10, "{first:?}");
    assert_eq!(first.stopped_by.as_deref(), Some("review_capacity"));
    let mut proposed: Vec<f64> = all_tasks(&w).await.iter().filter_map(|t| t.member.monthly_value).collect();
    proposed.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(proposed, (30..40).rev().map(|n| 50.0 + f64::from(n) * 5.0).collect::<Vec<_>>());
    assert_eq!(ai_calls_today(&w).await, 10, "one draft per proposal, none wasted");
    assert!(all_tasks(&w).await.iter().all(|t| t.status == TaskStatus::PendingReview));

    w.clock.advance(crate::kernel::limits::ANALYSIS_PERIOD);
    let again = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!(
        (again.created, again.stopped_by.as_deref(), again.already_handled),
        (0, Some("review_capacity"), 0),
        "nothing claimed, nothing drafted"
    );
    assert_eq!(ai_calls_today(&w).await, 10);

    w.clock.advance(days(1));
    let next_day = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!(next_day.created, 10, "{next_day:?}");
    assert_eq!(all_tasks(&w).await.len(), 20);
}

/// The escalation context every origin leaves on the task and in the owner's notice.
async fn assert_explained(w: &World, task: &Task, reason: &str) {
    let after = w.task(task).await;
    assert_eq!(after.status, TaskStatus::Escalated, "{reason}");
    assert_eq!(after.outcome_reason.as_deref(), Some(reason));
    let context = after.escalation.as_ref().expect("escalation context");
    assert_eq!(context.reason, reason);
    assert!(context.summary.len() > 20, "a summary in words: {:?}", context.summary);
    assert!(context.suggested_next_step.ends_with('.'), "{:?}", context.suggested_next_step);
    let view = serde_json::to_value(crate::contract::TaskView::from(&after)).expect("json");
    for key in ["reason", "summary", "suggested_next_step"] {
        assert!(view["escalation"][key].is_string(), "{key}: {view}");
    }
    let (notices, _) = w.store.list_notices(w.account.id, 50, None).await.expect("notices");
    let notice = notices
        .iter()
        .find(|n| n.task_id == Some(task.id) && n.kind == NoticeKind::Escalation)
        .expect("the owner is told");
    assert!(notice.detail.starts_with(&context.summary), "{}", notice.detail);
    assert!(
        notice
            .detail
            .contains(&format!("Suggested next step: {}", context.suggested_next_step)),
        "{}",
        notice.detail
    );
}

/// Given a payment task whose urgent cadence is spent, then it escalates with a summary and
/// a next step, on the task and in the owner's notice.
#[tokio::test]
async fn a_spent_budget_escalation_explains_itself() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_spent").await;
    for _ in 0..10 {
        w.run_when_due(&task).await;
        if w.task(&task).await.status == TaskStatus::Escalated {
            break;
        }
    }
    let reason = w.task(&task).await.outcome_reason.expect("a reason");
    assert_explained(&w, &task, &reason).await;
    let context = w.task(&task).await.escalation.expect("context");
    assert_eq!(context.last_draft.as_deref(), Some("First"), "the last draft known");
}

/// Given a mail provider that refuses every send, then the task escalates after its retries
/// with the failure explained.
#[tokio::test]
async fn a_send_failure_escalation_explains_itself() {
    let w = world().await;
    w.mailer.set_mode(MailerMode::Reject);
    let task = w.approved("churn_risk", "m_refused").await;
    for _ in 0..10 {
        w.run_when_due(&task).await;
        if w.task(&task).await.status == TaskStatus::Escalated {
            break;
        }
    }
    assert_explained(&w, &task, "send_rejected_after_retries").await;
    let context = w.task(&task).await.escalation.expect("context");
    assert!(context.summary.starts_with("The message could not be sent"), "{}", context.summary);
}

/// Given a member's reply that threatens legal action, then — before any AI — the task
/// escalates at once with a critical notice mailed to the owner quoting them, the member is
/// suppressed and their other tasks cancelled.
#[tokio::test]
async fn a_legal_threat_escalates_at_once_with_a_critical_notice_beside_the_suppression() {
    let w = world().await;
    let patch = crate::engine::SettingsPatch {
        owner_email: Some(Email::parse("owner@example.com").expect("email")),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let task = w.approved("churn_risk", "m_legal").await;
    let other = w
        .engine
        .create_task(&w.account, w.new_task("milestone_review", "m_legal").await)
        .await
        .expect("create")
        .task()
        .clone();
    w.run().await;
    let calls = ai_calls_today(&w).await;
    let raw = w.answer_newest(
        "m-legal@example.com",
        "l1@mail.example.net",
        "Stop harassing me or you'll hear from my lawyer.",
    );
    w.engine.receive_reply(&raw).await.expect("receive");

    let after = w.task(&task).await;
    assert_eq!(
        (after.status, after.outcome_reason.as_deref()),
        (TaskStatus::Escalated, Some("legal_threat"))
    );
    let context = after.escalation.expect("context");
    assert_eq!(context.blocked_by, "member");
    assert!(context.member_words.as_deref().is_some_and(|w| w.contains("my lawyer")));
    assert!(
        w.store
            .is_suppressed(w.account.id, &Email::parse("m-legal@example.com").expect("email"))
            .await
            .expect("read")
    );
    assert_eq!(w.task(&other).await.status, TaskStatus::Cancelled, "the member's other tasks");
    assert_eq!(ai_calls_today(&w).await, calls, "the agent never read it");
    let (notices, _) = w.store.list_notices(w.account.id, 50, None).await.expect("notices");
    let critical = notices
        .iter()
        .find(|n| n.kind == NoticeKind::CriticalEscalation)
        .expect("a critical notice");
    assert!(critical.kind.is_critical());
    assert_eq!(critical.delivery, NoticeDelivery::Email);
    assert!(critical.title.starts_with("Urgent:"), "{}", critical.title);
    assert!(critical.detail.contains("> Stop harassing me"), "{}", critical.detail);
    let mailed = w.mailer.sent();
    assert!(
        mailed
            .iter()
            .any(|m| m.to.as_str() == "owner@example.com" && m.subject.contains("Urgent")),
        "mailed at once"
    );
}

/// Given a parent whose required step was cancelled, then the parent's escalation explains
/// the failed step and what to do.
#[tokio::test]
async fn a_failed_subtask_escalation_explains_itself() {
    let w = world().await;
    let parent = w.approved("win_back", "m_parent_fail").await;
    let input = w.new_task("staff_call_member", "m_parent_fail").await;
    let call = w
        .engine
        .create_subtask(
            &w.account,
            parent.id,
            input,
            crate::task::subtasks::Requirement::Required,
            Default::default(),
        )
        .await
        .expect("call");
    w.engine.cancel(w.account.id, call.id).await.expect("cancel");
    w.run().await;
    assert_explained(&w, &parent, "required_subtask_failed").await;
    let context = w.task(&parent).await.escalation.expect("context");
    assert_eq!(context.blocked_by, "subtask");
}

/// Given a staff to-do the owner leaves open past its reminders, then its escalation
/// explains it (the timers' origin).
#[tokio::test]
async fn an_overdue_to_do_escalation_explains_itself() {
    let w = world().await;
    let todo = w.approved("staff_call_member", "m_todo").await;
    for _ in 0..10 {
        w.run_when_due(&todo).await;
        if w.task(&todo).await.status == TaskStatus::Escalated {
            break;
        }
    }
    let reason = w.task(&todo).await.outcome_reason.expect("reason");
    assert_explained(&w, &todo, &reason).await;
}

/// Given a member suppressed after a threat, whose escalated task stays with the owner, when
/// the owner opens another task of the same type, then it is refused too (not merged).
#[tokio::test]
async fn a_suppressed_members_open_task_takes_no_new_trigger() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_kept").await;
    w.run().await;
    let raw = w.answer_newest("m-kept@example.com", "k1@mail.example.net", "See you in court.");
    w.engine.receive_reply(&raw).await.expect("receive");
    assert_eq!(w.task(&task).await.status, TaskStatus::Escalated);
    let again = w.engine.create_task(&w.account, w.new_task("churn_risk", "m_kept").await).await;
    assert!(matches!(again, Err(EngineError::MemberSuppressed { .. })), "{again:?}");
}

//! The creation rails and the escalation timer on the in-memory store: flood limits (spec
//! §7.9), cross-task amplification (§7.13) and escalation timeouts (§17.5).

use super::*;
use crate::kernel::limits;
use crate::ports::Clock;
use crate::task::error::EngineError;
use crate::task::flood::{Burst, Limit};

async fn manual(w: &World, member: &str) -> Result<super::super::Created, EngineError> {
    let input = w.new_task("churn_risk", member).await;
    w.engine.create_task(&w.account, input).await
}

fn limited(r: &Result<super::super::Created, EngineError>) -> Option<Limit> {
    match r {
        Err(EngineError::Limited(refusal)) => Some(refusal.limit),
        _ => None,
    }
}

/// Given an account that got its 50 tasks today, when one more is asked for, then it is
/// refused with the daily limit and nothing is written; the next local day it is made.
#[tokio::test]
async fn the_daily_creation_limit_refuses_the_fifty_first_task_until_tomorrow() {
    let w = world().await;
    for n in 0..limits::MAX_TASKS_PER_ACCOUNT_PER_DAY {
        manual(&w, &format!("m_d{n}")).await.expect("within the limit");
    }
    let refused = manual(&w, "m_late").await;
    assert_eq!(limited(&refused), Some(Limit::DailyTasks));
    let member = MemberId::parse("m_late").expect("member");
    assert_eq!(w.store.active_task(w.account.id, &member, "churn_risk").await.expect("read"), None);
    let (tasks, _) = w
        .store
        .list_tasks(
            w.account.id,
            &crate::ports::TaskQuery {
                limit: 200,
                ..Default::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(tasks.len(), limits::MAX_TASKS_PER_ACCOUNT_PER_DAY as usize, "nothing half-applied");
    w.clock.advance(days(1));
    assert!(manual(&w, "m_late").await.is_ok(), "a new local day has a new allowance");
}

/// Given an account holding 100 open tasks, when another is asked for, then it is refused;
/// closing one frees its place.
#[tokio::test]
async fn the_open_task_cap_stops_creation_until_a_task_closes() {
    let w = world().await;
    let mut first = None;
    for n in 0..limits::MAX_ACTIVE_TASKS_PER_ACCOUNT {
        if n > 0 && n % limits::MAX_TASKS_PER_ACCOUNT_PER_DAY == 0 {
            w.clock.advance(days(1));
        }
        let made = manual(&w, &format!("m_a{n}")).await.expect("within the cap");
        first.get_or_insert(made.task().clone());
    }
    w.clock.advance(days(1));
    assert_eq!(limited(&manual(&w, "m_over").await), Some(Limit::ActiveTasks));
    let first = first.expect("a task");
    w.engine.cancel(w.account.id, first.id).await.expect("cancel");
    assert!(manual(&w, "m_over").await.is_ok(), "the cancelled task gave back its place");
    assert_eq!(limited(&manual(&w, "m_over2").await), Some(Limit::ActiveTasks));
}

/// Given an analysis run, when it asks for more tasks than a run may create, then the rest
/// are refused with the per-run limit; a member who already has the task costs no slot.
#[tokio::test]
async fn a_run_creates_at_most_its_allowance_and_duplicates_cost_nothing() {
    let w = world().await;
    let burst = Burst::analysis_run();
    let mut made = 0;
    let mut refused = 0;
    for n in 0..40 {
        let input = w.new_task("churn_risk", &format!("m_r{n}")).await;
        match w.engine.create_task_in(&w.account, input, &burst).await {
            Ok(_) => made += 1,
            Err(EngineError::Limited(r)) if r.limit == Limit::PerRun => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((made, refused), (limits::MAX_TASKS_PER_RUN, 40 - limits::MAX_TASKS_PER_RUN));
    let again = Burst::analysis_run();
    let input = w.new_task("churn_risk", "m_r0").await;
    let existing = w.engine.create_task_in(&w.account, input, &again).await.expect("existing");
    assert!(matches!(existing, super::super::Created::Existing(_)));
    assert_eq!(again.used(), 0);
}

fn agent_spawned(mut input: NewTask) -> NewTask {
    input.trigger_type = TriggerType::AgentSpawned;
    input.confidence = Some(100);
    input
}

/// Given an account on auto with a confident agent, when the agent spawns tasks on its own,
/// then each waits for review, a member gets at most two a day and the account ten.
#[tokio::test]
async fn agent_spawned_tasks_are_always_reviewed_and_capped_per_member_and_account() {
    let w = world().await;
    let patch = super::super::SettingsPatch {
        execution_mode: Some(ExecutionMode::LimitedAuto),
        onboarded_at: Some(at("2025-01-01T00:00:00Z")),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    let confident = w
        .engine
        .create_task(&account, w.new_task("churn_risk", "m_auto").await)
        .await
        .expect("owner task");
    assert_eq!(
        confident.task().status,
        TaskStatus::Ready,
        "the same confidence runs on its own for the owner"
    );

    let types = ["churn_risk", "win_back", "lead_followup"];
    let mut statuses = Vec::new();
    for task_type in &types[..2] {
        let input = agent_spawned(w.new_task(task_type, "m_spawn").await);
        statuses.push(w.engine.create_task(&account, input).await.expect("spawned").task().status);
    }
    assert_eq!(statuses, [TaskStatus::PendingReview; 2]);
    let third = agent_spawned(w.new_task(types[2], "m_spawn").await);
    assert_eq!(
        limited(&w.engine.create_task(&account, third).await),
        Some(Limit::AgentTasksPerMember)
    );
    for n in 0..(limits::MAX_AGENT_TASKS_PER_ACCOUNT_PER_DAY - 2) {
        let input = agent_spawned(w.new_task("churn_risk", &format!("m_sp{n}")).await);
        w.engine.create_task(&account, input).await.expect("within the account cap");
    }
    let over = agent_spawned(w.new_task("churn_risk", "m_sp_over").await);
    assert_eq!(limited(&w.engine.create_task(&account, over).await), Some(Limit::AgentTasksPerDay));
    let owner = w.new_task("churn_risk", "m_sp_over").await;
    assert!(
        w.engine.create_task(&account, owner).await.is_ok(),
        "the owner is not capped by the agent's limit"
    );
}

/// The refusal reaches the owner API as the API's `limited` (a 429: `openloop_edge::http`).
#[tokio::test]
async fn a_refusal_is_reported_as_limited() {
    let refusal = crate::task::flood::Refusal {
        limit: Limit::DailyTasks,
        max: 50,
    };
    let body = crate::contract::error_body(&EngineError::Limited(refusal));
    let json = serde_json::to_value(&body).expect("json");
    assert_eq!(json["error"]["code"], "limited");
    assert!(json["error"]["message"].as_str().is_some_and(|m| m.contains("50")));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        Create { member: u8, agent: bool, type_index: u8 },
        Close { nth: u8 },
        NextDay,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (0u8..60, any::<bool>(), 0u8..3).prop_map(|(member, agent, type_index)| Step::Create { member, agent, type_index }),
            2 => any::<u8>().prop_map(|nth| Step::Close { nth }),
            1 => Just(Step::NextDay),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Whatever is asked for, in any order: no day gets more than its creations, no
        /// day more agent tasks (per account and per member), and the account never holds
        /// more open tasks than the cap.
        #[test]
        fn creation_never_exceeds_the_flood_limits(steps in proptest::collection::vec(step(), 1..260)) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async move {
                let w = world().await;
                let types = ["churn_risk", "win_back", "lead_followup"];
                let mut made: Vec<Task> = Vec::new();
                let mut per_day = std::collections::HashMap::<i64, (u32, u32)>::new();
                let mut per_member = std::collections::HashMap::<(i64, u8), u32>::new();
                let mut day = 0i64;
                for step in steps {
                    match step {
                        Step::Create { member, agent, type_index } => {
                            let mut input = w.new_task(types[type_index as usize], &format!("m_p{member}")).await;
                            if agent { input = agent_spawned(input); }
                            if let Ok(super::super::super::Created::New(task)) = w.engine.create_task(&w.account, input).await {
                                let counts = per_day.entry(day).or_default();
                                counts.0 += 1;
                                if agent {
                                    counts.1 += 1;
                                    *per_member.entry((day, member)).or_default() += 1;
                                    assert_eq!(task.status, TaskStatus::PendingReview);
                                }
                                made.push(task);
                            }
                        }
                        Step::Close { nth } => {
                            if !made.is_empty() {
                                let task = made.remove(nth as usize % made.len());
                                w.engine.cancel(w.account.id, task.id).await.expect("cancel");
                            }
                        }
                        Step::NextDay => {
                            day += 1;
                            w.clock.advance(days(1));
                        }
                    }
                    let open = w.store.list_tasks(w.account.id, &crate::ports::TaskQuery { limit: 10_000, ..Default::default() })
                        .await.expect("list").0.into_iter().filter(Task::is_active).count();
                    assert!(open <= limits::MAX_ACTIVE_TASKS_PER_ACCOUNT as usize);
                    assert_eq!(open, made.len());
                }
                for (created, agent) in per_day.values() {
                    assert!(*created <= limits::MAX_TASKS_PER_ACCOUNT_PER_DAY);
                    assert!(*agent <= limits::MAX_AGENT_TASKS_PER_ACCOUNT_PER_DAY);
                }
                assert!(per_member.values().all(|n| *n <= limits::MAX_AGENT_TASKS_PER_MEMBER_PER_DAY));
                let _ = w.clock.now();
            });
        }
    }
}

async fn escalated(w: &World, member: &str) -> Task {
    let task = w.approved("churn_risk", member).await;
    w.run().await;
    let current = w.task(&task).await;
    let why = crate::task::transition::Why::new(crate::task::reason::Reason::MemberQuestionNeedsOwner);
    w.engine
        .move_to(current, TaskStatus::Escalated, w.clock.now(), why)
        .await
        .expect("escalate");
    let task = w.task(&task).await;
    assert_eq!(task.status, TaskStatus::Escalated);
    task
}

/// Given an escalated task nobody looks at, when 48 hours pass, then the owner is reminded
/// in its conversation and log; when 7 days pass, it is cancelled as `escalation_timeout`.
#[tokio::test]
async fn an_untouched_escalation_is_reminded_at_48_hours_and_cancelled_at_7_days() {
    let w = world().await;
    let task = escalated(&w, "m_esc").await;
    let escalated_at = w.clock.now();
    assert_eq!(task.next_action_at, Some(escalated_at + limits::ESCALATION_REMINDER_AFTER));

    w.clock.advance(SignedDuration::from_hours(47));
    w.run().await;
    assert_eq!(w.task(&task).await.version, task.version, "nothing before 48 hours");

    w.clock.advance(SignedDuration::from_hours(1));
    w.run().await;
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    assert_eq!(history.task.status, TaskStatus::Escalated);
    assert_eq!(history.task.next_action_at, Some(escalated_at + limits::ESCALATION_TIMEOUT));
    assert_eq!(history.log.iter().filter(|l| l.reason == "escalation_reminder").count(), 1);
    assert!(
        history
            .messages
            .iter()
            .any(|m| m.role == crate::task::Role::System && m.content.starts_with("Reminder"))
    );

    w.clock.advance(days(2));
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Escalated, "one reminder, no early cancel");

    w.clock.set(escalated_at + limits::ESCALATION_TIMEOUT);
    w.run().await;
    let closed = w.task(&task).await;
    assert_eq!(closed.status, TaskStatus::Cancelled);
    assert_eq!(closed.outcome_reason.as_deref(), Some("escalation_timeout"));
    assert_eq!(w.mailer.sent().len(), 1, "the timer never writes to the member");
    // Never cancelled for want of an answer before its member is on the call list.
    let todo = w
        .engine
        .todo(w.account.id, closed.todo_id.expect("its to-do"))
        .await
        .expect("to-do");
    assert!(todo.is_pending(), "{todo:?}");
    assert_eq!(todo.member.id, task.member.id);
}

/// Given an escalated task the owner resolved, when its timer would have fired, then it
/// stays as the owner left it; a wake-up that raced the owner changes nothing either.
#[tokio::test]
async fn the_owners_action_is_never_undone_by_the_timer() {
    let w = world().await;
    let task = escalated(&w, "m_owner").await;
    let item = w.item(&task);
    w.clock.advance(days(1));
    let resolution = super::super::Resolution {
        outcome: "owner_handled".into(),
        note: None,
    };
    let resolved = w.engine.resolve(w.account.id, task.id, resolution).await;
    let resolved = match resolved {
        Ok(t) => t,
        // Not every type lists owner_handled: a cancel is an owner action too.
        Err(_) => w.engine.cancel(w.account.id, task.id).await.expect("cancel"),
    };
    w.clock.advance(days(7));
    w.run().await;
    let outcome = w.engine.dormant_check(&item).await.expect("late wake-up");
    assert!(matches!(outcome, StepOutcome::Skipped(_)), "{outcome:?}");
    let after = w.task(&task).await;
    assert_eq!(after, resolved);
    assert_ne!(after.outcome_reason.as_deref(), Some("escalation_timeout"));
}

/// Given a task that was escalated, guided back to work and escalated again, its timer
/// counts from the second escalation and reminds again.
#[test]
fn the_timer_counts_from_the_latest_escalation() {
    use crate::engine::escalation::{Timer, timer};
    use crate::task::LogEntry;
    let entry = |at: Timestamp, from, to, reason: &str| LogEntry {
        id: crate::kernel::ids::new_ulid(at),
        at,
        from_status: Some(from),
        to_status: to,
        reason: reason.into(),
        detail: None,
    };
    let t0 = day0();
    let log = vec![
        entry(t0, TaskStatus::Waiting, TaskStatus::Escalated, "question"),
        entry(t0 + days(2), TaskStatus::Escalated, TaskStatus::Escalated, "escalation_reminder"),
        entry(
            t0 + days(3),
            TaskStatus::Escalated,
            TaskStatus::Executing,
            "owner_provided_guidance",
        ),
        entry(t0 + days(4), TaskStatus::Executing, TaskStatus::Escalated, "question"),
    ];
    assert_eq!(
        timer(&log, t0, t0 + days(6)),
        Timer::Remind {
            timeout_at: t0 + days(4) + limits::ESCALATION_TIMEOUT
        }
    );
    assert_eq!(
        timer(&log[..2], t0, t0 + days(3)),
        Timer::Wait {
            at: t0 + limits::ESCALATION_TIMEOUT
        }
    );
    assert!(matches!(timer(&log[..2], t0, t0 + days(7)), Timer::TimeOut { .. }));
}

/// A gym's members for the risk scan: `lapsed` regulars who stopped coming, `new` members
/// and members who come regularly (no finding), with e-mail addresses.
async fn seed_gym(w: &World, lapsed: usize, new: usize, regular: usize) {
    let now = w.clock.now();
    let save = |name: String, joined: Timestamp, checkins: Vec<Timestamp>| {
        let mut facts = crate::members::member::MemberFacts::new(MemberId::parse(&name).expect("id"));
        facts.email = crate::kernel::ids::Email::parse(&format!("{}@example.com", name.replace('_', "-"))).ok();
        facts.first_name = Some("Pat".into());
        facts.status = Some(crate::members::event::MemberStatus::Active);
        facts.joined_at = Some(joined);
        facts.monthly_value = Some(150.0);
        facts.checkin_count = checkins.len() as u32;
        facts.checkins = checkins.into_iter().collect();
        facts.last_checkin_at = facts.checkins.last().copied();
        facts.version = 1;
        facts
    };
    let mut all = Vec::new();
    for n in 0..lapsed {
        let last = now - days(20 + n as i64 % 30);
        all.push(save(
            format!("m_lapsed{n:04}"),
            now - days(400),
            (0..12).map(|k| last - days(3 * k)).collect(),
        ));
    }
    for n in 0..new {
        all.push(save(format!("m_new{n:04}"), now - days(2), Vec::new()));
    }
    for n in 0..regular {
        all.push(save(
            format!("m_regular{n:04}"),
            now - days(400),
            (0..12).map(|k| now - days(1 + 3 * k)).collect(),
        ));
    }
    for facts in all {
        w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    }
}

async fn open_by_type(w: &World) -> std::collections::BTreeMap<String, usize> {
    let (tasks, _) = w
        .store
        .list_tasks(
            w.account.id,
            &crate::ports::TaskQuery {
                limit: 10_000,
                ..Default::default()
            },
        )
        .await
        .expect("list");
    let mut by_type = std::collections::BTreeMap::new();
    for t in tasks.iter().filter(|t| t.is_active()) {
        *by_type.entry(t.task_type.clone()).or_insert(0) += 1;
    }
    by_type
}

/// Given a gym where 60 regulars stopped coming and 40 members are new, when the scan runs
/// every 6 hours, then each run creates at most its 25 — churn risks (high) before
/// onboardings (medium) — the day stops at 50, and the next day goes on.
#[tokio::test]
async fn the_risk_scan_creates_within_the_flood_limits_highest_priority_first() {
    let w = world().await;
    seed_gym(&w, 60, 40, 30).await;
    let first = w.engine.analyze().await.expect("scan");
    let ours = &first.accounts[0];
    assert_eq!((ours.members_scanned, ours.findings), (130, 100));
    assert_eq!(ours.created, limits::MAX_TASKS_PER_RUN);
    assert_eq!(ours.stopped_by.as_deref(), Some("flood_limit_per_run"));
    assert_eq!(open_by_type(&w).await.get("churn_risk"), Some(&limits::MAX_TASKS_PER_RUN));

    w.clock.advance(limits::ANALYSIS_PERIOD);
    let second = w.engine.analyze().await.expect("scan");
    assert_eq!(second.created, 25);
    w.clock.advance(limits::ANALYSIS_PERIOD);
    let full = w.engine.analyze().await.expect("scan");
    assert_eq!(full.created, 0);
    assert_eq!(full.accounts[0].stopped_by.as_deref(), Some("flood_limit_daily_tasks"));
    assert_eq!(full.accounts[0].members_scanned, 0, "a full day reads no members");
    let by_type = open_by_type(&w).await;
    assert_eq!(by_type.get("churn_risk"), Some(&50), "{by_type:?}");

    w.clock.advance(days(1));
    let next_day = w.engine.analyze().await.expect("scan");
    assert_eq!(next_day.accounts[0].created_by_type.get("churn_risk"), Some(&10));
    assert_eq!(next_day.accounts[0].created_by_type.get("onboarding"), Some(&15));
    assert_eq!(
        next_day.accounts[0].already_open, 0,
        "claimed episodes are not even looked up again"
    );
    let reviewed = w
        .store
        .list_tasks(
            w.account.id,
            &crate::ports::TaskQuery {
                limit: 10_000,
                ..Default::default()
            },
        )
        .await
        .expect("list")
        .0;
    assert!(
        reviewed
            .iter()
            .all(|t| t.status == TaskStatus::PendingReview && t.trigger_type == TriggerType::CronAnalysis)
    );
}

/// Given a churn task the owner skipped, the next scan does not open it again for the same
/// lapse; once the member comes back and lapses again, it does.
#[tokio::test]
async fn a_closed_finding_is_not_reopened_for_the_same_episode() {
    let w = world().await;
    seed_gym(&w, 1, 0, 0).await;
    assert_eq!(w.engine.analyze().await.expect("scan").created, 1);
    let task = w
        .store
        .list_tasks(
            w.account.id,
            &crate::ports::TaskQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("list")
        .0
        .remove(0);
    assert!(
        task.confidence >= 80,
        "a long, regular history is a confident finding: {}",
        task.confidence
    );
    w.engine.skip(w.account.id, task.id, None).await.expect("skip");
    w.clock.advance(limits::ANALYSIS_PERIOD);
    let again = w.engine.analyze().await.expect("scan");
    assert_eq!((again.created, again.accounts[0].already_handled), (0, 1));

    let member = task.member.id.clone();
    let (mut facts, _) = w.store.get_member(w.account.id, &member).await.expect("read").expect("member");
    facts.checkins.insert(w.clock.now());
    facts.last_checkin_at = Some(w.clock.now());
    facts.checkin_count += 1;
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    w.clock.advance(days(30));
    assert_eq!(w.engine.analyze().await.expect("scan").created, 1, "a new lapse is a new episode");
}

/// Given a refused creation (the open-task cap), the finding is not lost: it is made once
/// there is room.
#[tokio::test]
async fn a_finding_refused_by_a_limit_waits_for_a_later_run() {
    let w = world().await;
    for n in 0..limits::MAX_ACTIVE_TASKS_PER_ACCOUNT {
        if n > 0 && n % limits::MAX_TASKS_PER_ACCOUNT_PER_DAY == 0 {
            w.clock.advance(days(1));
        }
        manual(&w, &format!("m_fill{n}")).await.expect("fill");
    }
    w.clock.advance(days(1));
    seed_gym(&w, 1, 0, 0).await;
    let blocked = w.engine.analyze().await.expect("scan");
    assert_eq!(blocked.accounts[0].stopped_by.as_deref(), Some("flood_limit_active_tasks"));
    let (tasks, _) = w
        .store
        .list_tasks(
            w.account.id,
            &crate::ports::TaskQuery {
                limit: 1,
                ..Default::default()
            },
        )
        .await
        .expect("list");
    w.engine.cancel(w.account.id, tasks[0].id).await.expect("cancel");
    let after = w.engine.analyze().await.expect("scan");
    assert_eq!(after.created, 1);
}

/// Given seven escalations left alone at the same moment, when their reminders come due,
/// then the owner gets five today (the notification budget) and the other two tomorrow.
#[tokio::test]
async fn escalation_reminders_respect_the_owners_notification_budget() {
    let w = world().await;
    let mut tasks = Vec::new();
    for n in 0..7 {
        tasks.push(escalated(&w, &format!("m_budget{n}")).await);
    }
    w.clock.set(tasks[6].next_action_at.expect("timer"));
    w.run().await;
    let mut reminded = 0;
    for task in &tasks {
        let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
        reminded += history.log.iter().filter(|l| l.reason == "escalation_reminder").count();
    }
    assert_eq!(reminded, limits::ESCALATION_REMINDERS_PER_DAY as usize);
    w.clock.advance(days(1));
    w.run().await;
    let mut reminded = 0;
    for task in &tasks {
        let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
        reminded += history.log.iter().filter(|l| l.reason == "escalation_reminder").count();
        assert_eq!(history.task.status, TaskStatus::Escalated);
    }
    assert_eq!(reminded, 7, "the rest a day later, one each");
}

/// Given an account that used up today's creations, when a failed payment arrives, then the
/// signal is applied (the facts change) and acknowledged — no task, nothing to retry.
#[tokio::test]
async fn a_webhook_past_the_daily_limit_is_applied_without_a_task_and_not_retried() {
    let w = world().await;
    for n in 0..limits::MAX_TASKS_PER_ACCOUNT_PER_DAY {
        manual(&w, &format!("m_w{n}")).await.expect("fill");
    }
    let member = w.member("m_payday").await;
    let envelope = SignalEnvelope {
        account_id: w.account.id,
        webhook_id: "evt_flood".into(),
        received_at: day0(),
        event: WebhookEvent {
            timestamp: day0(),
            event: MemberEvent::PaymentFailed {
                member_id: member.clone(),
                amount: 150.0,
                currency: "USD".into(),
                failed_at: day0(),
                reason: None,
            },
        },
    };
    let outcome = w.engine.apply_signal(&envelope).await.expect("applied, not an error");
    assert!(
        matches!(outcome, super::super::SignalOutcome::Applied { task_created: None }),
        "{outcome:?}"
    );
    let (facts, _) = w.store.get_member(w.account.id, &member).await.expect("read").expect("member");
    assert!(facts.payment_failing);
    assert_eq!(
        w.store.active_task(w.account.id, &member, "payment_recovery").await.expect("guard"),
        None
    );
}

/// Switching an account to autopilot without saying when it was onboarded starts the ramp
/// (shadow: every task reviewed, nothing sent) from that moment.
#[tokio::test]
async fn switching_to_autopilot_starts_the_ramp_at_shadow() {
    let w = world().await;
    let patch = super::super::SettingsPatch {
        execution_mode: Some(ExecutionMode::LimitedAuto),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    assert_eq!(account.settings.onboarded_at, Some(w.clock.now()));
    let sending = crate::rails::autonomy::sending(&account.settings, w.clock.now());
    assert_eq!(
        (sending.ramp_phase, sending.daily_send_cap),
        (crate::rails::autonomy::RampPhase::Shadow, 0)
    );
    let task = w
        .engine
        .create_task(&account, w.new_task("churn_risk", "m_ramp").await)
        .await
        .expect("create");
    assert_eq!(task.task().status, TaskStatus::PendingReview, "shadow reviews everything");
}

/// An owner taking over an escalated task closes it as completed with their outcome
///, logged as the owner's resolution.
#[tokio::test]
async fn an_owner_taking_over_an_escalated_task_completes_it() {
    let w = world().await;
    let task = escalated(&w, "m_take_over").await;
    let resolution = super::super::Resolution {
        outcome: "owner_handled".into(),
        note: Some("Called her myself".into()),
    };
    let done = w.engine.resolve(w.account.id, task.id, resolution).await.expect("resolve");
    assert_eq!(
        (done.status, done.outcome.as_deref()),
        (TaskStatus::Completed, Some("owner_handled"))
    );
    assert_eq!(done.outcome_reason.as_deref(), Some("owner_resolved"));
}

//! The step's rules, one branch at a time: a task with every gate open is sent, and each test
//! changes one thing about what the step read and names what the step does instead.

use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::kernel::ids::TaskId;
use crate::members::member::SendLedger;
use crate::owner::account::Account;
use crate::task::task_type::Priority;
use crate::task::{Role, Task};
use crate::testing::{at, sample_account, sample_task};

/// Monday 2026-11-02, 09:30 in New York: inside the send window and a first touch's morning
/// hours, half an hour after the sample task was made.
fn now() -> Timestamp {
    at("2026-11-02T14:30:00Z")
}

/// One thing a case changes about the step's inputs.
type Change<T> = fn(&mut T);

fn hours(n: i64) -> SignedDuration {
    SignedDuration::from_hours(n)
}

fn account() -> Account {
    sample_account(now() - hours(24 * 30))
}

/// A ready payment-recovery task due now, with every input the step can ask for read and every
/// gate open: the step sends it unless a test changes one thing.
fn ready() -> StepInput {
    let account = account();
    let mut task = sample_task(TaskStatus::Ready);
    task.account_id = account.id;
    task.next_action_at = Some(now());
    StepInput {
        snapshot: Some(SendSnapshot {
            account: Some(account),
            ..SendSnapshot::default()
        }),
        outbound: Some(Vec::new()),
        conversation: Some(Vec::new()),
        facts: Some(None),
        member_tasks: Some(Vec::new()),
        ..StepInput::new(Worker::Execute, task, now())
    }
}

/// A waiting task that has sent its first touch and is due for its follow-up.
fn waiting() -> StepInput {
    let mut seen = ready();
    seen.worker = Worker::Followup;
    seen.task.status = TaskStatus::Waiting;
    seen.task.touch = 1;
    seen.task.budget.messages_used = 1;
    seen
}

fn decided(seen: &StepInput) -> StepDecision {
    match decide(seen) {
        Step::Decided(decision) => decision,
        Step::Needs(input) => panic!("the step still needs {input:?}"),
    }
}

/// The log reason of a decision that names one.
fn reason(decision: &StepDecision) -> Option<Reason> {
    match decision {
        StepDecision::Defer { why, .. }
        | StepDecision::Escalate { why }
        | StepDecision::Close { why, .. }
        | StepDecision::StaleGuard { why, .. }
        | StepDecision::Dormant { why, .. }
        | StepDecision::Send { claim: why, .. } => Some(why.reason),
        StepDecision::Anomalous(anomaly) | StepDecision::Retry { anomaly } => Some(anomaly.reason()),
        _ => None,
    }
}

fn member_says(text: &str) -> ConversationMessage {
    ConversationMessage {
        id: crate::kernel::ids::new_ulid(now()),
        at: now(),
        role: Role::Member,
        content: text.into(),
        original: None,
    }
}

fn outbound(touch: u32, status: OutboundStatus) -> OutboundMessage {
    OutboundMessage {
        task_id: TaskId::generate(now()),
        touch,
        status,
        to: crate::kernel::ids::Email::parse("m-1@example.com").expect("email"),
        subject: "Quick note".into(),
        message_id: "m@mail.example.com".into(),
        provider_id: None,
        provider_message_id: None,
        reserved_at: now() - hours(1),
        sent_at: None,
    }
}

#[test]
fn a_ready_task_with_every_gate_open_is_claimed_and_sent() {
    let seen = ready();
    let limit = account().settings.daily_send_limit;
    assert_eq!(
        decided(&seen),
        StepDecision::Send {
            to: seen.task.member.email.clone().expect("email"),
            claim: Why::new(Reason::FirstTouchDue).detail("message 1"),
            daily_send_limit: limit,
        }
    );
}

#[test]
fn the_step_reads_each_input_only_once_the_rules_before_it_let_it_go_on() {
    let fresh = |seen: StepInput| StepInput::new(seen.worker, seen.task, now());
    let mut answered = waiting();
    answered.task.awaiting = Some(Awaiting::MemberReply);
    let cases: [(&str, StepInput, &[Input]); 3] = [
        (
            "a first touch",
            fresh(ready()),
            &[Input::Snapshot, Input::Facts, Input::MemberTasks],
        ),
        (
            "a follow-up of a task that wrote to the member",
            fresh(waiting()),
            &[Input::Snapshot, Input::Conversation, Input::Facts, Input::MemberTasks],
        ),
        (
            "a task awaiting a reply",
            fresh(answered),
            &[
                Input::Snapshot,
                Input::Conversation,
                Input::Reading,
                Input::Facts,
                Input::MemberTasks,
            ],
        ),
    ];
    for (case, mut seen, expected) in cases {
        let full = ready();
        let mut asked = Vec::new();
        while let Step::Needs(input) = decide(&seen) {
            assert!(!asked.contains(&input), "{case}: {input:?} asked twice");
            asked.push(input);
            match input {
                Input::Snapshot => seen.snapshot = full.snapshot.clone(),
                Input::Outbound => seen.outbound = Some(Vec::new()),
                Input::Conversation => seen.conversation = Some(Vec::new()),
                Input::Reading => {
                    let mut read = seen.task.clone();
                    read.awaiting = None;
                    read.answer = Some("See you Monday!".into());
                    seen.after_reading = Some(read);
                }
                Input::Facts => seen.facts = Some(None),
                Input::MemberTasks => seen.member_tasks = Some(Vec::new()),
                Input::AddressSuppressed => seen.address_suppressed = Some(false),
                Input::Parent => seen.parent = Some(None),
            }
        }
        assert_eq!(asked, expected, "{case}");
        assert!(matches!(decided(&seen), StepDecision::Send { .. }), "{case}");
    }
}

#[test]
fn a_task_not_due_or_not_this_workers_is_skipped_with_its_code() {
    let cases: [(&str, Change<StepInput>, &str); 6] = [
        ("due tomorrow", |s| s.task.next_action_at = Some(now() + hours(24)), "not_due"),
        ("nothing scheduled", |s| s.task.next_action_at = None, "not_due"),
        ("ready, asked by followup", |s| s.worker = Worker::Followup, "status_ready"),
        (
            "waiting, asked by execute",
            |s| s.task.status = TaskStatus::Waiting,
            "status_waiting",
        ),
        ("completed", |s| s.task.status = TaskStatus::Completed, "status_completed"),
        (
            "globally paused",
            |s| {
                if let Some(snapshot) = s.snapshot.as_mut() {
                    snapshot.system.global_pause = true;
                }
            },
            "global_pause",
        ),
    ];
    for (case, change, code) in cases {
        let mut seen = ready();
        change(&mut seen);
        match decided(&seen) {
            StepDecision::Skip(skip) => assert_eq!(skip.code(), code, "{case}"),
            other => panic!("{case}: {other:?}"),
        }
    }
}

#[test]
fn a_lease_that_ran_out_is_escalated_if_its_touch_was_reserved_and_retried_if_not() {
    let stuck = || {
        let mut seen = waiting();
        seen.task.status = TaskStatus::Executing;
        seen.task.next_action_at = Some(now() - hours(1));
        seen
    };
    let mut unread = stuck();
    unread.outbound = None;
    assert_eq!(decide(&unread), Step::Needs(Input::Outbound));

    let cases = [
        ("nothing reserved", vec![], None),
        ("an earlier touch sent", vec![outbound(0, OutboundStatus::Sent)], None),
        ("this touch refused", vec![outbound(1, OutboundStatus::Failed)], None),
        (
            "this touch reserved",
            vec![outbound(1, OutboundStatus::Reserved)],
            Some(OutboundStatus::Reserved),
        ),
        (
            "this touch sent",
            vec![outbound(1, OutboundStatus::Sent)],
            Some(OutboundStatus::Sent),
        ),
    ];
    for (case, records, unknown) in cases {
        let mut seen = stuck();
        seen.outbound = Some(records);
        match (decided(&seen), unknown) {
            (StepDecision::SendOutcomeUnknown { reserved }, Some(status)) => {
                assert_eq!((reserved.touch, reserved.status), (1, status), "{case}");
            }
            (StepDecision::Retry { anomaly }, None) => {
                assert_eq!(anomaly.reason(), Reason::AnomalyStuckExecuting, "{case}");
            }
            (other, _) => panic!("{case}: {other:?}"),
        }
    }
}

#[test]
fn a_task_resumed_by_the_owners_guidance_is_read_not_recovered() {
    let mut seen = waiting();
    seen.task.status = TaskStatus::Executing;
    seen.task.awaiting = Some(Awaiting::OwnerGuidance);
    seen.outbound = None;
    assert_eq!(decide(&seen), Step::Needs(Input::Reading));
}

#[test]
fn a_snapshot_without_the_account_is_an_error_to_report() {
    let mut seen = ready();
    seen.snapshot = Some(SendSnapshot::default());
    assert_eq!(decided(&seen), StepDecision::NoAccount);
}

#[test]
fn a_paused_account_holds_the_step_for_an_hour_but_a_stop_is_honoured_at_once() {
    let paused = || {
        let mut seen = ready();
        if let Some(account) = seen.snapshot.as_mut().and_then(|s| s.account.as_mut()) {
            account.paused = true;
        }
        seen
    };
    let held = decided(&paused());
    assert_eq!(
        held,
        StepDecision::Defer {
            until: now() + hours(1),
            why: Why::new(Reason::AccountPaused)
        }
    );

    let mut awaiting = paused();
    awaiting.task.status = TaskStatus::Waiting;
    awaiting.worker = Worker::Followup;
    awaiting.task.awaiting = Some(Awaiting::MemberReply);
    awaiting.conversation = None;
    assert_eq!(decide(&awaiting), Step::Needs(Input::Conversation));
    awaiting.conversation = Some(vec![member_says("Please stop emailing me")]);
    assert_eq!(decided(&awaiting), StepDecision::HonourStop);
    awaiting.conversation = Some(vec![member_says("Can I pay on Friday?")]);
    assert_eq!(reason(&decided(&awaiting)), Some(Reason::AccountPaused));
}

#[test]
fn a_parent_is_handed_to_its_subtasks() {
    let cases: [(&str, Change<Task>); 3] = [
        ("a batch", |t| t.batch = true),
        ("a parent", |t| {
            t.subtasks.push(crate::task::subtasks::SubtaskRef {
                id: TaskId::generate(now()),
                requirement: crate::task::subtasks::Requirement::Required,
                messages_max: 1,
            })
        }),
        ("a planning task", |t| t.controls.agent_planning = true),
    ];
    for (case, change) in cases {
        let mut seen = ready();
        change(&mut seen.task);
        assert_eq!(decided(&seen), StepDecision::Coordinate, "{case}");
    }
}

#[test]
fn an_anomalous_task_goes_to_the_owner() {
    let mut turns = waiting();
    turns.task.budget.turns_used = crate::kernel::limits::ANOMALY_TURNS_WITHOUT_RESOLUTION;
    turns.task.budget.turns_max = 0;
    assert_eq!(reason(&decided(&turns)), Some(Reason::AnomalyTurnsWithoutResolution));

    let mut replies = waiting();
    replies.conversation = Some(
        (0..crate::kernel::limits::ANOMALY_MEMBER_REPLIES)
            .map(|_| member_says("ok"))
            .collect(),
    );
    assert_eq!(reason(&decided(&replies)), Some(Reason::AnomalyMemberRepliesWithoutResolution));
}

#[test]
fn a_plan_mode_task_waits_for_its_plan_to_be_approved() {
    let mut seen = ready();
    seen.task.controls.mode = TaskMode::Plan;
    assert_eq!(reason(&decided(&seen)), Some(Reason::PlanNotApproved));
}

#[test]
fn an_answer_read_from_a_reply_is_claimed_as_the_answer_due() {
    let mut seen = waiting();
    seen.task.awaiting = Some(Awaiting::MemberReply);
    assert_eq!(decide(&seen), Step::Needs(Input::Reading));
    let mut read = seen.task.clone();
    read.awaiting = None;
    read.answer = Some("Friday works, thanks!".into());
    seen.after_reading = Some(read);
    assert_eq!(reason(&decided(&seen)), Some(Reason::AnswerDue));
}

#[test]
fn tasks_that_never_mail_a_member_take_their_categorys_step() {
    let cases = [
        ("staff_call_member", WithoutMail::StaffTodo),
        ("monthly_churn_analysis", WithoutMail::Research),
        ("member_update", WithoutMail::Automation),
    ];
    for (task_type, step) in cases {
        let mut seen = ready();
        seen.task.task_type = task_type.into();
        seen.facts = None;
        assert_eq!(decided(&seen), StepDecision::WithoutMail(step), "{task_type}");
    }
}

#[test]
fn the_stale_guard_closes_or_escalates_a_task_the_member_made_wrong() {
    let task = ready().task;
    let mut paid = MemberFacts::new(task.member.id.clone());
    paid.last_payment_succeeded_at = Some(task.created_at + hours(1));
    let mut frozen = MemberFacts::new(task.member.id.clone());
    frozen.status = Some(crate::members::event::MemberStatus::Frozen);
    frozen.status_stamp = Some(crate::members::member::Stamp::new(task.created_at + hours(1), ""));
    let cases = [
        (paid, TaskStatus::Completed, Reason::PaymentResolvedBeforeOutreach),
        (frozen, TaskStatus::Escalated, Reason::MemberFrozenSinceTaskCreated),
    ];
    for (facts, to, why) in cases {
        let mut seen = ready();
        seen.facts = Some(Some(facts));
        match decided(&seen) {
            StepDecision::StaleGuard { to: moved, why: logged } => assert_eq!((moved, logged.reason), (to, why)),
            other => panic!("{why}: {other:?}"),
        }
    }
}

#[test]
fn a_spent_budget_ends_the_task_by_its_cadence() {
    let cases: [(&str, Change<Task>, Reason); 4] = [
        ("time", |t| t.budget.expires_at = now() - hours(1), Reason::BudgetTimeExpired),
        (
            "messages",
            |t| t.budget.messages_used = t.budget.messages_max,
            Reason::BudgetMessagesExhausted,
        ),
        (
            "turns",
            |t| t.budget.turns_used = t.budget.turns_max,
            Reason::TooManyTurnsWithoutResolution,
        ),
        (
            "the cadence's touches",
            |t| {
                t.touch = 3;
                t.budget.messages_max = 9;
            },
            Reason::AllFollowupTouchesUsed,
        ),
    ];
    for (case, change, expected) in cases {
        let mut seen = waiting();
        change(&mut seen.task);
        // payment_recovery's urgent cadence hands an exhausted task to the owner.
        match decided(&seen) {
            StepDecision::Escalate { why } => assert_eq!(why.reason, expected, "{case}"),
            other => panic!("{case}: {other:?}"),
        }
    }
}

#[test]
fn an_answer_owed_is_sent_after_the_cadence_ran_out() {
    let mut seen = waiting();
    seen.task.touch = 3;
    seen.task.budget.messages_max = 9;
    seen.task.answer = Some("Yes, Friday is fine.".into());
    assert_eq!(reason(&decided(&seen)), Some(Reason::AnswerDue));
}

#[test]
fn exhaustion_follows_the_cadence_policy() {
    let dormant_days = |check: i64, max: i64| StepDecision::Dormant {
        why: Why::new(Reason::AllFollowupTouchesUsed)
            .detail(format!("no more messages; watching for outcome signals for up to {max} days")),
        next_check: now() + hours(24 * check),
        expires_at: now() + hours(24 * max),
    };
    let unresponsive = StepDecision::Close {
        to: TaskStatus::Cancelled,
        why: Why::new(Reason::AllFollowupTouchesUsed).outcome("unresponsive"),
    };
    let cases = [
        ("churn_risk", TaskStatus::Waiting, unresponsive.clone()),
        ("win_back", TaskStatus::Waiting, dormant_days(14, 90)),
        ("lead_followup", TaskStatus::Waiting, dormant_days(7, 60)),
        // Never started: nothing to watch for.
        ("win_back", TaskStatus::Ready, unresponsive),
    ];
    for (task_type, status, expected) in cases {
        let mut task = sample_task(status);
        task.task_type = task_type.into();
        assert_eq!(
            exhaust(&task, Reason::AllFollowupTouchesUsed, now()),
            expected,
            "{task_type} {status}"
        );
    }
    let mut urgent = sample_task(TaskStatus::Waiting);
    urgent.budget.messages_used = 2;
    assert_eq!(
        exhaust(&urgent, Reason::BudgetMessagesExhausted, now()),
        StepDecision::Escalate {
            why: Why::new(Reason::BudgetMessagesExhausted).detail("2 messages sent without settling it; the next step is yours")
        }
    );
}

#[test]
fn a_member_without_an_address_goes_to_the_owner_and_a_suppressed_one_is_never_written_to() {
    let mut no_address = ready();
    no_address.task.member.email = None;
    // Just opened, with the member's details not arrived (their creation event still queued
    // behind the event that opened the task): it waits for them a while, looking again.
    no_address.task.created_at = now() - SignedDuration::from_mins(5);
    match decided(&no_address) {
        StepDecision::Defer { until, why } => {
            assert_eq!(why.reason, Reason::AwaitingMemberDetails);
            assert_eq!(until, now() + limits::MEMBER_DETAILS_RECHECK);
        }
        other => panic!("{other:?}"),
    }
    // An hour on, still nothing: the owner is asked to reach them another way.
    no_address.task.created_at = now() - limits::MEMBER_DETAILS_WAIT;
    assert_eq!(reason(&decided(&no_address)), Some(Reason::MissingMemberEmail));
    // A member whose details did arrive, with no address in them: the owner, at once.
    let mut known = crate::members::member::MemberFacts::new(no_address.task.member.id.clone());
    let created = crate::members::event::MemberEvent::MemberCreated {
        member_id: no_address.task.member.id.clone(),
        email: None,
        first_name: Some("Pat".into()),
        last_name: None,
        status: crate::members::event::MemberStatus::Active,
        joined_at: None,
        monthly_value: None,
        phone: None,
    };
    known.apply("evt_created", &created, now());
    no_address.task.created_at = now();
    no_address.facts = Some(Some(known));
    assert_eq!(reason(&decided(&no_address)), Some(Reason::MissingMemberEmail));

    let mut suppressed = ready();
    if let Some(snapshot) = suppressed.snapshot.as_mut() {
        snapshot.suppressed = true;
    }
    assert_eq!(
        decided(&suppressed),
        StepDecision::Close {
            to: TaskStatus::Cancelled,
            why: Why::new(Reason::MemberSuppressed).outcome("opted_out")
        }
    );
}

#[test]
fn the_send_rails_defer_the_touch() {
    let mut night = ready();
    night.now = at("2026-11-02T08:00:00Z");
    night.task.next_action_at = Some(night.now);
    assert_eq!(reason(&decided(&night)), Some(Reason::OutsideSendWindow));

    let mut capped = ready();
    let limit = account().settings.daily_send_limit;
    if let Some(snapshot) = capped.snapshot.as_mut() {
        snapshot.daily = crate::rails::send_gate::dates_around(now().to_zoned(jiff::tz::TimeZone::UTC).date())
            .into_iter()
            .map(|d| (d, limit))
            .collect();
    }
    assert_eq!(reason(&decided(&capped)), Some(Reason::DailySendLimit));

    let mut weekly = ready();
    if let Some(snapshot) = weekly.snapshot.as_mut() {
        let sends = (0..7).map(|d| (format!("t#{d}"), now() - hours(24 * d + 20)));
        snapshot.ledger = SendLedger {
            sends: sends.collect(),
            version: 1,
        };
    }
    assert_eq!(reason(&decided(&weekly)), Some(Reason::MemberWeeklyLimit));
}

#[test]
fn the_ramp_records_in_shadow_and_lowers_the_daily_limit_while_guided() {
    let onboarded = |days_ago: i64| {
        let mut seen = ready();
        if let Some(account) = seen.snapshot.as_mut().and_then(|s| s.account.as_mut()) {
            account.settings.onboarded_at = Some(now() - hours(24 * days_ago) + hours(1));
        }
        seen
    };
    let to = ready().task.member.email.expect("email");
    assert_eq!(
        decided(&onboarded(1)),
        StepDecision::RecordWouldSend {
            to: to.clone(),
            mode: SendMode::Shadow
        }
    );
    match decided(&onboarded(5)) {
        StepDecision::Send { daily_send_limit, .. } => {
            assert_eq!(daily_send_limit, crate::kernel::limits::RAMP_GUIDED_DAILY_SENDS);
        }
        other => panic!("{other:?}"),
    }
    let mut dry_run = ready();
    dry_run.task.controls.mode = TaskMode::DryRun;
    assert_eq!(
        decided(&dry_run),
        StepDecision::RecordWouldSend {
            to,
            mode: SendMode::DryRun
        }
    );
}

#[test]
fn a_touch_yields_to_a_more_urgent_task_wanting_to_send_to_the_member() {
    let other = |priority: Priority, change: Change<Task>| {
        let mut task = sample_task(TaskStatus::Ready);
        task.task_type = "churn_risk".into();
        task.priority = priority;
        task.next_action_at = Some(now());
        change(&mut task);
        task
    };
    let cases: [(&str, Task, bool); 7] = [
        ("a more urgent one due now", other(Priority::Critical, |_| {}), true),
        ("a less urgent one", other(Priority::Low, |_| {}), false),
        (
            "a more urgent one planned later today (a follow-up's afternoon)",
            other(Priority::Critical, |t| t.next_action_at = Some(now() + hours(4))),
            true,
        ),
        (
            "a more urgent one deferred to another day",
            other(Priority::Critical, |t| t.next_action_at = Some(now() + hours(24))),
            false,
        ),
        ("a more urgent parent", other(Priority::Critical, |t| t.batch = true), false),
        (
            "a more urgent one the owner is guiding",
            other(Priority::Critical, |t| {
                t.status = TaskStatus::Executing;
                t.awaiting = Some(Awaiting::OwnerGuidance);
            }),
            false,
        ),
        (
            "a more urgent one escalated",
            other(Priority::Critical, |t| t.status = TaskStatus::Escalated),
            false,
        ),
    ];
    for (case, other, yields) in cases {
        let mut seen = ready();
        seen.task.priority = Priority::High;
        seen.member_tasks = Some(vec![seen.task.clone(), other]);
        let decision = decided(&seen);
        assert_eq!(
            reason(&decision) == Some(Reason::YieldingToHigherPriority),
            yields,
            "{case}: {decision:?}"
        );
        if let StepDecision::Defer { until, .. } = decision {
            assert_eq!(until, at("2026-11-03T05:00:00Z"), "{case}: the member's next local day");
        }
    }
}

#[test]
fn the_claim_names_the_touch_it_is_for() {
    let cases: [(&str, Change<Task>, Reason); 3] = [
        ("first", |_| {}, Reason::FirstTouchDue),
        (
            "follow-up",
            |t| {
                t.status = TaskStatus::Waiting;
                t.touch = 1;
            },
            Reason::FollowUpDue,
        ),
        ("answer", |t| t.answer = Some("Yes".into()), Reason::AnswerDue),
    ];
    for (case, change, expected) in cases {
        let mut seen = ready();
        seen.worker = Worker::Followup;
        seen.task.status = TaskStatus::Waiting;
        change(&mut seen.task);
        assert_eq!(reason(&decided(&seen)), Some(expected), "{case}");
    }
}

#[test]
fn a_touch_is_written_already_drafted_by_the_agent_or_missing() {
    let def = task_type::definition("payment_recovery");
    let draft = |subject: &str, body: &str| Draft {
        subject: subject.into(),
        body: body.into(),
    };
    let cases: [(&str, Change<Task>, TouchText); 5] = [
        (
            "the approved first touch",
            |_| {},
            TouchText::Ready(draft(
                "Quick note about your membership",
                "Hi Sarah, your last payment did not go through.",
            )),
        ),
        (
            "an answer, under the task's subject",
            |t| t.answer = Some("Friday is fine".into()),
            TouchText::Ready(draft("Quick note about your membership", "Friday is fine")),
        ),
        (
            "an answer of a task without a draft, under the type's subject",
            |t| {
                t.draft = None;
                t.answer = Some("Friday is fine".into());
            },
            TouchText::Ready(draft(def.subject(), "Friday is fine")),
        ),
        ("a follow-up", |t| t.touch = 1, TouchText::FromAgent),
        (
            "a first touch without a draft",
            |t| t.draft = None,
            TouchText::Missing(Why::new(Reason::MissingDraft).detail("no approved draft to send")),
        ),
    ];
    for (case, change, expected) in cases {
        let mut task = sample_task(TaskStatus::Executing);
        change(&mut task);
        assert_eq!(touch_text(&task, def), expected, "{case}");
    }
}

#[test]
fn a_failed_touch_is_retried_with_a_backoff_then_handed_to_the_owner() {
    let backoff = crate::kernel::limits::RETRY_BACKOFF;
    for failed in [Failure::Draft, Failure::Send] {
        for (before, delay) in backoff.iter().enumerate() {
            let mut task = sample_task(TaskStatus::Executing);
            task.attempts = before as u32;
            let attempts = before as u32 + 1;
            let until = now() + *delay;
            assert_eq!(
                after_failure(&task, failed, "boom", now()),
                AfterFailure::Retry {
                    attempts,
                    until,
                    why: Why::new(failed.reason()).detail(format!("attempt {attempts} failed: boom; retrying at {until}")),
                },
                "{failed:?} attempt {attempts}"
            );
        }
        let mut task = sample_task(TaskStatus::Executing);
        task.attempts = backoff.len() as u32;
        let attempts = task.attempts + 1;
        assert_eq!(
            after_failure(&task, failed, "boom", now()),
            AfterFailure::GiveUp {
                attempts,
                why: Why::new(failed.given_up()).detail(format!("{attempts} attempts failed; last error: boom")),
            }
        );
    }
}

#[test]
fn a_dormant_task_expires_or_is_checked_again_later() {
    let dormant_task = |task_type: &str, expires_in_days: i64| {
        let mut task = sample_task(TaskStatus::Dormant);
        task.task_type = task_type.into();
        task.next_action_at = Some(now());
        task.dormant_expires_at = Some(now() + hours(24 * expires_in_days));
        task
    };
    let cases = [
        (
            "not yet due",
            {
                let mut task = dormant_task("win_back", 30);
                task.next_action_at = Some(now() + hours(1));
                task
            },
            StepDecision::Skip(Skip::NotDue),
        ),
        ("not dormant", sample_task(TaskStatus::Waiting), StepDecision::Skip(Skip::NotDue)),
        (
            "its window over",
            dormant_task("win_back", 0),
            StepDecision::Close {
                to: TaskStatus::Cancelled,
                why: Why::new(Reason::DormantWindowExpired).outcome("unresponsive"),
            },
        ),
        (
            "a cadence that never goes dormant",
            dormant_task("churn_risk", 30),
            StepDecision::Close {
                to: TaskStatus::Cancelled,
                why: Why::new(Reason::DormantWithoutDormantCadence).outcome("unresponsive"),
            },
        ),
        ("the next check", dormant_task("win_back", 30), {
            let until = now() + hours(24 * 14);
            StepDecision::Defer {
                until,
                why: Why::new(Reason::DormantCheckNoSignal).detail(format!("next check {until}")),
            }
        }),
        ("a last check at the window's end", dormant_task("win_back", 3), {
            let until = now() + hours(24 * 3);
            StepDecision::Defer {
                until,
                why: Why::new(Reason::DormantCheckNoSignal).detail(format!("next check {until}")),
            }
        }),
    ];
    for (case, task, expected) in cases {
        assert_eq!(dormant(&task, now()), expected, "{case}");
    }
}

/// A task made before the member's event was projected has no address; once the facts have
/// one, the step writes to it — after checking it against the suppression list.
#[test]
fn the_members_current_address_is_written_to_once_checked() {
    let mut seen = ready();
    seen.task.member.email = None;
    let mut facts = MemberFacts::new(seen.task.member.id.clone());
    facts.email = Some(crate::kernel::ids::Email::parse("late@example.com").expect("email"));
    seen.facts = Some(Some(facts));
    assert_eq!(decide(&seen), Step::Needs(Input::AddressSuppressed));
    seen.address_suppressed = Some(false);
    match decided(&seen) {
        StepDecision::Send { to, .. } => assert_eq!(to.as_str(), "late@example.com"),
        other => panic!("{other:?}"),
    }
    seen.address_suppressed = Some(true);
    assert!(matches!(
        decided(&seen),
        StepDecision::Close {
            to: TaskStatus::Cancelled,
            ..
        }
    ));
    seen.facts = Some(None);
    seen.task.created_at = now() - limits::MEMBER_DETAILS_WAIT;
    assert!(matches!(decided(&seen), StepDecision::Escalate { .. }), "no address anywhere");
}

/// While another task of the member's waits on the owner about a suspected stop, nothing
/// else is sent to them; any other escalation holds nothing.
#[test]
fn a_suspected_stop_on_another_task_holds_every_send_to_the_member() {
    let mut seen = ready();
    let mut other = sample_task(TaskStatus::Escalated);
    other.member = seen.task.member.clone();
    other.outcome_reason = Some(Reason::SuspectedStop.as_str().into());
    seen.member_tasks = Some(vec![seen.task.clone(), other.clone()]);
    let decision = decided(&seen);
    assert_eq!(reason(&decision), Some(Reason::HeldForSuspectedStop), "{decision:?}");
    other.outcome_reason = Some(Reason::MemberQuestionNeedsOwner.as_str().into());
    seen.member_tasks = Some(vec![seen.task.clone(), other]);
    assert!(matches!(decided(&seen), StepDecision::Send { .. }));
}

#[test]
fn a_subtask_holds_while_its_parent_is_escalated_and_goes_on_once_it_is_not() {
    let parent_id = TaskId::generate(now());
    let mut seen = waiting();
    seen.task.parent_id = Some(parent_id);
    assert_eq!(decide(&seen), Step::Needs(Input::Parent), "a subtask reads its parent");
    let mut parent = sample_task(TaskStatus::Escalated);
    parent.id = parent_id;
    seen.parent = Some(Some(parent.clone()));
    match decided(&seen) {
        StepDecision::Defer { until, why } => {
            assert_eq!(why.reason, Reason::HeldForEscalatedParent);
            assert_eq!(until, now() + limits::HELD_SUBTASK_RECHECK);
        }
        other => panic!("held: {other:?}"),
    }
    parent.status = TaskStatus::Executing;
    seen.parent = Some(Some(parent));
    assert!(matches!(decided(&seen), StepDecision::Send { .. }), "resumed with its parent");
    seen.parent = Some(None);
    assert!(matches!(decided(&seen), StepDecision::Send { .. }), "a parent gone holds nothing");
    let mut cancelled = sample_task(TaskStatus::Cancelled);
    cancelled.id = parent_id;
    seen.parent = Some(Some(cancelled));
    assert_eq!(
        reason(&decided(&seen)),
        Some(Reason::ParentCancelled),
        "a parent cancelled by its escalation's timeout takes its subtasks with it"
    );
}

#[test]
fn a_spent_budget_closes_a_commitment_provisionally_and_hands_a_stalled_conversation_to_the_owner() {
    use crate::task::progress::{EvidenceType, GoalProgress, RecommendedAction};
    let mut seen = waiting();
    seen.task.task_type = "churn_risk".into();
    seen.task.budget.messages_used = seen.task.budget.messages_max;
    let spent = |seen: &StepInput| decided(seen);
    assert!(
        !matches!(
            spent(&seen),
            StepDecision::Close {
                to: TaskStatus::Completed,
                ..
            }
        ),
        "no progress: the cadence's policy"
    );
    let progress = |pct: u8, outcome: &str, confidence: u8, evidence_type: EvidenceType| GoalProgress {
        progress_pct: pct,
        current_outcome: outcome.into(),
        confidence,
        evidence_type,
        evidence: "warm replies".into(),
        recommended_action: RecommendedAction::Continue,
        milestones: Vec::new(),
        risks: Vec::new(),
    };
    seen.task.goal_progress = Some(progress(0, "engaged_conversation", 55, EvidenceType::Inferred));
    assert!(
        !matches!(
            spent(&seen),
            StepDecision::Close {
                to: TaskStatus::Completed,
                ..
            }
        ),
        "0%"
    );
    seen.task.goal_progress = Some(progress(20, "engaged_conversation", 55, EvidenceType::Inferred));
    match spent(&seen) {
        StepDecision::Escalate { why } => assert_eq!(why.reason, Reason::ConversationStalled),
        other => panic!("a warm conversation that stalls goes to the owner: {other:?}"),
    }
    seen.task.goal_progress = Some(progress(60, "verbal_commitment", 65, EvidenceType::VerbalCommitment));
    match spent(&seen) {
        StepDecision::Close { to, why } => {
            assert_eq!(to, TaskStatus::Completed);
            assert_eq!(why.reason, Reason::BudgetExhaustedWithProgress);
            assert_eq!(why.outcome.as_deref(), Some("verbal_commitment"));
            assert!(why.provisional, "attribution verifies it");
        }
        other => panic!("completed on a commitment: {other:?}"),
    }
}

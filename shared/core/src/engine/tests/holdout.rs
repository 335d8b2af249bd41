//! Holdouts on the in-memory store: a held-out member's task sends
//! nothing and asks the agent nothing, holds the member's active guard, is closed by its goal's
//! signal (worth nothing to Openloop) or, without one, when a contacted task would have closed
//! unanswered — and can still be won late, over the same window as a contacted task.

use super::*;
use crate::owner::holdout;
use crate::ports::Clock;
use crate::task::holdout::Arm;

impl World {
    /// Hold out `percent` of the members.
    async fn hold_out(&mut self, percent: u8) {
        let patch = super::super::SettingsPatch {
            holdout_percent: Some(percent),
            ..Default::default()
        };
        self.engine.update_settings(self.account.id, patch).await.expect("settings");
        self.account = self.engine.account(self.account.id).await.expect("account");
    }

    /// The first member (`m_hold_0`, `m_hold_1`…) the account's draw puts in `arm`.
    async fn member_in(&self, arm: Arm) -> MemberId {
        for i in 0..200 {
            let id = format!("m_hold_{i}");
            let member = MemberId::parse(&id).expect("member");
            let drawn = holdout::draw(&self.account, &member, "churn_risk", TriggerType::CronAnalysis).map(|h| h.arm);
            if drawn == Some(arm) {
                return self.member(&id).await;
            }
        }
        panic!("no member in {arm:?} among 200");
    }

    /// A churn-risk task as the risk scan opens it (no draft: the agent would write one).
    async fn scanned(&self, member: &MemberId) -> super::super::tasks::Created {
        let input = NewTask {
            task_type: "churn_risk".into(),
            member_id: member.clone(),
            goal: "Bring them back".into(),
            confidence: Some(80),
            draft: None,
            trigger_type: TriggerType::CronAnalysis,
            trigger_event_id: Some(format!("scan/{member}/{}", self.clock.now())),
            gate: GateContext::default(),
            context: serde_json::json!({"days_since_checkin": 20}),
        };
        self.engine.create_task(&self.account, input).await.expect("create")
    }

    async fn held_out_signal(&self, id: &str, member: &MemberId) {
        let now = self.clock.now();
        self.signal(id, super::loop_fixtures::checkin(member.as_str(), now)).await;
    }
}

#[tokio::test]
async fn a_held_out_task_sends_nothing_asks_no_agent_and_its_signal_closes_it_worth_nothing() {
    let mut w = world().await;
    w.hold_out(20).await;
    let member = w.member_in(Arm::HeldOut).await;
    let task = w.scanned(&member).await.task().clone();
    assert_eq!(task.status, TaskStatus::HeldOut);
    assert_eq!(task.holdout.map(|h| h.arm), Some(Arm::HeldOut));
    assert!(task.bucket_is_below(2_000), "the lowest fifth of the buckets: {:?}", task.holdout);
    assert_eq!((task.draft.as_ref(), task.ai_calls), (None, 0), "no AI call, no draft");
    let history = w.engine.task(w.account.id, task.id).await.expect("history");
    assert_eq!(history.log[0].reason, "held_out_for_lift");
    assert!(
        w.engine
            .owner_notices(w.account.id, None, None)
            .await
            .expect("notices")
            .0
            .is_empty(),
        "nothing for the owner to approve"
    );
    // It holds the member's active guard: the next scan finds it open instead of opening another.
    assert!(matches!(w.scanned(&member).await, super::super::tasks::Created::Existing(_)));

    // Days pass and the workers run: nothing is sent.
    for day in 1..=5 {
        w.clock.set(day0() + days(day));
        w.run().await;
    }
    assert!(w.mailer.sent().is_empty(), "a held-out task sends nothing");
    assert_eq!(w.task(&task).await.status, TaskStatus::HeldOut);

    // The member comes back on their own: the task closes with its goal's outcome, worth nothing.
    w.held_out_signal("evt_back", &member).await;
    let closed = w.task(&task).await;
    assert_eq!(
        (closed.status, closed.outcome.as_deref()),
        (TaskStatus::Completed, Some("retained"))
    );
    assert_eq!(closed.attributed_value, Some(0.0));
    assert_eq!(closed.attribution_until, None, "nothing left to value");
    let card = w.engine.scorecard(w.account.id, Some("2026-11")).await.expect("scorecard");
    assert_eq!((card.members_retained, card.members_retained_held_out), (0, 1));
    assert_eq!(card.revenue_retained, 0.0);

    // A task the owner opens for the same member is never held out.
    let manual = w.new_task("churn_risk", member.as_str()).await;
    let manual = w.engine.create_task(&w.account, manual).await.expect("manual").task().clone();
    assert_eq!((manual.status, manual.holdout), (TaskStatus::PendingReview, None));
}

#[tokio::test]
async fn a_held_out_task_without_its_signal_closes_when_a_contacted_one_would_and_can_still_win_late() {
    let mut w = world().await;
    w.hold_out(20).await;
    let member = w.member_in(Arm::HeldOut).await;
    let task = w.scanned(&member).await.task().clone();
    // A churn-risk task works for 14 days at most; the held-out one is due then, not before.
    assert_eq!(w.due(&task).await, day0() + days(14));
    w.run_when_due(&task).await;
    let closed = w.task(&task).await;
    assert_eq!(
        (closed.status, closed.outcome.as_deref()),
        (TaskStatus::Cancelled, Some("unresponsive"))
    );
    assert_eq!(closed.outcome_reason.as_deref(), Some("held_out_window_ended"));
    assert_eq!(
        closed.attribution_until,
        Some(day0() + days(28)),
        "watched for a late win like a contacted task"
    );
    assert!(w.mailer.sent().is_empty());

    // The member comes back within the window: a late win, still worth nothing to Openloop.
    w.clock.set(day0() + days(20));
    let mut facts = w.store.get_member(w.account.id, &member).await.expect("facts").expect("known").0;
    let event = MemberEvent::CheckinCreated {
        member_id: member.clone(),
        checked_in_at: w.clock.now(),
        class_name: None,
    };
    assert!(facts.apply("evt_quiet", &event, w.clock.now()));
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("save");
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!(report.late_wins, 1, "{report:?}");
    let won = w.task(&task).await;
    assert_eq!((won.outcome.as_deref(), won.attributed_value), (Some("engaged_late"), Some(0.0)));
    assert_eq!(won.value_source, None);
}

#[tokio::test]
async fn a_contacted_members_task_is_worked_as_usual_and_payment_recovery_is_not_held_out_by_default() {
    let mut w = world().await;
    w.hold_out(20).await;
    let contacted = w.member_in(Arm::Contacted).await;
    let task = w.scanned(&contacted).await.task().clone();
    assert_eq!(task.status, TaskStatus::PendingReview, "manual mode: the owner reviews it");
    assert_eq!(task.holdout.map(|h| h.arm), Some(Arm::Contacted));
    assert!(task.draft.is_some(), "the agent wrote a first draft");

    let held = w.member_in(Arm::HeldOut).await;
    let envelope = SignalEnvelope {
        account_id: w.account.id,
        webhook_id: "evt_fail".into(),
        received_at: day0(),
        event: WebhookEvent {
            timestamp: day0(),
            event: MemberEvent::PaymentFailed {
                member_id: held.clone(),
                amount: 150.0,
                currency: "USD".into(),
                failed_at: day0(),
                reason: None,
            },
        },
    };
    w.engine.apply_signal(&envelope).await.expect("signal");
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("list");
    let payment = tasks.iter().find(|t| t.task_type == "payment_recovery").expect("payment task");
    assert_eq!((payment.status, payment.holdout), (TaskStatus::PendingReview, None));
}

impl Task {
    fn bucket_is_below(&self, bound: u32) -> bool {
        self.holdout.is_some_and(|h| h.bucket < bound)
    }
}

/// Issue 47: given a held-out member's task the owner cancelled, when the owner reopens it
/// (`409 invalid_state`) or — had it reached the owner — gives guidance, then it stays closed
/// and held out: no mail goes to the member on any path.
#[tokio::test]
async fn a_held_out_task_cancelled_is_never_reopened_into_a_send() {
    let mut w = world().await;
    w.hold_out(20).await;
    let member = w.member_in(Arm::HeldOut).await;
    let task = w.scanned(&member).await.task().clone();
    assert_eq!(task.status, TaskStatus::HeldOut);
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    let refused = w.engine.reopen(w.account.id, task.id, "not done yet").await;
    assert!(
        matches!(refused, Err(crate::task::error::EngineError::InvalidState { .. })),
        "{refused:?}"
    );
    assert_eq!(w.task(&task).await.status, TaskStatus::Cancelled);

    // Even a held-out task that reached the owner some other way takes no guidance into a send.
    let mut escalated = w.task(&task).await;
    escalated.status = TaskStatus::Escalated;
    escalated.version += 1;
    let log = crate::task::LogEntry {
        id: crate::kernel::ids::new_ulid(w.clock.now()),
        at: w.clock.now(),
        from_status: Some(TaskStatus::Cancelled),
        to_status: TaskStatus::Escalated,
        reason: "owner_reopened".into(),
        detail: None,
    };
    w.store
        .commit(&crate::task::commit::TaskCommit::new(escalated, log))
        .await
        .expect("escalated by hand");
    let guided = w.engine.guidance(w.account.id, task.id, "Tell her we miss her").await;
    assert!(
        matches!(guided, Err(crate::task::error::EngineError::InvalidTransition { .. })),
        "{guided:?}"
    );
    for day in 1..=3 {
        w.clock.set(day0() + days(day));
        w.run().await;
    }
    assert!(w.mailer.sent().is_empty(), "a held-out member is mailed on no path");
}

/// Issue 44, intent to treat: a contacted member's task the owner skipped (nothing sent) is
/// still watched to its cohort's end; their return inside it is recorded for the lift only
/// (the outcome and its value stay), and the lift, once the window has passed, counts both
/// groups by what happened to every member assigned — before that, both are still in their
/// window.
#[tokio::test]
async fn a_skipped_task_still_counts_for_the_lift_by_what_its_member_did_within_the_window() {
    let mut w = world().await;
    w.hold_out(20).await;
    let (contacted, held) = (w.member_in(Arm::Contacted).await, w.member_in(Arm::HeldOut).await);
    let skipped = w.scanned(&contacted).await.task().clone();
    let watched = w.scanned(&held).await.task().clone();
    w.engine.skip(w.account.id, skipped.id, None).await.expect("skip");
    let closed = w.task(&skipped).await;
    assert_eq!(
        closed.attribution_until,
        Some(skipped.created_at + days(14)),
        "watched to the cohort's end"
    );

    w.clock.set(day0() + days(5));
    let mut facts = w.store.get_member(w.account.id, &contacted).await.expect("facts").expect("known").0;
    let event = MemberEvent::CheckinCreated {
        member_id: contacted.clone(),
        checked_in_at: w.clock.now(),
        class_name: None,
    };
    assert!(facts.apply("evt_back", &event, w.clock.now()));
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("save");
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!(report.goals_seen, 1, "{report:?}");
    let seen = w.task(&skipped).await;
    assert_eq!(seen.goal_at, Some(w.clock.now()));
    assert_eq!(
        (seen.outcome, seen.attributed_value),
        (closed.outcome, closed.attributed_value),
        "the owner's view stays"
    );

    let lift = w.engine.lift(w.account.id, None, None, Some("churn_risk")).await.expect("lift");
    let group = &lift.groups[0];
    assert_eq!((group.contacted.n, group.held_out.n), (0, 0), "nobody's window has passed");
    assert_eq!((group.still_in_window.contacted, group.still_in_window.held_out), (1, 1));

    w.clock.set(day0() + days(15));
    w.run_when_due(&watched).await;
    let lift = w.engine.lift(w.account.id, None, None, Some("churn_risk")).await.expect("lift");
    let group = &lift.groups[0];
    assert_eq!((group.contacted.n, group.contacted.succeeded), (1, 1), "{group:?}");
    assert_eq!((group.held_out.n, group.held_out.succeeded), (1, 0), "{group:?}");
    assert_eq!(group.window_days, 14);
    assert!(w.mailer.sent().is_empty(), "nothing was ever sent");
}

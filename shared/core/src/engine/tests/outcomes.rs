//! Outcomes on the in-memory store: dormant tasks completed by their signal, open
//! tasks closed by a member event, and the attribution run — values, late wins, provisional
//! outcomes confirmed or downgraded.

use super::*;
use crate::ports::Clock;
use crate::task::attribution::ValueSource;
use crate::task::transition::Why;

impl World {
    /// Project a member event into the facts without the signals path (as if it arrived
    /// while nothing looked), so only the dormant check or attribution can see it.
    async fn quietly(&self, event: MemberEvent, at: Timestamp) {
        let member = event.member_id().clone();
        let mut facts = self
            .store
            .get_member(self.account.id, &member)
            .await
            .expect("facts")
            .map(|(f, _)| f)
            .unwrap_or_else(|| crate::members::member::MemberFacts::new(member));
        assert!(facts.apply(&format!("quiet_{at}"), &event, at));
        facts.version += 1;
        self.store.save_member_facts(self.account.id, &facts).await.expect("save facts");
    }

    async fn reasons(&self, task: &Task) -> Vec<String> {
        let history = self
            .store
            .task_history(self.account.id, task.id)
            .await
            .expect("history")
            .expect("task");
        history.log.into_iter().map(|l| l.reason).collect()
    }

    /// The standard cadence's follow-ups on days 3 and 8, each when it was scheduled, then its
    /// 14-day budget closing it unanswered.
    async fn follow_up_then_close(&self, task: &Task) {
        for day in [3, 8] {
            let due = self.run_when_due(task).await;
            self.assert_follow_up_on_day(due, day);
        }
        assert_eq!(self.run_when_due(task).await, day0() + days(14));
        assert_eq!(self.mailer.sent().len(), 3);
    }

    /// Three touches on the slow-burn cadence, then dormant at day 30.
    async fn dormant_win_back(&self, member: &str) -> Task {
        let task = self.approved("win_back", member).await;
        self.run().await;
        for day in [3, 13] {
            let due = self.run_when_due(&task).await;
            self.assert_follow_up_on_day(due, day);
        }
        // The time budget (30 days) ends it: the exhaustion check is not moved.
        assert_eq!(self.run_when_due(&task).await, day0() + days(30));
        let dormant = self.task(&task).await;
        assert_eq!(dormant.status, TaskStatus::Dormant);
        dormant
    }
}

fn checkin(member: &MemberId, at: Timestamp) -> MemberEvent {
    MemberEvent::CheckinCreated {
        member_id: member.clone(),
        checked_in_at: at,
        class_name: None,
    }
}

/// Spec §19.1: a win-back that went dormant is completed by the dormant check that follows
/// a check-in on day 60, with the outcome's revenue (3 months at 150).
#[tokio::test]
async fn a_dormant_win_back_is_completed_by_the_dormant_check_after_a_checkin_on_day_60() {
    let w = world().await;
    let task = w.dormant_win_back("m_away").await;
    w.quietly(checkin(&task.member.id, day0() + days(60)), day0() + days(60)).await;
    // The check on day 58 found nothing; the one on day 72 finds the check-in.
    w.clock.set(day0() + days(58) + SignedDuration::from_hours(2));
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Dormant);
    w.clock.set(day0() + days(72) + SignedDuration::from_hours(2));
    w.run().await;
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Completed, Some("recovered")));
    assert_eq!(done.attributed_value, Some(450.0));
    assert_eq!(done.outcome_reason.as_deref(), Some("goal_signal_reactivation"));
    assert_eq!(w.mailer.sent().len(), 3, "dormant tasks never write");
    let reasons = w.reasons(&task).await;
    assert!(reasons.contains(&"dormant_check_no_signal".to_owned()), "{reasons:?}");
}

/// A member on a PushPress plan the owner priced is worth that price, and the
/// task says so; a member on an unpriced plan is worth the account's average.
#[tokio::test]
async fn an_outcome_is_valued_at_the_owners_price_for_the_members_plan_and_says_so() {
    let w = world().await;
    let mut account = w.account.clone();
    account.settings.plan_prices.insert("pln_gold".into(), 200.0);
    account.version += 1;
    w.store.save_account(&account).await.expect("prices");
    for (member, plan) in [("m_gold", "pln_gold"), ("m_drop", "pln_dropin")] {
        let id = w.member(member).await;
        let enrollment = crate::members::source::Enrollment {
            id: format!("sub_{member}"),
            customer: id.clone(),
            plan_id: Some(plan.into()),
            status: crate::members::source::EnrollmentStatus::Active,
            billing_period: Some("month".into()),
            billing_interval: Some(1),
            paid_until: None,
            next_charge: None,
        };
        w.quietly(MemberEvent::Enrollment { member_id: id, enrollment }, day0()).await;
    }
    let gold = w.approved("win_back", "m_gold").await;
    let drop_in = w.approved("win_back", "m_drop").await;
    assert_eq!(gold.member.plan_id.as_deref(), Some("pln_gold"), "the task knows the member's plan");
    w.run().await;
    w.clock.set(day0() + days(2));
    w.signal("evt_gold", checkin(&gold.member.id, day0() + days(2))).await;
    w.signal("evt_drop", checkin(&drop_in.member.id, day0() + days(2))).await;
    let gold = w.task(&gold).await;
    assert_eq!((gold.status, gold.outcome.as_deref()), (TaskStatus::Completed, Some("recovered")));
    assert_eq!(
        (gold.attributed_value, gold.value_source),
        (Some(600.0), Some(ValueSource::PlanPrice))
    );
    let drop_in = w.task(&drop_in).await;
    assert_eq!(
        (drop_in.attributed_value, drop_in.value_source),
        (Some(450.0), Some(ValueSource::Average))
    );
    let view = serde_json::to_value(crate::contract::TaskView::from(&gold)).expect("view");
    assert_eq!(view["attributed_value_source"], "plan_price");
}

/// A check-in event for a member with a dormant task closes it at once.
#[tokio::test]
async fn a_checkin_event_closes_a_dormant_task_at_once() {
    let w = world().await;
    let task = w.dormant_win_back("m_back").await;
    w.clock.set(day0() + days(40));
    w.signal("evt_back", checkin(&task.member.id, day0() + days(40))).await;
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Completed, Some("recovered")));
    assert_eq!(done.attributed_value, Some(450.0));
    assert_eq!(done.attribution_until, None, "valued at once: nothing left to attribute");
}

/// A payment that goes through while a payment-recovery task waits for its follow-up closes
/// it as recovered, valued at one month.
#[tokio::test]
async fn a_payment_event_closes_the_waiting_recovery_task_as_recovered() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_card").await;
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Waiting);
    w.clock.advance(SignedDuration::from_hours(5));
    let paid = MemberEvent::PaymentSucceeded {
        member_id: task.member.id.clone(),
        amount: 150.0,
        currency: "USD".into(),
        paid_at: w.clock.now(),
    };
    w.signal("evt_paid", paid).await;
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Completed, Some("recovered")));
    assert_eq!(done.attributed_value, Some(150.0));
    // An event that shows no goal leaves other tasks alone.
    let other = w.approved("churn_risk", "m_other").await;
    w.signal(
        "evt_trial",
        MemberEvent::TrialBooked {
            member_id: other.member.id.clone(),
            booked_for: w.clock.now(),
        },
    )
    .await;
    assert_eq!(w.task(&other).await.status, TaskStatus::Ready);
}

/// A churn task that closed unanswered is re-attributed as a late win when the member checks
/// in within 14 days; the status stays cancelled, and the task leaves the index.
#[tokio::test]
async fn attribution_turns_a_late_checkin_into_a_late_win_on_a_cancelled_task() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_late").await;
    w.run().await;
    w.follow_up_then_close(&task).await;
    let closed = w.task(&task).await;
    assert_eq!(
        (closed.status, closed.outcome.as_deref()),
        (TaskStatus::Cancelled, Some("unresponsive"))
    );
    let first = w.engine.attribute().await.expect("attribute");
    assert_eq!((first.watched, first.late_wins), (1, 0));
    w.clock.set(day0() + days(20));
    w.quietly(checkin(&task.member.id, day0() + days(20)), day0() + days(20)).await;
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!(report.late_wins, 1);
    let won = w.task(&task).await;
    assert_eq!((won.status, won.outcome.as_deref()), (TaskStatus::Cancelled, Some("engaged_late")));
    assert_eq!(won.attributed_value, Some(150.0));
    assert!(w.reasons(&task).await.contains(&"goal_signal_after_close".to_owned()));
    assert_eq!(w.engine.attribute().await.expect("again").watched, 0);
}

/// A late window that passes without a signal releases the task from the index.
#[tokio::test]
async fn attribution_releases_an_unanswered_task_when_its_window_closes() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_gone").await;
    w.run().await;
    w.follow_up_then_close(&task).await;
    w.clock.set(day0() + days(29));
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!((report.watched, report.released, report.late_wins), (1, 1, 0));
    let after = w.task(&task).await;
    assert_eq!((after.outcome.as_deref(), after.attribution_until), (Some("unresponsive"), None));
    assert!(w.reasons(&task).await.contains(&"attribution_window_closed".to_owned()));
}

async fn committed(w: &World, member: &str) -> Task {
    let task = w.approved("churn_risk", member).await;
    w.run().await;
    let waiting = w.task(&task).await;
    w.clock.advance(SignedDuration::from_hours(26));
    w.engine
        .close_provisionally(
            &waiting,
            "verbal_commitment",
            Why::new(Reason::VerbalCommitment).detail("I'll be in Monday"),
            Vec::new(),
        )
        .await
        .expect("close provisionally")
}

/// A verbal commitment is worth half a month until verified; 14 days without a check-in
/// downgrade it to verbal_only with no value.
#[tokio::test]
async fn a_verbal_commitment_without_a_checkin_is_downgraded_after_fourteen_days() {
    let w = world().await;
    let closed = committed(&w, "m_words").await;
    assert!(closed.provisional);
    assert_eq!((closed.status, closed.attributed_value), (TaskStatus::Completed, Some(75.0)));
    w.clock.advance(days(13));
    let quiet = w.engine.attribute().await.expect("attribute");
    assert_eq!((quiet.watched, quiet.downgraded), (1, 0));
    w.clock.advance(days(1) + SignedDuration::from_hours(1));
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!(report.downgraded, 1);
    let after = w.task(&closed).await;
    assert_eq!(after.outcome.as_deref(), Some("verbal_only"));
    assert_eq!((after.attributed_value, after.provisional), (Some(0.0), false));
    assert_eq!(after.status, TaskStatus::Completed, "downgraded, never reopened");
    assert!(w.reasons(&closed).await.contains(&"no_signal_after_verbal_commitment".to_owned()));
}

/// The same commitment followed by a check-in inside the window is confirmed as retained.
#[tokio::test]
async fn a_verbal_commitment_confirmed_by_a_checkin_becomes_retained() {
    let w = world().await;
    let closed = committed(&w, "m_kept").await;
    w.clock.advance(days(4));
    w.quietly(checkin(&closed.member.id, w.clock.now()), w.clock.now()).await;
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!(report.confirmed, 1);
    let after = w.task(&closed).await;
    assert_eq!(
        (after.outcome.as_deref(), after.attributed_value, after.provisional),
        (Some("retained"), Some(150.0), false)
    );
    assert!(w.reasons(&closed).await.contains(&"provisional_outcome_confirmed".to_owned()));
}

/// The run reads only what is inside a window: open tasks and settled ones are not read.
#[tokio::test]
async fn attribution_reads_only_the_tasks_inside_a_window() {
    let w = world().await;
    for i in 0..12 {
        w.approved("churn_risk", &format!("m_open_{i}")).await;
    }
    let owner = w.approved("churn_risk", "m_owner").await;
    w.run().await;
    w.engine
        .resolve(
            w.account.id,
            owner.id,
            crate::engine::Resolution {
                outcome: "retained".into(),
                note: None,
            },
        )
        .await
        .expect("resolve");
    let report = w.engine.attribute().await.expect("attribute");
    assert_eq!(
        (report.watched, report.valued),
        (1, 1),
        "only the closed task waiting for its value"
    );
    assert_eq!(w.task(&owner).await.attributed_value, Some(150.0));
    assert_eq!(w.engine.attribute().await.expect("again").watched, 0);
}

/// Spec 003's owner-edit signal: the learning record of a task whose first message the owner
/// edited says so (both copies), and one approved as drafted says not.
#[tokio::test]
async fn the_learning_record_says_whether_the_owner_edited_the_message_that_was_sent() {
    let w = world().await;
    let mut closed = Vec::new();
    for (member, edit) in [("m_edited", true), ("m_as_drafted", false)] {
        let input = w.new_task("payment_recovery", member).await;
        let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
        let edited = edit.then(|| Draft {
            subject: "Hello".into(),
            body: "Rewritten by the owner".into(),
        });
        w.engine.approve(w.account.id, task.id, edited).await.expect("approve");
        w.run().await;
        let paid = MemberEvent::PaymentSucceeded {
            member_id: task.member.id.clone(),
            amount: 150.0,
            currency: "USD".into(),
            paid_at: w.clock.now(),
        };
        w.signal(&format!("evt_{member}"), paid).await;
        closed.push(task);
    }
    let mut edits = Vec::new();
    for task in &closed {
        let record = w
            .store
            .interaction_outcome(w.account.id, task.id)
            .await
            .expect("read")
            .expect("closed tasks have a record");
        edits.push(record.shared.owner_edited);
    }
    assert_eq!(edits, vec![true, false]);
    let (shared, _) = w
        .store
        .shared_outcomes(&crate::learning::interaction::month_of(w.clock.now()), 10, None)
        .await
        .expect("shared");
    let mut crossing: Vec<bool> = shared.iter().map(|s| s.owner_edited).collect();
    crossing.sort();
    assert_eq!(crossing, vec![false, true], "the cross-tenant copy carries the fact too");
    // The operator's month adds them up.
    let month = w.engine.platform_learning(None).await.expect("aggregate");
    let recovery = month
        .task_types
        .iter()
        .find(|t| t.task_type == "payment_recovery")
        .expect("payment_recovery");
    assert_eq!(
        (recovery.total.tasks, recovery.total.succeeded, recovery.total.owner_edited),
        (2, 2, 1)
    );
    assert_eq!(recovery.outcomes["recovered"].success_rate, Some(1.0));
    assert!(w.engine.platform_learning(Some("2026-13")).await.is_err(), "a bad month is refused");
}

/// One account whose task's value the store cannot hold (a price at the edge of DynamoDB's
/// numbers, written before prices were bounded, times a win-back's multiplier of 3) fails
/// its own attribution, alerted; the other account's task beside it is still valued in the
/// same run.
#[tokio::test]
async fn one_accounts_bad_data_never_stops_the_others_attribution() {
    let w = world().await;
    let mut poisoned = sample_account(day0());
    poisoned.settings.avg_membership_price = 9.99e125;
    w.store.create_account(&poisoned, "hash-2").await.expect("account");
    let healthy = w.approved("churn_risk", "m_healthy").await;
    let input = w.new_task("win_back", "m_poisoned").await;
    let (facts, _) = w
        .store
        .get_member(w.account.id, &input.member_id)
        .await
        .expect("read")
        .expect("facts");
    w.store.save_member_facts(poisoned.id, &facts).await.expect("facts");
    let bad = w.engine.create_task(&poisoned, input).await.expect("create").task().clone();
    let bad = w.engine.approve(poisoned.id, bad.id, None).await.expect("approve");
    w.run().await;
    for (account, task, outcome) in [(w.account.id, &healthy, "retained"), (poisoned.id, &bad, "recovered")] {
        let resolution = crate::engine::Resolution {
            outcome: outcome.into(),
            note: None,
        };
        w.engine.resolve(account, task.id, resolution).await.expect("resolve");
    }
    let report = w.engine.attribute().await.expect("the run goes on");
    assert_eq!((report.watched, report.valued, report.failed), (2, 1, 1), "{report:?}");
    assert_eq!(w.task(&healthy).await.attributed_value, Some(150.0));
}

fn payment_failed(member: &MemberId, amount: f64, at: Timestamp) -> MemberEvent {
    MemberEvent::PaymentFailed {
        member_id: member.clone(),
        amount,
        currency: "USD".into(),
        failed_at: at,
        reason: Some("card_declined".into()),
    }
}

/// Spec §7.7: a second failed payment while the first's task is open adds its context to
/// that task (logged) instead of dropping it; the same event delivered again adds nothing.
#[tokio::test]
async fn a_duplicate_triggers_context_is_merged_into_the_open_task() {
    let w = world().await;
    let member = w.member("m_twice").await;
    w.signal("evt_fail_1", payment_failed(&member, 89.5, w.clock.now())).await;
    w.clock.advance(SignedDuration::from_hours(2));
    w.signal("evt_fail_2", payment_failed(&member, 40.0, w.clock.now())).await;
    w.signal("evt_fail_2", payment_failed(&member, 40.0, w.clock.now())).await;
    w.signal("evt_fail_1", payment_failed(&member, 89.5, w.clock.now())).await;
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("list");
    assert_eq!(tasks.len(), 1, "still one task");
    let task = &tasks[0];
    assert_eq!(task.trigger_context["amount"], 89.5, "the first trigger's context stays");
    let merged = task.trigger_context["merged_triggers"].as_array().cloned().unwrap_or_default();
    assert_eq!(merged.len(), 1, "the second event once: {merged:?}");
    assert_eq!(merged[0]["trigger_event_id"], "evt_fail_2");
    assert_eq!(merged[0]["context"]["amount"], 40.0);
    let reasons = w.reasons(task).await;
    assert_eq!(
        reasons.iter().filter(|r| *r == "duplicate_context_merged").count(),
        1,
        "{reasons:?}"
    );
}

/// A recovered payment is worth the failed payment's amount when its trigger said it; without
/// it, the membership price (the multiplier's base).
#[tokio::test]
async fn a_recovered_payment_is_valued_at_its_amount() {
    let w = world().await;
    let member = w.member("m_amount").await;
    w.signal("evt_fail", payment_failed(&member, 89.5, w.clock.now())).await;
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("list");
    let task = tasks[0].clone();
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    w.clock.advance(SignedDuration::from_hours(5));
    let paid = MemberEvent::PaymentSucceeded {
        member_id: member.clone(),
        amount: 89.5,
        currency: "USD".into(),
        paid_at: w.clock.now(),
    };
    w.signal("evt_paid", paid).await;
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Completed, Some("recovered")));
    assert_eq!(done.attributed_value, Some(89.5), "the payment's amount, not the membership price");
}

/// Spec §12, §20.4: the 10th check-in opens a `milestone_review` task for the member — once;
/// the 9th and the 11th open nothing, and a redelivered 10th changes nothing.
#[tokio::test]
async fn the_tenth_checkin_asks_for_a_review_once() {
    let w = world().await;
    let member = w.member("m_regular").await;
    let checkin = |i: i64| MemberEvent::CheckinCreated {
        member_id: member.clone(),
        checked_in_at: day0() - days(10) + days(i),
        class_name: None,
    };
    let reviews = || async {
        let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("list");
        tasks.into_iter().filter(|t| t.task_type == "milestone_review").collect::<Vec<_>>()
    };
    for i in 1..=9 {
        w.signal(&format!("evt_in_{i}"), checkin(i)).await;
    }
    assert!(reviews().await.is_empty(), "nine check-ins: no milestone");
    w.signal("evt_in_10", checkin(10)).await;
    w.signal("evt_in_10", checkin(10)).await;
    let found = reviews().await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].goal.contains("10th check-in"), "{}", found[0].goal);
    assert_eq!(found[0].trigger_context["milestone"], 10);
    w.engine.cancel(w.account.id, found[0].id).await.expect("cancel");
    w.signal("evt_in_11", checkin(11)).await;
    assert_eq!(reviews().await.len(), 1, "the 11th is no milestone");
}

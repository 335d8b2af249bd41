//! A task's next step reads its loops, on the in-memory store: a sent touch's loops are noted
//! on the task in its own commit (and its follow-up is due at the first deadline); a payment
//! resolved meets the goal loop and the step settles the task as won instead of following up;
//! a reply meets the reply loop in the reply's own commit; an overdue loop's action is what
//! the step does, and the loop is expired once, with the task.

use super::*;
use crate::members::source::{Enrollment, EnrollmentStatus};
use crate::ports::Clock;
use crate::task::open_loop::{Expects, LoopStatus, OnDeadline, OpenLoop};
use crate::task::task_loops::LoopNote;

impl World {
    async fn records_of(&self, task: &Task) -> Vec<OpenLoop> {
        let mut loops: Vec<OpenLoop> = self
            .store
            .list_loops(self.account.id, None, Some(&task.member.id), 100)
            .await
            .expect("loops")
            .into_iter()
            .filter(|l| l.task_id == Some(task.id))
            .collect();
        loops.sort_by_key(|l| l.id);
        loops
    }
}

async fn reasons_of(w: &World, task: &Task) -> Vec<String> {
    let history = w.store.task_history(w.account.id, task.id).await.expect("history").expect("task");
    history.log.into_iter().map(|l| l.reason).collect()
}

/// `member`'s enrollment `id` back in good standing.
fn enrollment_active(member: &str, id: &str) -> MemberEvent {
    let member = MemberId::parse(member).expect("id");
    MemberEvent::Enrollment {
        member_id: member.clone(),
        enrollment: Enrollment {
            id: id.into(),
            customer: member,
            plan_id: None,
            status: EnrollmentStatus::Active,
            billing_period: None,
            billing_interval: None,
            paid_until: None,
            next_charge: None,
        },
    }
}

fn open_notes(task: &Task) -> Vec<&LoopNote> {
    task.loops.iter().filter(|n| n.is_open()).collect()
}

#[tokio::test]
async fn a_sent_touch_notes_its_loops_on_the_task_and_its_follow_up_is_due_at_the_first_deadline() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_note").await;
    w.run_when_due(&task).await;
    let sent = w.task(&task).await;
    assert_eq!(sent.touch, 1, "the first touch left");
    let records = w.records_of(&task).await;
    assert_eq!(records.len(), 2, "{records:?}");
    // The task carries exactly its loops' records, as they are.
    let notes: Vec<&LoopNote> = open_notes(&sent);
    assert_eq!(notes.len(), 2, "{:?}", sent.loops);
    for record in &records {
        let note = notes.iter().find(|n| n.id == record.id).expect("noted");
        assert_eq!(
            (note.expects, note.deadline, note.on_deadline, note.status),
            (record.expects, record.deadline, record.on_deadline, record.status)
        );
    }
    let first = notes.iter().map(|n| n.deadline).min();
    assert_eq!(sent.next_action_at, first, "the follow-up is due at the first open deadline");
    assert!(notes.iter().any(|n| n.expects == Expects::PaymentResolved));
    // The task's view shows them.
    let view = serde_json::to_value(crate::contract::TaskView::from(&sent)).expect("view");
    let shown: Vec<&str> = view["open_loops"]
        .as_array()
        .expect("open_loops")
        .iter()
        .map(|l| l["id"].as_str().expect("id"))
        .collect();
    assert_eq!(shown.len(), 2);
    assert!(records.iter().all(|r| shown.contains(&r.id.to_string().as_str())));
}

#[tokio::test]
async fn a_payment_resolved_meets_the_goal_loop_and_the_step_settles_the_task_instead_of_following_up() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_paid").await;
    w.run_when_due(&task).await;
    assert_eq!(w.mailer.sent().len(), 1);
    let follow_up_at = w.due(&task).await;

    // The enrollment back in good standing (no payment event: the facts alone would not say
    // the payment went through) meets the goal loop, noted on the task in the same commit.
    w.clock.set(day0() + days(1));
    w.signal("wh_enrollment", enrollment_active("m_paid", "enr_1")).await;
    let met = w.task(&task).await;
    let goal = met.loops.iter().find(|n| n.expects == Expects::PaymentResolved).expect("goal note");
    assert_eq!(goal.status, LoopStatus::Met);
    assert_eq!(goal.met_by.as_deref(), Some("enrollment.active:wh_enrollment"));
    assert!(
        met.next_action_at.is_some_and(|at| at < follow_up_at),
        "due now, not at the follow-up"
    );

    // The step reads it: completed as won, and no follow-up.
    w.run_when_due(&task).await;
    let done = w.task(&task).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some("recovered"));
    assert_eq!(done.outcome_reason.as_deref(), Some(Reason::GoalSignalPaymentSucceeded.as_str()));
    w.clock.set(follow_up_at + days(1));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "no follow-up after the goal's loop was met");
    // Each loop resolved once: the goal met, the reply loop closed with the task.
    let records = w.records_of(&task).await;
    let goal = records.iter().find(|l| l.expects == Expects::PaymentResolved).expect("goal");
    let reply = records.iter().find(|l| l.expects == Expects::Reply).expect("reply");
    assert_eq!((goal.status, reply.status), (LoopStatus::Met, LoopStatus::Expired), "{records:?}");
    assert!(open_notes(&w.task(&task).await).is_empty());
}

/// Found by the fault fortnight: a payment task waiting on the owner (escalated) whose member
/// then pays is recovered at once, not left to time out a week later as unanswered.
#[tokio::test]
async fn an_escalated_payment_task_whose_member_pays_closes_as_recovered_not_as_timed_out() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_paid_late").await;
    w.run_when_due(&task).await;
    let sent = w.task(&task).await;
    let why = crate::task::transition::Why::new(Reason::LoopDeadlinePassed).detail("the owner decides");
    let (next, log) = crate::task::transition::transition(&sent, TaskStatus::Escalated, w.clock.now(), why).expect("escalate");
    w.store
        .commit(&crate::task::commit::TaskCommit::new(next, log))
        .await
        .expect("commit");
    let reminder_at = w.due(&task).await;

    w.clock.set(day0() + days(1));
    w.signal("wh_paid_late", enrollment_active("m_paid_late", "enr_late")).await;
    let met = w.task(&task).await;
    assert!(
        met.next_action_at.is_some_and(|at| at < reminder_at),
        "due now, not at the escalation's reminder"
    );
    w.run_when_due(&task).await;
    let done = w.task(&task).await;
    assert_eq!(done.status, TaskStatus::Completed, "{:?}", reasons_of(&w, &task).await);
    assert_eq!(done.outcome.as_deref(), Some("recovered"));
    assert!(!reasons_of(&w, &task).await.iter().any(|r| r == Reason::EscalationTimeout.as_str()));
}

#[tokio::test]
async fn a_reply_meets_the_reply_loop_with_the_reply_and_the_task_agrees() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_answer").await;
    w.run_when_due(&task).await;
    let reply_note = w
        .task(&task)
        .await
        .loops
        .iter()
        .find(|n| n.expects == Expects::Reply)
        .expect("reply note")
        .id;
    let reply = w.answer_newest("m-answer@example.com", "answer-1@example.net", "Thanks, see you Thursday!");
    w.engine.receive_reply(&reply).await.expect("reply");
    let record = w.records_of(&task).await.into_iter().find(|l| l.id == reply_note).expect("record");
    assert_eq!(record.status, LoopStatus::Met);
    assert_eq!(record.met_by, Some(format!("reply:{}", task.id)));
    let after = w.task(&task).await;
    assert!(
        after.loops.iter().all(|n| n.id != reply_note || n.status == LoopStatus::Met),
        "the task never says the met loop is open: {:?}",
        after.loops
    );
    assert!(reasons_of(&w, &task).await.iter().all(|r| r != Reason::LoopExpired.as_str()));
}

#[tokio::test]
async fn at_the_reply_deadline_the_follow_up_is_the_loops_action_and_the_loop_expires_once() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_quiet").await;
    w.run_when_due(&task).await;
    let first = w.task(&task).await;
    let reply = first
        .loops
        .iter()
        .find(|n| n.expects == Expects::Reply)
        .expect("reply note")
        .clone();
    assert_eq!(reply.on_deadline, OnDeadline::FollowUp);
    assert_eq!(first.next_action_at, Some(reply.deadline));
    w.run_when_due(&task).await;
    assert_eq!(w.mailer.sent().len(), 2, "the follow-up went");
    let second = w.task(&task).await;
    assert!(second.loops.iter().all(|n| n.id != reply.id || n.status == LoopStatus::Expired));
    let records = w.records_of(&task).await;
    let old = records.iter().find(|l| l.id == reply.id).expect("old reply loop");
    assert_eq!(old.status, LoopStatus::Expired);
    let open: Vec<_> = records
        .iter()
        .filter(|l| l.expects == Expects::Reply && l.status == LoopStatus::Open)
        .collect();
    assert_eq!(open.len(), 1, "the follow-up waits for its own reply: {records:?}");
    assert!(open_notes(&second).iter().any(|n| n.id == open[0].id));
}

#[tokio::test]
async fn a_loop_that_says_escalate_escalates_the_task_at_its_deadline_instead_of_following_up() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_escalate").await;
    w.run_when_due(&task).await;
    // The task's reply loop says to tell the owner if no reply comes (record and note alike).
    let mut current = w.task(&task).await;
    let idx = current.loops.iter().position(|n| n.expects == Expects::Reply).expect("reply note");
    current.loops[idx].on_deadline = OnDeadline::Escalate;
    let mut record = current.loops[idx].record(&current);
    record.on_deadline = OnDeadline::Escalate;
    w.store.put_loops(&[record.clone()]).await.expect("loop");
    let (next, log) = crate::task::transition::record(&current, w.clock.now(), crate::task::transition::Why::new(Reason::LoopMet));
    w.store
        .commit(&crate::task::commit::TaskCommit::new(next, log))
        .await
        .expect("commit");

    w.run_when_due(&task).await;
    let after = w.task(&task).await;
    assert_eq!(after.status, TaskStatus::Escalated);
    assert_eq!(after.outcome_reason.as_deref(), Some(Reason::LoopDeadlinePassed.as_str()));
    assert_eq!(w.mailer.sent().len(), 1, "no follow-up: the loop said to escalate");
    let stored = w.records_of(&task).await.into_iter().find(|l| l.id == record.id).expect("record");
    assert_eq!(stored.status, LoopStatus::Expired);
    let expiries = reasons_of(&w, &task)
        .await
        .iter()
        .filter(|r| *r == Reason::LoopExpired.as_str())
        .count();
    assert!(expiries <= 1, "expired once");
}

#[tokio::test]
async fn a_paused_tasks_loop_is_expired_by_the_sweep_an_hour_on_and_its_step_follows_up_once_resumed() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_paused").await;
    w.run_when_due(&task).await;
    let reply = w
        .task(&task)
        .await
        .loops
        .iter()
        .find(|n| n.expects == Expects::Reply)
        .cloned()
        .expect("reply note");
    w.engine.pause_task(w.account.id, task.id).await.expect("pause");
    let record = async || w.records_of(&task).await.into_iter().find(|l| l.id == reply.id).expect("record");

    // At its deadline the sweep leaves the loop to the task's step (which, paused, does not run)…
    w.clock.set(reply.deadline);
    w.run().await;
    assert_eq!(record().await.status, LoopStatus::Open);
    // …an hour on, it expires it with the task.
    w.clock.set(reply.deadline + crate::task::task_loops::LEFT_TO_STEP);
    w.run().await;
    assert_eq!(record().await.status, LoopStatus::Expired);
    let paused = w.task(&task).await;
    let note = paused.loops.iter().find(|n| n.id == reply.id).expect("still noted");
    assert_eq!(note.status, LoopStatus::Expired, "the task says what the record says");
    let expiries = |reasons: Vec<String>| reasons.iter().filter(|r| *r == Reason::LoopExpired.as_str()).count();
    assert_eq!(expiries(reasons_of(&w, &task).await), 1);
    assert_eq!(w.mailer.sent().len(), 1);

    // Resumed, its step does what the loop said: the follow-up.
    w.engine.resume_task(w.account.id, task.id).await.expect("resume");
    w.run_when_due(&task).await;
    assert_eq!(w.mailer.sent().len(), 2, "the follow-up went");
    let after = w.task(&task).await;
    assert!(
        after.loops.iter().all(|n| n.id != reply.id),
        "acted on, the expired note leaves the task"
    );
    assert!(
        open_notes(&after).iter().any(|n| n.expects == Expects::Reply),
        "the follow-up's own reply loop"
    );
    assert_eq!(expiries(reasons_of(&w, &task).await), 1, "expired once");
}

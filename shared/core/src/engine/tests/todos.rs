//! The owner's call list: a task that asks a person to act is a to-do from
//! its first minute; the owner logs contacts, snoozes and marks it done (settling its task);
//! the member's check-in completes a "get them back" to-do by itself; a task's close closes
//! its to-dos.

use super::*;
use crate::task::todo::{ContactKind, ContactResult, TodoKind, TodoStatus};
use crate::task::transition::Why;

impl World {
    async fn staff_call(&self, member: &str) -> Task {
        let input = NewTask {
            goal: "Call Sam about the schedule change".into(),
            draft: None,
            ..self.new_task("staff_call_member", member).await
        };
        self.engine.create_task(&self.account, input).await.expect("create").task().clone()
    }

    async fn todos(&self, status: TodoStatus) -> Vec<crate::task::todo::Todo> {
        self.engine.todos(self.account.id, status).await.expect("todos")
    }

    async fn checkin(&self, id: &str, member: &MemberId) {
        let now = crate::ports::Clock::now(self.clock.as_ref());
        self.signal(id, super::loop_fixtures::checkin(member.as_str(), now)).await;
    }
}

#[tokio::test]
async fn a_staff_call_is_a_todo_from_its_first_minute_logged_snoozed_and_done_with_its_task() {
    let w = world().await;
    let call = w.staff_call("m_call").await;
    assert_eq!(call.status, TaskStatus::PendingReview);
    let listed = w.todos(TodoStatus::Open).await;
    let [todo] = listed.as_slice() else {
        panic!("one to-do: {listed:?}")
    };
    assert_eq!(
        (todo.task_id, todo.kind, todo.what.as_str(), todo.due_at, todo.get_them_back),
        (call.id, TodoKind::Call, "Call Sam about the schedule change", day0(), true),
        "visible at once, due now"
    );
    let logged = w
        .engine
        .log_todo_contact(w.account.id, todo.id, ContactKind::Call, ContactResult::NoAnswer, Some("voicemail"))
        .await
        .expect("contact");
    assert_eq!(logged.contacts.len(), 1);
    w.engine.snooze_todo(w.account.id, todo.id, "2026-11-04").await.expect("snooze");
    assert!(w.todos(TodoStatus::Open).await.is_empty(), "out of the list while snoozed");
    assert_eq!(w.todos(TodoStatus::Snoozed).await.len(), 1);
    w.clock.set(at("2026-11-04T05:00:00Z"));
    let woken = w.todos(TodoStatus::Open).await;
    assert_eq!(
        woken.iter().map(|t| (t.id, t.status)).collect::<Vec<_>>(),
        [(todo.id, TodoStatus::Open)],
        "back on the day it was snoozed to (midnight in New York)"
    );
    let done = w
        .engine
        .complete_todo(w.account.id, todo.id, Some("completed"), Some("she'll come Monday"))
        .await
        .expect("done");
    assert_eq!((done.status, done.outcome.as_deref()), (TodoStatus::Done, Some("completed")));
    let closed = w.task(&call).await;
    assert_eq!(closed.outcome.as_deref(), Some("completed"), "the task is settled with it");
    assert!(closed.status.is_terminal());
    assert_eq!(w.todos(TodoStatus::Done).await.len(), 1);
    let again = w.engine.complete_todo(w.account.id, todo.id, None, None).await;
    assert!(matches!(again, Err(crate::task::error::EngineError::Invalid(e)) if e.code == "todo_done"));
}

#[tokio::test]
async fn a_members_checkin_completes_their_call_by_itself_and_says_so() {
    let w = world().await;
    let call = w.staff_call("m_back").await;
    w.engine.approve(w.account.id, call.id, None).await.expect("approve");
    w.run().await;
    assert_eq!(w.task(&call).await.status, TaskStatus::Waiting);
    // Another member's check-in changes nothing.
    let other = w.member("m_other").await;
    w.checkin("evt_other", &other).await;
    assert_eq!(w.todos(TodoStatus::Open).await.len(), 1);

    w.clock.advance(SignedDuration::from_hours(3));
    w.checkin("evt_back", &call.member.id).await;
    let done = w.todos(TodoStatus::Done).await;
    let [todo] = done.as_slice() else { panic!("{done:?}") };
    assert_eq!(todo.outcome.as_deref(), Some("member_checked_in"));
    assert!(
        todo.note
            .as_deref()
            .is_some_and(|n| n.starts_with("Done by itself: Sam checked in on Nov 2")),
        "{:?}",
        todo.note
    );
    let task = w.task(&call).await;
    assert_eq!(
        (task.status, task.outcome.as_deref(), task.outcome_reason.as_deref()),
        (
            TaskStatus::Completed,
            Some("member_returned"),
            Some("member_checked_in_before_the_call")
        )
    );
}

#[tokio::test]
async fn an_ignored_call_escalates_as_before_and_stays_on_the_list_once() {
    let w = world().await;
    let call = w.staff_call("m_late").await;
    w.engine.approve(w.account.id, call.id, None).await.expect("approve");
    w.run().await;
    w.clock.advance(days(1));
    w.run().await;
    w.clock.advance(days(2));
    w.run().await;
    assert_eq!(w.task(&call).await.status, TaskStatus::Escalated);
    let open = w.todos(TodoStatus::Open).await;
    assert_eq!(
        open.iter().map(|t| t.task_id).collect::<Vec<_>>(),
        [call.id],
        "one to-do, still open"
    );
}

/// The gym has `member`'s phone.
async fn with_phone(w: &World, member: &str) {
    let mut facts = crate::members::member::MemberFacts::new(MemberId::parse(member).expect("id"));
    facts.email = crate::kernel::ids::Email::parse(&format!("{member}@example.com").replace('_', "-")).ok();
    facts.first_name = Some("Sam".into());
    facts.phone = Some("+15555550177".into());
    facts.version = 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
}

/// Given an escalation the rules send to a person, then it is a to-do — a call to a member
/// whose phone the gym has, a note to write to one it has only the address of — that closes
/// with its task.
#[tokio::test]
async fn an_escalation_that_needs_a_person_is_a_todo_and_closes_with_its_task() {
    let w = world().await;
    with_phone(&w, "m_asks").await;
    let churn = w.approved("churn_risk", "m_asks").await;
    let why = Why::new(crate::task::reason::Reason::MemberQuestionNeedsOwner);
    w.engine
        .move_to(churn.clone(), TaskStatus::Escalated, day0(), why)
        .await
        .expect("escalate");
    let open = w.todos(TodoStatus::Open).await;
    let [todo] = open.as_slice() else { panic!("{open:?}") };
    assert_eq!((todo.kind, todo.task_id), (TodoKind::Call, churn.id));
    assert_eq!(todo.what, "Call Sam: they asked what only you can answer");
    let unphoned = w.approved("churn_risk", "m_writes").await;
    let why = Why::new(crate::task::reason::Reason::MemberQuestionNeedsOwner);
    w.engine
        .move_to(unphoned.clone(), TaskStatus::Escalated, day0(), why)
        .await
        .expect("escalate");
    let open = w.todos(TodoStatus::Open).await;
    let write = open.iter().find(|t| t.task_id == unphoned.id).expect("a to-do");
    assert_eq!(write.kind, TodoKind::Message);
    assert_eq!(write.what, "Write to Sam: they asked what only you can answer");
    w.engine.cancel(w.account.id, unphoned.id).await.expect("cancel");

    // An escalation that needs no person (here a send the provider may or may not have made)
    // makes none.
    let other = w.approved("churn_risk", "m_quiet").await;
    let why = Why::new(crate::task::reason::Reason::OwnerCancelled);
    w.engine.move_to(other, TaskStatus::Escalated, day0(), why).await.expect("escalate");
    assert_eq!(w.todos(TodoStatus::Open).await.len(), 1);

    w.engine.cancel(w.account.id, churn.id).await.expect("cancel");
    assert!(w.todos(TodoStatus::Open).await.is_empty());
    let done = w.todos(TodoStatus::Done).await;
    assert_eq!(done[0].note.as_deref(), Some("Closed with its task (cancelled)."));
}

/// A thumbs-down takes a reason, kept on the task and in its learning record;
/// a thumbs-up takes none.
#[tokio::test]
async fn a_thumbs_down_reason_is_kept_for_the_learning_loop() {
    use crate::task::feedback::{FeedbackReason, Rating};
    let w = world().await;
    let task = w.approved("churn_risk", "m_rated").await;
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    let up = w
        .engine
        .feedback_with_reason(w.account.id, task.id, Rating::Up, None, Some(FeedbackReason::WrongTone))
        .await;
    assert!(matches!(up, Err(crate::task::error::EngineError::Invalid(e)) if e.code == "invalid_reason"));
    let rated = w
        .engine
        .feedback_with_reason(
            w.account.id,
            task.id,
            Rating::Down,
            Some("she was already booked"),
            Some(FeedbackReason::WouldHaveAnyway),
        )
        .await
        .expect("rate");
    assert_eq!(
        rated.feedback.as_ref().and_then(|f| f.reason),
        Some(FeedbackReason::WouldHaveAnyway)
    );
    let record = w
        .store
        .interaction_outcome(w.account.id, task.id)
        .await
        .expect("record")
        .expect("a closed task's record");
    assert_eq!(
        record.private.feedback.and_then(|f| f.reason),
        Some(FeedbackReason::WouldHaveAnyway),
        "in the learning record"
    );
}

/// Spec §37.6: a task closed too early comes back to the owner within its attribution window,
/// its value taken back and its member's guard held again; after the window, or open, it is
/// `invalid_state`.
#[tokio::test]
async fn a_closed_task_reopens_within_its_window_and_not_after() {
    use crate::task::error::EngineError;
    let w = world().await;
    let task = w.approved("churn_risk", "m_early").await;
    let open = w.engine.reopen(w.account.id, task.id, "not done").await;
    assert!(matches!(open, Err(EngineError::InvalidState { .. })), "an open task: {open:?}");
    w.engine
        .resolve(
            w.account.id,
            task.id,
            super::super::Resolution {
                outcome: "retained".into(),
                note: None,
            },
        )
        .await
        .expect("resolve");
    w.clock.advance(days(2));
    let reopened = w.engine.reopen(w.account.id, task.id, "she never came").await.expect("reopen");
    assert_eq!(
        (reopened.status, reopened.outcome.as_deref(), reopened.attributed_value),
        (TaskStatus::Escalated, None, None)
    );
    assert_eq!(
        w.store
            .active_task(w.account.id, &task.member.id, "churn_risk")
            .await
            .expect("guard"),
        Some(task.id),
        "it holds its member's guard again"
    );
    let history = w.engine.task(w.account.id, task.id).await.expect("history");
    assert_eq!(history.log.last().map(|l| l.reason.as_str()), Some("owner_reopened"));
    // Closed again, then past its window.
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    w.clock.advance(days(60));
    let late = w.engine.reopen(w.account.id, task.id, "too late").await;
    assert!(matches!(late, Err(EngineError::InvalidState { .. })), "{late:?}");
}

/// A staff call closed too early and reopened is on the call list again.
#[tokio::test]
async fn a_reopened_staff_call_is_on_the_call_list_again() {
    let w = world().await;
    let call = w.staff_call("m_again").await;
    let todo = w.todos(TodoStatus::Open).await.remove(0);
    w.engine.complete_todo(w.account.id, todo.id, None, None).await.expect("done");
    assert!(w.task(&call).await.status.is_terminal());
    w.engine.reopen(w.account.id, call.id, "nobody reached him").await.expect("reopen");
    let open = w.todos(TodoStatus::Open).await;
    assert_eq!(open.iter().map(|t| t.task_id).collect::<Vec<_>>(), [call.id], "{open:?}");
}

/// A member known by phone only who never agreed to texts cannot be written to: the step's
/// escalation (`missing_member_email`) puts them on the call list.
#[tokio::test]
async fn a_member_known_by_phone_only_without_consent_goes_to_the_call_list() {
    let w = world().await;
    with_phone(&w, "m_phone").await;
    let task = w.approved("churn_risk", "m_phone").await;
    let why = Why::new(crate::task::reason::Reason::MissingMemberEmail);
    w.engine
        .move_to(task.clone(), TaskStatus::Escalated, day0(), why)
        .await
        .expect("escalate");
    let open = w.todos(TodoStatus::Open).await;
    let [todo] = open.as_slice() else { panic!("{open:?}") };
    assert_eq!((todo.kind, todo.task_id), (TodoKind::Call, task.id));
    assert!(todo.what.contains("have not agreed to texts"), "{}", todo.what);
}

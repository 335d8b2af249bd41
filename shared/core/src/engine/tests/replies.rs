//! The conversation loop on the in-memory store: replies reach
//! their task by the signed address, are stored first, and are answered, waited on, closed or
//! handed to the owner — whose guidance the agent then carries out.

use super::*;
use crate::conversation::reply::{ReplyAction, ReplyEvaluation};
use crate::ports::Clock;
use crate::ports::{Agent, AgentError, CompletionRequest, DraftRequest, GoalProgress, ReplyRequest};
use crate::task::Role;

/// An agent that judges every reply the same way (and drafts like the fixed agent).
struct Scripted(ReplyEvaluation);

#[async_trait::async_trait]
impl Agent for Scripted {
    async fn draft(&self, request: &DraftRequest) -> Result<crate::ports::Drafted, AgentError> {
        let guidance = request.context.get("owner_guidance").and_then(|g| g.as_str()).unwrap_or("");
        Ok(crate::ports::Drafted {
            draft: Draft {
                subject: String::new(),
                body: format!("Touch {} ({}) {guidance}", request.touch, request.tone),
            },
            confidence: 95,
        })
    }
    async fn evaluate_reply(&self, _: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        Ok(self.0.clone())
    }
    async fn evaluate_completion(&self, _: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        Err(AgentError("not used".into()))
    }
    async fn plan_next(&self, _: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, AgentError> {
        Err(AgentError("not used".into()))
    }
}

fn judged(action: ReplyAction, confidence: u8) -> ReplyEvaluation {
    ReplyEvaluation {
        action,
        outcome: None,
        confidence,
        reasoning: "scripted".into(),
        reply: None,
        wait_days: None,
        suggest_suppression: false,
        provisional: false,
        unanswered_question: None,
        other_subject: None,
    }
}

async fn world_judging(evaluation: ReplyEvaluation) -> World {
    let mut w = world().await;
    w.engine.agent = Arc::new(Scripted(evaluation));
    w
}

async fn history(w: &World, task: &Task) -> crate::task::history::TaskHistory {
    w.store.task_history(w.account.id, task.id).await.expect("read").expect("task")
}

/// Given a task that mailed a member, when they reply and the agent is sure of its answer,
/// then the reply is stored, a turn is counted, and the answer goes out in the member's thread
/// at once: an answer is not held by the member's one message a day.
#[tokio::test]
async fn a_confident_answer_goes_out_in_the_members_thread() {
    let w = world_judging(ReplyEvaluation {
        reply: Some("Great — Thursday at 6 it is.".into()),
        ..judged(ReplyAction::Reply, 80)
    })
    .await;
    let task = w.approved("churn_risk", "m_chat").await;
    w.run().await;
    let raw = w.answer_newest("m-chat@example.com", "r1@mail.example.net", "Could I come Thursday?");
    let outcome = w.engine.receive_reply(&raw).await.expect("receive");
    assert!(
        matches!(
            outcome,
            super::super::InboundOutcome::Stored {
                status: TaskStatus::Waiting,
                ..
            }
        ),
        "{outcome:?}"
    );
    w.run().await;
    assert!(!history(&w, &task).await.log.iter().any(|l| l.reason == "member_daily_limit"));
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the answer went out");
    assert_eq!(sent[1].text, "Great — Thursday at 6 it is.");
    assert_eq!(sent[1].in_reply_to.as_deref(), Some("r1@mail.example.net"));
    assert_eq!(sent[1].subject, "Re: Hello");
    let h = history(&w, &task).await;
    assert_eq!(h.task.budget.turns_used, 1);
    assert_eq!((h.task.answer.as_ref(), h.task.awaiting), (None, None));
    let roles: Vec<Role> = h.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::Agent, Role::Member, Role::System, Role::Agent]);
    assert_eq!(h.messages[1].content, "Could I come Thursday?", "quoted history is cut");
    assert_eq!(h.log.len() as u64, h.task.version, "every change logged");
}

/// Given the same reply delivered twice, then it is stored and answered once.
#[tokio::test]
async fn a_reply_delivered_twice_is_stored_and_answered_once() {
    let w = world_judging(ReplyEvaluation {
        reply: Some("Thanks!".into()),
        ..judged(ReplyAction::Reply, 90)
    })
    .await;
    let task = w.approved("churn_risk", "m_twice").await;
    w.run().await;
    let raw = w.answer_newest("m-twice@example.com", "r2@mail.example.net", "Sounds good");
    w.engine.receive_reply(&raw).await.expect("first");
    let again = w.engine.receive_reply(&raw).await.expect("second");
    assert_eq!(again, super::super::InboundOutcome::Duplicate);
    w.clock.advance(days(1));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2);
    let members = history(&w, &task).await.messages.iter().filter(|m| m.role == Role::Member).count();
    assert_eq!(members, 1);
}

/// Given two members of one gym whose mail clients chose the same Message-ID, when each
/// answers their own task, then both replies are stored: a delivery is its message to its task.
#[tokio::test]
async fn a_colliding_message_id_on_another_task_is_not_a_duplicate() {
    let w = world_judging(ReplyEvaluation {
        reply: Some("Thanks!".into()),
        ..judged(ReplyAction::Reply, 90)
    })
    .await;
    let first = w.approved("churn_risk", "m_coll1").await;
    let second = w.approved("churn_risk", "m_coll2").await;
    w.run().await;
    for to in ["m-coll1@example.com", "m-coll2@example.com"] {
        let raw = w.answer_newest(to, "same-id@mail.example.net", "See you Monday");
        let outcome = w.engine.receive_reply(&raw).await.expect("receive");
        assert!(matches!(outcome, super::super::InboundOutcome::Stored { .. }), "{to}: {outcome:?}");
    }
    for task in [&first, &second] {
        let members = history(&w, task).await.messages.iter().filter(|m| m.role == Role::Member).count();
        assert_eq!(members, 1, "{}", task.member.id);
    }
}

/// Given a member who writes "stop", then before any AI they are suppressed, every task about
/// them is cancelled as opted out, and nothing — not even an acknowledgment — is sent.
#[tokio::test]
async fn stop_suppresses_and_cancels_every_task_of_the_member_without_a_word() {
    let w = world().await; // the fixed agent fails if asked: the hard rule must not ask it
    let first = w.approved("churn_risk", "m_stop").await;
    let second = w.approved("win_back", "m_stop").await;
    w.run().await;
    let before = w.mailer.sent().len();
    let raw = w.answer_newest("m-stop@example.com", "r3@mail.example.net", "STOP");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.clock.advance(days(10));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), before, "nothing more was sent");
    for task in [&first, &second] {
        let t = w.task(task).await;
        assert_eq!(
            (t.status, t.outcome.as_deref(), t.outcome_reason.as_deref()),
            (TaskStatus::Cancelled, Some("opted_out"), Some("member_opted_out"))
        );
    }
    let email = Email::parse("m-stop@example.com").expect("email");
    assert!(w.store.is_suppressed(w.account.id, &email).await.expect("read"));
}

/// Given a reply whose address was tampered with, then it routes nowhere and changes nothing.
#[tokio::test]
async fn a_forged_reply_address_changes_nothing() {
    let w = world_judging(judged(ReplyAction::Reply, 99)).await;
    let task = w.approved("churn_risk", "m_forge").await;
    w.run().await;
    let raw = String::from_utf8(w.answer_newest("m-forge@example.com", "r4@mail.example.net", "hi")).expect("utf8");
    let forged = raw.replacen("reply+", "reply+0", 1);
    let before = w.task(&task).await;
    let outcome = w.engine.receive_reply(forged.as_bytes()).await.expect("receive");
    assert!(matches!(outcome, super::super::InboundOutcome::Unrouted(_)), "{outcome:?}");
    assert_eq!(w.task(&task).await, before);
    assert!(history(&w, &task).await.messages.iter().all(|m| m.role != Role::Member));
}

/// Given an answer the agent is unsure of, then the owner gets the task with the draft; their
/// guidance resumes it and the agent's message from it goes out.
#[tokio::test]
async fn an_unsure_answer_escalates_with_its_draft_and_guidance_resumes_the_task() {
    let w = world_judging(ReplyEvaluation {
        reply: Some("Maybe we can refund you?".into()),
        unanswered_question: Some("Can I get a refund?".into()),
        ..judged(ReplyAction::Reply, 30)
    })
    .await;
    let task = w.approved("churn_risk", "m_unsure").await;
    w.run().await;
    let raw = w.answer_newest("m-unsure@example.com", "r5@mail.example.net", "Can I get a refund?");
    w.engine.receive_reply(&raw).await.expect("receive");
    let escalated = w.task(&task).await;
    assert_eq!(escalated.status, TaskStatus::Escalated);
    assert_eq!(escalated.outcome_reason.as_deref(), Some("low_confidence_on_reply"));
    let context = escalated.escalation.clone().expect("context");
    assert_eq!(context.draft_reply.as_deref(), Some("Maybe we can refund you?"));
    assert_eq!(context.question.as_deref(), Some("Can I get a refund?"));
    assert!(context.conversation_snapshot.iter().any(|m| m.role == Role::Member));
    assert_eq!(w.mailer.sent().len(), 1);

    let resumed = w
        .engine
        .guidance(w.account.id, task.id, "No refunds, but we can pause the membership")
        .await
        .expect("guidance");
    assert_eq!(resumed.status, TaskStatus::Executing);
    assert!(resumed.escalation.is_none());
    w.clock.advance(days(1));
    w.run().await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the guided message went out");
    assert!(
        sent[1].text.contains("No refunds, but we can pause the membership"),
        "{}",
        sent[1].text
    );
    let after = history(&w, &task).await;
    assert_eq!(after.task.status, TaskStatus::Waiting);
    assert!(after.messages.iter().any(|m| m.role == Role::Owner));
    assert!(after.log.iter().any(|l| l.reason == "owner_provided_guidance"));
    let again = w.engine.guidance(w.account.id, task.id, "more").await;
    assert!(
        matches!(again, Err(crate::task::error::EngineError::InvalidTransition { .. })),
        "only escalated tasks take guidance"
    );
}

/// Given a verbal commitment, then the task closes with the type's provisional outcome.
#[tokio::test]
async fn a_dated_commitment_closes_with_the_verbal_outcome() {
    let w = world_judging(ReplyEvaluation {
        outcome: Some("verbal_commitment".into()),
        provisional: true,
        ..judged(ReplyAction::Close, 85)
    })
    .await;
    let task = w.approved("churn_risk", "m_commit").await;
    w.run().await;
    let raw = w.answer_newest("m-commit@example.com", "r6@mail.example.net", "See you Monday at 6pm");
    w.engine.receive_reply(&raw).await.expect("receive");
    let done = w.task(&task).await;
    assert_eq!(
        (done.status, done.outcome.as_deref(), done.outcome_reason.as_deref()),
        (TaskStatus::Completed, Some("verbal_commitment"), Some("verbal_commitment"))
    );
    assert!(done.provisional, "verified by a signal within its window, or downgraded");
    assert!(done.attribution_until.is_some(), "attribution watches it");
}

/// Given a task that went dormant, when the member replies, then it wakes and the reply is
/// read (§19.2); given a closed task, a late reply is kept and the task stays closed.
#[tokio::test]
async fn a_reply_wakes_a_dormant_task_and_a_late_one_leaves_a_closed_task_closed() {
    let w = world_judging(ReplyEvaluation {
        wait_days: Some(5),
        ..judged(ReplyAction::Wait, 70)
    })
    .await;
    let task = w.approved("win_back", "m_sleepy").await;
    w.run().await;
    for _ in 0..6 {
        w.clock.advance(days(8));
        w.run().await;
    }
    assert_eq!(w.task(&task).await.status, TaskStatus::Dormant);
    let raw = w.answer_newest("m-sleepy@example.com", "r7@mail.example.net", "Back from travelling!");
    w.engine.receive_reply(&raw).await.expect("receive");
    let woke = history(&w, &task).await;
    assert_eq!(woke.task.status, TaskStatus::Waiting);
    assert!(woke.log.iter().any(|l| l.reason == "member_replied_while_dormant"));
    assert!(woke.log.iter().any(|l| l.reason == "member_reply_wait"));
    assert_eq!(woke.task.next_action_at, Some(w.clock.now() + days(5)));

    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    let raw = w.answer_newest("m-sleepy@example.com", "r8@mail.example.net", "Hello again?");
    w.engine.receive_reply(&raw).await.expect("receive");
    let closed = history(&w, &task).await;
    assert_eq!(closed.task.status, TaskStatus::Cancelled);
    assert!(closed.log.iter().any(|l| l.reason == "late_reply_owner_notified"));
    assert_eq!(closed.messages.iter().filter(|m| m.role == Role::Member).count(), 2);
}

/// Given a member who replies at 07:00 (before the send window) with something the agent
/// answers, then the answer goes as soon as the window opens (a few minutes past 08:00), not in
/// a follow-up's afternoon hours: an answer is never held for them.
#[tokio::test]
async fn an_answer_goes_when_the_window_opens_not_in_the_afternoon() {
    let w = world_judging(ReplyEvaluation {
        reply: Some("Yes, the 6 am class has room.".into()),
        ..judged(ReplyAction::Reply, 80)
    })
    .await;
    let task = w.approved("churn_risk", "m_early").await;
    w.run().await;
    w.clock.set(at("2026-11-03T12:00:00Z")); // 07:00 in New York, the next day
    let raw = w.answer_newest("m-early@example.com", "r9@mail.example.net", "Is there room at 6?");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "the window is closed at 07:00");
    let due = w.run_when_due(&task).await;
    let local = w.local(due);
    assert_eq!(local.hour(), 8, "at the opening, not the afternoon: {local}");
    assert!(local.minute() <= 20, "{local}");
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the answer went out");
    assert_eq!(sent[1].text, "Yes, the 6 am class has room.");
}

/// What an agent says of a firm "I won't be renewing": close as churned, with a short kind
/// parting note.
fn not_renewing() -> ReplyEvaluation {
    ReplyEvaluation {
        outcome: Some("churned".into()),
        reply: Some("Thank you for letting me know. The door is always open.".into()),
        ..judged(ReplyAction::Close, 75)
    }
}

/// Given a member who answers "I won't be renewing", when the agent closes with a parting
/// note, then the member reads that one note in their thread at once, the task is completed
/// as churned (not escalated, not silently closed), and nothing more is ever sent.
#[tokio::test]
async fn a_member_who_will_not_renew_is_thanked_once_and_the_conversation_closes() {
    let w = world_judging(not_renewing()).await;
    let task = w.approved("churn_risk", "m_leaving").await;
    w.run().await;
    let raw = w.answer_newest("m-leaving@example.com", "r-leave@mail.example.net", "I won't be renewing, thanks.");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the parting note went out");
    assert_eq!(sent[1].text, "Thank you for letting me know. The door is always open.");
    assert_eq!(sent[1].in_reply_to.as_deref(), Some("r-leave@mail.example.net"));
    let h = history(&w, &task).await;
    assert_eq!(
        (h.task.status, h.task.outcome.as_deref(), h.task.outcome_reason.as_deref()),
        (TaskStatus::Completed, Some("churned"), Some("closed_after_parting_note"))
    );
    assert!(h.task.parting.is_none() && h.task.answer.is_none(), "{:?}", h.task);
    let reasons: Vec<&str> = h.log.iter().map(|l| l.reason.as_str()).collect();
    assert!(reasons.contains(&"parting_note_due"), "{reasons:?}");
    assert!(!reasons.iter().any(|r| r.contains("escalat")), "{reasons:?}");
    assert_eq!(h.log.len() as u64, h.task.version, "every change logged");
    for _ in 0..5 {
        w.clock.advance(days(7));
        w.run().await;
    }
    assert_eq!(w.mailer.sent().len(), 2, "nothing after the parting note");
}

/// Given the same answer in the evening, after the send window, then the note waits for the
/// morning and the task closes once it has left — the member is not left in silence.
#[tokio::test]
async fn a_parting_note_read_after_hours_leaves_in_the_morning_and_then_the_task_closes() {
    let w = world_judging(not_renewing()).await;
    let task = w.approved("churn_risk", "m_late").await;
    w.run().await;
    // 21:30 in New York: past the send window.
    w.clock.set(at("2026-11-03T02:30:00Z"));
    let raw = w.answer_newest("m-late@example.com", "r-late@mail.example.net", "I've decided not to continue.");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "nothing at night");
    assert_eq!(w.task(&task).await.status, TaskStatus::Waiting);
    w.clock.set(at("2026-11-03T14:00:00Z"));
    w.run().await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the note left in the morning");
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Completed, Some("churned")));
}

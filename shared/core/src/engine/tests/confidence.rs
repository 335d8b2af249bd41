//! Confidence at every step, goal progress (§37), a parent's
//! escalation holding its subtasks (§17.2), and the owner's word on outcomes (§27.4, §37.6) —
//! each with a scripted agent whose answers sit just under and just over the thresholds.

use std::sync::Mutex;

use super::*;
use crate::conversation::reply::{ReplyAction, ReplyEvaluation};
use crate::ports::{Agent, AgentError, Clock, CompletionRequest, DraftRequest, Drafted, GoalProgress, ReplyRequest};
use crate::task::feedback::Rating;
use crate::task::progress::{EvidenceType, RecommendedAction};
use crate::task::task_type::definition;

/// An agent whose every answer is set by the test; it remembers the prompts it was given.
struct Scripted {
    draft_confidence: u8,
    evaluation: ReplyEvaluation,
    progress: Option<GoalProgress>,
    prompts: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Agent for Scripted {
    async fn draft(&self, request: &DraftRequest) -> Result<Drafted, AgentError> {
        self.prompts.lock().expect("prompts").push(request.system_prompt.clone());
        Ok(Drafted {
            draft: Draft {
                subject: String::new(),
                body: format!("Touch {} ({})", request.touch, request.tone),
            },
            confidence: self.draft_confidence,
        })
    }
    async fn evaluate_reply(&self, _: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        Ok(self.evaluation.clone())
    }
    async fn evaluate_completion(&self, _: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        self.progress.clone().ok_or_else(|| AgentError("no progress scripted".into()))
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
        wait_days: Some(2),
        suggest_suppression: false,
        provisional: false,
        unanswered_question: None,
        other_subject: None,
    }
}

fn progress(pct: u8, outcome: &str, confidence: u8, evidence_type: EvidenceType) -> GoalProgress {
    GoalProgress {
        progress_pct: pct,
        current_outcome: outcome.into(),
        confidence,
        evidence_type,
        evidence: "from the conversation".into(),
        recommended_action: RecommendedAction::Continue,
        milestones: Vec::new(),
        risks: Vec::new(),
    }
}

async fn world_with(draft_confidence: u8, evaluation: ReplyEvaluation, progress: Option<GoalProgress>) -> (World, Arc<Scripted>) {
    let mut w = world().await;
    let agent = Arc::new(Scripted {
        draft_confidence,
        evaluation,
        progress,
        prompts: Mutex::new(Vec::new()),
    });
    w.engine.agent = agent.clone();
    (w, agent)
}

/// Run each time the task is due until it leaves `waiting` for good or its second touch went
/// out.
async fn until_follow_up(w: &World, task: &Task) -> Task {
    for _ in 0..14 {
        w.run_when_due(task).await;
        let now = w.task(task).await;
        if now.touch >= 2 || now.status != TaskStatus::Waiting {
            return now;
        }
    }
    w.task(task).await
}

async fn reasons(w: &World, task: &Task) -> Vec<String> {
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    history.log.into_iter().map(|l| l.reason).collect()
}

/// Given each mailing type's threshold, when the agent drafts a follow-up just under it, then
/// nothing is sent and the owner gets the task with the draft; just at it, it is sent.
#[tokio::test]
async fn a_follow_up_under_the_types_threshold_goes_to_the_owner_with_its_draft() {
    for task_type in ["payment_recovery", "churn_risk", "win_back", "lead_followup"] {
        let threshold = definition(task_type).auto_threshold;
        for (confidence, sent) in [(threshold - 1, false), (threshold, true)] {
            let (w, _) = world_with(confidence, judged(ReplyAction::Wait, 90), None).await;
            let task = w.approved(task_type, "m_follow").await;
            w.run().await;
            assert_eq!(w.mailer.sent().len(), 1, "{task_type}: the approved first touch");
            let after = until_follow_up(&w, &task).await;
            if sent {
                assert_eq!((after.touch, w.mailer.sent().len()), (2, 2), "{task_type} at {confidence}");
                let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
                let logged = format!("(drafted at confidence {confidence})");
                assert!(
                    history
                        .log
                        .iter()
                        .any(|l| l.reason == "message_sent" && l.detail.as_deref().is_some_and(|d| d.contains(&logged))),
                    "{task_type}: the follow-up's confidence is logged"
                );
                continue;
            }
            assert_eq!(w.mailer.sent().len(), 1, "{task_type} at {confidence}: nothing more sent");
            assert_eq!(after.status, TaskStatus::Escalated, "{task_type} at {confidence}");
            assert_eq!(after.outcome_reason.as_deref(), Some("low_confidence_follow_up"));
            let context = after.escalation.expect("context");
            assert!(
                context.draft_reply.as_deref().is_some_and(|d| d.starts_with("Touch 1")),
                "the draft is attached"
            );
            assert_eq!(after.budget.messages_used, 1, "no message counted for the held draft");
        }
    }
}

/// Given an escalated task and the owner's guidance, when the agent's answer from it is just
/// under the type's threshold, then it goes back to the owner with the draft; at it, it is sent.
#[tokio::test]
async fn an_answer_from_guidance_under_the_threshold_goes_back_to_the_owner() {
    let threshold = definition("churn_risk").auto_threshold;
    for (confidence, sent) in [(threshold - 1, false), (threshold, true)] {
        let (w, _) = world_with(confidence, judged(ReplyAction::Escalate, 90), None).await;
        let task = w.approved("churn_risk", "m_guided").await;
        w.run().await;
        let raw = w.answer_newest("m-guided@example.com", "g1@mail.example.net", "Are you open on Sunday?");
        w.engine.receive_reply(&raw).await.expect("receive");
        w.run().await;
        assert_eq!(w.task(&task).await.status, TaskStatus::Escalated);
        w.engine.guidance(w.account.id, task.id, "Yes, 8 to noon").await.expect("guidance");
        w.clock.advance(days(1));
        w.run().await;
        let after = w.task(&task).await;
        if sent {
            assert_eq!(w.mailer.sent().len(), 2, "at {confidence}: the answer went out");
            continue;
        }
        assert_eq!(w.mailer.sent().len(), 1, "at {confidence}: nothing sent");
        assert_eq!(
            (after.status, after.outcome_reason.as_deref()),
            (TaskStatus::Escalated, Some("low_confidence_guidance_answer"))
        );
        assert!(
            after
                .escalation
                .and_then(|e| e.draft_reply)
                .is_some_and(|d| d.contains("owner_guided")),
            "the draft goes with it"
        );
    }
}

/// Given a member's reply the agent would close on, when its confidence is 59 the task waits
/// (logged), and at 60 it closes.
#[tokio::test]
async fn a_close_under_60_never_closes_the_task() {
    for (confidence, closes) in [(59, false), (60, true)] {
        let evaluation = ReplyEvaluation {
            outcome: Some("retained".into()),
            ..judged(ReplyAction::Close, confidence)
        };
        let (w, _) = world_with(95, evaluation, None).await;
        let task = w.approved("churn_risk", "m_close").await;
        w.run().await;
        let raw = w.answer_newest("m-close@example.com", "c1@mail.example.net", "I think I'm good");
        w.engine.receive_reply(&raw).await.expect("receive");
        w.run().await;
        let after = w.task(&task).await;
        if closes {
            assert_eq!(after.status, TaskStatus::Completed, "at {confidence}");
            continue;
        }
        assert_eq!(after.status, TaskStatus::Waiting, "at {confidence}: not closed");
        assert!(reasons(&w, &task).await.contains(&"low_confidence_close_waits".to_owned()));
        assert!(after.outcome.is_none());
    }
}

/// Given a reply that leaves the task waiting, then the completion evaluation is asked, its
/// progress is kept on the task and given to the agent's next prompt; when the budget then
/// runs out on that warm but uncommitted conversation, the owner gets it with
/// the member's words, rather than it closing provisionally.
#[tokio::test]
async fn goal_progress_is_kept_shown_to_the_agent_and_a_stalled_conversation_goes_to_the_owner() {
    let evaluation = judged(ReplyAction::Wait, 80);
    let partial = progress(40, "engaged_conversation", 55, EvidenceType::Inferred);
    let (w, agent) = world_with(95, evaluation, Some(partial.clone())).await;
    let task = w.approved("churn_risk", "m_progress").await;
    w.run().await;
    let raw = w.answer_newest("m-progress@example.com", "p1@mail.example.net", "Been busy, maybe soon");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    let waiting = w.task(&task).await;
    assert_eq!(waiting.status, TaskStatus::Waiting);
    assert_eq!(waiting.goal_progress.as_ref(), Some(&partial));
    let view = serde_json::to_value(crate::contract::TaskView::from(&waiting)).expect("json");
    assert_eq!(view["goal_progress"]["percent"], 40);
    assert_eq!(view["goal_progress"]["outcome"], "engaged_conversation");
    // Every later touch is drafted with the progress in its prompt, until the budget is spent.
    for _ in 0..30 {
        w.clock.advance(days(1));
        w.run().await;
        if w.task(&task).await.status != TaskStatus::Waiting {
            break;
        }
    }
    let prompts = agent.prompts.lock().expect("prompts").clone();
    assert!(
        !prompts.is_empty() && prompts.iter().all(|p| p.contains("# Goal progress so far\n40%")),
        "{prompts:?}"
    );
    let stalled = w.task(&task).await;
    assert_eq!(
        (stalled.status, stalled.outcome_reason.as_deref(), stalled.provisional),
        (TaskStatus::Escalated, Some("conversation_stalled"), false)
    );
    let context = stalled.escalation.expect("context");
    assert_eq!(context.member_words.as_deref(), Some("Been busy, maybe soon"));
    assert!(
        context.summary.starts_with("The conversation is warm but stalling"),
        "{}",
        context.summary
    );
}

/// Given a member's first reply that the agent answers, then the completion evaluation runs
/// too: the task shows its goal progress from the first answer on.
#[tokio::test]
async fn goal_progress_shows_after_the_first_answer() {
    let evaluation = ReplyEvaluation {
        reply: Some("We're open 6am to 8pm.".into()),
        ..judged(ReplyAction::Reply, 90)
    };
    let seen = progress(20, "engaged_conversation", 50, EvidenceType::Inferred);
    let (w, _) = world_with(95, evaluation, Some(seen.clone())).await;
    let task = w.approved("churn_risk", "m_asks").await;
    w.run().await;
    let raw = w.answer_newest("m-asks@example.com", "a1@mail.example.net", "When are you open?");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    let after = w.task(&task).await;
    assert_eq!(after.goal_progress.as_ref(), Some(&seen));
    assert!(
        after.answer.is_some() || w.mailer.sent().len() == 2,
        "the answer goes out as decided (today's message to the member is used: it waits)"
    );
    let view = serde_json::to_value(crate::contract::TaskView::from(&after)).expect("json");
    for key in ["percent", "confidence", "evidence", "milestones", "risks"] {
        assert!(!view["goal_progress"][key].is_null(), "{key}: {view}");
    }
}

/// Given a reply that would leave the task waiting, when the evaluator recommends escalating
/// the owner gets the task, and when it recommends closing as neutral (from the close floor
/// up, with a neutral or negative outcome) the task closes with it.
#[tokio::test]
async fn the_evaluators_escalate_and_close_as_neutral_are_carried_out() {
    let advice = |outcome: &str, confidence, action| GoalProgress {
        recommended_action: action,
        ..progress(0, outcome, confidence, EvidenceType::Inferred)
    };
    let cases = [
        (
            advice("engaged_conversation", 40, RecommendedAction::Escalate),
            TaskStatus::Escalated,
            "evaluator_recommends_owner",
        ),
        (
            advice("churned", 70, RecommendedAction::CloseAsNeutral),
            TaskStatus::Completed,
            "evaluator_closed_as_neutral",
        ),
        (
            advice("churned", 55, RecommendedAction::CloseAsNeutral),
            TaskStatus::Waiting,
            "member_reply_wait",
        ),
    ];
    for (seen, status, reason) in cases {
        let (w, _) = world_with(95, judged(ReplyAction::Wait, 80), Some(seen.clone())).await;
        let task = w.approved("churn_risk", "m_advice").await;
        w.run().await;
        let raw = w.answer_newest("m-advice@example.com", "v1@mail.example.net", "I moved to another city");
        w.engine.receive_reply(&raw).await.expect("receive");
        let after = w.task(&task).await;
        assert_eq!(after.status, status, "{seen:?}");
        let logged = reasons(&w, &task).await;
        assert_eq!(logged.last().map(String::as_str), Some(reason), "{logged:?}");
        if status == TaskStatus::Completed {
            assert_eq!(after.outcome.as_deref(), Some("churned"));
        }
    }
}

/// Given a reply that leaves the task waiting, when the evaluator sees a concrete signal the
/// task completes from 80 (at 79 it keeps waiting), and a finished goal from 70.
#[tokio::test]
async fn the_evaluator_closes_on_a_concrete_signal_from_80_and_a_finished_goal_from_70() {
    let cases = [
        (progress(90, "retained", 79, EvidenceType::ConcreteSignal), false),
        (progress(90, "retained", 80, EvidenceType::ConcreteSignal), true),
        (progress(100, "retained", 69, EvidenceType::PartialSignal), false),
        (progress(100, "retained", 70, EvidenceType::PartialSignal), true),
    ];
    for (seen, closes) in cases {
        let (w, _) = world_with(95, judged(ReplyAction::Wait, 80), Some(seen.clone())).await;
        let task = w.approved("churn_risk", "m_signal").await;
        w.run().await;
        let raw = w.answer_newest("m-signal@example.com", "s1@mail.example.net", "Came in today!");
        w.engine.receive_reply(&raw).await.expect("receive");
        w.run().await;
        let after = w.task(&task).await;
        let expected = if closes {
            (TaskStatus::Completed, Some("goal_reached_by_evaluation"))
        } else {
            (TaskStatus::Waiting, None)
        };
        assert_eq!((after.status, after.outcome_reason.as_deref()), expected, "{seen:?}");
        assert_eq!(after.goal_progress.as_ref(), Some(&seen));
    }
}

/// Given a parent escalated with an active subtask, then the subtask sends nothing and logs
/// why; when the owner's guidance resumes the parent, the subtask is due again at once.
#[tokio::test]
async fn subtasks_hold_while_their_parent_is_escalated_and_resume_with_it() {
    let (w, _) = world_with(95, judged(ReplyAction::Wait, 80), None).await;
    let parent = w.approved("win_back", "m_family").await;
    let input = w.new_task("churn_risk", "m_family").await;
    let child = w
        .engine
        .create_subtask(
            &w.account,
            parent.id,
            input,
            crate::task::subtasks::Requirement::Optional,
            Default::default(),
        )
        .await
        .expect("subtask");
    let child = w.engine.approve(w.account.id, child.id, None).await.expect("approve");
    let current = w.task(&parent).await;
    let why = crate::task::transition::Why::new(Reason::MemberQuestionNeedsOwner);
    w.engine
        .move_to(current, TaskStatus::Escalated, w.clock.now(), why)
        .await
        .expect("escalate");
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "nothing sent while the parent is escalated");
    let held = w.task(&child).await;
    assert_eq!(held.status, TaskStatus::Ready);
    assert_eq!(
        reasons(&w, &child).await.last().map(String::as_str),
        Some("held_for_escalated_parent")
    );
    assert!(held.next_action_at > Some(w.clock.now()));

    w.engine.guidance(w.account.id, parent.id, "Go ahead").await.expect("guidance");
    let resumed = w.task(&child).await;
    assert_eq!(resumed.next_action_at, Some(w.clock.now()), "due again with its parent");
    assert_eq!(reasons(&w, &child).await.last().map(String::as_str), Some("resumed_with_parent"));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "the subtask's first touch went out");
}

/// Given closed and open tasks, then only a closed or escalated one takes the owner's rating
/// (stored and logged), and a closed one's outcome can be corrected: re-valued and logged.
#[tokio::test]
async fn the_owner_rates_closed_tasks_and_corrects_their_outcome() {
    let (w, _) = world_with(95, judged(ReplyAction::Wait, 80), None).await;
    let open = w.approved("churn_risk", "m_rated").await;
    let refused = w.engine.feedback(w.account.id, open.id, Rating::Up, None).await;
    assert!(matches!(
        refused,
        Err(crate::task::error::EngineError::InvalidState {
            status: TaskStatus::Ready,
            ..
        })
    ));
    let refused = w.engine.correct_outcome(w.account.id, open.id, "retained", None).await;
    assert!(matches!(refused, Err(crate::task::error::EngineError::InvalidState { .. })));

    let closed = w.engine.cancel(w.account.id, open.id).await.expect("cancel");
    let rated = w
        .engine
        .feedback(w.account.id, closed.id, Rating::Down, Some("  she had already renewed "))
        .await
        .expect("rate");
    let feedback = rated.feedback.clone().expect("feedback");
    assert_eq!(
        (feedback.rating, feedback.comment.as_deref()),
        (Rating::Down, Some("she had already renewed"))
    );
    assert_eq!(rated.status, TaskStatus::Cancelled, "a rating changes no status");

    let bad = w.engine.correct_outcome(w.account.id, closed.id, "paid", None).await;
    assert!(matches!(bad, Err(crate::task::error::EngineError::Invalid(e)) if e.code == "invalid_outcome"));
    let corrected = w
        .engine
        .correct_outcome(w.account.id, closed.id, "retained", Some("she came back"))
        .await
        .expect("correct");
    assert_eq!(corrected.outcome.as_deref(), Some("retained"));
    let price = w.account.settings.avg_membership_price;
    assert_eq!(
        corrected.attributed_value,
        crate::task::attribution::value_of(definition("churn_risk"), "retained", price)
    );
    let log = reasons(&w, &closed).await;
    assert!(
        log.ends_with(&["owner_feedback_down".to_owned(), "owner_corrected_outcome".to_owned()]),
        "{log:?}"
    );

    let mut metrics = crate::owner::metrics::DailyMetrics::default();
    let history = w.store.task_history(w.account.id, closed.id).await.expect("read").expect("task");
    for entry in history.log {
        metrics.count(&crate::task::history::ActivityEntry {
            task_id: closed.id,
            task_type: closed.task_type.clone(),
            member_id: closed.member.id.clone(),
            member_name: None,
            entry,
        });
    }
    assert_eq!((metrics.feedback_up, metrics.feedback_down, metrics.outcome_corrections), (0, 1, 1));
}

/// Issue 42, "the owner's voice is kept": the owner rewrote the first touch before approving
/// it. Given that, when the follow-up is due, then it is drafted (told what the owner wrote)
/// and waits for their review instead of going out canned; approved, it goes out as approved,
/// and the touch after it waits for review again.
#[tokio::test]
async fn a_thread_whose_first_touch_the_owner_rewrote_waits_for_them_at_every_later_touch() {
    let (w, _) = world_with(95, judged(ReplyAction::Wait, 90), None).await;
    let input = w.new_task("churn_risk", "m_alex").await;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    let own = Draft {
        subject: "Your shoulder".into(),
        body: "Hi Alex,\n\nIs your shoulder still bugging you?\n\nRosa".into(),
    };
    w.engine.approve(w.account.id, task.id, Some(own.clone())).await.expect("approve");
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "the owner's first touch");
    let held = until_follow_up(&w, &task).await;
    assert_eq!(held.status, TaskStatus::PendingReview, "{:?}", reasons(&w, &task).await);
    assert_eq!(w.mailer.sent().len(), 1, "nothing canned went out");
    assert!(reasons(&w, &task).await.iter().any(|r| r == "owners_voice_follow_up"));
    let drafted = held.draft.clone().expect("the follow-up's draft, for the owner to read");
    assert!(drafted.body.starts_with("Touch 1"), "{drafted:?}");
    assert_eq!(held.budget.messages_used, 1, "no message counted for the held draft");

    let approved = w.engine.approve(w.account.id, task.id, None).await.expect("approve the follow-up");
    assert_eq!(approved.reviewed_touch, Some(1));
    w.run_when_due(&approved).await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the reviewed follow-up went out");
    let again = until_follow_up(&w, &task).await;
    assert_eq!(again.status, TaskStatus::PendingReview, "the third touch waits too");
    assert_eq!(w.mailer.sent().len(), 2);
}

/// Given a follow-up held for the owner, when they approve it with the words of the message
/// already sent (pasted again, spaced otherwise), then it is refused `repeats_sent_message`
/// and nothing changes: the member never gets one message twice. Other words go out.
#[tokio::test]
async fn a_held_follow_up_approved_with_the_first_messages_words_is_refused() {
    let (w, _) = world_with(95, judged(ReplyAction::Wait, 90), None).await;
    let input = w.new_task("churn_risk", "m_twice").await;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    let own = Draft {
        subject: "Saturday team workout".into(),
        body: "Hi Sam,\n\nWe're starting a Saturday team workout at 10am. Fancy it?\n\nRosa".into(),
    };
    w.engine.approve(w.account.id, task.id, Some(own.clone())).await.expect("approve");
    w.run().await;
    let held = until_follow_up(&w, &task).await;
    assert_eq!(held.status, TaskStatus::PendingReview);
    let again = Draft {
        body: own.body.replace("\n\n", "\n").replace("Fancy", "fancy"),
        ..own.clone()
    };
    match w.engine.approve(w.account.id, task.id, Some(again)).await {
        Err(crate::task::error::EngineError::Invalid(e)) => assert_eq!(e.code, "repeats_sent_message", "{e:?}"),
        other => panic!("the same words again: {other:?}"),
    }
    let unchanged = w.task(&task).await;
    assert_eq!((unchanged.status, unchanged.version), (TaskStatus::PendingReview, held.version));
    let other = Draft {
        body: "Hi Sam,\n\nJust checking you saw my note about Saturday.\n\nRosa".into(),
        ..own
    };
    let approved = w.engine.approve(w.account.id, task.id, Some(other)).await.expect("new words");
    w.run_when_due(&approved).await;
    assert_eq!(w.mailer.sent().len(), 2);
}

/// An agent that writes the same message at every touch.
struct Parrot;

impl Parrot {
    fn words() -> Draft {
        Draft {
            subject: "Checking in".into(),
            body: "Hi Sam,\n\nHow is training going?\n\nRosa".into(),
        }
    }
}

#[async_trait::async_trait]
impl Agent for Parrot {
    async fn draft(&self, _: &DraftRequest) -> Result<Drafted, AgentError> {
        Ok(Drafted {
            draft: Self::words(),
            confidence: 99,
        })
    }
    async fn evaluate_reply(&self, _: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        Ok(judged(ReplyAction::Wait, 90))
    }
    async fn evaluate_completion(&self, _: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        Err(AgentError("not used".into()))
    }
    async fn plan_next(&self, _: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, AgentError> {
        Err(AgentError("not used".into()))
    }
}

/// Given an agent that drafts its follow-up word for word as the first message, when the
/// follow-up is due, then nothing goes to the member: the task comes to the owner with the
/// draft and the reason, the member having had the message once.
#[tokio::test]
async fn a_follow_up_the_agent_wrote_as_the_first_message_again_goes_to_the_owner() {
    let mut w = world().await;
    w.engine.agent = Arc::new(Parrot);
    let mut input = w.new_task("churn_risk", "m_parrot").await;
    input.draft = Some(Parrot::words());
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "the first message");
    let after = until_follow_up(&w, &task).await;
    assert_eq!(w.mailer.sent().len(), 1, "the same words never go twice");
    assert_eq!(after.status, TaskStatus::Escalated, "{:?}", reasons(&w, &task).await);
    assert!(reasons(&w, &task).await.iter().any(|r| r == "draft_repeats_sent_message"));
}

/// A task the owner approved as drafted keeps its cadence: its follow-ups go out on their own.
#[tokio::test]
async fn a_thread_approved_as_drafted_sends_its_follow_ups_on_its_own() {
    let (w, _) = world_with(95, judged(ReplyAction::Wait, 90), None).await;
    let task = w.approved("churn_risk", "m_asis").await;
    w.run().await;
    let after = until_follow_up(&w, &task).await;
    assert_eq!((after.touch, w.mailer.sent().len()), (2, 2));
    assert!(!reasons(&w, &task).await.iter().any(|r| r == "owners_voice_follow_up"));
}

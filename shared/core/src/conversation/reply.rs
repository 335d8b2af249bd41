//! What the task does with what it awaits, decided: a member's
//! reply — honour a stop, answer, wait, close (as won, or as a provisional verbal commitment),
//! or hand it to the owner — and the owner's guidance, turned into the next message. Pure: the
//! engine (`engine/inbound/replies.rs`) reads the conversation, asks the agent through the AI budget
//! when [`before_judging`] says so, and carries the [`ReplyDecision`] out.
//!
//! Stop means stop before any AI: a reply that asks to stop is never shown to the agent.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::conversation::opt_out;
use crate::conversation::threat;
use crate::kernel::limits::{
    self, CLOSE_MIN_CONFIDENCE, ESCALATION_SNAPSHOT_MESSAGES, REPLY_DEFAULT_WAIT_DAYS, REPLY_MAX_WAIT_DAYS, REPLY_MIN_CONFIDENCE,
};
use crate::task::escalation;
use crate::task::reason::Reason;
use crate::task::task_type;
use crate::task::transition::Why;
use crate::task::{ConversationMessage, Drafted, EscalationContext, Role, Task};

/// What the task does with a reply or with the owner's guidance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyDecision {
    /// The task awaited a reply but there is none: it stops waiting for one.
    NothingToRead,
    /// Member-level stop: suppress the address and cancel every task of the member,
    /// sending nothing, not even an acknowledgment.
    HonourStop(Stop),
    /// `text` becomes the task's next touch, due now, through every gate a follow-up passes.
    Answer { text: String, why: Why },
    /// Nothing to say yet: the step comes back at `until`.
    Wait { until: Timestamp, why: Why },
    /// The reply reached one of the type's outcomes (a verbal commitment is provisional).
    Close { why: Why },
    /// The member has decided to leave and the agent has a short parting note for them
    /// (thanks, the door is open): `text` goes out as the task's last touch, through every
    /// gate, and the task closes with `parting`'s outcome once it has left.
    Part { text: String, parting: crate::task::Parting },
    /// The owner takes it, with what blocked the agent.
    Escalate { reason: Reason, blocker: Blocker },
    /// The reply threatens legal action or is abusive: the member is
    /// suppressed, and the task goes to the owner at once with a critical notice; the agent
    /// never answers it.
    Threatened(threat::Threat),
}

/// Who asked to stop: the suppression's reason, and the detail the log gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    pub source: &'static str,
    pub detail: String,
}

impl Stop {
    /// The member asked to stop in their own words.
    pub fn member_request() -> Self {
        Self {
            source: "member_request",
            detail: "they asked in their own words to get no more messages".into(),
        }
    }

    /// The agent read a stop (or hostility) that the keywords missed.
    pub fn agent_suggested(judged: String) -> Self {
        Self {
            source: "agent_suggested",
            detail: judged,
        }
    }
}

/// What reading an awaited reply starts with.
#[derive(Clone, Debug, PartialEq)]
pub enum Reading<'a> {
    /// The agent judges this reply (one AI call, within the budget).
    Judge(&'a ConversationMessage),
    /// Decided before any AI.
    Decided(ReplyDecision),
}

/// What blocked the agent, for the escalation's context.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blocker {
    pub detail: Option<String>,
    /// The member's question the agent could not answer.
    pub question: Option<String>,
    /// The agent's best answer, for the owner to edit or send as guidance.
    pub draft_reply: Option<String>,
    /// The member wrote about something else than this task.
    pub other_subject: bool,
}

impl Blocker {
    /// Blocked for `detail`, and nothing more is known.
    pub fn because(detail: impl Into<String>) -> Self {
        Self {
            detail: Some(detail.into()),
            ..Self::default()
        }
    }

    /// Blocked on what the agent made of the reply.
    pub fn from_evaluation(evaluation: &ReplyEvaluation, detail: String) -> Self {
        Self {
            detail: Some(detail),
            question: evaluation.unanswered_question.clone(),
            draft_reply: evaluation.reply.clone().filter(|r| !r.trim().is_empty()),
            other_subject: evaluation.other_subject.is_some(),
        }
    }
}

/// The reply a task awaits: the member's latest message.
pub fn awaited_reply(conversation: &[ConversationMessage]) -> Option<&ConversationMessage> {
    conversation.iter().rev().find(|m| m.role == Role::Member)
}

/// Whether the member's latest message asks to stop.
pub fn says_stop(conversation: &[ConversationMessage]) -> bool {
    awaited_reply(conversation).is_some_and(|m| opt_out::is_opt_out(member_words(m)))
}

/// What the member wrote, as read: their whole unquoted message when reading it kept less
/// than a sentence (`ConversationMessage::original`), else the reading.
pub fn member_words(message: &ConversationMessage) -> &str {
    message.original.as_deref().unwrap_or(&message.content)
}

/// Before any AI: no reply to read, a stop, or no turn left to read it; else the reply the
/// agent must judge.
pub fn before_judging<'a>(task: &Task, conversation: &'a [ConversationMessage]) -> Reading<'a> {
    let Some(reply) = awaited_reply(conversation) else {
        return Reading::Decided(ReplyDecision::NothingToRead);
    };
    // A legal threat or abuse is the owner's, at once, never the agent's (spec §17.1, §28.4);
    // the member is suppressed as a stop would (a threat that also says stop is both).
    if let Some(threat) = threat::read(member_words(reply)) {
        return Reading::Decided(ReplyDecision::Threatened(threat));
    }
    // The hard rule before any AI (spec §22.3): stop means stop, and no acknowledgment.
    if opt_out::is_opt_out(member_words(reply)) {
        return Reading::Decided(ReplyDecision::HonourStop(Stop::member_request()));
    }
    if task.budget.turns_max > 0 && task.budget.turns_used >= task.budget.turns_max {
        return Reading::Decided(ReplyDecision::Escalate {
            reason: Reason::TurnBudgetExhaustedOnReply,
            blocker: Blocker::default(),
        });
    }
    Reading::Judge(reply)
}

/// The agent's judgment in words: for the decision log and the conversation. The reasoning's
/// closing full stop is left off, as the log often goes on after it ("; next step …").
pub fn judged(evaluation: &ReplyEvaluation) -> String {
    format!(
        "action {:?}, confidence {}, outcome {}: {}",
        evaluation.action,
        evaluation.confidence,
        evaluation.outcome.as_deref().unwrap_or("none"),
        evaluation.reasoning.trim_end().trim_end_matches('.')
    )
}

/// The agent could not judge the reply: the owner reads it.
pub fn unjudged(error: &str) -> ReplyDecision {
    ReplyDecision::Escalate {
        reason: Reason::ReplyEvaluationFailed,
        blocker: Blocker::because(format!("the agent could not judge the reply: {error}")),
    }
}

/// What `task` does with a reply the agent judged as `evaluation`. The agent proposes; the
/// task's budgets, the confidence floor and the type's outcomes decide.
pub fn decide(task: &Task, evaluation: &ReplyEvaluation, now: Timestamp) -> ReplyDecision {
    let judged = judged(evaluation);
    if evaluation.suggest_suppression {
        return ReplyDecision::HonourStop(Stop::agent_suggested(judged));
    }
    match evaluation.action {
        ReplyAction::Reply => {
            let draft = evaluation.reply.clone().filter(|r| !r.trim().is_empty());
            let blocked = if task.budget.messages_left() == 0 {
                Some(Reason::WantsToReplyButMessageBudgetExhausted)
            } else if limits::is_due(task.budget.expires_at, now) {
                // A task woken from dormant has used its time: the owner answers.
                Some(Reason::WantsToReplyButTimeBudgetExhausted)
            } else if evaluation.confidence < REPLY_MIN_CONFIDENCE {
                Some(Reason::LowConfidenceOnReply)
            } else {
                None
            };
            match (blocked, draft) {
                (None, Some(text)) => ReplyDecision::Answer {
                    text,
                    why: Why::new(Reason::ReplyDrafted).detail(judged),
                },
                (blocked, _) => ReplyDecision::Escalate {
                    reason: blocked.unwrap_or(Reason::ReplyWithoutText),
                    blocker: Blocker::from_evaluation(evaluation, judged),
                },
            }
        }
        ReplyAction::Wait => {
            let until = wait_until(task, evaluation.wait_days, now);
            ReplyDecision::Wait {
                until,
                why: Why::new(Reason::MemberReplyWait).detail(format!("{judged}; next step {until}")),
            }
        }
        // A model's decision to close below the floor never closes the task (spec §37.5): it
        // waits, or goes to the owner when at most one message is left (§37.3's "budget low").
        ReplyAction::Close if evaluation.confidence < CLOSE_MIN_CONFIDENCE => {
            let below = format!(
                "the agent would close at confidence {} (under {CLOSE_MIN_CONFIDENCE})",
                evaluation.confidence
            );
            if task.budget.messages_left() <= 1 {
                ReplyDecision::Escalate {
                    reason: Reason::LowConfidenceCloseEscalated,
                    blocker: Blocker::from_evaluation(evaluation, format!("{below}, with the budget nearly spent: {judged}")),
                }
            } else {
                let until = wait_until(task, evaluation.wait_days, now);
                ReplyDecision::Wait {
                    until,
                    why: Why::new(Reason::LowConfidenceCloseWaits).detail(format!("{below}; waiting instead: {judged}; next step {until}")),
                }
            }
        }
        ReplyAction::Close => {
            let def = task_type::definition(&task.task_type);
            let Some(outcome) = evaluation.outcome.as_deref().filter(|code| def.outcome(code).is_some()) else {
                return ReplyDecision::Escalate {
                    reason: Reason::CloseWithoutValidOutcome,
                    blocker: Blocker::from_evaluation(evaluation, format!("the agent closed without one of the type's outcomes: {judged}")),
                };
            };
            // A close that carries words for the member: a member who decided to leave is
            // thanked before the conversation closes, while a message and time are left.
            if let Some(text) = evaluation.reply.as_deref().map(str::trim).filter(|t| !t.is_empty())
                && !evaluation.provisional
                && task.budget.messages_left() > 0
                && !limits::is_due(task.budget.expires_at, now)
            {
                return ReplyDecision::Part {
                    text: text.to_owned(),
                    parting: crate::task::Parting {
                        outcome: outcome.to_owned(),
                        detail: Some(judged),
                    },
                };
            }
            let why = if evaluation.provisional {
                // A verbal commitment: attribution confirms it when the signal comes, or
                // downgrades it when the window passes (spec §16.2).
                Why::new(Reason::VerbalCommitment).outcome(outcome).detail(judged).provisional()
            } else {
                Why::new(Reason::MemberReplyResolved).outcome(outcome).detail(judged)
            };
            ReplyDecision::Close { why }
        }
        ReplyAction::Escalate => {
            // The agent names the opt-out outcome without asking for suppression: it suspects
            // a stop. The owner decides, and every other send to the member holds meanwhile.
            let reason = if evaluation.outcome.as_deref() == Some("opted_out") {
                Reason::SuspectedStop
            } else if evaluation.other_subject.is_some() {
                Reason::ReplyAboutAnotherSubject
            } else if evaluation.unanswered_question.is_some() {
                Reason::MemberQuestionNeedsOwner
            } else {
                Reason::AgentEscalatedReply
            };
            ReplyDecision::Escalate {
                reason,
                blocker: Blocker::from_evaluation(evaluation, judged),
            }
        }
    }
}

/// When a waiting task looks again: after the agent's days (or the default), within the time
/// budget; a task past it (woken from dormant) goes back to watching when the wait is over.
fn wait_until(task: &Task, wait_days: Option<u32>, now: Timestamp) -> Timestamp {
    let days = wait_days.unwrap_or(REPLY_DEFAULT_WAIT_DAYS).clamp(1, REPLY_MAX_WAIT_DAYS);
    let wanted = now + SignedDuration::from_hours(24 * i64::from(days));
    if task.budget.expires_at > now {
        wanted.min(task.budget.expires_at)
    } else {
        wanted
    }
}

/// The owner's latest words in the conversation (empty if they wrote none).
pub fn owner_guidance(conversation: &[ConversationMessage]) -> String {
    conversation
        .iter()
        .rev()
        .find(|m| m.role == Role::Owner)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

/// Before the agent writes from the owner's guidance: guidance needs a message to carry it.
pub fn before_guidance(task: &Task) -> Option<ReplyDecision> {
    (task.budget.messages_left() == 0).then(|| ReplyDecision::Escalate {
        reason: Reason::MessageBudgetExhausted,
        blocker: Blocker::because("the owner's guidance needs a message but the task's message budget is spent; resolve or cancel it"),
    })
}

/// What the agent wrote from the owner's guidance (or why it could not): the next message, or
/// back to the owner — with the draft attached when the agent is less sure of it than the
/// type's `threshold`.
pub fn guidance_drafted(drafted: Result<Drafted, String>, threshold: u8) -> ReplyDecision {
    match drafted {
        Ok(Drafted { draft, confidence }) if !draft.body.trim().is_empty() && confidence < threshold => ReplyDecision::Escalate {
            reason: Reason::LowConfidenceGuidanceAnswer,
            blocker: Blocker {
                detail: Some(format!(
                    "the agent's answer from your guidance is at confidence {confidence}, under this type's {threshold}: \
                     read its draft, then give it as guidance to send it (edited if needed)"
                )),
                draft_reply: Some(draft.body),
                ..Blocker::default()
            },
        },
        Ok(Drafted { draft, confidence }) if !draft.body.trim().is_empty() => ReplyDecision::Answer {
            why: Why::new(Reason::GuidanceDrafted).detail(format!("confidence {confidence}: {}", preview(&draft.body))),
            text: draft.body,
        },
        other => {
            let detail = match other {
                Err(e) => format!("the agent could not write from the guidance: {e}"),
                Ok(_) => "the agent wrote nothing from the guidance".into(),
            };
            ReplyDecision::Escalate {
                reason: Reason::GuidanceNotCarriedOut,
                blocker: Blocker::because(detail),
            }
        }
    }
}

/// Whether the owner's turn on `reason` starts with a holding reply to the member: a question
/// only the owner can answer, on a task with time and a message left (the owner's answer
/// afterwards is granted a message of its own when the budget is spent).
pub fn holds_question(task: &Task, reason: Reason, now: Timestamp) -> bool {
    reason == Reason::MemberQuestionNeedsOwner && task.budget.messages_left() > 0 && !limits::is_due(task.budget.expires_at, now)
}

/// The log's explanation of an escalation for `reason`.
pub fn escalation_why(reason: Reason, blocker: &Blocker) -> Why {
    match &blocker.detail {
        Some(detail) => Why::new(reason).detail(detail.clone()),
        None => Why::new(reason),
    }
}

/// What the owner is shown of an escalation: who blocked it, on what, what they
/// can do, and the last messages.
pub fn escalation_context(reason: Reason, blocker: Blocker, conversation: &[ConversationMessage], now: Timestamp) -> EscalationContext {
    let mut suggested = vec![
        "give guidance: the agent writes the next message from your words".to_owned(),
        "resolve it yourself with an outcome".to_owned(),
        "cancel it".to_owned(),
    ];
    if blocker.draft_reply.is_some() {
        suggested.insert(
            0,
            "send the agent's draft by giving it as guidance (edit it first if needed)".into(),
        );
    }
    let explained = escalation::explain(reason);
    let blocked_by = if blocker.question.is_some() || blocker.other_subject {
        "member"
    } else if explained.blocked_by == "member" {
        explained.blocked_by
    } else {
        "agent"
    };
    let suggested_next_step = match (&blocker.question, &blocker.draft_reply) {
        (Some(_), _) => "Answer the member's question as guidance; the agent writes it to them.",
        (None, Some(_)) => {
            "Read the agent's draft: give it as guidance to send it (edit it first if needed), or write your own answer as guidance."
        }
        (None, None) => explained.next_step,
    };
    EscalationContext {
        blocked_at: now,
        blocked_by: blocked_by.into(),
        reason: reason.as_str().into(),
        summary: escalation::summary(explained, blocker.detail.as_deref()),
        member_words: awaited_reply(conversation).map(|m| escalation::clip(member_words(m), escalation::MAX_QUOTED_CHARS)),
        last_draft: blocker
            .draft_reply
            .as_deref()
            .map(|d| escalation::clip(d, escalation::MAX_QUOTED_CHARS)),
        last_draft_sent: blocker.draft_reply.as_ref().map(|_| false),
        suggested_next_step: suggested_next_step.into(),
        question: blocker.question,
        draft_reply: blocker.draft_reply,
        suggested_actions: suggested,
        conversation_snapshot: recent(conversation).to_vec(),
        resume_instructions: "the agent reads your guidance and writes the next message to the member from it".into(),
    }
}

/// The last messages of a conversation, oldest first, as the owner and the agent see them.
pub fn recent(conversation: &[ConversationMessage]) -> &[ConversationMessage] {
    &conversation[conversation.len().saturating_sub(ESCALATION_SNAPSHOT_MESSAGES)..]
}

/// The first 200 characters on one line, for log details.
pub fn preview(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// What to do about a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyAction {
    /// Answer the member with `reply`.
    Reply,
    /// Nothing to say now; look again after `wait_days`.
    Wait,
    /// The conversation reached an outcome (`outcome`); `provisional` for verbal commitments.
    Close,
    /// Hand it to the owner, with the reasoning (and `reply` as a draft if there is one).
    Escalate,
}

/// The agent's typed judgment of a reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplyEvaluation {
    pub action: ReplyAction,
    /// A code from the request's `outcome_codes` when closing (or the best guess otherwise).
    pub outcome: Option<String>,
    /// 0–100: how sure the agent is of this judgment (and of `reply`, if any).
    pub confidence: u8,
    pub reasoning: String,
    /// The answer to send (action `reply`), or a draft for the owner (action `escalate`).
    pub reply: Option<String>,
    pub wait_days: Option<u32>,
    /// The member asked to stop or was hostile: suppress them.
    pub suggest_suppression: bool,
    /// A verbal commitment, to be verified by a signal within the window.
    pub provisional: bool,
    /// The member asked something the agent cannot answer from what it knows.
    pub unanswered_question: Option<String>,
    /// The reply is about another subject than this task's.
    pub other_subject: Option<String>,
}

#[cfg(test)]
mod tests;

//! Every escalation explains itself: whatever hands
//! a task to the owner — a spent budget, an anomaly, a failed subtask, the stale guard, a send
//! failure, the agent, a member's reply, a timer — the task carries the reason's code, a
//! summary in words, the member's last words, the agent's last draft and a suggested next
//! step. [`crate::task::transition::transition`] builds it for every move to `escalated` from
//! what the task holds; the reply path adds what it read (the question, the agent's draft).
//! The owner's notice and the dashboard's card say the same.

use jiff::Timestamp;

use crate::task::reason::Reason;
use crate::task::transition::Why;
use crate::task::{EscalationContext, Task};

/// The most characters of the member's words or a draft an escalation keeps.
pub const MAX_QUOTED_CHARS: usize = 1_000;

/// The most characters of a decision's detail a summary repeats.
const MAX_DETAIL_CHARS: usize = 300;

/// What a reason means to the owner: what happened, who stopped, what to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// One sentence, no trailing period.
    pub what: &'static str,
    /// `agent`, `member`, `system` or `subtask`.
    pub blocked_by: &'static str,
    pub next_step: &'static str,
}

const fn says(what: &'static str, blocked_by: &'static str, next_step: &'static str) -> Explanation {
    Explanation {
        what,
        blocked_by,
        next_step,
    }
}

/// What an escalation's reason says when the table above has nothing more particular.
const NEEDS_DECISION: &str = "The task needs your decision";
const DECIDE: &str = "Read the conversation, then resolve the task with an outcome, give guidance for one more message, or cancel it.";
const USE_DRAFT: &str =
    "Read the agent's draft: give it as guidance to send it (edit it first if needed), or write your own answer as guidance.";

/// What `reason` means to the owner (the codes are [`Reason`]'s).
pub fn explain(reason: Reason) -> Explanation {
    use Reason::*;
    match reason {
        BudgetTimeExpired | WantsToReplyButTimeBudgetExhausted => {
            says("The task's time ran out before it reached its goal", "system", DECIDE)
        }
        BudgetMessagesExhausted | AllFollowupTouchesUsed | MessageBudgetExhausted | WantsToReplyButMessageBudgetExhausted => says(
            "Every message this task may send is used and the goal is not reached",
            "system",
            DECIDE,
        ),
        TooManyTurnsWithoutResolution | TurnBudgetExhausted | TurnBudgetExhaustedOnReply => {
            says("The conversation went on for many turns without a resolution", "system", DECIDE)
        }
        AiBudgetExhausted | AiBudgetDayUsed | AiDailyLimit => says(
            "The agent used the AI calls it may make on this task",
            "system",
            "Read the conversation and answer the member yourself as guidance, or resolve or cancel the task.",
        ),
        ConversationStalled => says(
            "The conversation is warm but stalling: the member replied, made no concrete commitment, and the task's messages are spent",
            "system",
            "Reach out personally — a call or a short note of your own usually lands here — then resolve the task with what happened.",
        ),
        EvaluatorRecommendsOwner => says(
            "Judging how far the task is towards its goal, the agent recommends you take it from here",
            "agent",
            DECIDE,
        ),
        AnomalyTurnsWithoutResolution | AnomalyMemberRepliesWithoutResolution | AnomalyStuckExecuting => says(
            "Something looked wrong with this task (a possible loop or a stuck step), so it was stopped",
            "system",
            "Check the conversation; cancel the task if it is going nowhere, or give guidance to carry on.",
        ),
        RequiredSubtaskEscalated | RequiredSubtaskFailed => says(
            "A required step of this task failed or needs you",
            "subtask",
            "Open the failed step and decide it first; then give guidance here, or cancel the task.",
        ),
        PlannerFoundNoStep | PlannerUnsure | PlannerChoseAnUnusableStep | PlannedStepRefused => says(
            "The agent could not plan the next step of this task",
            "agent",
            "Say what should happen next as guidance, or resolve or cancel the task.",
        ),
        PaymentResolvedBeforeOutreach
        | PaymentResolvedBeforeFollowUp
        | MemberCancelledMembership
        | MemberCheckedInBeforeOutreach
        | MemberCheckedInBeforeFollowUp
        | MemberReactivatedBeforeOutreach
        | MemberReactivatedBeforeFollowUp
        | MemberCancelledSinceTaskCreated
        | MemberFrozenSinceTaskCreated
        | ConnectorBackoff
        | ConnectorUnavailable => says(
            "The member's situation changed since the task was made (or could not be checked), so nothing more was sent",
            "system",
            "Check the member in PushPress; cancel the task if it no longer applies, or give guidance for a message that fits.",
        ),
        SendRejected | SendRejectedAfterRetries | SendOutcomeUnknown => says(
            "The message could not be sent (or nobody knows whether it left), so it is not retried blindly",
            "system",
            "Check the member's address and whether they got the mail; give guidance to try again, or resolve or cancel the task.",
        ),
        DraftFailed | DraftFailedAfterRetries | MissingDraft => says(
            "The agent could not write the next message",
            "agent",
            "Write the message yourself as guidance, or resolve or cancel the task.",
        ),
        MissingMemberEmail | OptOutWithoutAddress => says(
            "The member has no e-mail address on file",
            "system",
            "Add their address in PushPress and give guidance to carry on, or reach them another way and resolve the task.",
        ),
        LowConfidenceOnReply | LowConfidenceFollowUp | LowConfidenceGuidanceAnswer | LowConfidenceCloseEscalated => {
            says("The agent is not sure enough of what to say next", "agent", USE_DRAFT)
        }
        ReplyEvaluationFailed | ReplyWithoutText | CloseWithoutValidOutcome | AgentEscalatedReply | GuidanceNotCarriedOut => {
            says("The agent could not decide what to do with the conversation", "agent", USE_DRAFT)
        }
        MemberQuestionNeedsOwner => says(
            "The member asked something only you can answer",
            "member",
            "Answer the member's question as guidance; the agent writes it to them.",
        ),
        ReplyAboutAnotherSubject => says(
            "The member wrote about something else than this task",
            "member",
            "Read their words and answer them as guidance, or handle it yourself and resolve the task.",
        ),
        ReplyFromAnotherSender => says(
            "A reply came from an address that is not the member's",
            "member",
            "Check who wrote; if it speaks for the member, give guidance, otherwise resolve or cancel the task.",
        ),
        SuspectedStop => says(
            "The member may have asked to stop; every other mail to them waits for your word",
            "member",
            "If they asked to stop, cancel the task (and suppress them); if not, give guidance to carry on.",
        ),
        LegalThreat => says(
            "The member's reply threatens legal action: they are suppressed and get no more mail from Openloop",
            "member",
            "Handle this yourself, personally and today (or pass it to whoever handles legal matters); do not let the agent answer.",
        ),
        AbusiveReply => says(
            "The member's reply is abusive or threatening: they are suppressed and get no more mail from Openloop",
            "member",
            "Decide yourself whether and how to answer; do not let the agent answer.",
        ),
        AutomationEscalation | ActionFailed | ActionOutcomeUnknown | NoConnectorConfigured | NoHandlerForAutomationType | NoActions => {
            says(
                "An automatic action of this task failed or needs you",
                "system",
                "Check the member in PushPress to see what took effect; then resolve or cancel the task.",
            )
        }
        OwnerRemindersUsed | StaffTodoReminder => says(
            "A to-do for your team is still open after its reminders",
            "system",
            "Do it (or assign it) and mark the task resolved, or cancel it.",
        ),
        _ => says(NEEDS_DECISION, "system", DECIDE),
    }
}

/// The escalation context a move to `escalated` for `why` gives `task` (as it was before the
/// move: its pending answer is still there), from what the task holds.
pub fn context(task: &Task, why: &Why, now: Timestamp) -> EscalationContext {
    let explained = explain(why.reason);
    // A pending answer waits unsent; the task's draft is its first message, sent once the
    // task has written to the member.
    let (last_draft, last_draft_sent) = match (task.answer.as_ref(), task.draft.as_ref()) {
        (Some(answer), _) if !answer.trim().is_empty() => (Some(answer.clone()), Some(false)),
        (_, Some(draft)) if !draft.body.trim().is_empty() => (Some(draft.body.clone()), Some(task.touch > 0)),
        _ => (None, None),
    };
    let last_draft = last_draft.map(|d| clip(&d, MAX_QUOTED_CHARS));
    EscalationContext {
        blocked_at: now,
        blocked_by: explained.blocked_by.into(),
        reason: why.reason.as_str().into(),
        summary: summary(explained, why.detail.as_deref()),
        question: None,
        draft_reply: None,
        last_draft,
        last_draft_sent,
        member_words: task.member_last_words.clone(),
        suggested_next_step: explained.next_step.into(),
        suggested_actions: vec![
            "give guidance: the agent writes the next message from your words".to_owned(),
            "resolve it yourself with an outcome".to_owned(),
            "cancel it".to_owned(),
        ],
        conversation_snapshot: Vec::new(),
        resume_instructions: "the agent reads your guidance and writes the next message to the member from it".into(),
    }
}

impl EscalationContext {
    /// This context, with what it does not know taken from `base` (the one the move to
    /// `escalated` built from the task): the member's last words, the last draft.
    pub fn or_from(mut self, base: Option<EscalationContext>) -> Self {
        if let Some(base) = base {
            self.member_words = self.member_words.or(base.member_words);
            if self.last_draft.is_none() {
                self.last_draft = base.last_draft;
                self.last_draft_sent = base.last_draft_sent;
            }
        }
        self
    }
}

/// A reason's code (`member_question_needs_owner`) as an owner reads it, lower case first:
/// "the member asked something only you can answer". An unknown code is its words.
pub fn reason_in_words(code: &str) -> String {
    let what = match Reason::parse(code).map(|r| explain(r).what) {
        Some(what) if what != NEEDS_DECISION => what.to_owned(),
        _ => crate::task::reason_words::sentence(code),
    };
    // A name keeps its capital ("PushPress is busy", "Openloop is new to your gym").
    if ["PushPress", "Openloop"].iter().any(|name| what.starts_with(name)) {
        return what;
    }
    let mut chars = what.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

/// The owner's notice of an escalation (title, text): what happened in words, the member's
/// last words and the agent's last draft quoted as plain text (`> ` lines: member text is
/// never markup), the member's question, the suggested next step, and the task's goal.
pub fn notice(task: &Task) -> (String, String) {
    let name = task.member.label();
    let kind = crate::task::task_type::lookup(&task.task_type).map_or_else(|| task.task_type.replace('_', " "), |def| def.label.to_owned());
    let reason = task.outcome_reason.as_deref().and_then(Reason::parse);
    let title = match reason {
        Some(Reason::LegalThreat) => format!("Urgent: {name} threatens legal action ({kind})"),
        Some(Reason::AbusiveReply) => format!("Urgent: {name}'s reply is abusive ({kind})"),
        _ => format!("{name} needs you ({kind})"),
    };
    let fallback;
    let context = match task.escalation.as_ref() {
        Some(c) => c,
        None => {
            let why = Why::new(reason.unwrap_or(Reason::AgentEscalatedReply));
            fallback = context(task, &why, task.updated_at);
            &fallback
        }
    };
    let mut text = if context.summary.is_empty() {
        reason_in_words(&context.reason)
    } else {
        context.summary.clone()
    };
    // The agent's reading that only repeats the member's words (quoted below) is left out.
    if let Some(words) = context.member_words.as_deref().map(str::trim).filter(|w| !w.is_empty())
        && text.contains(words)
        && let Some((what, _)) = text.split_once(". ")
    {
        text = format!("{what}.");
    }
    if let Some(words) = &context.member_words {
        text.push_str(&format!("\n\n{name} wrote:\n{}", quoted(words)));
    }
    // Their question once: not again under their words when those already hold it.
    if let Some(question) = context
        .question
        .as_ref()
        .filter(|q| !context.member_words.as_deref().is_some_and(|w| w.contains(q.trim())))
    {
        text.push_str(&format!("\n\nThe member asks: {}", clip(question, MAX_DETAIL_CHARS)));
    }
    if let Some(draft) = &context.last_draft {
        text.push_str(&format!("\n\n{}\n{}", last_draft_heading(context, task), quoted(draft)));
    }
    let next = if context.suggested_next_step.is_empty() {
        DECIDE
    } else {
        &context.suggested_next_step
    };
    text.push_str(&format!("\n\nSuggested next step: {next}\n\nGoal: {}", task.goal));
    (title, text)
}

/// What an escalation's `last_draft` is, as the heading over it: a message the member got
/// (the task's first, and how many followed; or the latest, such as the holding reply that
/// went ahead of their question), or a draft that waits unsent.
pub fn last_draft_heading(context: &EscalationContext, task: &Task) -> String {
    let name = task.member.label();
    let is_first = task
        .draft
        .as_ref()
        .is_some_and(|d| context.last_draft.as_deref() == Some(clip(&d.body, MAX_QUOTED_CHARS).as_str()));
    match context.last_draft_sent {
        Some(true) if task.touch > 1 && is_first => format!("The first of the {} messages sent to {name}:", task.touch),
        Some(true) if task.touch > 1 => format!("The last of the {} messages sent to {name}:", task.touch),
        Some(true) => format!("The message sent to {name}:"),
        Some(false) => "The agent's draft (not sent):".to_owned(),
        None => "What the agent wrote:".to_owned(),
    }
}

/// `text` as a plain-text quote: every line behind `> `.
fn quoted(text: &str) -> String {
    clip(text, MAX_QUOTED_CHARS)
        .lines()
        .map(|l| format!("> {}", l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What happened, in words an owner reads: the reason's sentence, then the decision's own
/// detail as a sentence — the agent's judgment of a reply ("action Escalate, confidence 85,
/// outcome none: why", as the log keeps it) as its reasoning alone.
pub fn summary(explained: Explanation, detail: Option<&str>) -> String {
    match detail.and_then(in_words) {
        Some(detail) => format!("{}. {}", explained.what, clip(&detail, MAX_DETAIL_CHARS)),
        None => format!("{}.", explained.what),
    }
}

/// A log entry's detail as the owner reads it: the agent's judgment of a reply as its
/// reasoning alone ("The agent's reading: …"), without the action, confidence and outcome
/// codes the log keeps; any other detail as it is.
pub fn detail_in_words(detail: &str) -> String {
    in_words(detail).unwrap_or_else(|| detail.to_owned())
}

/// A decision's detail as a sentence for the owner; `None` when it says nothing they can use.
fn in_words(detail: &str) -> Option<String> {
    let detail = detail.trim();
    // The reply's judgment (`conversation::reply::judged`), alone or after the decision's own
    // words ("the agent would close at confidence 55 …: action Close, …"): its reasoning is
    // the part for people; the action, the confidence and the outcome code are not.
    let judged = detail
        .match_indices("action ")
        .filter(|(at, _)| *at == 0 || detail[..*at].ends_with(": ") || detail[..*at].ends_with("; "))
        .find_map(|(at, _)| {
            let rest = &detail[at + "action ".len()..];
            let (head, rest) = rest.split_once(", outcome ")?;
            head.contains(", confidence ").then_some(())?;
            rest.split_once(": ").map(|(_, reasoning)| reasoning.trim())
        });
    let text = match judged {
        Some("") => return None,
        Some(reasoning) => format!("The agent's reading: {reasoning}"),
        None if detail.is_empty() => return None,
        None => detail.to_owned(),
    };
    let mut chars = text.chars();
    let first = chars.next()?;
    let mut sentence: String = first.to_uppercase().chain(chars).collect();
    if !sentence.ends_with(['.', '!', '?', '…']) {
        sentence.push('.');
    }
    Some(sentence)
}

/// `text` on its lines, cut at `max` characters with an ellipsis.
pub fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, sample_task};

    #[test]
    fn every_escalation_says_what_happened_and_what_to_do_next() {
        for reason in Reason::ALL {
            let e = explain(*reason);
            assert!(!e.what.is_empty() && !e.what.ends_with('.'), "{reason}");
            assert!(e.next_step.ends_with('.'), "{reason}");
            assert!(["agent", "member", "system", "subtask"].contains(&e.blocked_by), "{reason}");
        }
        assert_eq!(explain(Reason::LegalThreat).blocked_by, "member");
        assert!(explain(Reason::SendRejectedAfterRetries).what.contains("could not be sent"));
    }

    #[test]
    fn a_system_escalation_carries_the_members_words_and_the_last_draft() {
        let mut task = sample_task(crate::task::TaskStatus::Waiting);
        task.member_last_words = Some("Maybe next week".into());
        task.answer = Some("Great — see you Monday?".into());
        let why = Why::new(Reason::BudgetMessagesExhausted).detail("3 messages sent without settling it; the next step is yours");
        let c = context(&task, &why, at("2026-11-02T14:00:00Z"));
        assert_eq!(c.reason, "budget_messages_exhausted");
        assert_eq!(
            c.summary,
            "Every message this task may send is used and the goal is not reached. 3 messages sent without settling it; the next step is yours."
        );
        assert_eq!(c.member_words.as_deref(), Some("Maybe next week"));
        assert_eq!(c.last_draft.as_deref(), Some("Great — see you Monday?"));
        assert!(c.suggested_next_step.starts_with("Read the conversation"));
    }

    #[test]
    fn the_owners_notice_says_the_summary_the_members_words_and_the_next_step() {
        let mut task = sample_task(crate::task::TaskStatus::Waiting);
        task.member.name = Some("Dana".into());
        task.member_last_words = Some("<b>maybe</b>\nnext week".into());
        let why = Why::new(Reason::ConversationStalled).detail("budget spent");
        let (mut next, _) = crate::task::transition::transition(&task, crate::task::TaskStatus::Escalated, at("2026-11-02T14:00:00Z"), why)
            .expect("escalate");
        next.outcome_reason = Some("conversation_stalled".into());
        let (title, text) = notice(&next);
        assert_eq!(title, "Dana needs you (Payment Recovery)", "the type's label, never its code");
        assert!(text.starts_with("The conversation is warm but stalling"), "{text}");
        assert!(text.contains("Dana wrote:\n> <b>maybe</b>\n> next week"), "{text}");
        assert!(text.contains("Suggested next step: Reach out personally"), "{text}");
        next.outcome_reason = Some("legal_threat".into());
        assert!(notice(&next).0.starts_with("Urgent: Dana threatens legal action"));

        // A question already quoted in the member's words is not said a second time.
        if let Some(context) = next.escalation.as_mut() {
            context.member_words = Some("Can I freeze my membership? Work is crazy.".into());
            context.question = Some("Can I freeze my membership?".into());
        }
        let (_, text) = notice(&next);
        assert_eq!(text.matches("Can I freeze my membership?").count(), 1, "{text}");
    }

    #[test]
    fn the_agents_judgment_reaches_the_owner_as_its_reasoning_in_plain_words() {
        let judged = "action Escalate, confidence 85, outcome none: she asks about a refund, which only the owner can decide";
        let text = summary(explain(Reason::AgentEscalatedReply), Some(judged));
        assert!(
            text.ends_with(". The agent's reading: she asks about a refund, which only the owner can decide."),
            "{text}"
        );
        assert!(
            !text.contains("confidence 85") && !text.contains("Details") && !text.contains("action Escalate"),
            "{text}"
        );
        let bare = summary(
            explain(Reason::AgentEscalatedReply),
            Some("action Escalate, confidence 85, outcome none: "),
        );
        assert!(bare.ends_with('.') && !bare.contains("action"), "{bare}");
        // The judgment behind the decision's own words (a close under the floor, a close
        // without an outcome of the type) is read the same way.
        for detail in [
            "the agent would close at confidence 55 (under 60), with the budget nearly spent: action Close, confidence 55, outcome rejoined: she might come back",
            "the agent closed without one of the type's outcomes: action Close, confidence 90, outcome weird: she might come back",
        ] {
            let text = summary(explain(Reason::LowConfidenceCloseEscalated), Some(detail));
            assert!(text.ends_with(". The agent's reading: she might come back."), "{text}");
            assert!(
                !text.contains("confidence") && !text.contains("action Close") && !text.contains("outcome"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_reason_code_reads_as_words() {
        assert_eq!(
            reason_in_words("member_question_needs_owner"),
            "the member asked something only you can answer"
        );
        assert_eq!(reason_in_words("not_a_code"), "not a code");
    }

    #[test]
    fn quoted_text_is_clipped() {
        assert_eq!(clip("  abcdef ", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
    }
}

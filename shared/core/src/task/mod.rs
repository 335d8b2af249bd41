//! The task: a goal, a hard budget and a conversation — its nine states, the table of moves
//! between them, and the records that explain it (decision log, conversation, outbound mail).

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub mod action;
pub mod attribution;
pub mod cadence;
pub mod commit;
pub mod controls;
pub mod error;
pub mod escalation;
pub mod experiment;
pub mod feedback;
pub mod flood;
pub mod history;
pub mod holdout;
pub mod open_loop;
pub mod outcome;
pub mod plan_edit;
pub mod progress;
pub mod reason;
pub mod reason_words;
pub mod subtasks;
pub mod tally;
pub mod task_loops;
pub mod task_type;
pub mod text_touches;
pub mod todo;
pub mod transition;
pub mod work;

use crate::kernel::ids::{AccountId, Email, MemberId, TaskId};
use crate::task::task_type::{DeliverableType, Priority};

/// The eight states of a task, and `held_out`: a task Openloop opened itself for a
/// member of the holdout group, which sends nothing and only watches its goal's signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    PendingReview,
    Ready,
    Executing,
    Waiting,
    Dormant,
    Completed,
    Escalated,
    Cancelled,
    HeldOut,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 9] = [
        TaskStatus::PendingReview,
        TaskStatus::Ready,
        TaskStatus::Executing,
        TaskStatus::Waiting,
        TaskStatus::Dormant,
        TaskStatus::Completed,
        TaskStatus::Escalated,
        TaskStatus::Cancelled,
        TaskStatus::HeldOut,
    ];

    /// The valid-transition table: the only place that says which moves exist.
    pub fn can_move_to(self, to: TaskStatus) -> bool {
        use TaskStatus::*;
        matches!(
            (self, to),
            (PendingReview, Ready | Cancelled)
                | (Ready, Executing | Cancelled)
                // A later touch of a thread the owner wrote held for their review.
                | (Executing, Waiting | Completed | Escalated | Cancelled | PendingReview)
                | (Waiting, Executing | Completed | Escalated | Cancelled | Dormant)
                | (Dormant, Executing | Completed | Cancelled)
                | (Escalated, Executing | Completed | Cancelled)
                // Held out: closed by its goal's signal, by the end of its window, or by the owner.
                | (HeldOut, Completed | Cancelled)
        )
    }

    /// Completed and cancelled tasks never change again.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Cancelled)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::PendingReview => "pending_review",
            TaskStatus::Ready => "ready",
            TaskStatus::Executing => "executing",
            TaskStatus::Waiting => "waiting",
            TaskStatus::Dormant => "dormant",
            TaskStatus::Completed => "completed",
            TaskStatus::Escalated => "escalated",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::HeldOut => "held_out",
        }
    }

    pub fn parse(s: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|status| status.as_str() == s)
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task's hard limits and what it has used of them. Counters only grow, and
/// every reservation is checked against the maximum before it is written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    pub messages_used: u32,
    pub messages_max: u32,
    pub turns_used: u32,
    pub turns_max: u32,
    pub expires_at: Timestamp,
}

impl Budget {
    pub fn messages_left(&self) -> u32 {
        self.messages_max.saturating_sub(self.messages_used)
    }
    pub fn is_expired(&self, now: Timestamp) -> bool {
        now >= self.expires_at
    }
}

/// Who or what created the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerType {
    Webhook,
    CronAnalysis,
    Manual,
    GmChat,
    /// Spawned by a recurring template.
    Recurring,
    /// Made by the agent on its own, e.g. from a conversation: always reviewed,
    /// and capped per account and per member.
    AgentSpawned,
}

/// The member a task is about, as known when the task was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberRef {
    pub id: MemberId,
    pub email: Option<Email>,
    pub name: Option<String>,
    /// The member's PushPress plan when the task opened: attribution prices the outcome at
    /// the owner's price for it (settings `plan_prices`) without reading the member again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// The member's own monthly value when the task opened, as a member event said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_value: Option<f64>,
}

/// A conversation open now, wherever one is counted or listed (the Conversations page, the
/// overview's "conversations open", the scorecard's `conversations_open`): a member-facing task
/// that has written to its member and is still at work.
pub fn is_open_conversation(status: TaskStatus, touch: u32, task_type: &str) -> bool {
    touch > 0
        && matches!(
            status,
            TaskStatus::Waiting | TaskStatus::Executing | TaskStatus::Escalated | TaskStatus::Dormant
        )
        && task_type::definition(task_type).category == task_type::Category::Communication
}

/// The review queue's order, wherever it is listed (the review page, the brief, the digest):
/// the most urgent first (a failing payment before a check-in), then the member worth the most
/// a month, then the oldest.
pub fn review_order(a: &Task, b: &Task) -> std::cmp::Ordering {
    let value = |t: &Task| t.member.monthly_value.unwrap_or(0.0);
    a.priority
        .cmp(&b.priority)
        .then(value(b).total_cmp(&value(a)))
        .then(a.created_at.cmp(&b.created_at))
        .then(a.id.cmp(&b.id))
}

impl MemberRef {
    /// Who the member is in owner text: their name, else their address, else their id.
    pub fn label(&self) -> String {
        member_label(self.name.as_deref(), self.email.as_ref(), &self.id)
    }
}

/// A member as an owner reads them: a name that is not blank, else the address, else the id;
/// the whole business (`_account`, a report's or a gym-wide tag's) as "the whole gym".
pub fn member_label(name: Option<&str>, email: Option<&Email>, id: &MemberId) -> String {
    if crate::kernel::ids::RESERVED_MEMBER_IDS.contains(&id.as_str()) {
        return "the whole gym".to_owned();
    }
    name.map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .or_else(|| email.map(ToString::to_string))
        .unwrap_or_else(|| id.to_string())
}

/// A message the agent means to send (or sent): subject and plain-text body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Draft {
    pub subject: String,
    pub body: String,
}

/// What the agent wrote, and how sure it is of it, 0–100: a follow-up or an
/// answer written from the owner's guidance below its type's threshold goes to the owner,
/// with the draft attached, instead of to the member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drafted {
    pub draft: Draft,
    pub confidence: u8,
}

/// A task. Every change goes through [`crate::task::transition::transition`] or an engine operation
/// that bumps `version`; the store writes it only if the stored version is the one read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: TaskId,
    pub account_id: AccountId,
    pub task_type: String,
    pub status: TaskStatus,
    pub priority: Priority,
    pub member: MemberRef,
    pub goal: String,
    pub confidence: u8,
    pub draft: Option<Draft>,
    /// The subject of the first message, kept so follow-ups thread as `Re: …`.
    pub thread_subject: Option<String>,
    /// The Message-IDs of the messages sent so far, oldest first, for threading follow-ups
    /// without reading the outbound records.
    #[serde(default)]
    pub thread: Vec<ThreadMessage>,
    pub budget: Budget,
    /// AI calls made for this task so far.
    #[serde(default)]
    pub ai_calls: u32,
    /// The business memories the task's last AI call read (the owner sees what
    /// the agent knew), by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memories_used: Vec<ulid::Ulid>,
    /// Messages sent so far; also the index of the next touch in the cadence.
    pub touch: u32,
    /// When the system next has something to do with this task (drives the due index).
    pub next_action_at: Option<Timestamp>,
    /// Failed attempts of the current step, for the retry policy.
    pub attempts: u32,
    pub outcome: Option<String>,
    pub outcome_reason: Option<String>,
    pub attributed_value: Option<f64>,
    pub parent_id: Option<TaskId>,
    /// For a subtask: how its result bears on the parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<crate::task::subtasks::Requirement>,
    /// For a parent: its subtasks, in the order they were added; a parent's steps derive its
    /// state from theirs instead of sending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtasks: Vec<crate::task::subtasks::SubtaskRef>,
    /// A batch parent: one subtask per member, under the higher batch limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
    /// What an automation task does, run in order by the action executor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<crate::task::action::Action>,
    /// When the owner approved the task (actions that need approval run only after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<Timestamp>,
    pub trigger_type: TriggerType,
    pub trigger_event_id: Option<String>,
    /// What the trigger knew (a failed payment's amount, a finding's evidence…), and under
    /// `merged_triggers` what later triggers for the same member and type added while this
    /// task was open.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub trigger_context: serde_json::Value,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub execution_started_at: Option<Timestamp>,
    pub dormant_at: Option<Timestamp>,
    pub dormant_expires_at: Option<Timestamp>,
    pub resolved_at: Option<Timestamp>,
    /// What a research task produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliverable: Option<crate::task::Deliverable>,
    /// Execution mode, plan, and the other per-task controls.
    #[serde(default)]
    pub controls: crate::task::controls::TaskControls,
    /// Something the agent must read before the task's next step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// The agent's answer to the member, sent by the next step instead of a cadence follow-up
    /// (through every gate, like any other touch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Why the owner was handed the task; cleared when it resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationContext>,
    /// A member's question for the owner, held while the holding reply in `answer` goes out:
    /// once that has left — or at once, when it cannot leave now — the task goes to the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_question: Option<HeldQuestion>,
    /// The close a parting note in `answer` goes ahead of: a member who decided to leave is
    /// thanked first, and the task closes once that has left — or at once, when it cannot
    /// leave soon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parting: Option<Parting>,
    /// The owner put this item off (a review item or an escalation, "remind me tomorrow"):
    /// the brief leaves it out, and its review does not expire, until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snoozed_until: Option<Timestamp>,
    /// When the task last came to the owner's review (`pending_review`): a follow-up held
    /// for them waits, and expires, from then. `None`: since it was opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_since: Option<Timestamp>,
    /// The outcome is a verbal commitment awaiting its signal: attribution
    /// confirms it when the signal comes, or downgrades it when the window passes.
    #[serde(default)]
    pub provisional: bool,
    /// When the task's goal showed (its signal's time, or the close on it): the lift counts
    /// a success only inside the type's fixed window from assignment
    /// ([`crate::task::holdout::conversion_window`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_at: Option<Timestamp>,
    /// Until when attribution still watches this closed task (its revenue, a provisional
    /// outcome, a late win); `None` once settled. Drives the attribution index
    /// ([`crate::task::attribution::watch_until`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution_until: Option<Timestamp>,
    /// Which monthly price `attributed_value` was reckoned at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_source: Option<crate::task::attribution::ValueSource>,
    /// The owner approved the first message with an edited draft (`draft` is what they sent;
    /// the original stays in the `owner_approved_with_edits` log entry). Learning reads it.
    #[serde(default)]
    pub owner_edited: bool,
    /// A later touch whose draft the owner approved (`draft` holds it): the touch the owner
    /// reviewed because they rewrote the first ([`crate::rails::step::owner_reviews_follow_ups`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed_touch: Option<u32>,
    /// How far the task is towards its goal, as the completion evaluator last judged it
    ///: shown to the owner and given to the agent in later prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_progress: Option<crate::task::progress::GoalProgress>,
    /// The owner's latest rating of how the task went; every rating is
    /// also in the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<crate::task::feedback::OwnerFeedback>,
    /// The member's latest words (as read, clipped), kept for an escalation's context so a
    /// system escalation can say them without reading the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_last_words: Option<String>,
    /// The agent's draft as it was before the owner's edit (original vs.
    /// sent, for learning from edits); `None` if the owner approved it as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_draft: Option<Draft>,
    /// The holdout draw, for a task Openloop opened itself of a type the owner holds out
    /// (`crate::task::holdout`); `None` for a task that never went through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout: Option<crate::task::holdout::Holdout>,
    /// The template the first message was written from (`default`, or the owner's as of its
    /// last change), for learning which wording brings members back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_template: Option<String>,
    /// The version of a running message experiment the task's member was given
    /// (`crate::task::experiment`); `None` outside any experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<crate::task::experiment::ExperimentArm>,
    /// The task's own open loops, and those resolved that its step has not acted on yet
    /// ([`crate::task::task_loops`]): written with the loop records, read by the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<crate::task::task_loops::LoopNote>,
    /// The to-do a closed task handed its member to (a review item expired onto the call
    /// list, an escalation left unanswered): the member is not dropped with the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todo_id: Option<ulid::Ulid>,
    pub version: u64,
}

/// What waits to be read by the agent at the task's next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaiting {
    /// The member replied; the conversation loop has not judged it yet.
    MemberReply,
    /// The owner gave guidance on an escalated task; the agent carries it out.
    OwnerGuidance,
}

/// The escalation a holding reply goes ahead of ([`Task::held_question`]): why, in the log's
/// words, and what the owner will be shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldQuestion {
    pub reason: crate::task::reason::Reason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub context: EscalationContext,
}

/// A log entry's detail with `more` after it ("…; more"), either alone when the other is none.
fn detail_and(detail: Option<&str>, more: Option<&str>) -> Option<String> {
    match (detail, more) {
        (Some(d), Some(more)) => Some(format!("{d}; {more}")),
        (d, more) => d.or(more).map(str::to_owned),
    }
}

impl HeldQuestion {
    /// The escalation's log entry: its reason, with `more` after its detail.
    pub fn why(&self, more: Option<&str>) -> crate::task::transition::Why {
        crate::task::transition::Why {
            detail: detail_and(self.detail.as_deref(), more),
            ..crate::task::transition::Why::new(self.reason)
        }
    }
}

/// The close that follows a parting note ([`Task::parting`]): its outcome and the agent's
/// reading, for the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parting {
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Parting {
    /// The close's log entry, with `more` after its detail.
    pub fn why(&self, more: Option<&str>) -> crate::task::transition::Why {
        crate::task::transition::Why {
            detail: detail_and(self.detail.as_deref(), more),
            ..crate::task::transition::Why::new(crate::task::reason::Reason::ClosedAfterPartingNote).outcome(self.outcome.clone())
        }
    }
}

/// Everything the owner needs to unblock an escalated task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EscalationContext {
    pub blocked_at: Timestamp,
    /// `agent`, `member` or `system`.
    pub blocked_by: String,
    /// The reason's code (the task's `outcome_reason`); older escalations kept words here.
    pub reason: String,
    /// What happened, in words ([`crate::task::escalation::summary`]).
    #[serde(default)]
    pub summary: String,
    /// The member's last words, as read (member text: shown as text, never markup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_words: Option<String>,
    /// The agent's last draft to the member (its pending answer, the drafted follow-up, the
    /// first message), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_draft: Option<String>,
    /// Whether `last_draft` went to the member (the task's first message, once sent) or
    /// waits unsent (an answer, a draft nobody approved); `None` where it is not known. The
    /// owner reads it by what it is ([`crate::task::escalation::last_draft_heading`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_draft_sent: Option<bool>,
    /// What the owner could do next, in one sentence.
    #[serde(default)]
    pub suggested_next_step: String,
    /// The member's question the agent could not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The agent's best attempt at an answer, for the owner to edit or send as guidance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_reply: Option<String>,
    pub suggested_actions: Vec<String>,
    /// The last few messages, oldest first.
    pub conversation_snapshot: Vec<ConversationMessage>,
    /// What the agent does once the owner answers.
    pub resume_instructions: String,
}

impl Task {
    /// When the task came to the owner's review this time: a follow-up held for them, when
    /// it was; a task opened for review, when it was opened.
    pub fn in_review_since(&self) -> Timestamp {
        self.review_since.unwrap_or(self.created_at)
    }

    /// Open tasks hold the member+type active guard.
    pub fn is_active(&self) -> bool {
        !self.status.is_terminal()
    }

    /// The task was opened for a member of the holdout group: it sends nothing, and what it
    /// closes with is never revenue Openloop caused.
    pub fn is_held_out(&self) -> bool {
        self.holdout.is_some_and(|h| h.arm == crate::task::holdout::Arm::HeldOut)
    }
}

/// One sent message of the thread: our Message-ID and the one the provider delivered it
/// under (SES rewrites it), both without angle brackets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadMessage {
    pub message_id: String,
    pub provider_message_id: Option<String>,
}

/// One decision-log entry: why a task changed. Written in the same transaction as the change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub id: ulid::Ulid,
    pub at: Timestamp,
    /// `None` for the entry that records the task's creation.
    pub from_status: Option<TaskStatus>,
    pub to_status: TaskStatus,
    pub reason: String,
    pub detail: Option<String>,
}

/// Who said something in a task's conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Member,
    Owner,
    System,
}

/// One entry of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConversationMessage {
    pub id: ulid::Ulid,
    pub at: Timestamp,
    pub role: Role,
    pub content: String,
    /// A member's whole message, kept beside `content` when reading it left less than a
    /// sentence of more they wrote (`reply_text::Extracted::original`): the owner sees it,
    /// and the agent reads it instead of `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
}

impl ConversationMessage {
    /// Whether this is a message of the gym's that says `body` word for word (spacing and case
    /// aside): sending `body` again would repeat it.
    pub fn says(&self, body: &str) -> bool {
        let words = |text: &str| text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>();
        self.role == Role::Agent && words(&self.content) == words(body)
    }
}

/// Where an outbound message is in its life. `Reserved` means budgets are counted and the
/// send may or may not have happened; such a record is never sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboundStatus {
    Reserved,
    Sent,
    /// The provider refused it; nothing left.
    Failed,
    /// The send's fate is unknown (timeout after the request left); escalated, never retried.
    Unknown,
}

/// The record of one outbound e-mail, keyed per task and touch: the idempotency record that
/// makes a send at-most-once, and the thread's memory of Message-IDs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutboundMessage {
    pub task_id: TaskId,
    pub touch: u32,
    pub status: OutboundStatus,
    pub to: Email,
    pub subject: String,
    /// Our `Message-ID` (without angle brackets).
    pub message_id: String,
    /// The id SES returned; SES delivers the mail with `<{ses_id}@{region}.amazonses.com>`.
    pub provider_id: Option<String>,
    /// The Message-ID the recipient actually sees, when the provider rewrites ours.
    pub provider_message_id: Option<String>,
    pub reserved_at: Timestamp,
    pub sent_at: Option<Timestamp>,
}

impl ThreadMessage {
    /// Every id a reply to this message may carry in `In-Reply-To`/`References`.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.message_id.as_str()).chain(self.provider_message_id.as_deref())
    }
}

/// What a research task produced, kept on the task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deliverable {
    pub kind: DeliverableType,
    pub title: String,
    /// Markdown.
    pub content: String,
    pub data: serde_json::Value,
    pub created_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    #[test]
    fn terminal_states_have_no_way_out() {
        for to in TaskStatus::ALL {
            assert!(!Completed.can_move_to(to));
            assert!(!Cancelled.can_move_to(to));
        }
    }

    #[test]
    fn the_table_has_the_specs_eighteen_moves_the_owners_take_over_and_the_holdouts_close() {
        let moves = TaskStatus::ALL
            .iter()
            .flat_map(|from| TaskStatus::ALL.iter().map(move |to| (*from, *to)))
            .filter(|(from, to)| from.can_move_to(*to))
            .count();
        // The spec's eighteen, an owner taking over an escalated task closes it completed, a
        // held-out task only closes (completed by its signal, or cancelled), and a later touch
        // of a thread the owner rewrote goes back to their review (executing → pending_review).
        assert_eq!(moves, 22);
        assert!(Executing.can_move_to(PendingReview) && !Waiting.can_move_to(PendingReview));
        assert!(HeldOut.can_move_to(Completed) && HeldOut.can_move_to(Cancelled));
        assert!(!HeldOut.can_move_to(Executing) && !HeldOut.can_move_to(Ready));
        assert!(PendingReview.can_move_to(Ready));
        assert!(!PendingReview.can_move_to(Executing));
        assert!(Dormant.can_move_to(Executing));
        assert!(!Dormant.can_move_to(Waiting));
        assert!(Escalated.can_move_to(Completed));
        assert!(!Escalated.can_move_to(Waiting));
    }

    #[test]
    fn statuses_round_trip_through_their_names() {
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_string(&s).ok(), Some(format!("\"{s}\"")));
        }
    }
}

//! The JSON shapes of CONTRACT.md, in one place: the task as the owner API shows it, and the
//! error body with each domain error's code. No HTTP here: the status that goes with an
//! error is chosen by the HTTP entry points (`openloop_edge::http`).

use jiff::Timestamp;
use serde::Serialize;

use crate::kernel::error::StoreError;

use crate::task::error::EngineError;
use crate::task::history::TaskHistory;
use crate::task::task_type::Priority;
use crate::task::{ConversationMessage, Draft, LogEntry, Role, Task, TaskStatus};

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemberView<'a> {
    pub id: &'a str,
    pub email: Option<&'a str>,
    pub name: Option<&'a str>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BudgetView {
    pub messages_used: u32,
    pub messages_max: u32,
    pub turns_used: u32,
    pub turns_max: u32,
    pub expires_at: Timestamp,
    /// The AI calls made for the task, and the most it may make.
    pub ai_calls_used: u32,
    pub ai_calls_max: u32,
}

/// `Task` of the API.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskView<'a> {
    pub id: String,
    pub task_type: &'a str,
    pub status: TaskStatus,
    pub priority: Priority,
    pub member: MemberView<'a>,
    pub goal: &'a str,
    pub confidence: u8,
    pub draft: Option<&'a Draft>,
    pub budget: BudgetView,
    pub touch: u32,
    pub next_action_at: Option<Timestamp>,
    pub outcome: Option<&'a str>,
    pub outcome_reason: Option<&'a str>,
    pub attributed_value: Option<f64>,
    /// Which monthly price `attributed_value` was reckoned at: `plan_price` (the owner's
    /// price for the member's PushPress plan), `member` or `average`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributed_value_source: Option<crate::task::attribution::ValueSource>,
    /// The outcome is a verbal commitment awaiting its signal (attribution verifies it).
    pub provisional: bool,
    pub parent_id: Option<String>,
    /// Subtasks only: `required`, `optional` or `best_effort`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirement: Option<crate::task::subtasks::Requirement>,
    /// Parents only: their subtasks' ids, in the order they were added.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subtask_ids: Vec<String>,
    /// `agent` when the agent plans the task's steps as subtasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planning: Option<&'static str>,
    /// Automation tasks only: the actions they run, in order.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub actions: &'a [crate::task::action::Action],
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub version: u64,
    /// Research tasks only: the report they produced.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub deliverable: Option<&'a crate::task::Deliverable>,
    /// `live`, `dry_run` or `plan`.
    pub execution_mode: crate::task::controls::TaskMode,
    /// When the owner paused it; absent while it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<Timestamp>,
    /// Plan-mode tasks: the plan the owner approves.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub plan: Option<&'a crate::task::controls::TaskPlan>,
    /// Escalated tasks: what blocked the agent and what it suggests.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub escalation: Option<&'a crate::task::EscalationContext>,
    /// The agent's answer to the member, waiting for its gates (window, daily message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_answer: Option<&'a str>,
    /// How far the task is towards its goal, as last evaluated: percentage,
    /// current outcome, confidence, evidence, milestones, risks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal_progress: Option<GoalProgressView<'a>>,
    /// The owner's latest rating (`{"rating": "up" | "down", "comment", "at"}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub feedback: Option<&'a crate::task::feedback::OwnerFeedback>,
    /// The ids of the business memories the task's last AI call read.
    pub memories_used: Vec<String>,
    /// The message experiment's version the task was given (`{"experiment_id", "variant":
    /// "current" | "proposed"}`), if it is in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment: Option<crate::task::experiment::ExperimentArm>,
    /// What the task waits for now: its open loops (as `GET /api/v1/loops` lists them), the
    /// earliest deadline being when its next step is due.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub open_loops: Vec<TaskLoopView>,
    /// A task closed onto the call list (`review_expired`, an unanswered escalation): the
    /// to-do its member is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo_id: Option<String>,
}

/// One open loop of a task, in its view.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskLoopView {
    pub id: String,
    /// `reply`, `checkin`, `payment_resolved`, `trial_attended`.
    pub expects: &'static str,
    pub deadline: Timestamp,
    /// `follow_up`, `close` or `escalate`.
    pub on_deadline: &'static str,
}

impl<'a> From<&'a Task> for TaskView<'a> {
    fn from(t: &'a Task) -> Self {
        Self {
            id: t.id.to_string(),
            task_type: &t.task_type,
            status: t.status,
            priority: t.priority,
            member: MemberView {
                id: t.member.id.as_str(),
                email: t.member.email.as_ref().map(|e| e.as_str()),
                name: t.member.name.as_deref(),
            },
            goal: &t.goal,
            confidence: t.confidence,
            draft: t.draft.as_ref(),
            budget: BudgetView {
                messages_used: t.budget.messages_used,
                messages_max: t.budget.messages_max,
                turns_used: t.budget.turns_used,
                turns_max: t.budget.turns_max,
                expires_at: t.budget.expires_at,
                ai_calls_used: t.ai_calls,
                ai_calls_max: crate::kernel::limits::AI_CALLS_PER_TASK,
            },
            touch: t.touch,
            // The execution lease of a running step is internal; show the schedule only.
            next_action_at: if t.status == TaskStatus::Executing {
                None
            } else {
                t.next_action_at
            },
            outcome: t.outcome.as_deref(),
            outcome_reason: t.outcome_reason.as_deref(),
            attributed_value: t.attributed_value,
            attributed_value_source: t.attributed_value.and(t.value_source),
            provisional: t.provisional,
            parent_id: t.parent_id.map(|p| p.to_string()),
            requirement: t.requirement,
            subtask_ids: t.subtasks.iter().map(|s| s.id.to_string()).collect(),
            planning: t.controls.agent_planning.then_some("agent"),
            actions: &t.actions,
            created_at: t.created_at,
            updated_at: t.updated_at,
            version: t.version,
            deliverable: t.deliverable.as_ref(),
            execution_mode: t.controls.mode,
            paused_at: t.controls.paused_at,
            plan: t.controls.plan.as_ref(),
            escalation: t.escalation.as_ref(),
            pending_answer: t.answer.as_deref(),
            goal_progress: t.goal_progress.as_ref().map(GoalProgressView::from),
            feedback: t.feedback.as_ref(),
            memories_used: t.memories_used.iter().map(ToString::to_string).collect(),
            experiment: t.experiment,
            // A closed task waits on nothing.
            open_loops: t
                .loops
                .iter()
                .filter(|n| n.is_open() && !t.status.is_terminal())
                .map(|n| TaskLoopView {
                    id: n.id.to_string(),
                    expects: n.expects.as_str(),
                    deadline: n.deadline,
                    on_deadline: n.on_deadline.as_str(),
                })
                .collect(),
            todo_id: t.todo_id.map(|id| id.to_string()),
        }
    }
}

/// A task's `goal_progress`: `percent`, `outcome` (one of the
/// type's codes), `confidence`, `evidence`, `milestones`, `risks`; and how the evidence was
/// obtained and what the evaluator recommended.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GoalProgressView<'a> {
    pub percent: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'a str>,
    pub confidence: u8,
    pub evidence: &'a str,
    pub evidence_type: crate::task::progress::EvidenceType,
    pub recommended_action: crate::task::progress::RecommendedAction,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub milestones: &'a [crate::task::outcome::Milestone],
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub risks: &'a [String],
}

impl<'a> From<&'a crate::task::progress::GoalProgress> for GoalProgressView<'a> {
    fn from(p: &'a crate::task::progress::GoalProgress) -> Self {
        Self {
            percent: p.progress_pct.min(100),
            outcome: Some(p.current_outcome.as_str()).filter(|o| !o.is_empty()),
            confidence: p.confidence.min(100),
            evidence: &p.evidence,
            evidence_type: p.evidence_type,
            recommended_action: p.recommended_action,
            milestones: &p.milestones,
            risks: &p.risks,
        }
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogView<'a> {
    pub at: Timestamp,
    pub from_status: Option<TaskStatus>,
    pub to_status: TaskStatus,
    pub reason: &'a str,
    pub detail: Option<&'a str>,
    /// The reason as a sentence for the owner (`task/reason_words.rs`), as in the activity feed.
    pub reason_text: String,
    /// The detail as the owner reads it: instants in the gym's time zone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail_text: Option<String>,
}

impl<'a> LogView<'a> {
    /// The entry, with its reason and detail in words and `tz`'s time.
    pub fn for_owner(l: &'a LogEntry, tz: &jiff::tz::TimeZone) -> Self {
        Self {
            at: l.at,
            from_status: l.from_status,
            to_status: l.to_status,
            reason: &l.reason,
            detail: l.detail.as_deref(),
            reason_text: crate::task::reason_words::sentence(&l.reason),
            detail_text: l.detail.as_deref().map(|d| crate::task::reason_words::detail(d, tz)),
        }
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageView<'a> {
    pub at: Timestamp,
    pub role: Role,
    pub content: &'a str,
    /// A member's whole message, when reading it kept less than a sentence of more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<&'a str>,
}

impl<'a> From<&'a ConversationMessage> for MessageView<'a> {
    fn from(m: &'a ConversationMessage) -> Self {
        Self {
            at: m.at,
            role: m.role,
            content: &m.content,
            original: m.original.as_deref(),
        }
    }
}

/// `GET /api/v1/tasks/{id}`: the task plus its log and conversation, oldest first.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskDetailView<'a> {
    #[serde(flatten)]
    pub task: TaskView<'a>,
    pub log: Vec<LogView<'a>>,
    pub messages: Vec<MessageView<'a>>,
}

impl<'a> TaskDetailView<'a> {
    /// The task for its owner: the log's reasons and details in words, in `tz`'s time.
    pub fn for_owner(h: &'a TaskHistory, tz: &jiff::tz::TimeZone) -> Self {
        Self {
            task: (&h.task).into(),
            log: h.log.iter().map(|l| LogView::for_owner(l, tz)).collect(),
            messages: h.messages.iter().map(Into::into).collect(),
        }
    }
}

/// `Memory` of the API.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemoryView<'a> {
    pub id: String,
    pub content: &'a str,
    pub member_id: Option<&'a str>,
    pub category: Option<&'a str>,
    pub source: crate::owner::business_memory::MemorySource,
    /// 0–100, like a task's.
    pub confidence: u8,
    pub created_at: Timestamp,
    pub expires_at: Option<Timestamp>,
}

impl<'a> From<&'a crate::owner::business_memory::BusinessMemory> for MemoryView<'a> {
    fn from(m: &'a crate::owner::business_memory::BusinessMemory) -> Self {
        Self {
            id: m.id.to_string(),
            content: &m.content,
            member_id: m.member_id.as_ref().map(|m| m.as_str()),
            category: m.category.as_deref(),
            source: m.source,
            confidence: m.confidence,
            created_at: m.created_at,
            expires_at: m.expires_at,
        }
    }
}

/// `Suggestion` of the API.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuggestionView<'a> {
    pub id: String,
    pub kind: crate::learning::suggestion::SuggestionKind,
    pub title: &'a str,
    pub body: &'a str,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub evidence: &'a serde_json::Value,
    pub strength: crate::learning::suggestion::Strength,
    /// 0–100, like a task's.
    pub confidence: u8,
    pub status: crate::learning::suggestion::SuggestionStatus,
    pub created_at: Timestamp,
}

impl<'a> From<&'a crate::learning::suggestion::Suggestion> for SuggestionView<'a> {
    fn from(s: &'a crate::learning::suggestion::Suggestion) -> Self {
        Self {
            id: s.id.to_string(),
            kind: s.kind,
            title: &s.title,
            body: &s.body,
            evidence: &s.evidence,
            strength: s.strength,
            confidence: s.confidence,
            status: s.status,
            created_at: s.created_at,
        }
    }
}

/// `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
}

impl ErrorBody {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: ErrorDetail {
                code: code.into(),
                message: message.into(),
            },
        }
    }
}

/// One decision of the activity feed (`GET /api/v1/activity`).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivityView<'a> {
    pub at: Timestamp,
    pub task_id: String,
    pub task_type: &'a str,
    pub member_id: &'a str,
    pub from_status: Option<TaskStatus>,
    pub to_status: TaskStatus,
    pub reason: &'a str,
    pub detail: Option<&'a str>,
    /// The reason as a sentence for the owner (`task/reason_words.rs`).
    pub reason_text: String,
    /// The detail as the owner reads it: instants in the gym's time zone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail_text: Option<String>,
}

impl<'a> ActivityView<'a> {
    /// The entry, with its reason and detail in words and `tz`'s time.
    pub fn for_owner(a: &'a crate::task::history::ActivityEntry, tz: &jiff::tz::TimeZone) -> Self {
        Self {
            at: a.entry.at,
            task_id: a.task_id.to_string(),
            task_type: &a.task_type,
            member_id: a.member_id.as_str(),
            from_status: a.entry.from_status,
            to_status: a.entry.to_status,
            reason: &a.entry.reason,
            detail: a.entry.detail.as_deref(),
            reason_text: crate::task::reason_words::sentence(&a.entry.reason),
            detail_text: a.entry.detail.as_deref().map(|d| crate::task::reason_words::detail(d, tz)),
        }
    }
}

/// CONTRACT.md's error body for a domain error: its stable code and a message for people.
/// Internal details stay in the logs. (Which HTTP status goes with it is the HTTP entry
/// points' business: `openloop_edge::http`.)
pub fn error_body(e: &EngineError) -> ErrorBody {
    match e {
        EngineError::Invalid(i) => ErrorBody::new(&i.code, &i.message),
        EngineError::NotFound { what } => ErrorBody::new("not_found", format!("{what} not found")),
        EngineError::InvalidTransition { from, to } => {
            ErrorBody::new("invalid_transition", format!("a task in status {from} cannot move to {to}"))
        }
        EngineError::InvalidState { status, action } => {
            ErrorBody::new("invalid_state", format!("a task in status {status} cannot take {action}"))
        }
        EngineError::StaleVersion => ErrorBody::new(
            "stale_version",
            "the task changed while this request was applied; re-read it and retry",
        ),
        EngineError::Paused(m) => ErrorBody::new("paused", m),
        EngineError::Store(StoreError::InvalidCursor) => ErrorBody::new("invalid_cursor", "the cursor is not one this API returned"),
        EngineError::Store(_) => ErrorBody::new("store_unavailable", "the task store is unavailable; retry shortly"),
        EngineError::Dependency(_) => ErrorBody::new("dependency_unavailable", "a dependency is unavailable; retry shortly"),
        EngineError::NotConfigured(missing) => ErrorBody::new(&missing.code, &missing.message),
        EngineError::Taken(taken) => ErrorBody::new(&taken.code, &taken.message),
        EngineError::Unauthorized(refused) => ErrorBody::new(&refused.code, &refused.message),
        EngineError::Limited(refusal) => ErrorBody::new("limited", format!("{} ({})", refusal, refusal.limit.reason())),
        EngineError::MemberSuppressed { .. } => ErrorBody::new("member_suppressed", e.to_string()),
    }
}

/// `Todo` of the API ("The owner's day").
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TodoView<'a> {
    pub id: String,
    pub task_id: String,
    pub member: &'a crate::task::todo::TodoMember,
    pub kind: crate::task::todo::TodoKind,
    pub what: &'a str,
    pub due_at: Timestamp,
    pub status: crate::task::todo::TodoStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snoozed_until: Option<Timestamp>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::task::todo::Contact>))]
    pub contacts: &'a [crate::task::todo::Contact],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
}

impl<'a> From<&'a crate::task::todo::Todo> for TodoView<'a> {
    fn from(t: &'a crate::task::todo::Todo) -> Self {
        Self {
            id: t.id.to_string(),
            task_id: t.task_id.to_string(),
            member: &t.member,
            kind: t.kind,
            what: &t.what,
            due_at: t.due_at,
            status: t.status,
            snoozed_until: t.snoozed_until,
            contacts: &t.contacts,
            outcome: t.outcome.as_deref(),
            note: t.note.as_deref(),
        }
    }
}

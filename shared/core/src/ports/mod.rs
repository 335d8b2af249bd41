//! Ports: the traits through which the domain reaches the outside world. Adapters live in
//! `openloop-aws` (DynamoDB, SQS, EventBridge, SES), `openloop-llm` (AI) and [`crate::memory`]
//! (in-memory store for tests).
//!
//! Durable state is behind [`store`]: one trait per aggregate (accounts, tasks, members,
//! counters…), and [`TaskStore`], every one of them at once, which is what the engine holds.
//! One conformance suite checks every [`TaskStore`]. Here are the others: the clock, the
//! queues, the mailer, stored inbound mail, the agent and the event bus.

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::conversation::mail::OutboundMail;
use crate::conversation::reply::ReplyEvaluation;
use crate::owner::account::Profile;
use crate::task::ConversationMessage;
pub use crate::task::Drafted;
pub use crate::task::progress::{EvidenceType, GoalProgress, RecommendedAction};
use crate::task::work::QueueName;

pub mod connection;
pub mod credentials;
pub mod deliverability;
pub mod erasure;
pub mod loops;
pub mod messages;
pub mod sealing;
pub mod sms;
pub mod store;
pub mod todos;
pub mod webhooks;

pub use connection::{AnnotationStore, ConnectionStore};
pub use credentials::CredentialStore;
pub use deliverability::{DeliverabilityStore, DnsTxt, SendingDomainError, SendingDomains};
pub use erasure::ErasureStore;
pub use loops::{LoopStore, TriggerStore};
pub use messages::MessageTemplateStore;
pub use sealing::{Keyring, SecretStore};
pub use sms::{OutboundText, SmsSender};
pub use todos::TodoStore;
pub use webhooks::{TransportError, WebhookStore, WebhookTransport};

pub use store::{
    AccountStore, BusinessMemoryStore, ConnectorHealthStore, Counters, Idempotency, LearningStore, MemberStore, MetricsStore, NoticeStore,
    SignInLinkStore, SuggestionStore, TaskIndex, TaskQuery, TaskReads, TaskStore, TaskWrites, TemplateStore, prelude,
};
pub use store::{AiCallCount, CommitExtras};

/// The time, as every component must read it (a test clock locally).
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// The real clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("queue {queue:?} unavailable: {message}")]
pub struct QueueError {
    pub queue: QueueName,
    pub message: String,
}

/// Message queues (SQS).
#[async_trait]
pub trait Queue: Send + Sync {
    /// Send bodies to `queue`, each delayed by its duration (at most 15 minutes).
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), QueueError>;
}

/// What the mail provider said about a send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub provider_id: String,
    /// The Message-ID the provider put on the delivered copy, if it rewrites ours.
    pub provider_message_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The provider refused the mail; it was not sent. Safe to retry later.
    #[error("rejected: {0}")]
    Rejected(String),
    /// The request may or may not have been acted on. Never retried blind.
    #[error("outcome unknown: {0}")]
    Ambiguous(String),
}

#[async_trait]
pub trait Mailer: Send + Sync {
    async fn send(&self, mail: &OutboundMail) -> Result<Delivered, SendError>;
}

/// Where SES receiving keeps a whole inbound message when its notification cannot carry it
/// (an S3 action: SNS notifications hold at most 150 KB). A message is removed once its reply
/// is in the task's conversation, so the raw copy of what a member wrote lives no longer than
/// its notification takes; the bucket's lifecycle rule removes what was never read (a
/// notification that failed for good), and a retried notification that finds its message gone
/// was handled already.
#[async_trait]
pub trait StoredMail: Send + Sync {
    /// The raw RFC 5322 bytes stored under `bucket`/`key`.
    async fn fetch(&self, bucket: &str, key: &str) -> Result<Vec<u8>, StoredMailError>;
    /// Remove the message under `bucket`/`key`; one already gone is no error.
    async fn remove(&self, bucket: &str, key: &str) -> Result<(), StoredMailError>;
}

#[derive(Debug, thiserror::Error)]
pub enum StoredMailError {
    /// Not there, or not a bucket we read: retrying will not help.
    #[error("stored mail not found: {0}")]
    NotFound(String),
    /// The storage could not be reached; worth retrying.
    #[error("stored mail unavailable: {0}")]
    Unavailable(String),
}

/// No stored mail (the local runtime: inbound mail arrives whole over HTTP).
pub struct NoStoredMail;

#[async_trait]
impl StoredMail for NoStoredMail {
    async fn fetch(&self, bucket: &str, key: &str) -> Result<Vec<u8>, StoredMailError> {
        Err(StoredMailError::NotFound(format!("{bucket}/{key}: no mail storage configured")))
    }

    async fn remove(&self, _bucket: &str, _key: &str) -> Result<(), StoredMailError> {
        Ok(())
    }
}

/// What the agent is asked to write.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DraftRequest {
    pub task_type: String,
    pub goal: String,
    pub member_first_name: Option<String>,
    pub profile: Profile,
    pub business_name: String,
    /// 0 = first message; later touches are follow-ups in the same thread.
    pub touch: u32,
    pub tone: String,
    pub touches_remaining: u32,
    pub context: serde_json::Value,
    /// The composed system prompt (`conversation::prompt`): base rules, the type's skill,
    /// the account's context and memories, the owner's overrides and additions, goal and
    /// budget, the member's other open tasks. Models are told it before the draft's own
    /// instructions; every draft call carries it.
    #[serde(default)]
    pub system_prompt: String,
    /// What the offline agent writes from (models are not shown it): the member's facts as
    /// template variables and the owner's own template for this message, if any.
    #[serde(default)]
    pub message: crate::conversation::messages::MessageInputs,
}

#[derive(Debug, thiserror::Error)]
#[error("agent failed: {0}")]
pub struct AgentError(pub String);

/// What the agent is asked to judge: a member's reply in its task's conversation (spec §6.5,
/// §16, §18). Everything the model may see is here; the adapters decide how to say it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplyRequest {
    pub task_type: String,
    pub goal: String,
    /// The task type's outcome codes: an evaluation may only name one of these.
    pub outcome_codes: Vec<String>,
    pub member_first_name: Option<String>,
    pub profile: Profile,
    pub business_name: String,
    /// The composed system prompt (skills, account context, overrides, goal, cross-task
    /// context). Model adapters send it as the system message; the offline agent ignores it.
    pub system_prompt: String,
    /// The conversation so far, oldest first, not including `reply`.
    pub conversation: Vec<ConversationMessage>,
    /// The member's reply, with quoted history and signature stripped.
    pub reply: String,
    pub messages_left: u32,
    pub turns_left: u32,
    pub days_left: i64,
    /// What the offline agent writes from (models are not shown it): the member's facts as
    /// template variables and the owner's own template for its answer ([`crate::conversation::messages::REPLY`]), if any.
    #[serde(default)]
    pub message: crate::conversation::messages::MessageInputs,
    /// The gym's own facts for members' questions (its memories of category
    /// [`crate::owner::business_memory::FAQ_CATEGORY`]), as the owner wrote them: a question is
    /// answered from these or goes to the owner, never from anything the agent makes up.
    #[serde(default)]
    pub facts: Vec<String>,
}

/// What the agent is asked about a task's progress towards its goal.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompletionRequest {
    pub task_type: String,
    pub goal: String,
    pub judgment_criteria: Option<String>,
    pub outcome_codes: Vec<String>,
    pub system_prompt: String,
    pub conversation: Vec<ConversationMessage>,
    /// Facts known about the member and the signals seen since the task started:
    /// `{"signals": [{"signal": "checkin", "at": "<RFC 3339>"}, …], "facts": {…}}` (a signal may
    /// also be a bare name, `"checkin"`). Progressive goals count repeated signals.
    pub evidence: serde_json::Value,
}

/// One step a planning parent already took, for the planner.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepResult {
    pub task_type: String,
    pub goal: String,
    pub requirement: crate::task::subtasks::Requirement,
    pub status: crate::task::TaskStatus,
    pub outcome: Option<String>,
}

/// What the planner is asked: the goal, what was tried, and what it may choose from.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    pub task_type: String,
    pub goal: String,
    pub system_prompt: String,
    /// The task types a step may be (each needs a type of its own: one active task per member
    /// and type).
    pub step_types: Vec<String>,
    /// The steps taken so far, oldest first.
    pub steps: Vec<StepResult>,
    /// How many more steps the parent may take.
    pub steps_left: u32,
    /// What is known about the member (their projected facts), JSON; `null` if nothing.
    pub facts: serde_json::Value,
}

/// The next step the planner chose.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedStep {
    pub task_type: String,
    pub goal: String,
    pub requirement: crate::task::subtasks::Requirement,
}

/// The planner's answer: one step at a time, with a rough outline of the rest
/// (for the log only) and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanDecision {
    /// `None`: no further step; the parent is judged on the steps it took.
    pub next: Option<PlannedStep>,
    pub remaining: Vec<String>,
    pub reasoning: String,
}

/// The AI (an LLM, or the offline heuristic agent).
#[async_trait]
pub trait Agent: Send + Sync {
    async fn draft(&self, request: &DraftRequest) -> Result<Drafted, AgentError>;
    /// Judge a member's reply. An error means "unsure": callers escalate.
    async fn evaluate_reply(&self, request: &ReplyRequest) -> Result<ReplyEvaluation, AgentError>;
    /// Judge progress towards the goal. An error means "unsure": callers escalate.
    async fn evaluate_completion(&self, request: &CompletionRequest) -> Result<GoalProgress, AgentError>;
    /// Decide a planning parent's next step. An error means "unsure": the
    /// parent escalates.
    async fn plan_next(&self, request: &PlanRequest) -> Result<PlanDecision, AgentError>;
}

/// Domain events for other functions (EventBridge).
#[async_trait]
pub trait EventBus: Send + Sync {
    async fn publish(&self, detail_type: &str, detail: serde_json::Value) -> Result<(), String>;
}

/// What turns an account's closed tasks into suggestions (spec 003 "The
/// Evaluator"): the offline statistics ([`OfflineEvaluator`], the default), or a model.
#[async_trait]
pub trait Evaluator: Send + Sync {
    /// The findings in an account's closed `tasks`, given its thresholds as they stand
    /// (`calibration`: a calibration suggests moving them).
    async fn evaluate(
        &self,
        tasks: &[crate::learning::evaluator::ClosedTask],
        calibration: &crate::owner::calibration::Calibration,
    ) -> Result<Vec<crate::learning::suggestion::SuggestionDraft>, AgentError>;

    /// Whether an evaluation is an AI call, counted against the account's AI calls for the
    /// day like every other (a model's is; the offline statistics are not).
    fn uses_ai(&self) -> bool {
        false
    }
}

/// Deterministic statistics with explicit thresholds (`crate::learning::offline`).
pub struct OfflineEvaluator;

#[async_trait]
impl Evaluator for OfflineEvaluator {
    async fn evaluate(
        &self,
        tasks: &[crate::learning::evaluator::ClosedTask],
        calibration: &crate::owner::calibration::Calibration,
    ) -> Result<Vec<crate::learning::suggestion::SuggestionDraft>, AgentError> {
        Ok(crate::learning::offline::evaluate(tasks, calibration))
    }
}

/// A bus that drops everything (for tests that do not look at events).
pub struct NullBus;

#[async_trait]
impl EventBus for NullBus {
    async fn publish(&self, _: &str, _: serde_json::Value) -> Result<(), String> {
        Ok(())
    }
}

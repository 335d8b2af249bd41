//! Ports: the traits through which the domain reaches the outside world. Adapters live in
//! `openloop-aws` (DynamoDB, SQS, EventBridge, SES), `openloop-llm` (AI) and [`crate::memory`]
//! (in-memory store for tests). One conformance suite checks every [`TaskStore`].

use async_trait::async_trait;
use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::account::{Account, Profile, SystemConfig};
use crate::action::{ActionClaim, ActionRecord};
use crate::connector::{ConnectorHealth, HealthChange};
use crate::error::StoreError;
use crate::flood::{CreationCounts, CreationQuota};
use crate::ids::{AccountId, Email, MemberId, TaskId};
use crate::interaction::{InteractionOutcome, SharedOutcome};
use crate::mail::OutboundMail;
use crate::member::{MemberFacts, SendLedger};
use crate::metrics::{DailyMetrics, MetricsCursor};
use crate::owner_notice::OwnerNotice;
use crate::recurring::RecurringTemplate;
use crate::task::{ConversationMessage, Draft, LogEntry, OutboundMessage, Task, TaskStatus};
use crate::work::{DueEntry, QueueName};

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

/// What the send gates read before a step, fetched in one round trip.
#[derive(Clone, Debug, Default)]
pub struct SendSnapshot {
    pub system: SystemConfig,
    pub account: Option<Account>,
    pub suppressed: bool,
    pub ledger: SendLedger,
    /// What the connector has told us about the member, for the stale guard (spec §30).
    pub facts: Option<MemberFacts>,
    /// The account's daily send counters on the days around the date asked for (the
    /// account's local date is one of them, whatever its time zone).
    pub daily: Vec<(Date, u32)>,
}

impl SendSnapshot {
    pub fn daily_sends(&self, date: Date) -> u32 {
        self.daily.iter().find(|(d, _)| *d == date).map_or(0, |(_, n)| *n)
    }
}

/// The three dates whose counters a snapshot around `date` holds.
pub fn dates_around(date: Date) -> [Date; 3] {
    [date.yesterday().unwrap_or(date), date, date.tomorrow().unwrap_or(date)]
}

/// A filter for the owner's task list.
#[derive(Clone, Debug, Default)]
pub struct TaskQuery {
    pub status: Option<TaskStatus>,
    pub member_id: Option<MemberId>,
    pub limit: usize,
    pub cursor: Option<String>,
}

/// A task with everything that explains it, oldest first.
#[derive(Clone, Debug)]
pub struct TaskHistory {
    pub task: Task,
    pub log: Vec<LogEntry>,
    pub messages: Vec<ConversationMessage>,
    pub outbound: Vec<OutboundMessage>,
}

/// One decision of the account's activity feed: a log entry and the task it explains.
#[derive(Clone, Debug, PartialEq)]
pub struct ActivityEntry {
    pub task_id: TaskId,
    pub task_type: String,
    pub member_id: MemberId,
    pub entry: LogEntry,
}

impl ActivityEntry {
    /// Where the entry sorts in the feed: by its time (to the millisecond), then its id.
    pub fn sort_key(&self) -> String {
        format!("{}#{}", crate::work::due_time_key(self.entry.at), self.entry.id)
    }
}

/// What a send does to the counters that enforce the guarantees, committed with the task.
#[derive(Clone, Debug)]
pub enum SendEffect {
    /// Count the send before it happens: put the outbound record (only if no live record
    /// exists for this task and touch), write the member's new ledger (only if the ledger is
    /// still at `ledger.version - 1`), and add one to the account's daily counter (only if it
    /// is below `daily_limit`).
    Reserve {
        outbound: OutboundMessage,
        member_id: MemberId,
        ledger: SendLedger,
        daily_date: Date,
        daily_limit: u32,
    },
    /// Update the outbound record after the send (sent, or unknown).
    Record { outbound: OutboundMessage },
    /// The provider refused the mail: nothing went out, so give back what was counted.
    Release {
        outbound: OutboundMessage,
        member_id: MemberId,
        ledger_key: String,
        daily_date: Date,
    },
}

/// One atomic change to a task: the new task (written only if the stored version is still
/// `expected_version`), the log entries explaining it — one per version step — conversation
/// entries, and the send effect. Closing a task also frees its active guard.
#[derive(Clone, Debug)]
pub struct TaskCommit {
    pub expected_version: u64,
    pub task: Task,
    pub log: Vec<LogEntry>,
    pub messages: Vec<ConversationMessage>,
    pub send: Option<SendEffect>,
}

impl TaskCommit {
    /// One step: the version the task had before `log`'s change.
    pub fn new(task: Task, log: LogEntry) -> Self {
        Self {
            expected_version: task.version - 1,
            task,
            log: vec![log],
            messages: Vec::new(),
            send: None,
        }
    }
}

/// All durable state. Every write that must hold with another is one call, hence one
/// transaction; conditional failures come back as [`StoreError::Conflict`].
#[async_trait]
pub trait TaskStore: Send + Sync {
    async fn create_account(&self, account: &Account, api_token_hash: &str) -> Result<(), StoreError>;
    async fn get_account(&self, id: AccountId) -> Result<Option<Account>, StoreError>;
    async fn account_for_token(&self, api_token_hash: &str) -> Result<Option<AccountId>, StoreError>;
    /// Write `account` if the stored version is `account.version - 1`.
    async fn save_account(&self, account: &Account) -> Result<(), StoreError>;
    async fn list_accounts(&self) -> Result<Vec<Account>, StoreError>;
    async fn system_config(&self) -> Result<SystemConfig, StoreError>;
    async fn save_system_config(&self, config: &SystemConfig) -> Result<(), StoreError>;

    // Recurring templates (spec §31.6).
    /// Write a template whose `version` is one more than the stored one (1 = create);
    /// `Conflict::Version` if another writer got there first.
    async fn save_template(&self, template: &RecurringTemplate) -> Result<(), StoreError>;
    async fn list_templates(&self, account: AccountId) -> Result<Vec<RecurringTemplate>, StoreError>;
    /// Enabled templates of every account due at or before `until`, soonest first.
    async fn due_templates(&self, until: Timestamp, limit: usize) -> Result<Vec<RecurringTemplate>, StoreError>;
    /// `false` if there was none.
    async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError>;

    /// Create a task with its creation log entry, atomically with its active guard:
    /// [`crate::error::Conflict::ActiveTask`] if the member already has an active task of the type.
    async fn create_task(&self, task: &Task, log: &LogEntry, messages: &[ConversationMessage]) -> Result<(), StoreError>;
    /// The active task of this member and type, if any.
    async fn active_task(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<TaskId>, StoreError>;
    /// Every active task about one member, oldest first, read through the active-task guards:
    /// the cost grows with the member's own open tasks, never with the account's.
    async fn member_active_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, StoreError>;
    /// A consistent read of a task.
    async fn get_task(&self, account: AccountId, id: TaskId) -> Result<Option<Task>, StoreError>;
    /// Consistent reads of several tasks of one account; ids not found are left out.
    async fn get_tasks(&self, account: AccountId, ids: &[TaskId]) -> Result<Vec<Task>, StoreError>;
    async fn task_history(&self, account: AccountId, id: TaskId) -> Result<Option<TaskHistory>, StoreError>;
    /// Newest first, `query.limit` at most, with a cursor for the next page.
    async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), StoreError>;
    async fn commit(&self, commit: &TaskCommit) -> Result<(), StoreError>;
    /// Due-index entries of one shard due at or before `until`, oldest first.
    async fn due(
        &self,
        shard: u32,
        until: Timestamp,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<DueEntry>, Option<String>), StoreError>;
    async fn outbound(&self, account: AccountId, task: TaskId) -> Result<Vec<OutboundMessage>, StoreError>;

    async fn get_member(&self, account: AccountId, member: &MemberId) -> Result<Option<(MemberFacts, SendLedger)>, StoreError>;
    /// Write member facts if the stored facts are at `facts.version - 1` (or absent for 1).
    async fn save_member_facts(&self, account: AccountId, facts: &MemberFacts) -> Result<(), StoreError>;
    async fn daily_sends(&self, account: AccountId, date: Date) -> Result<u32, StoreError>;
    /// The global pause, the account, the member's suppression and send ledger, and the
    /// daily counters around `around` (see [`dates_around`]) — consistently, in one read.
    async fn send_snapshot(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
    ) -> Result<SendSnapshot, StoreError>;

    async fn is_suppressed(&self, account: AccountId, email: &Email) -> Result<bool, StoreError>;
    async fn put_suppression(&self, account: AccountId, email: &Email, reason: &str, at: Timestamp) -> Result<(), StoreError>;
    async fn delete_suppression(&self, account: AccountId, email: &Email) -> Result<bool, StoreError>;

    /// Record a webhook delivery; `false` if this id was recorded before (a duplicate).
    async fn claim_webhook(&self, source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Result<bool, StoreError>;
    /// Forget a claim whose event could not be queued, so the sender's retry is accepted.
    async fn release_webhook(&self, source: &str, id: &str) -> Result<(), StoreError>;

    // Reply routing (spec §24.3). Every `SendEffect::Record` also records where replies to
    // that mail belong: the task's account (for its signed reply address) and both
    // Message-IDs (ours and the provider's), so a reply routes without knowing the account.
    /// The account of a task that has mailed someone.
    async fn task_account(&self, task: TaskId) -> Result<Option<AccountId>, StoreError>;
    /// The task a Message-ID of ours (or the provider's copy of it) belongs to.
    async fn message_route(&self, message_id: &str) -> Result<Option<(AccountId, TaskId)>, StoreError>;

    /// Count one AI call of the account on `date` (its local day), atomically and only while
    /// fewer than `limit` were made: the new count, or `None` when the day's calls are used up.
    async fn count_ai_call(&self, account: AccountId, date: Date, limit: u32) -> Result<Option<u32>, StoreError>;
    /// The same for any other daily allowance of the account, named `counter` (an owner
    /// notice kind's daily budget): one atomic write.
    async fn count_daily(&self, account: AccountId, counter: &str, date: Date, limit: u32) -> Result<Option<u32>, StoreError>;

    /// Closed tasks that attribution still watches ([`Task::attribution_until`] set), from one
    /// shard of the attribution index, soonest window end first, `limit` at most, with a
    /// cursor for the next page. Read from an index: re-read a task before deciding on it.
    async fn attribution_watch(&self, shard: u32, limit: usize, cursor: Option<String>) -> Result<(Vec<Task>, Option<String>), StoreError>;

    /// The account's decisions across all its tasks, newest first, `limit` at most, with a
    /// cursor for the next page (the activity feed).
    async fn activity(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<ActivityEntry>, Option<String>), StoreError>;

    // Creation limits (spec §7.9, §7.13; see [`crate::flood`]).
    /// [`TaskStore::create_task`] that also counts the task against the account's creation
    /// counters and checks `quota`, all in the one transaction: the open-task count (below
    /// `active_max`), the day's creations (below `daily_max`) and, for agent-spawned tasks,
    /// the day's agent creations for the account and the member. A limit that is reached
    /// comes back as its [`crate::error::Conflict`] and nothing is written. Closing a task
    /// ([`crate::flood::closes_task`]) gives back its open-task count in `commit`.
    async fn create_task_within(
        &self,
        task: &Task,
        log: &LogEntry,
        messages: &[ConversationMessage],
        quota: &CreationQuota,
    ) -> Result<(), StoreError>;
    /// The creation counters of `account` for its local `date`, in one read.
    async fn creation_counts(&self, account: AccountId, date: Date) -> Result<CreationCounts, StoreError>;

    /// One page of the account's member facts (members whose facts were never written are
    /// left out), in member-id order, at most `limit`, with a cursor for the next page — for
    /// the risk scan (spec §18.2).
    async fn list_member_facts(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberFacts>, Option<String>), StoreError>;

    // The learning record (spec 003, see [`crate::interaction`]): `commit` writes it in the
    // same transaction whenever the committed task is closed (and rewrites it when a closed
    // task is revised), as the account's full record and the cross-tenant share of it.
    /// The account's record of a closed task.
    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError>;
    /// One page of the cross-tenant records of `month` (`YYYY-MM`, UTC), at most `limit`, with
    /// a cursor for the next page: the shared part only, across every account.
    async fn shared_outcomes(
        &self,
        month: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<SharedOutcome>, Option<String>), StoreError>;

    // Connector health (spec §34.2, see [`crate::connector`]).
    /// The account's health of the connector `name` (healthy if never recorded).
    async fn connector_health(&self, account: AccountId, name: &str) -> Result<ConnectorHealth, StoreError>;
    /// Record one call's result at `now`, atomically, and return the health after it: a
    /// failure adds one to the consecutive failures and, reaching `degraded_after`, marks the
    /// connector degraded — [`HealthChange::Degraded`] goes to exactly one caller; a success
    /// resets the failures and ends a degradation ([`HealthChange::Recovered`]).
    async fn record_connector_call(
        &self,
        account: AccountId,
        name: &str,
        ok: bool,
        now: Timestamp,
        degraded_after: u32,
    ) -> Result<(ConnectorHealth, HealthChange), StoreError>;

    // Daily metrics (spec §28.3, see [`crate::metrics`]).
    /// The account's metrics watermark, totals and raised alerts (version 0 if never written).
    async fn metrics_cursor(&self, account: AccountId) -> Result<MetricsCursor, StoreError>;
    /// Write `cursor` if the stored one is at `cursor.version - 1` (or absent, for 1) and, in
    /// the same transaction, add each day's counts to the account's metrics of that day —
    /// except `ai_calls`, which is set to the given value when it is not zero (it is the AI
    /// counter's reading, not an increment). `Conflict::Version` if another run got there first.
    async fn save_metrics(&self, account: AccountId, cursor: &MetricsCursor, days: &[(Date, DailyMetrics)]) -> Result<(), StoreError>;
    /// The account's metrics of one local day (zeros if none).
    async fn daily_metrics(&self, account: AccountId, date: Date) -> Result<DailyMetrics, StoreError>;
    /// The account's metrics of the local days `from` through `to` that have any, oldest
    /// first, in one ranged read (days never counted are left out).
    async fn metrics_days(&self, account: AccountId, from: Date, to: Date) -> Result<Vec<(Date, DailyMetrics)>, StoreError>;
    /// The account's AI calls counted on one local day (see [`TaskStore::count_ai_call`]).
    async fn ai_calls(&self, account: AccountId, date: Date) -> Result<u32, StoreError>;

    // Owner notifications (spec §35; see [`crate::owner_notice`]).
    /// Write a new notice; one with `digest_at` also waits in the digest index until taken.
    async fn put_notice(&self, notice: &OwnerNotice) -> Result<(), StoreError>;
    /// The account's notices, newest first, `limit` at most, with a cursor for the next page.
    async fn list_notices(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<OwnerNotice>, Option<String>), StoreError>;
    /// Notices of every account whose digest is due at or before `until`, soonest first.
    /// Read from an index: claim each one before mailing it.
    async fn due_notices(&self, until: Timestamp, limit: usize) -> Result<Vec<OwnerNotice>, StoreError>;
    /// Take a notice out of the digest index (its `digest_at` cleared), atomically: `false` if
    /// it was not waiting (already taken by another worker, or never batched).
    async fn claim_notice(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError>;

    // The action log (spec §32.2; see [`crate::action`]).
    /// Write `record` (state `Started`) under its key if no record has the key, or if the one
    /// there `Failed`; otherwise change nothing and return the record there.
    async fn claim_action(&self, record: &ActionRecord) -> Result<ActionClaim, StoreError>;
    /// Write the record's outcome over its claim.
    async fn finish_action(&self, record: &ActionRecord) -> Result<(), StoreError>;
    /// A task's action records, in key order.
    async fn task_actions(&self, account: AccountId, task: TaskId) -> Result<Vec<ActionRecord>, StoreError>;
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
/// (an S3 action: SNS notifications hold at most 150 KB). Read-only: the bucket's lifecycle
/// rule removes messages, so a retried notification can read its message again.
#[async_trait]
pub trait StoredMail: Send + Sync {
    /// The raw RFC 5322 bytes stored under `bucket`/`key`.
    async fn fetch(&self, bucket: &str, key: &str) -> Result<Vec<u8>, StoredMailError>;
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
}

/// What to do about a reply (spec §6.5).
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
    /// The member asked to stop or was hostile: suppress them (spec §22.3).
    pub suggest_suppression: bool,
    /// A verbal commitment, to be verified by a signal within the window (spec §5.3).
    pub provisional: bool,
    /// The member asked something the agent cannot answer from what it knows.
    pub unanswered_question: Option<String>,
    /// The reply is about another subject than this task's (spec §19.5).
    pub other_subject: Option<String>,
}

/// What the agent is asked about a task's progress towards its goal (spec §16.3, §37).
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

/// How the evidence for a goal was obtained (spec §37.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceType {
    ConcreteSignal,
    VerbalCommitment,
    Inferred,
    PartialSignal,
    None,
}

/// What the evaluator recommends (spec §37.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecommendedAction {
    Complete,
    WaitAndVerify,
    Continue,
    Escalate,
    CloseAsNeutral,
}

/// One milestone of a progressive goal (onboarding: three check-ins).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Milestone {
    pub name: String,
    pub hit: bool,
    pub hit_at: Option<Timestamp>,
}

/// The goal-progress model (spec §37.2): not a yes/no, but how far and how sure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalProgress {
    pub progress_pct: u8,
    pub current_outcome: String,
    pub confidence: u8,
    pub evidence_type: EvidenceType,
    pub evidence: String,
    pub recommended_action: RecommendedAction,
    pub milestones: Vec<Milestone>,
    pub risks: Vec<String>,
}

/// One step a planning parent already took (spec §14.2), for the planner.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepResult {
    pub task_type: String,
    pub goal: String,
    pub requirement: crate::subtasks::Requirement,
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
    pub requirement: crate::subtasks::Requirement,
}

/// The planner's answer (spec §14.2): one step at a time, with a rough outline of the rest
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
    async fn draft(&self, request: &DraftRequest) -> Result<Draft, AgentError>;
    /// Judge a member's reply. An error means "unsure": callers escalate.
    async fn evaluate_reply(&self, request: &ReplyRequest) -> Result<ReplyEvaluation, AgentError>;
    /// Judge progress towards the goal. An error means "unsure": callers escalate.
    async fn evaluate_completion(&self, request: &CompletionRequest) -> Result<GoalProgress, AgentError>;
    /// Decide a planning parent's next step (spec §14.2). An error means "unsure": the
    /// parent escalates.
    async fn plan_next(&self, request: &PlanRequest) -> Result<PlanDecision, AgentError>;
}

/// Domain events for other functions (EventBridge).
#[async_trait]
pub trait EventBus: Send + Sync {
    async fn publish(&self, detail_type: &str, detail: serde_json::Value) -> Result<(), String>;
}

/// A bus that drops everything (for tests that do not look at events).
pub struct NullBus;

#[async_trait]
impl EventBus for NullBus {
    async fn publish(&self, _: &str, _: serde_json::Value) -> Result<(), String> {
        Ok(())
    }
}

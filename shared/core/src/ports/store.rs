//! The store's ports: durable state, one trait per aggregate — the task, written and read the
//! most, has its writes and its reads apart ([`TaskWrites`], [`TaskReads`]) and an index —
//! each small enough (ten methods at most) to read in one sitting and to implement in one file
//! of each backend (`crate::memory`, and the DynamoDB store in `openloop-aws`). [`TaskStore`]
//! is all of them at once — what the engine holds — and comes with implementing them.
//!
//! Every write that must hold with another is one call, hence one transaction; conditional
//! failures come back as [`StoreError::Conflict`]. A guarantee that spans aggregates lives
//! with the write that makes it: a send's reservation, the creation counters and the learning
//! record are all written by [`TaskWrites`], in the task's transaction. One conformance suite
//! (`crate::conformance`, split the same way) checks every backend.

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::civil::Date;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, Email, MemberId, TaskId};
use crate::learning::interaction::{InteractionOutcome, SharedOutcome};
use crate::learning::suggestion::{Suggestion, SuggestionStatus};
use crate::members::connector::{ConnectorHealth, HealthChange};
use crate::members::member::{MemberFacts, SendLedger};
use crate::owner::account::{Account, SystemConfig};
use crate::owner::business_memory::MemoryBook;
use crate::owner::metrics::{DailyMetrics, MetricsCursor};
use crate::owner::owner_notice::OwnerNotice;
use crate::owner::recurring::RecurringTemplate;
use crate::owner::sign_in::SignInLink;
use crate::rails::send_gate::SendSnapshot;
use crate::task::action::{ActionClaim, ActionRecord};
use crate::task::commit::TaskCommit;
use crate::task::flood::{CreationCounts, CreationQuota};
use crate::task::history::{ActivityEntry, TaskHistory};
use crate::task::tally::TaskTally;
use crate::task::work::DueEntry;
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, Task, TaskStatus};

/// A filter for the owner's task list.
#[derive(Clone, Debug, Default)]
pub struct TaskQuery {
    pub status: Option<TaskStatus>,
    pub member_id: Option<MemberId>,
    pub limit: usize,
    pub cursor: Option<String>,
}

impl TaskQuery {
    /// The first `limit` of the account's tasks in `status`.
    pub fn in_status(status: TaskStatus, limit: usize) -> Self {
        Self {
            status: Some(status),
            limit,
            ..Self::default()
        }
    }
}

/// All durable state: every capability of the store. The engine holds one as
/// `Arc<dyn TaskStore>`; a backend implements the capabilities and gets this for nothing.
pub trait TaskStore:
    AccountStore
    + TemplateStore
    + TaskWrites
    + TaskReads
    + TaskIndex
    + MemberStore
    + Counters
    + MetricsStore
    + NoticeStore
    + Idempotency
    + LearningStore
    + ConnectorHealthStore
    + super::connection::ConnectionStore
    + super::connection::AnnotationStore
    + super::deliverability::DeliverabilityStore
    + BusinessMemoryStore
    + SuggestionStore
    + SignInLinkStore
    + super::messages::MessageTemplateStore
    + super::loops::LoopStore
    + super::loops::TriggerStore
    + super::todos::TodoStore
    + super::webhooks::WebhookStore
    + super::credentials::CredentialStore
    + super::erasure::ErasureStore
    + super::sealing::SecretStore
    + Send
    + Sync
{
}

impl<T> TaskStore for T where
    T: AccountStore
        + TemplateStore
        + TaskWrites
        + TaskReads
        + TaskIndex
        + MemberStore
        + Counters
        + MetricsStore
        + NoticeStore
        + Idempotency
        + LearningStore
        + ConnectorHealthStore
        + super::connection::ConnectionStore
        + super::connection::AnnotationStore
        + super::deliverability::DeliverabilityStore
        + BusinessMemoryStore
        + SuggestionStore
        + SignInLinkStore
        + super::messages::MessageTemplateStore
        + super::loops::LoopStore
        + super::loops::TriggerStore
        + super::todos::TodoStore
        + super::webhooks::WebhookStore
        + super::credentials::CredentialStore
        + super::erasure::ErasureStore
        + super::sealing::SecretStore
        + ?Sized
{
}

/// Accounts — profile, settings and API token — and the global configuration (the pause).
/// An account and its token are created together or not at all; an account is saved only over
/// the version it was read at.
#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn create_account(&self, account: &Account, api_token_hash: &str) -> Result<(), StoreError>;
    async fn get_account(&self, id: AccountId) -> Result<Option<Account>, StoreError>;
    async fn account_for_token(&self, api_token_hash: &str) -> Result<Option<AccountId>, StoreError>;
    /// The accounts whose `owner_email` is `email` (without regard to case), from an index the
    /// account's own write keeps true: a lookup, never a scan.
    async fn accounts_for_owner_email(&self, email: &Email) -> Result<Vec<AccountId>, StoreError>;
    /// Write `account` if the stored version is `account.version - 1`.
    async fn save_account(&self, account: &Account) -> Result<(), StoreError>;
    async fn list_accounts(&self) -> Result<Vec<Account>, StoreError>;
    async fn system_config(&self) -> Result<SystemConfig, StoreError>;
    async fn save_system_config(&self, config: &SystemConfig) -> Result<(), StoreError>;
}

/// Recurring templates: versioned, and waiting in a due index across accounts
/// while enabled, for the tick.
#[async_trait]
pub trait TemplateStore: Send + Sync {
    /// Write a template whose `version` is one more than the stored one (1 = create);
    /// `Conflict::Version` if another writer got there first.
    async fn save_template(&self, template: &RecurringTemplate) -> Result<(), StoreError>;
    async fn list_templates(&self, account: AccountId) -> Result<Vec<RecurringTemplate>, StoreError>;
    /// Enabled templates of every account due at or before `until`, soonest first.
    async fn due_templates(&self, until: Timestamp, limit: usize) -> Result<Vec<RecurringTemplate>, StoreError>;
    /// `false` if there was none.
    async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError>;
}

/// A task's writes: its creation and its commits, each one transaction with everything written
/// with the task — its decision log, its conversation, its active guard and its outbound
/// records — and what its changes move elsewhere (a send's reservation, the creation counters,
/// the reply routes, the learning record). A task is written only over the version it was read
/// at, and a member has at most one active task of a type.
///
/// One aggregate, two traits — this one and [`TaskReads`] (with [`TaskIndex`] to find tasks by
/// something other than their id) — because the halves change for different reasons: the
/// writes when a guarantee joins the task's transaction, the reads when a step needs the task
/// in another shape. Both are over the same items, so each backend implements both in one file
/// (`tasks.rs`), and [`TaskStore`] holds both.
#[async_trait]
pub trait TaskWrites: Send + Sync {
    /// Create a task with its creation log entry, atomically with its active guard:
    /// [`crate::kernel::error::Conflict::ActiveTask`] if the member already has an active task of the type.
    async fn create_task(&self, task: &Task, log: &LogEntry, messages: &[ConversationMessage]) -> Result<(), StoreError>;
    // Creation limits (spec §7.9, §7.13; see [`crate::task::flood`]).
    /// [`TaskWrites::create_task`] that also counts the task against the account's creation
    /// counters and checks `quota`, all in the one transaction: the open-task count (below
    /// `active_max`), the day's creations (below `daily_max`) and, for agent-spawned tasks,
    /// the day's agent creations for the account and the member. A limit that is reached
    /// comes back as its [`crate::kernel::error::Conflict`] and nothing is written. Closing a task
    /// ([`crate::task::flood::closes_task`]) gives back its open-task count in `commit`.
    async fn create_task_within(
        &self,
        task: &Task,
        log: &LogEntry,
        messages: &[ConversationMessage],
        quota: &CreationQuota,
    ) -> Result<(), StoreError>;
    /// Write the change, all of it or nothing (see [`TaskCommit`]). Every
    /// [`SendEffect::Reserve`] also records where replies to that mail belong, and its
    /// [`SendEffect::Record`] the provider's Message-ID (see [`TaskIndex::message_route`]); a commit that leaves the task closed writes its
    /// learning record (see [`LearningStore`]).
    async fn commit(&self, commit: &TaskCommit) -> Result<(), StoreError>;
    /// [`TaskWrites::commit`] with [`CommitExtras`] written in the same transaction: all of it or
    /// nothing. An extra's condition that fails is its conflict (see [`CommitExtras`]).
    async fn commit_with(&self, commit: &TaskCommit, extras: &CommitExtras) -> Result<(), StoreError>;
}

/// A task's consistent reads, by its id or its member: what a step reads before it decides,
/// and the owner's view of one task. Kept true by [`TaskWrites`] alone (why the task's port is
/// two traits, see there); the default methods are combined reads that a store keeping the
/// items together answers in one request.
#[async_trait]
pub trait TaskReads: Send + Sync {
    /// A consistent read of a task.
    async fn get_task(&self, account: AccountId, id: TaskId) -> Result<Option<Task>, StoreError>;
    /// Consistent reads of several tasks of one account; ids not found are left out.
    async fn get_tasks(&self, account: AccountId, ids: &[TaskId]) -> Result<Vec<Task>, StoreError>;
    /// The active task of this member and type, if any.
    async fn active_task(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<TaskId>, StoreError>;
    /// Every active task about one member, oldest first, read through the active-task guards:
    /// the cost grows with the member's own open tasks, never with the account's.
    async fn member_active_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, StoreError>;
    async fn task_history(&self, account: AccountId, id: TaskId) -> Result<Option<TaskHistory>, StoreError>;
    async fn outbound(&self, account: AccountId, task: TaskId) -> Result<Vec<OutboundMessage>, StoreError>;
    /// A consistent read of a task with its conversation, oldest first: what a follow-up
    /// step reads (a store that keeps them together reads both in one request).
    async fn task_with_conversation(&self, account: AccountId, id: TaskId) -> Result<Option<(Task, Vec<ConversationMessage>)>, StoreError> {
        Ok(self.task_history(account, id).await?.map(|h| (h.task, h.messages)))
    }
    /// [`TaskReads::member_active_tasks`] for a step that has just read one of them (`known`):
    /// the same tasks, with `known` as it was read rather than read again (a store that
    /// finds the others through their guards reads none when the member has no other).
    async fn member_active_tasks_besides(&self, account: AccountId, member: &MemberId, known: &Task) -> Result<Vec<Task>, StoreError> {
        let _ = known;
        self.member_active_tasks(account, member).await
    }
}

/// What a step writes with its task's commit beside the commit's own effects (see
/// [`TaskWrites::commit_with`]), so a step costs one transaction where it would cost several
/// writes.
#[derive(Clone, Debug, Default)]
pub struct CommitExtras {
    /// Count one AI call of the account on its local day over the count the step read: only
    /// if the counter still reads `seen` (then it reads `seen + 1`), else
    /// [`crate::kernel::error::Conflict::AiCalls`]. The caller checked `seen` against the limit.
    pub ai_call: Option<AiCallCount>,
    /// Action claims, as [`Idempotency::claim_action`] makes them: each written only if no
    /// record has its key or the one there failed, else
    /// [`crate::kernel::error::Conflict::AlreadyExists`].
    pub claim_actions: Vec<ActionRecord>,
    /// Action outcomes, written over their claims (as [`Idempotency::finish_action`]).
    pub finish_actions: Vec<ActionRecord>,
    /// The account as the step read it, for the learning record of a commit that closes the
    /// task (a store that reads the account for it need not read it again).
    pub account: Option<Account>,
    /// A once-only claim (a delivered reply's), written only if none is held, else
    /// [`crate::kernel::error::Conflict::Claimed`] and nothing is written.
    pub claim: Option<crate::task::flood::OnceClaim>,
}

/// One AI call counted in a commit: the account's local `date` and the count the step read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AiCallCount {
    pub date: Date,
    pub seen: u32,
}

/// Tasks found by something other than their id: the owner's list, the due index, the
/// attribution index, the activity feed, and the routes of replies. The indexes are kept by
/// [`TaskWrites`] and read from an index: re-read a task before deciding on it. A read
/// grows with what it returns (what is due, watched, or on the page), never with what is
/// stored.
#[async_trait]
pub trait TaskIndex: Send + Sync {
    /// Newest first, `query.limit` at most, with a cursor for the next page.
    async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), StoreError>;
    /// Due-index entries of one shard due at or before `until`, oldest first.
    async fn due(
        &self,
        shard: u32,
        until: Timestamp,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<DueEntry>, Option<String>), StoreError>;
    /// Closed tasks that attribution still watches ([`Task::attribution_until`] set), from one
    /// shard of the attribution index, soonest window end first, `limit` at most, with a
    /// cursor for the next page. Read from an index: re-read a task before deciding on it.
    async fn attribution_watch(&self, shard: u32, limit: usize, cursor: Option<String>) -> Result<(Vec<Task>, Option<String>), StoreError>;
    /// How many active tasks each of the account's members has, read from the active guards
    /// (one per open task, so the read grows with the open tasks, never with the stored).
    async fn open_tasks_by_member(&self, account: AccountId) -> Result<std::collections::BTreeMap<MemberId, usize>, StoreError>;
    /// What the owner's numbers count ([`TaskTally`]) of every open task of the account, then
    /// of each task closed at or after `closed_since`, oldest close first. Kept by the
    /// task's writes ([`TaskWrites`]: creation, every commit) beside the task, so the read grows with the open tasks
    /// and the closes since then, never with the tasks stored.
    async fn tallies(&self, account: AccountId, closed_since: Timestamp) -> Result<Vec<TaskTally>, StoreError>;
    /// The tallies of the account's tasks closed in `[from, until)`, oldest close first: the
    /// read grows with those closes alone (the lift over a window), not with the open tasks
    /// or the tasks stored.
    async fn closed_tallies(&self, account: AccountId, from: Timestamp, until: Timestamp) -> Result<Vec<TaskTally>, StoreError>;
    /// The account's decisions across all its tasks, newest first, `limit` at most, with a
    /// cursor for the next page (the activity feed).
    async fn activity(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<ActivityEntry>, Option<String>), StoreError>;
    // Reply routing (spec §24.3). Every `SendEffect::Reserve` also records where replies to
    // that mail belong, since it may leave the moment after: the task's account (for its
    // signed reply address) and our Message-ID; its `SendEffect::Record` adds the provider's.
    // So a reply routes without knowing the account, even to a send nobody lived to record.
    /// The account of a task that has reserved a touch (and may have mailed someone).
    async fn task_account(&self, task: TaskId) -> Result<Option<AccountId>, StoreError>;
    /// The task a Message-ID of ours (or the provider's copy of it) belongs to.
    async fn message_route(&self, message_id: &str) -> Result<Option<(AccountId, TaskId)>, StoreError>;
}

/// What is known about an account's members: their facts (versioned, as the connector reports
/// them), the send ledger the weekly cap is kept in (written by a send's reservation, see
/// [`SendEffect`]), and the suppressed addresses; and the one read the send gates make.
#[async_trait]
pub trait MemberStore: Send + Sync {
    async fn get_member(&self, account: AccountId, member: &MemberId) -> Result<Option<(MemberFacts, SendLedger)>, StoreError>;
    /// Write member facts if the stored facts are at `facts.version - 1` (or absent for 1).
    async fn save_member_facts(&self, account: AccountId, facts: &MemberFacts) -> Result<(), StoreError>;
    /// One page of the account's member facts (members whose facts were never written are
    /// left out), in member-id order, at most `limit`, with a cursor for the next page — for
    /// the risk scan.
    async fn list_member_facts(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberFacts>, Option<String>), StoreError>;
    /// The global pause, the account, the member's suppression and send ledger, and the
    /// daily counters around `around` (see [`dates_around`]) — consistently, in one read.
    async fn send_snapshot(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
    ) -> Result<SendSnapshot, StoreError>;
    /// [`MemberStore::send_snapshot`] for a step whose touch the agent drafts, with the
    /// snapshot's [`crate::rails::send_gate::DraftReads`] in the same read: the owner's
    /// template `(task type, touch)`, the PushPress connection and the account's AI calls on
    /// the days around `around`.
    async fn send_snapshot_for_draft(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
        template: (&str, &str),
    ) -> Result<SendSnapshot, StoreError>;
    async fn is_suppressed(&self, account: AccountId, email: &Email) -> Result<bool, StoreError>;
    async fn put_suppression(&self, account: AccountId, email: &Email, reason: &str, at: Timestamp) -> Result<(), StoreError>;
    async fn delete_suppression(&self, account: AccountId, email: &Email) -> Result<bool, StoreError>;
}

/// An account's counters of the day: its sends (moved by a send's reservation, see
/// [`SendEffect`]), its AI calls and other daily allowances — each counted in one atomic
/// write and only below its limit — and the creation counters of the flood limits (moved by
/// [`TaskWrites::create_task_within`]).
#[async_trait]
pub trait Counters: Send + Sync {
    async fn daily_sends(&self, account: AccountId, date: Date) -> Result<u32, StoreError>;
    /// The account's sends of the local days `from` through `to`, summed: one ranged read.
    async fn sends_between(&self, account: AccountId, from: Date, to: Date) -> Result<u32, StoreError>;
    /// Count one AI call of the account on `date` (its local day), atomically and only while
    /// fewer than `limit` were made: the new count, or `None` when the day's calls are used up.
    async fn count_ai_call(&self, account: AccountId, date: Date, limit: u32) -> Result<Option<u32>, StoreError>;
    /// The account's AI calls counted on one local day (see [`Counters::count_ai_call`]).
    async fn ai_calls(&self, account: AccountId, date: Date) -> Result<u32, StoreError>;
    /// The same for any other daily allowance of the account, named `counter` (an owner
    /// notice kind's daily budget): one atomic write.
    async fn count_daily(&self, account: AccountId, counter: &str, date: Date, limit: u32) -> Result<Option<u32>, StoreError>;
    /// The creation counters of `account` for its local `date`, in one read.
    async fn creation_counts(&self, account: AccountId, date: Date) -> Result<CreationCounts, StoreError>;
    /// Count one text of `segments` segments on the account's local `date`, atomically and
    /// only while fewer than `limit` texts went that day: the day's counts after it, or `None`
    /// at the limit (nothing changed). Kept (no expiry): the scorecard reads them by month.
    async fn count_text(
        &self,
        account: AccountId,
        date: Date,
        segments: u32,
        limit: u32,
    ) -> Result<Option<crate::owner::sms::TextCounts>, StoreError>;
    /// The account's texts and segments of the local days `from` through `to`, summed: one
    /// ranged read.
    async fn texts_between(&self, account: AccountId, from: Date, to: Date) -> Result<crate::owner::sms::TextCounts, StoreError>;
}

/// An account's daily metrics and the watermark of the
/// fold that adds them: the days are added in the transaction that moves the watermark, so
/// each count is added once.
#[async_trait]
pub trait MetricsStore: Send + Sync {
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
}

/// Owner notifications and the digest index across
/// accounts: each digest entry is taken by one worker.
#[async_trait]
pub trait NoticeStore: Send + Sync {
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
}

/// The records that make a repeated delivery harmless: webhook ids (a delivery is processed
/// once) and the action log (spec §32.2, see [`crate::task::action`]: an action runs once per
/// idempotency key). Each claim is one conditional write.
#[async_trait]
pub trait Idempotency: Send + Sync {
    /// Record a webhook delivery; `false` if this id was recorded before (a duplicate).
    async fn claim_webhook(&self, source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Result<bool, StoreError>;
    /// Forget a claim whose event could not be queued, so the sender's retry is accepted.
    async fn release_webhook(&self, source: &str, id: &str) -> Result<(), StoreError>;
    /// Whether `(source, id)` is claimed and unexpired at `now` (a read; claims nothing).
    async fn is_claimed(&self, source: &str, id: &str, now: Timestamp) -> Result<bool, StoreError>;
    /// Write `record` (state `Started`) under its key if no record has the key, or if the one
    /// there `Failed`; otherwise change nothing and return the record there.
    async fn claim_action(&self, record: &ActionRecord) -> Result<ActionClaim, StoreError>;
    /// Write the record's outcome over its claim.
    async fn finish_action(&self, record: &ActionRecord) -> Result<(), StoreError>;
    /// A task's action records, in key order.
    async fn task_actions(&self, account: AccountId, task: TaskId) -> Result<Vec<ActionRecord>, StoreError>;
}

/// The learning record, read side: [`TaskWrites::commit`]
/// writes it in the same transaction whenever the committed task is closed (and rewrites it
/// when a closed task is revised), as the account's full record and the cross-tenant share
/// of it, which holds no ids or text.
#[async_trait]
pub trait LearningStore: Send + Sync {
    /// The account's record of a closed task.
    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError>;
    /// The account's records of tasks created at or after `since`, oldest first, at most
    /// `limit` (the evaluator's window: the read grows with the window's tasks, never with
    /// all the account ever closed).
    async fn recent_outcomes(&self, account: AccountId, since: Timestamp, limit: usize) -> Result<Vec<InteractionOutcome>, StoreError>;
    /// One page of the cross-tenant records of `month` (`YYYY-MM`, UTC), at most `limit`, with
    /// a cursor for the next page: the shared part only, across every account.
    async fn shared_outcomes(
        &self,
        month: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<SharedOutcome>, Option<String>), StoreError>;
}

/// The health of an account's connectors: each call's
/// result recorded atomically, a degradation reported to exactly one caller.
#[async_trait]
pub trait ConnectorHealthStore: Send + Sync {
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
}

/// An account's business memories: one
/// versioned record per account, so the cap holds under concurrent writers. The send
/// snapshot carries it too (read in the same batch), so a drafted touch costs no extra read.
#[async_trait]
pub trait BusinessMemoryStore: Send + Sync {
    /// The account's memories (an empty book at version 0 if never written).
    async fn memory_book(&self, account: AccountId) -> Result<MemoryBook, StoreError>;
    /// Write `book` if the stored one is at `book.version - 1` (or absent, for 1);
    /// `Conflict::Version` otherwise.
    async fn save_memory_book(&self, account: AccountId, book: &MemoryBook) -> Result<(), StoreError>;
}

/// The suggestions the evaluator makes for an account (see
/// [`crate::learning::suggestion`]): each made once per fingerprint, decided under its version.
#[async_trait]
pub trait SuggestionStore: Send + Sync {
    /// Write a new suggestion (version 1) unless the account already had one with its
    /// fingerprint — whatever became of it: `false` then, and nothing is written.
    async fn create_suggestion(&self, suggestion: &Suggestion) -> Result<bool, StoreError>;
    async fn get_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<Suggestion>, StoreError>;
    /// Write `suggestion` if the stored one is at `suggestion.version - 1`; `Conflict::Version`
    /// otherwise.
    async fn save_suggestion(&self, suggestion: &Suggestion) -> Result<(), StoreError>;
    /// The account's suggestions in `status`, newest first, at most `limit`, read from an index.
    async fn list_suggestions(&self, account: AccountId, status: SuggestionStatus, limit: usize) -> Result<Vec<Suggestion>, StoreError>;
}

/// Every capability of the store, for calling a concrete store's methods (`MemoryStore`,
/// `DynamoStore`, an `Arc` of one) without naming which capability each comes from. Code that
/// holds a `dyn TaskStore` needs none of this: its methods are all in reach.
pub mod prelude {
    pub use super::super::connection::{AnnotationStore, ConnectionStore};
    pub use super::super::deliverability::DeliverabilityStore;
    pub use super::super::erasure::ErasureStore;
    pub use super::super::loops::{LoopStore, TriggerStore};
    pub use super::super::messages::MessageTemplateStore;
    pub use super::super::todos::TodoStore;
    pub use super::{
        AccountStore, BusinessMemoryStore, ConnectorHealthStore, Counters, Idempotency, LearningStore, MemberStore, MetricsStore,
        NoticeStore, SignInLinkStore, SuggestionStore, TaskIndex, TaskReads, TaskStore, TaskWrites, TemplateStore,
    };
}

/// The dashboard's sign-in links ([`crate::owner::sign_in`]): stored by the token's hash,
/// redeemed once.
#[async_trait]
pub trait SignInLinkStore: Send + Sync {
    /// Store a new link ([`crate::kernel::error::Conflict::AlreadyExists`] if its hash is taken).
    async fn create_sign_in_link(&self, link: &SignInLink) -> Result<(), StoreError>;
    /// Use the link with this hash: its account if it exists, is unused and has not expired at
    /// `now` — and it is used from then on, in the same conditional write; `None` otherwise.
    async fn redeem_sign_in_link(&self, token_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError>;
    /// The account the link with this hash would sign in to — if it exists, is unused and has
    /// not expired at `now` — without using it (the page that asks to confirm names it).
    async fn sign_in_link_account(&self, token_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError>;
}

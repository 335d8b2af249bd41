//! The in-memory store: every capability of [`TaskStore`], with the same rules as the DynamoDB
//! adapter (every condition is checked before anything is applied, under one lock), for fast
//! unit and property tests. The state of every aggregate is one struct behind one lock, here;
//! each capability's implementation is a file of its own, named as the conformance suite's
//! part that checks it. The conformance suite runs against both stores; here, one test per
//! scenario, each on a new store.
//!
//! [`TaskStore`]: crate::ports::TaskStore

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use jiff::Timestamp;
use jiff::civil::Date;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email, MemberId, TaskId};
use crate::learning::interaction::InteractionOutcome;
use crate::members::connector::ConnectorHealth;
use crate::members::member::{MemberFacts, SendLedger};
use crate::owner::account::{Account, SystemConfig};
use crate::owner::metrics::{DailyMetrics, MetricsCursor};
use crate::owner::owner_notice::OwnerNotice;
use crate::owner::recurring::RecurringTemplate;
use crate::task::action::ActionRecord;
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, Task};

mod accounts;
mod annotations;
mod connections;
mod connectors;
mod counters;
mod credentials;
mod deliverability;
mod erasure;
mod idempotency;
mod learning;
mod loops;
mod members;
mod memories;
mod message_templates;
mod metrics;
mod notices;
mod sealing;
mod sending_domains;
mod sign_in_links;
mod suggestions;
mod task_index;
mod tasks;
mod templates;
mod todos;
mod triggers;
mod webhooks;

pub use sending_domains::{MemoryDns, MemorySendingDomains, ses_records};

#[derive(Default)]
struct State {
    /// When a rotated-out API token stops working, by its hash.
    token_retirements: HashMap<String, Timestamp>,
    /// The owners' outbound webhook endpoints by (account, id).
    webhook_endpoints: BTreeMap<(AccountId, ulid::Ulid), crate::owner::outbound_webhook::WebhookEndpoint>,
    /// Outbound webhook events written before they are queued, by account and event id.
    webhook_outbox: BTreeMap<(AccountId, String), crate::owner::webhook_event::OutboxItem>,
    /// The owners' own message templates by (account, task type, touch).
    message_templates: BTreeMap<(AccountId, String, String), crate::conversation::messages::OwnerTemplate>,
    accounts: HashMap<AccountId, Account>,
    templates: BTreeMap<(AccountId, ulid::Ulid), RecurringTemplate>,
    tokens: HashMap<String, AccountId>,
    system: SystemConfig,
    tasks: HashMap<TaskId, Task>,
    logs: HashMap<TaskId, Vec<LogEntry>>,
    messages: HashMap<TaskId, Vec<ConversationMessage>>,
    guards: HashMap<(AccountId, MemberId, String), TaskId>,
    facts: HashMap<(AccountId, MemberId), MemberFacts>,
    ledgers: HashMap<(AccountId, MemberId), SendLedger>,
    daily: HashMap<(AccountId, Date), u32>,
    outbound: BTreeMap<(AccountId, TaskId, u32), OutboundMessage>,
    suppressed: HashSet<(AccountId, Email)>,
    webhooks: HashMap<(String, String), Timestamp>,
    task_routes: HashMap<TaskId, AccountId>,
    message_routes: HashMap<String, (AccountId, TaskId)>,
    ai_calls: HashMap<(AccountId, Date), u32>,
    /// Creation counters per local day: all tasks, agent-spawned ones, and per member.
    created: HashMap<(AccountId, Date), u32>,
    agent_created: HashMap<(AccountId, Date), u32>,
    agent_member_created: HashMap<(AccountId, Date, MemberId), u32>,
    /// Learning records of closed tasks, by task.
    interactions: HashMap<TaskId, InteractionOutcome>,
    /// Connector health per account and connector.
    connector_health: HashMap<(AccountId, String), ConnectorHealth>,
    metrics_cursors: HashMap<AccountId, MetricsCursor>,
    metrics: HashMap<(AccountId, Date), DailyMetrics>,
    notices: BTreeMap<(AccountId, ulid::Ulid), OwnerNotice>,
    actions: BTreeMap<(AccountId, TaskId, String), ActionRecord>,
    daily_counters: HashMap<(AccountId, String, Date), u32>,
    /// Texts and segments per account and local day.
    texts: HashMap<(AccountId, Date), crate::owner::sms::TextCounts>,
    connections: HashMap<AccountId, crate::owner::connection::Connection>,
    annotations: HashMap<(AccountId, MemberId), crate::members::annotation::MemberAnnotations>,
    /// Sends counted by reservations, and recent bounces.
    bounce_windows: HashMap<AccountId, crate::owner::deliverability::BounceWindow>,
    /// The mails each address soft-bounced.
    soft_bounces: HashMap<(AccountId, Email), std::collections::BTreeSet<String>>,
    /// Sending domains by name → the account that claimed each.
    domain_claims: HashMap<String, crate::owner::deliverability::DomainClaim>,
    /// Text origination identities (as `number_key` folds them) → the account that claimed each.
    number_claims: HashMap<String, crate::owner::sms::NumberClaim>,
    memory_books: HashMap<AccountId, crate::owner::business_memory::MemoryBook>,
    suggestions: BTreeMap<(AccountId, ulid::Ulid), crate::learning::suggestion::Suggestion>,
    fingerprints: HashSet<(AccountId, String)>,
    /// The learning records that also went to the cross-tenant set (the account contributes).
    shared_learning: HashSet<TaskId>,
    /// The dashboard's sign-in links by token hash, and whether each was used.
    sign_in_links: HashMap<String, (crate::owner::sign_in::SignInLink, bool)>,
    /// Open loops (met and expired ones kept), by account and id.
    loops: BTreeMap<(AccountId, ulid::Ulid), crate::task::open_loop::OpenLoop>,
    trigger_books: HashMap<AccountId, crate::owner::trigger::TriggerBook>,
    /// The owner's to-dos, and the sources each was made from (one to-do per source).
    todos: BTreeMap<(AccountId, ulid::Ulid), crate::task::todo::Todo>,
    todo_sources: HashSet<(AccountId, String)>,
    /// Keyed hashes of erased members' identities, per account.
    erased: HashSet<(AccountId, String)>,
    /// The tallies of erased members' closed tasks: the owner's numbers still count them.
    erased_tallies: BTreeMap<TaskId, (AccountId, Timestamp, crate::task::tally::TaskTally)>,
}

/// See the module docs.
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
    faults: Option<FaultHook>,
    /// Seals the secrets it keeps (`kernel::sealed`).
    keyring: crate::kernel::sealed::LocalKeyring,
}

/// A test's fault plan for the in-memory store ([`MemoryStore::with_faults`]): asked before
/// every operation; an error it gives is that operation's answer and nothing is applied — a
/// throttled or failed request, or every request after the function was killed.
pub type FaultHook = std::sync::Arc<dyn Fn() -> Option<StoreError> + Send + Sync>;

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose every operation first asks `faults` whether it fails.
    pub fn with_faults(faults: FaultHook) -> Self {
        Self {
            faults: Some(faults),
            ..Self::default()
        }
    }

    /// The state, for one operation — unless the fault plan fails it first.
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>, StoreError> {
        if let Some(error) = self.faults.as_ref().and_then(|faults| faults()) {
            return Err(error);
        }
        Ok(self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl State {
    /// How many records are held, of every kind: what an account's removal counts.
    fn item_count(&self) -> usize {
        self.token_retirements.len()
            + self.webhook_endpoints.len()
            + self.webhook_outbox.len()
            + self.message_templates.len()
            + self.accounts.len()
            + self.templates.len()
            + self.tokens.len()
            + self.tasks.len()
            + self.logs.values().map(Vec::len).sum::<usize>()
            + self.messages.values().map(Vec::len).sum::<usize>()
            + self.guards.len()
            + self.facts.len()
            + self.ledgers.len()
            + self.daily.len()
            + self.outbound.len()
            + self.suppressed.len()
            + self.webhooks.len()
            + self.task_routes.len()
            + self.message_routes.len()
            + self.ai_calls.len()
            + self.created.len()
            + self.agent_created.len()
            + self.agent_member_created.len()
            + self.interactions.len()
            + self.connector_health.len()
            + self.metrics_cursors.len()
            + self.metrics.len()
            + self.notices.len()
            + self.actions.len()
            + self.daily_counters.len()
            + self.texts.len()
            + self.connections.len()
            + self.annotations.len()
            + self.bounce_windows.len()
            + self.soft_bounces.len()
            + self.domain_claims.len()
            + self.number_claims.len()
            + self.memory_books.len()
            + self.suggestions.len()
            + self.fingerprints.len()
            + self.shared_learning.len()
            + self.sign_in_links.len()
            + self.loops.len()
            + self.trigger_books.len()
            + self.todos.len()
            + self.todo_sources.len()
            + self.erased.len()
            + self.erased_tallies.len()
    }

    /// The kept tallies of the account's erased tasks, with when each closed.
    fn erased_tallies_of(&self, account: AccountId) -> impl Iterator<Item = (Timestamp, crate::task::tally::TaskTally)> + '_ {
        self.erased_tallies
            .values()
            .filter(move |(a, _, _)| *a == account)
            .map(|(_, closed_at, tally)| (*closed_at, tally.clone()))
    }
}

fn conflict(c: Conflict) -> StoreError {
    StoreError::Conflict(c)
}

/// As DynamoDB: a value holding a number the store cannot keep is refused before anything is
/// written, by the one rule for numbers (`kernel::number`).
fn storable<T: serde::Serialize + ?Sized>(value: &T) -> Result<(), StoreError> {
    crate::kernel::number::storable_value(value).map_err(StoreError::Unstorable)
}

#[cfg(test)]
mod conformance {
    crate::store_conformance_tests!(super::MemoryStore::new());
}

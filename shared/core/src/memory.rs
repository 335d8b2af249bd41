//! The in-memory [`TaskStore`]: the same rules as the DynamoDB adapter (every condition is
//! checked before anything is applied, under one lock), for fast unit and property tests.
//! The conformance suite runs against both; here, one test per scenario, each on a new store.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;
use base64::Engine as _;
use jiff::Timestamp;
use jiff::civil::Date;

use crate::account::{Account, SystemConfig};
use crate::action::{ActionClaim, ActionRecord, ActionState};
use crate::connector::{ConnectorHealth, HealthChange};
use crate::error::{Conflict, StoreError};
use crate::flood::{CreationCounts, CreationQuota};
use crate::ids::{AccountId, Email, MemberId, TaskId};
use crate::interaction::{InteractionOutcome, SharedOutcome};
use crate::limits::DUE_INDEX_SHARDS;
use crate::member::{MemberFacts, SendLedger};
use crate::metrics::{DailyMetrics, MetricsCursor};
use crate::owner_notice::OwnerNotice;
use crate::ports::{ActivityEntry, SendEffect, SendSnapshot, TaskCommit, TaskHistory, TaskQuery, TaskStore, dates_around};
use crate::recurring::RecurringTemplate;
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, OutboundStatus, Task};
use crate::work::{DueEntry, due_at, due_shard, due_sort_key};

#[derive(Default)]
struct State {
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
    /// Learning records of closed tasks (spec 003), by task.
    interactions: HashMap<TaskId, InteractionOutcome>,
    /// Connector health per account and connector (spec §34.2).
    connector_health: HashMap<(AccountId, String), ConnectorHealth>,
    metrics_cursors: HashMap<AccountId, MetricsCursor>,
    metrics: HashMap<(AccountId, Date), DailyMetrics>,
    notices: BTreeMap<(AccountId, ulid::Ulid), OwnerNotice>,
    actions: BTreeMap<(AccountId, TaskId, String), ActionRecord>,
    daily_counters: HashMap<(AccountId, String, Date), u32>,
}

/// See the module docs.
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn conflict(c: Conflict) -> StoreError {
    StoreError::Conflict(c)
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create_account(&self, account: &Account, api_token_hash: &str) -> Result<(), StoreError> {
        let mut s = self.lock();
        if s.accounts.contains_key(&account.id) || s.tokens.contains_key(api_token_hash) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        s.accounts.insert(account.id, account.clone());
        s.tokens.insert(api_token_hash.to_owned(), account.id);
        Ok(())
    }

    async fn get_account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        Ok(self.lock().accounts.get(&id).cloned())
    }

    async fn account_for_token(&self, api_token_hash: &str) -> Result<Option<AccountId>, StoreError> {
        Ok(self.lock().tokens.get(api_token_hash).copied())
    }

    async fn save_account(&self, account: &Account) -> Result<(), StoreError> {
        let mut s = self.lock();
        match s.accounts.get(&account.id) {
            Some(stored) if stored.version + 1 == account.version => {
                s.accounts.insert(account.id, account.clone());
                Ok(())
            }
            _ => Err(conflict(Conflict::Version)),
        }
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, StoreError> {
        let mut all: Vec<Account> = self.lock().accounts.values().cloned().collect();
        all.sort_by_key(|a| a.id);
        Ok(all)
    }

    async fn system_config(&self) -> Result<SystemConfig, StoreError> {
        Ok(self.lock().system.clone())
    }

    async fn save_system_config(&self, config: &SystemConfig) -> Result<(), StoreError> {
        self.lock().system = config.clone();
        Ok(())
    }

    async fn save_template(&self, template: &RecurringTemplate) -> Result<(), StoreError> {
        let mut s = self.lock();
        let key = (template.account_id, template.id);
        let stored = s.templates.get(&key).map_or(0, |t| t.version);
        if stored + 1 != template.version {
            return Err(conflict(Conflict::Version));
        }
        s.templates.insert(key, template.clone());
        Ok(())
    }

    async fn list_templates(&self, account: AccountId) -> Result<Vec<RecurringTemplate>, StoreError> {
        Ok(self
            .lock()
            .templates
            .values()
            .filter(|t| t.account_id == account)
            .cloned()
            .collect())
    }

    async fn due_templates(&self, until: Timestamp, limit: usize) -> Result<Vec<RecurringTemplate>, StoreError> {
        let mut due: Vec<RecurringTemplate> = self
            .lock()
            .templates
            .values()
            .filter(|t| t.enabled && t.next_at.is_some_and(|at| at <= until))
            .cloned()
            .collect();
        due.sort_by_key(|t| (t.next_at, t.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        Ok(self.lock().templates.remove(&(account, id)).is_some())
    }

    async fn create_task(&self, task: &Task, log: &LogEntry, messages: &[ConversationMessage]) -> Result<(), StoreError> {
        self.create_task_within(task, log, messages, &CreationQuota::unlimited()).await
    }

    async fn active_task(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<TaskId>, StoreError> {
        Ok(self.lock().guards.get(&(account, member.clone(), task_type.to_owned())).copied())
    }

    async fn member_active_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, StoreError> {
        let s = self.lock();
        let mut tasks: Vec<Task> = s
            .guards
            .iter()
            .filter(|((a, m, _), _)| *a == account && m == member)
            .filter_map(|(_, id)| s.tasks.get(id).filter(|t| t.is_active()).cloned())
            .collect();
        tasks.sort_by_key(|t| t.id);
        Ok(tasks)
    }

    async fn get_tasks(&self, account: AccountId, ids: &[TaskId]) -> Result<Vec<Task>, StoreError> {
        let s = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| s.tasks.get(id).filter(|t| t.account_id == account).cloned())
            .collect())
    }

    async fn get_task(&self, account: AccountId, id: TaskId) -> Result<Option<Task>, StoreError> {
        Ok(self.lock().tasks.get(&id).filter(|t| t.account_id == account).cloned())
    }

    async fn task_history(&self, account: AccountId, id: TaskId) -> Result<Option<TaskHistory>, StoreError> {
        let s = self.lock();
        let Some(task) = s.tasks.get(&id).filter(|t| t.account_id == account).cloned() else {
            return Ok(None);
        };
        let mut log = s.logs.get(&id).cloned().unwrap_or_default();
        log.sort_by_key(|l| l.id);
        let mut messages = s.messages.get(&id).cloned().unwrap_or_default();
        messages.sort_by_key(|m| m.id);
        let outbound = s
            .outbound
            .range((account, id, 0)..=(account, id, u32::MAX))
            .map(|(_, m)| m.clone())
            .collect();
        Ok(Some(TaskHistory {
            task,
            log,
            messages,
            outbound,
        }))
    }

    async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), StoreError> {
        let s = self.lock();
        let after: Option<TaskId> = match query.cursor.as_deref() {
            Some(c) => Some(c.parse().map_err(|_| StoreError::InvalidCursor)?),
            None => None,
        };
        let mut tasks: Vec<&Task> = s
            .tasks
            .values()
            .filter(|t| t.account_id == account)
            .filter(|t| query.status.is_none_or(|st| t.status == st))
            .filter(|t| query.member_id.as_ref().is_none_or(|m| &t.member.id == m))
            .filter(|t| after.is_none_or(|a| t.id < a))
            .collect();
        tasks.sort_by_key(|t| std::cmp::Reverse(t.id));
        let limit = query.limit.max(1);
        let next = (tasks.len() > limit).then(|| tasks[limit - 1].id.to_string());
        Ok((tasks.into_iter().take(limit).cloned().collect(), next))
    }

    async fn commit(&self, commit: &TaskCommit) -> Result<(), StoreError> {
        let mut s = self.lock();
        let task = &commit.task;
        let account = task.account_id;
        // Check every condition first: all or nothing.
        match s.tasks.get(&task.id) {
            Some(stored) if stored.account_id == account && stored.version == commit.expected_version => {}
            _ => return Err(conflict(Conflict::Version)),
        }
        match &commit.send {
            Some(SendEffect::Reserve {
                outbound,
                member_id,
                ledger,
                daily_date,
                daily_limit,
            }) => {
                if s.outbound
                    .get(&(account, task.id, outbound.touch))
                    .is_some_and(|m| m.status != OutboundStatus::Failed)
                {
                    return Err(conflict(Conflict::OutboundExists));
                }
                let stored_version = s.ledgers.get(&(account, member_id.clone())).map_or(0, |l| l.version);
                if stored_version + 1 != ledger.version {
                    return Err(conflict(Conflict::MemberLedger));
                }
                if s.daily.get(&(account, *daily_date)).copied().unwrap_or(0) >= *daily_limit {
                    return Err(conflict(Conflict::DailyLimit));
                }
            }
            Some(SendEffect::Record { .. } | SendEffect::Release { .. }) | None => {}
        }
        // Apply.
        match &commit.send {
            Some(SendEffect::Reserve {
                outbound,
                member_id,
                ledger,
                daily_date,
                ..
            }) => {
                s.outbound.insert((account, task.id, outbound.touch), outbound.clone());
                s.ledgers.insert((account, member_id.clone()), ledger.clone());
                *s.daily.entry((account, *daily_date)).or_insert(0) += 1;
            }
            Some(SendEffect::Record { outbound }) => {
                s.outbound.insert((account, task.id, outbound.touch), outbound.clone());
                s.task_routes.insert(task.id, account);
                for id in std::iter::once(&outbound.message_id).chain(&outbound.provider_message_id) {
                    s.message_routes.insert(id.to_ascii_lowercase(), (account, task.id));
                }
            }
            Some(SendEffect::Release {
                outbound,
                member_id,
                ledger_key,
                daily_date,
            }) => {
                s.outbound.insert((account, task.id, outbound.touch), outbound.clone());
                let ledger = s.ledgers.entry((account, member_id.clone())).or_default();
                ledger.sends.remove(ledger_key);
                ledger.version += 1;
                let count = s.daily.entry((account, *daily_date)).or_insert(0);
                *count = count.saturating_sub(1);
            }
            None => {}
        }
        if !task.is_active() {
            let guard = (account, task.member.id.clone(), task.task_type.clone());
            if s.guards.get(&guard) == Some(&task.id) {
                s.guards.remove(&guard);
            }
        }
        let settings = s.accounts.get(&account).map(|a| a.settings.clone());
        if let Some(record) = InteractionOutcome::of(task, settings.as_ref()) {
            s.interactions.insert(task.id, record);
        }
        s.tasks.insert(task.id, task.clone());
        s.logs.entry(task.id).or_default().extend(commit.log.iter().cloned());
        s.messages.entry(task.id).or_default().extend(commit.messages.iter().cloned());
        Ok(())
    }

    async fn due(
        &self,
        shard: u32,
        until: Timestamp,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<DueEntry>, Option<String>), StoreError> {
        let s = self.lock();
        let mut due: Vec<DueEntry> = s
            .tasks
            .values()
            .filter(|t| due_shard(&t.id, DUE_INDEX_SHARDS) == shard)
            .filter_map(|t| {
                let at = due_at(t)?;
                (at <= until).then_some(DueEntry {
                    account_id: t.account_id,
                    task_id: t.id,
                    due_at: at,
                    status: t.status,
                    touch: t.touch,
                })
            })
            .filter(|e| cursor.as_deref().is_none_or(|c| sort_key(e).as_str() > c))
            .collect();
        due.sort_by_key(sort_key);
        let next = (due.len() > limit && limit > 0).then(|| sort_key(&due[limit - 1]));
        due.truncate(limit);
        Ok((due, next))
    }

    async fn outbound(&self, account: AccountId, task: TaskId) -> Result<Vec<OutboundMessage>, StoreError> {
        Ok(self
            .lock()
            .outbound
            .range((account, task, 0)..=(account, task, u32::MAX))
            .map(|(_, m)| m.clone())
            .collect())
    }

    async fn get_member(&self, account: AccountId, member: &MemberId) -> Result<Option<(MemberFacts, SendLedger)>, StoreError> {
        let s = self.lock();
        let key = (account, member.clone());
        let facts = s.facts.get(&key).cloned();
        let ledger = s.ledgers.get(&key).cloned();
        if facts.is_none() && ledger.is_none() {
            return Ok(None);
        }
        Ok(Some((
            facts.unwrap_or_else(|| MemberFacts::new(member.clone())),
            ledger.unwrap_or_default(),
        )))
    }

    async fn save_member_facts(&self, account: AccountId, facts: &MemberFacts) -> Result<(), StoreError> {
        let mut s = self.lock();
        let key = (account, facts.member_id.clone());
        let stored = s.facts.get(&key).map_or(0, |f| f.version);
        if stored + 1 != facts.version {
            return Err(conflict(Conflict::MemberFacts));
        }
        s.facts.insert(key, facts.clone());
        Ok(())
    }

    async fn daily_sends(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        Ok(self.lock().daily.get(&(account, date)).copied().unwrap_or(0))
    }

    async fn send_snapshot(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
    ) -> Result<SendSnapshot, StoreError> {
        let s = self.lock();
        Ok(SendSnapshot {
            system: s.system.clone(),
            account: s.accounts.get(&account).cloned(),
            suppressed: email.is_some_and(|e| s.suppressed.contains(&(account, e.clone()))),
            ledger: s.ledgers.get(&(account, member.clone())).cloned().unwrap_or_default(),
            facts: s.facts.get(&(account, member.clone())).cloned(),
            daily: dates_around(around)
                .into_iter()
                .map(|d| (d, s.daily.get(&(account, d)).copied().unwrap_or(0)))
                .collect(),
        })
    }

    async fn is_suppressed(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        Ok(self.lock().suppressed.contains(&(account, email.clone())))
    }

    async fn put_suppression(&self, account: AccountId, email: &Email, _reason: &str, _at: Timestamp) -> Result<(), StoreError> {
        self.lock().suppressed.insert((account, email.clone()));
        Ok(())
    }

    async fn delete_suppression(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        Ok(self.lock().suppressed.remove(&(account, email.clone())))
    }

    async fn claim_webhook(&self, source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Result<bool, StoreError> {
        let mut s = self.lock();
        let key = (source.to_owned(), id.to_owned());
        if s.webhooks.get(&key).is_some_and(|exp| *exp > now) {
            return Ok(false);
        }
        s.webhooks.insert(key, expires_at);
        Ok(true)
    }

    async fn release_webhook(&self, source: &str, id: &str) -> Result<(), StoreError> {
        self.lock().webhooks.remove(&(source.to_owned(), id.to_owned()));
        Ok(())
    }

    async fn attribution_watch(&self, shard: u32, limit: usize, cursor: Option<String>) -> Result<(Vec<Task>, Option<String>), StoreError> {
        let s = self.lock();
        let mut watched: Vec<(String, Task)> = s
            .tasks
            .values()
            .filter(|t| due_shard(&t.id, DUE_INDEX_SHARDS) == shard && due_at(t).is_none())
            .filter_map(|t| Some((due_sort_key(t.attribution_until?, &t.id), t.clone())))
            .filter(|(key, _)| cursor.as_deref().is_none_or(|c| key.as_str() > c))
            .collect();
        watched.sort_by(|a, b| a.0.cmp(&b.0));
        let limit = limit.max(1);
        let next = (watched.len() > limit).then(|| watched[limit - 1].0.clone());
        Ok((watched.into_iter().take(limit).map(|(_, t)| t).collect(), next))
    }

    async fn activity(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<ActivityEntry>, Option<String>), StoreError> {
        // The cursor is the last entry's sort key, made URL-safe as DynamoDB's are (the key
        // holds `#`, which a client would read as the start of a URL fragment).
        let cursor = match cursor {
            Some(c) => Some(
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(c)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or(StoreError::InvalidCursor)?,
            ),
            None => None,
        };
        let s = self.lock();
        let mut entries: Vec<ActivityEntry> = s
            .tasks
            .values()
            .filter(|t| t.account_id == account)
            .flat_map(|t| {
                s.logs.get(&t.id).into_iter().flatten().map(|entry| ActivityEntry {
                    task_id: t.id,
                    task_type: t.task_type.clone(),
                    member_id: t.member.id.clone(),
                    entry: entry.clone(),
                })
            })
            .filter(|e| cursor.as_deref().is_none_or(|c| e.sort_key().as_str() < c))
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.sort_key()));
        let limit = limit.max(1);
        let next = (entries.len() > limit).then(|| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(entries[limit - 1].sort_key()));
        entries.truncate(limit);
        Ok((entries, next))
    }

    async fn task_account(&self, task: TaskId) -> Result<Option<AccountId>, StoreError> {
        Ok(self.lock().task_routes.get(&task).copied())
    }

    async fn message_route(&self, message_id: &str) -> Result<Option<(AccountId, TaskId)>, StoreError> {
        Ok(self.lock().message_routes.get(&message_id.to_ascii_lowercase()).copied())
    }

    async fn count_ai_call(&self, account: AccountId, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        let mut s = self.lock();
        let calls = s.ai_calls.entry((account, date)).or_insert(0);
        if *calls >= limit {
            return Ok(None);
        }
        *calls += 1;
        Ok(Some(*calls))
    }

    async fn count_daily(&self, account: AccountId, counter: &str, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        let mut s = self.lock();
        let count = s.daily_counters.entry((account, counter.to_owned(), date)).or_insert(0);
        if *count >= limit {
            return Ok(None);
        }
        *count += 1;
        Ok(Some(*count))
    }

    async fn create_task_within(
        &self,
        task: &Task,
        log: &LogEntry,
        messages: &[ConversationMessage],
        quota: &CreationQuota,
    ) -> Result<(), StoreError> {
        let mut s = self.lock();
        let account = task.account_id;
        let guard = (account, task.member.id.clone(), task.task_type.clone());
        // Every condition first, in the order the DynamoDB transaction reports them.
        if task.is_active() && s.guards.contains_key(&guard) {
            return Err(conflict(Conflict::ActiveTask));
        }
        if s.tasks.contains_key(&task.id) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        let open = s.tasks.values().filter(|t| t.account_id == account && t.is_active()).count();
        if task.is_active() && quota.active_max.is_some_and(|max| open >= max as usize) {
            return Err(conflict(Conflict::ActiveTasks));
        }
        if let Some(date) = quota.date {
            let created = s.created.get(&(account, date)).copied().unwrap_or(0);
            if quota.daily_max.is_some_and(|max| created >= max) {
                return Err(conflict(Conflict::DailyTasks));
            }
            if let Some(agent) = &quota.agent {
                if s.agent_created.get(&(account, date)).copied().unwrap_or(0) >= agent.daily_max {
                    return Err(conflict(Conflict::AgentTasks));
                }
                let per_member = s.agent_member_created.get(&(account, date, agent.member.clone())).copied();
                if per_member.unwrap_or(0) >= agent.member_max {
                    return Err(conflict(Conflict::MemberAgentTasks));
                }
            }
        }
        // Apply.
        if let Some(date) = quota.date {
            *s.created.entry((account, date)).or_insert(0) += 1;
            if let Some(agent) = &quota.agent {
                *s.agent_created.entry((account, date)).or_insert(0) += 1;
                *s.agent_member_created.entry((account, date, agent.member.clone())).or_insert(0) += 1;
            }
        }
        if task.is_active() {
            s.guards.insert(guard, task.id);
        }
        s.tasks.insert(task.id, task.clone());
        s.logs.entry(task.id).or_default().push(log.clone());
        s.messages.entry(task.id).or_default().extend(messages.iter().cloned());
        Ok(())
    }

    async fn creation_counts(&self, account: AccountId, date: Date) -> Result<CreationCounts, StoreError> {
        let s = self.lock();
        let open = s.tasks.values().filter(|t| t.account_id == account && t.is_active()).count();
        Ok(CreationCounts {
            created: s.created.get(&(account, date)).copied().unwrap_or(0),
            agent_created: s.agent_created.get(&(account, date)).copied().unwrap_or(0),
            open: u32::try_from(open).unwrap_or(u32::MAX),
        })
    }

    async fn list_member_facts(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberFacts>, Option<String>), StoreError> {
        let after = match cursor {
            Some(c) => Some(MemberId::parse(&c).map_err(|_| StoreError::InvalidCursor)?),
            None => None,
        };
        let s = self.lock();
        let mut facts: Vec<&MemberFacts> = s
            .facts
            .iter()
            .filter(|((a, m), _)| *a == account && after.as_ref().is_none_or(|after| m.as_str() > after.as_str()))
            .map(|(_, f)| f)
            .collect();
        facts.sort_by(|a, b| a.member_id.as_str().cmp(b.member_id.as_str()));
        let limit = limit.max(1);
        let next = (facts.len() > limit).then(|| facts[limit - 1].member_id.to_string());
        Ok((facts.into_iter().take(limit).cloned().collect(), next))
    }

    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError> {
        Ok(self
            .lock()
            .interactions
            .get(&task)
            .filter(|r| r.private.account_id == account)
            .cloned())
    }

    async fn shared_outcomes(
        &self,
        month: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<SharedOutcome>, Option<String>), StoreError> {
        let s = self.lock();
        let mut records: Vec<&InteractionOutcome> = s.interactions.values().filter(|r| r.month() == month).collect();
        records.sort_by(|a, b| (&a.shared.task_type, a.private.task_id).cmp(&(&b.shared.task_type, b.private.task_id)));
        let start = match cursor {
            Some(c) => c.parse::<usize>().map_err(|_| StoreError::InvalidCursor)?,
            None => 0,
        };
        let limit = limit.max(1);
        let page: Vec<SharedOutcome> = records.iter().skip(start).take(limit).map(|r| r.shared.clone()).collect();
        let next = (start + limit < records.len()).then(|| (start + limit).to_string());
        Ok((page, next))
    }

    async fn connector_health(&self, account: AccountId, name: &str) -> Result<ConnectorHealth, StoreError> {
        Ok(self
            .lock()
            .connector_health
            .get(&(account, name.to_owned()))
            .cloned()
            .unwrap_or_default())
    }

    async fn record_connector_call(
        &self,
        account: AccountId,
        name: &str,
        ok: bool,
        now: Timestamp,
        degraded_after: u32,
    ) -> Result<(ConnectorHealth, HealthChange), StoreError> {
        let mut s = self.lock();
        let health = s.connector_health.entry((account, name.to_owned())).or_default();
        let change = if ok {
            health.consecutive_failures = 0;
            health.last_success_at = Some(now);
            if health.degraded_since.take().is_some() {
                HealthChange::Recovered
            } else {
                HealthChange::None
            }
        } else {
            health.consecutive_failures += 1;
            health.last_failure_at = Some(now);
            if health.consecutive_failures >= degraded_after && health.degraded_since.is_none() {
                health.degraded_since = Some(now);
                HealthChange::Degraded
            } else {
                HealthChange::None
            }
        };
        Ok((health.clone(), change))
    }

    async fn metrics_cursor(&self, account: AccountId) -> Result<MetricsCursor, StoreError> {
        Ok(self.lock().metrics_cursors.get(&account).cloned().unwrap_or_default())
    }

    async fn save_metrics(&self, account: AccountId, cursor: &MetricsCursor, days: &[(Date, DailyMetrics)]) -> Result<(), StoreError> {
        let mut s = self.lock();
        let stored = s.metrics_cursors.get(&account).map_or(0, |c| c.version);
        if stored + 1 != cursor.version {
            return Err(conflict(Conflict::Version));
        }
        s.metrics_cursors.insert(account, cursor.clone());
        for (date, delta) in days {
            let day = s.metrics.entry((account, *date)).or_default();
            let ai_calls = if delta.ai_calls > 0 { delta.ai_calls } else { day.ai_calls };
            day.add(&DailyMetrics {
                ai_calls: 0,
                ..delta.clone()
            });
            day.ai_calls = ai_calls;
        }
        Ok(())
    }

    async fn daily_metrics(&self, account: AccountId, date: Date) -> Result<DailyMetrics, StoreError> {
        Ok(self.lock().metrics.get(&(account, date)).cloned().unwrap_or_default())
    }

    async fn metrics_days(&self, account: AccountId, from: Date, to: Date) -> Result<Vec<(Date, DailyMetrics)>, StoreError> {
        let mut days: Vec<(Date, DailyMetrics)> = self
            .lock()
            .metrics
            .iter()
            .filter(|((a, d), _)| *a == account && (from..=to).contains(d))
            .map(|((_, d), m)| (*d, m.clone()))
            .collect();
        days.sort_by_key(|(d, _)| *d);
        Ok(days)
    }

    async fn ai_calls(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        Ok(self.lock().ai_calls.get(&(account, date)).copied().unwrap_or(0))
    }

    async fn put_notice(&self, notice: &OwnerNotice) -> Result<(), StoreError> {
        let mut s = self.lock();
        let key = (notice.account_id, notice.id);
        if s.notices.contains_key(&key) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        s.notices.insert(key, notice.clone());
        Ok(())
    }

    async fn list_notices(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<OwnerNotice>, Option<String>), StoreError> {
        let after: Option<ulid::Ulid> = match cursor {
            Some(c) => Some(c.parse().map_err(|_| StoreError::InvalidCursor)?),
            None => None,
        };
        let s = self.lock();
        let mut page: Vec<OwnerNotice> = s
            .notices
            .range((account, ulid::Ulid::nil())..=(account, ulid::Ulid::from(u128::MAX)))
            .rev()
            .map(|(_, n)| n)
            .filter(|n| after.is_none_or(|a| n.id < a))
            .take(limit.max(1) + 1)
            .cloned()
            .collect();
        let limit = limit.max(1);
        let next = (page.len() > limit).then(|| page[limit - 1].id.to_string());
        page.truncate(limit);
        Ok((page, next))
    }

    async fn due_notices(&self, until: Timestamp, limit: usize) -> Result<Vec<OwnerNotice>, StoreError> {
        let mut due: Vec<OwnerNotice> = self
            .lock()
            .notices
            .values()
            .filter(|n| n.digest_at.is_some_and(|at| at <= until))
            .cloned()
            .collect();
        due.sort_by_key(|n| (n.digest_at, n.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn claim_notice(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        let mut s = self.lock();
        Ok(s.notices.get_mut(&(account, id)).is_some_and(|n| n.digest_at.take().is_some()))
    }

    async fn claim_action(&self, record: &ActionRecord) -> Result<ActionClaim, StoreError> {
        let mut s = self.lock();
        let key = (record.account_id, record.task_id, record.key.clone());
        match s.actions.get(&key) {
            Some(existing) if existing.state != ActionState::Failed => Ok(ActionClaim::Existing(Box::new(existing.clone()))),
            _ => {
                s.actions.insert(key, record.clone());
                Ok(ActionClaim::Claimed)
            }
        }
    }

    async fn finish_action(&self, record: &ActionRecord) -> Result<(), StoreError> {
        let key = (record.account_id, record.task_id, record.key.clone());
        self.lock().actions.insert(key, record.clone());
        Ok(())
    }

    async fn task_actions(&self, account: AccountId, task: TaskId) -> Result<Vec<ActionRecord>, StoreError> {
        let s = self.lock();
        Ok(s.actions
            .range((account, task, String::new())..)
            .take_while(|((a, t, _), _)| *a == account && *t == task)
            .map(|(_, r)| r.clone())
            .collect())
    }
}

fn sort_key(e: &DueEntry) -> String {
    due_sort_key(e.due_at, &e.task_id)
}

#[cfg(test)]
crate::store_conformance_tests!(MemoryStore::new());

//! [`TaskWrites`] and [`TaskReads`] in memory: tasks with their log, conversation, active guards
//! and outbound records.
//! `commit` checks every condition before it applies anything, then applies the send's effect,
//! frees the guard and writes the learning record, all under the one lock.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::learning::interaction::InteractionOutcome;
use crate::ports::{CommitExtras, TaskReads, TaskWrites};
use crate::task::action::ActionState;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::flood::CreationQuota;
use crate::task::history::TaskHistory;
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, OutboundStatus, Task};

use super::{MemoryStore, conflict};

#[async_trait]
impl TaskWrites for MemoryStore {
    async fn create_task(&self, task: &Task, log: &LogEntry, messages: &[ConversationMessage]) -> Result<(), StoreError> {
        self.create_task_within(task, log, messages, &CreationQuota::unlimited()).await
    }

    async fn create_task_within(
        &self,
        task: &Task,
        log: &LogEntry,
        messages: &[ConversationMessage],
        quota: &CreationQuota,
    ) -> Result<(), StoreError> {
        super::storable(task)?;
        super::storable(messages)?;
        let mut s = self.lock()?;
        let account = task.account_id;
        let guard = (account, task.member.id.clone(), task.task_type.clone());
        // Every condition first, in the order the DynamoDB transaction reports them.
        if task.is_active() && s.guards.contains_key(&guard) {
            return Err(conflict(Conflict::ActiveTask));
        }
        if s.tasks.contains_key(&task.id) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        let episode = quota.once.as_ref().map(|e| ((e.source.clone(), e.key.clone()), e));
        if let Some((key, claim)) = &episode
            && s.webhooks.get(key).is_some_and(|expires| *expires > claim.now)
        {
            return Err(conflict(Conflict::Claimed));
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
        if let Some((key, claim)) = episode {
            s.webhooks.insert(key, claim.expires_at);
        }
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

    async fn commit(&self, commit: &TaskCommit) -> Result<(), StoreError> {
        self.commit_with(commit, &CommitExtras::default()).await
    }

    async fn commit_with(&self, commit: &TaskCommit, extras: &CommitExtras) -> Result<(), StoreError> {
        let task = &commit.task;
        // As DynamoDB: a number it cannot hold is refused, not stored.
        super::storable(task)?;
        super::storable(&commit.messages)?;
        let mut s = self.lock()?;
        let account = task.account_id;
        // Check every condition first: all or nothing.
        match s.tasks.get(&task.id) {
            Some(stored) if stored.account_id == account && stored.version == commit.expected_version => {}
            _ => return Err(conflict(Conflict::Version)),
        }
        // The task's loops it resolves: each only while its record is still open.
        for l in commit.loops.iter().filter(|l| l.status != crate::task::open_loop::LoopStatus::Open) {
            if s.loops
                .get(&(l.account_id, l.id))
                .is_none_or(|stored| stored.status != crate::task::open_loop::LoopStatus::Open)
            {
                return Err(conflict(Conflict::Version));
            }
        }
        let reopens = crate::task::flood::reopens_task(commit) && task.is_active();
        let guard = (account, task.member.id.clone(), task.task_type.clone());
        if reopens && s.guards.get(&guard).is_some_and(|holder| *holder != task.id) {
            return Err(conflict(Conflict::ActiveTask));
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
        if let Some(ai) = &extras.ai_call
            && s.ai_calls.get(&(account, ai.date)).copied().unwrap_or(0) != ai.seen
        {
            return Err(conflict(Conflict::AiCalls));
        }
        for claim in &extras.claim_actions {
            let key = (claim.account_id, claim.task_id, claim.key.clone());
            if s.actions.get(&key).is_some_and(|r| r.state != ActionState::Failed) {
                return Err(conflict(Conflict::AlreadyExists));
            }
        }
        let once = extras.claim.as_ref().map(|c| ((c.source.clone(), c.key.clone()), c));
        if let Some((key, claim)) = &once
            && s.webhooks.get(key).is_some_and(|expires| *expires > claim.now)
        {
            return Err(conflict(Conflict::Claimed));
        }
        // Apply.
        if let Some((key, claim)) = once {
            s.webhooks.insert(key, claim.expires_at);
        }
        if let Some(ai) = &extras.ai_call {
            s.ai_calls.insert((account, ai.date), ai.seen + 1);
        }
        for record in extras.claim_actions.iter().chain(&extras.finish_actions) {
            s.actions
                .insert((record.account_id, record.task_id, record.key.clone()), record.clone());
        }
        match &commit.send {
            Some(SendEffect::Reserve {
                outbound,
                member_id,
                ledger,
                daily_date,
                ..
            }) => {
                s.outbound.insert((account, task.id, outbound.touch), outbound.clone());
                s.task_routes.insert(task.id, account);
                s.message_routes
                    .insert(outbound.message_id.to_ascii_lowercase(), (account, task.id));
                s.ledgers.insert((account, member_id.clone()), ledger.clone());
                *s.daily.entry((account, *daily_date)).or_insert(0) += 1;
                s.bounce_windows.entry(account).or_default().sends += 1;
            }
            Some(SendEffect::Record { outbound }) => {
                s.outbound.insert((account, task.id, outbound.touch), outbound.clone());
                if let Some(id) = &outbound.provider_message_id {
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
                let window = s.bounce_windows.entry(account).or_default();
                window.sends = window.sends.saturating_sub(1);
            }
            None => {}
        }
        if reopens {
            s.guards.insert(guard, task.id);
        } else if !task.is_active() && s.guards.get(&guard) == Some(&task.id) {
            s.guards.remove(&guard);
        }
        let owner = s.accounts.get(&account).cloned();
        let settings = owner.as_ref().map(|a| a.settings.clone());
        let record = InteractionOutcome::of(task, settings.as_ref()).map(|r| match &owner {
            Some(a) => r.contributed_by(a.webhook_secret.expose().as_bytes()),
            None => r,
        });
        if let Some(record) = record {
            if settings.as_ref().is_none_or(|s| s.share_learning) {
                s.shared_learning.insert(task.id);
            }
            s.interactions.insert(task.id, record);
        }
        for l in &commit.loops {
            s.loops.insert((l.account_id, l.id), l.clone());
        }
        // The owner's webhook events the change causes, written with it.
        if commit.webhooks {
            for event in crate::owner::webhook_event::of_commit(commit) {
                s.put_outbox(&crate::owner::webhook_event::OutboxItem::new(event));
            }
        }
        s.tasks.insert(task.id, task.clone());
        s.logs.entry(task.id).or_default().extend(commit.log.iter().cloned());
        s.messages.entry(task.id).or_default().extend(commit.messages.iter().cloned());
        Ok(())
    }
}

#[async_trait]
impl TaskReads for MemoryStore {
    async fn get_task(&self, account: AccountId, id: TaskId) -> Result<Option<Task>, StoreError> {
        Ok(self.lock()?.tasks.get(&id).filter(|t| t.account_id == account).cloned())
    }

    async fn get_tasks(&self, account: AccountId, ids: &[TaskId]) -> Result<Vec<Task>, StoreError> {
        let s = self.lock()?;
        Ok(ids
            .iter()
            .filter_map(|id| s.tasks.get(id).filter(|t| t.account_id == account).cloned())
            .collect())
    }

    async fn active_task(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<TaskId>, StoreError> {
        Ok(self.lock()?.guards.get(&(account, member.clone(), task_type.to_owned())).copied())
    }

    async fn member_active_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, StoreError> {
        let s = self.lock()?;
        let mut tasks: Vec<Task> = s
            .guards
            .iter()
            .filter(|((a, m, _), _)| *a == account && m == member)
            .filter_map(|(_, id)| s.tasks.get(id).filter(|t| t.is_active()).cloned())
            .collect();
        tasks.sort_by_key(|t| t.id);
        Ok(tasks)
    }

    async fn task_history(&self, account: AccountId, id: TaskId) -> Result<Option<TaskHistory>, StoreError> {
        let s = self.lock()?;
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

    async fn outbound(&self, account: AccountId, task: TaskId) -> Result<Vec<OutboundMessage>, StoreError> {
        Ok(self
            .lock()?
            .outbound
            .range((account, task, 0)..=(account, task, u32::MAX))
            .map(|(_, m)| m.clone())
            .collect())
    }
}

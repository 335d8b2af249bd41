//! [`TaskIndex`] in memory: the owner's task list, the due and attribution indexes, the
//! activity feed and the reply routes. Here they are filters over the tasks; the DynamoDB store
//! reads indexes, so the order and the cursors are what matter to match.

use async_trait::async_trait;
use base64::Engine as _;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits::DUE_INDEX_SHARDS;
use crate::ports::{TaskIndex, TaskQuery};
use crate::task::Task;
use crate::task::history::ActivityEntry;
use crate::task::tally::TaskTally;
use crate::task::work::{DueEntry, due_at, due_shard, due_sort_key};

use super::MemoryStore;

#[async_trait]
impl TaskIndex for MemoryStore {
    async fn open_tasks_by_member(&self, account: AccountId) -> Result<std::collections::BTreeMap<MemberId, usize>, StoreError> {
        let s = self.lock()?;
        let mut counts = std::collections::BTreeMap::new();
        for ((a, member, _), id) in &s.guards {
            if *a == account && s.tasks.get(id).is_some_and(Task::is_active) {
                *counts.entry(member.clone()).or_default() += 1;
            }
        }
        Ok(counts)
    }

    async fn tallies(&self, account: AccountId, closed_since: Timestamp) -> Result<Vec<TaskTally>, StoreError> {
        let s = self.lock()?;
        let mine = || s.tasks.values().filter(|t| t.account_id == account);
        let mut open: Vec<&Task> = mine().filter(|t| t.is_active()).collect();
        open.sort_by_key(|t| t.id);
        let mut closed: Vec<(Timestamp, TaskTally)> = mine()
            .filter(|t| !t.is_active())
            .map(|t| (TaskTally::closed_at(t), TaskTally::of(t)))
            .chain(s.erased_tallies_of(account))
            .filter(|(closed_at, _)| *closed_at >= closed_since)
            .collect();
        closed.sort_by_key(|(closed_at, t)| (closed_at.as_second(), t.task_id));
        Ok(open
            .into_iter()
            .map(TaskTally::of)
            .chain(closed.into_iter().map(|(_, t)| t))
            .collect())
    }

    async fn closed_tallies(&self, account: AccountId, from: Timestamp, until: Timestamp) -> Result<Vec<TaskTally>, StoreError> {
        let s = self.lock()?;
        let mut closed: Vec<(Timestamp, TaskTally)> = s
            .tasks
            .values()
            .filter(|t| t.account_id == account && !t.is_active())
            .map(|t| (TaskTally::closed_at(t), TaskTally::of(t)))
            .chain(s.erased_tallies_of(account))
            .filter(|(closed_at, _)| (from..until).contains(closed_at))
            .collect();
        closed.sort_by_key(|(closed_at, t)| (closed_at.as_second(), t.task_id));
        Ok(closed.into_iter().map(|(_, t)| t).collect())
    }

    async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), StoreError> {
        let s = self.lock()?;
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

    async fn due(
        &self,
        shard: u32,
        until: Timestamp,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<DueEntry>, Option<String>), StoreError> {
        let s = self.lock()?;
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

    async fn attribution_watch(&self, shard: u32, limit: usize, cursor: Option<String>) -> Result<(Vec<Task>, Option<String>), StoreError> {
        let s = self.lock()?;
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
        let s = self.lock()?;
        let mut entries: Vec<ActivityEntry> = s
            .tasks
            .values()
            .filter(|t| t.account_id == account)
            .flat_map(|t| {
                s.logs.get(&t.id).into_iter().flatten().map(|entry| ActivityEntry {
                    task_id: t.id,
                    task_type: t.task_type.clone(),
                    member_id: t.member.id.clone(),
                    member_name: Some(t.member.label()),
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
        Ok(self.lock()?.task_routes.get(&task).copied())
    }

    async fn message_route(&self, message_id: &str) -> Result<Option<(AccountId, TaskId)>, StoreError> {
        Ok(self.lock()?.message_routes.get(&message_id.to_ascii_lowercase()).copied())
    }
}

fn sort_key(e: &DueEntry) -> String {
    due_sort_key(e.due_at, &e.task_id)
}

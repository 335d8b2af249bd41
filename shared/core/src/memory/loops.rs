//! [`LoopStore`] in memory: every loop by account and id; the member and deadline indexes are
//! filters over them, as the DynamoDB store's are queries.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, MemberId};
use crate::ports::LoopStore;
use crate::task::open_loop::{LoopStatus, OpenLoop, loop_shard};

use super::MemoryStore;

#[async_trait]
impl LoopStore for MemoryStore {
    async fn put_loops(&self, loops: &[OpenLoop]) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        for l in loops {
            s.loops.insert((l.account_id, l.id), l.clone());
        }
        Ok(())
    }

    async fn create_todo_with_loop(&self, todo: &crate::task::todo::Todo, wait: &OpenLoop, webhooks: bool) -> Result<bool, StoreError> {
        let mut s = self.lock()?;
        let source = (todo.account_id, todo.source.clone());
        if s.todo_sources.contains(&source) {
            return Ok(false);
        }
        if s.todos.contains_key(&(todo.account_id, todo.id)) {
            return Err(StoreError::Conflict(crate::kernel::error::Conflict::AlreadyExists));
        }
        s.todo_sources.insert(source);
        s.todos.insert((todo.account_id, todo.id), todo.clone());
        s.loops.insert((wait.account_id, wait.id), wait.clone());
        // Its `todo.created` event, written with it.
        if webhooks {
            s.put_outbox(&crate::owner::webhook_event::OutboxItem::new(
                crate::owner::webhook_event::todo_created(todo),
            ));
        }
        Ok(true)
    }

    async fn member_open_loops(&self, account: AccountId, member: &MemberId) -> Result<Vec<OpenLoop>, StoreError> {
        Ok(self
            .lock()?
            .loops
            .values()
            .filter(|l| l.account_id == account && l.member_id == *member && l.status == LoopStatus::Open)
            .cloned()
            .collect())
    }

    async fn resolve_loop(&self, resolved: &OpenLoop) -> Result<bool, StoreError> {
        let mut s = self.lock()?;
        match s.loops.get_mut(&(resolved.account_id, resolved.id)) {
            Some(stored) if stored.status == LoopStatus::Open => {
                *stored = resolved.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn overdue_loops(&self, shard: u32, until: Timestamp, limit: usize) -> Result<Vec<OpenLoop>, StoreError> {
        let mut due: Vec<OpenLoop> = self
            .lock()?
            .loops
            .values()
            .filter(|l| l.status == LoopStatus::Open && l.deadline <= until && loop_shard(l.id) == shard)
            .cloned()
            .collect();
        due.sort_by_key(|l| (l.deadline, l.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn list_loops(
        &self,
        account: AccountId,
        status: Option<LoopStatus>,
        member: Option<&MemberId>,
        limit: usize,
    ) -> Result<Vec<OpenLoop>, StoreError> {
        Ok(self
            .lock()?
            .loops
            .range((account, ulid::Ulid::nil())..=(account, ulid::Ulid::from(u128::MAX)))
            .rev()
            .map(|(_, l)| l)
            .filter(|l| status.is_none_or(|s| l.status == s) && member.is_none_or(|m| l.member_id == *m))
            .take(limit)
            .cloned()
            .collect())
    }
}

//! [`LearningStore`] in memory: the learning records `commit` writes, read back.

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, TaskId};
use crate::learning::interaction::{InteractionOutcome, SharedOutcome};
use crate::ports::LearningStore;

use super::MemoryStore;

#[async_trait]
impl LearningStore for MemoryStore {
    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError> {
        Ok(self
            .lock()?
            .interactions
            .get(&task)
            .filter(|r| r.private.account_id == account)
            .cloned())
    }

    async fn recent_outcomes(
        &self,
        account: AccountId,
        since: jiff::Timestamp,
        limit: usize,
    ) -> Result<Vec<InteractionOutcome>, StoreError> {
        let s = self.lock()?;
        let mut records: Vec<InteractionOutcome> = s
            .interactions
            .values()
            .filter(|r| r.private.account_id == account && r.private.created_at >= since)
            .cloned()
            .collect();
        records.sort_by_key(|r| r.private.task_id);
        records.truncate(limit);
        Ok(records)
    }

    async fn shared_outcomes(
        &self,
        month: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<SharedOutcome>, Option<String>), StoreError> {
        let s = self.lock()?;
        let mut records: Vec<&InteractionOutcome> = s
            .interactions
            .values()
            .filter(|r| r.month() == month && s.shared_learning.contains(&r.private.task_id))
            .collect();
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
}

//! [`Idempotency`] in memory: webhook claims and action claims.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, TaskId};
use crate::ports::Idempotency;
use crate::task::action::{ActionClaim, ActionRecord, ActionState};

use super::MemoryStore;

#[async_trait]
impl Idempotency for MemoryStore {
    async fn claim_webhook(&self, source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Result<bool, StoreError> {
        let mut s = self.lock()?;
        let key = (source.to_owned(), id.to_owned());
        if s.webhooks.get(&key).is_some_and(|exp| *exp > now) {
            return Ok(false);
        }
        s.webhooks.insert(key, expires_at);
        Ok(true)
    }

    async fn is_claimed(&self, source: &str, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        let s = self.lock()?;
        Ok(s.webhooks.get(&(source.to_owned(), id.to_owned())).is_some_and(|exp| *exp > now))
    }

    async fn release_webhook(&self, source: &str, id: &str) -> Result<(), StoreError> {
        self.lock()?.webhooks.remove(&(source.to_owned(), id.to_owned()));
        Ok(())
    }

    async fn claim_action(&self, record: &ActionRecord) -> Result<ActionClaim, StoreError> {
        let mut s = self.lock()?;
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
        self.lock()?.actions.insert(key, record.clone());
        Ok(())
    }

    async fn task_actions(&self, account: AccountId, task: TaskId) -> Result<Vec<ActionRecord>, StoreError> {
        let s = self.lock()?;
        Ok(s.actions
            .range((account, task, String::new())..)
            .take_while(|((a, t, _), _)| *a == account && *t == task)
            .map(|(_, r)| r.clone())
            .collect())
    }
}

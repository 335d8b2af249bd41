//! [`TemplateStore`] in memory: recurring templates, and the ones due across accounts.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::recurring::RecurringTemplate;
use crate::ports::TemplateStore;

use super::{MemoryStore, conflict};

#[async_trait]
impl TemplateStore for MemoryStore {
    async fn save_template(&self, template: &RecurringTemplate) -> Result<(), StoreError> {
        super::storable(template)?;
        let mut s = self.lock()?;
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
            .lock()?
            .templates
            .values()
            .filter(|t| t.account_id == account)
            .cloned()
            .collect())
    }

    async fn due_templates(&self, until: Timestamp, limit: usize) -> Result<Vec<RecurringTemplate>, StoreError> {
        let mut due: Vec<RecurringTemplate> = self
            .lock()?
            .templates
            .values()
            .filter(|t| t.enabled && !t.paused && t.next_at.is_some_and(|at| at <= until))
            .cloned()
            .collect();
        due.sort_by_key(|t| (t.next_at, t.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        Ok(self.lock()?.templates.remove(&(account, id)).is_some())
    }
}

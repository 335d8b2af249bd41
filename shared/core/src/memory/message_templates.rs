//! [`MessageTemplateStore`] in memory.

use async_trait::async_trait;

use crate::conversation::messages::OwnerTemplate;
use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;
use crate::ports::MessageTemplateStore;

use super::MemoryStore;

fn key(account: AccountId, task_type: &str, touch: &str) -> (AccountId, String, String) {
    (account, task_type.to_owned(), touch.to_owned())
}

#[async_trait]
impl MessageTemplateStore for MemoryStore {
    async fn message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<Option<OwnerTemplate>, StoreError> {
        Ok(self.lock()?.message_templates.get(&key(account, task_type, touch)).cloned())
    }

    async fn message_templates(&self, account: AccountId) -> Result<Vec<OwnerTemplate>, StoreError> {
        Ok(self
            .lock()?
            .message_templates
            .iter()
            .filter(|((a, _, _), _)| *a == account)
            .map(|(_, t)| t.clone())
            .collect())
    }

    async fn put_message_template(&self, account: AccountId, template: &OwnerTemplate) -> Result<(), StoreError> {
        self.lock()?
            .message_templates
            .insert(key(account, &template.task_type, &template.touch), template.clone());
        Ok(())
    }

    async fn delete_message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<bool, StoreError> {
        Ok(self.lock()?.message_templates.remove(&key(account, task_type, touch)).is_some())
    }
}

//! The owner's own message templates ([`crate::conversation::messages`]): at most one per
//! account, task type and touch, so an account holds at most one per shipped template; the
//! engine bounds their sizes before they are written.

use async_trait::async_trait;

use crate::conversation::messages::OwnerTemplate;
use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;

#[async_trait]
pub trait MessageTemplateStore: Send + Sync {
    /// The account's template for `(task_type, touch)`, if the owner wrote one.
    async fn message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<Option<OwnerTemplate>, StoreError>;
    /// Every template the owner wrote, by task type and touch.
    async fn message_templates(&self, account: AccountId) -> Result<Vec<OwnerTemplate>, StoreError>;
    /// Write the owner's template for its `(task_type, touch)`, replacing any before it.
    async fn put_message_template(&self, account: AccountId, template: &OwnerTemplate) -> Result<(), StoreError>;
    /// Remove the owner's template for `(task_type, touch)`; whether there was one.
    async fn delete_message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<bool, StoreError>;
}

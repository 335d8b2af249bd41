//! [`MessageTemplateStore`] on DynamoDB: one `MTPL#{task_type}#{touch}` item per template the
//! owner wrote, in the account's partition; listed by one query of that prefix (an account
//! holds at most one per shipped template, a few dozen small items).

use async_trait::async_trait;

use openloop_core::conversation::messages::OwnerTemplate;
use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::ports::MessageTemplateStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::{from_item, keyed};

#[async_trait]
impl MessageTemplateStore for DynamoStore {
    async fn message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<Option<OwnerTemplate>, StoreError> {
        self.get(account_pk(account), &message_template_sk(task_type, touch))
            .await?
            .map(from_item)
            .transpose()
    }

    async fn message_templates(&self, account: AccountId) -> Result<Vec<OwnerTemplate>, StoreError> {
        self.query_all(None, PK, account_pk(account), Some(MESSAGE_TEMPLATE_PREFIX.to_owned()), true)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn put_message_template(&self, account: AccountId, template: &OwnerTemplate) -> Result<(), StoreError> {
        let item = keyed(
            template,
            account_pk(account),
            message_template_sk(&template.task_type, &template.touch),
            "message_template",
        )?;
        self.put(item).await
    }

    async fn delete_message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<bool, StoreError> {
        self.delete(account_pk(account), &message_template_sk(task_type, touch)).await
    }
}

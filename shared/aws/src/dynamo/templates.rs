//! [`TemplateStore`] on DynamoDB: one item per template under its account, in the GSI1 due
//! partition of templates while enabled.

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::recurring::RecurringTemplate;
use openloop_core::ports::TemplateStore;
use openloop_core::task::work::due_time_key;

use crate::keys::*;

use super::DynamoStore;
use super::items::{from_item, keyed, n, s};

#[async_trait]
impl TemplateStore for DynamoStore {
    async fn save_template(&self, template: &RecurringTemplate) -> Result<(), StoreError> {
        let mut item = keyed(
            template,
            account_pk(template.account_id),
            template_sk(template.id),
            "recurring_template",
        )?;
        if let (true, Some(at)) = (template.enabled && !template.paused, template.next_at) {
            item.insert(GSI1PK.into(), s(TEMPLATES_DUE_GSI1PK));
            item.insert(GSI1SK.into(), s(format!("{}#{}", due_time_key(at), template.id)));
        }
        if template.version <= 1 {
            self.put_conditional(item, "attribute_not_exists(PK)", &[], vec![], Conflict::Version)
                .await
        } else {
            self.put_conditional(
                item,
                "version = :pv",
                &[],
                vec![(":pv", n(template.version - 1))],
                Conflict::Version,
            )
            .await
        }
    }

    async fn list_templates(&self, account: AccountId) -> Result<Vec<RecurringTemplate>, StoreError> {
        let items = self
            .query_all(None, PK, account_pk(account), Some(TEMPLATE_PREFIX.into()), true)
            .await?;
        items.into_iter().map(from_item).collect()
    }

    async fn due_templates(&self, until: Timestamp, limit: usize) -> Result<Vec<RecurringTemplate>, StoreError> {
        self.due_in(TEMPLATES_DUE_GSI1PK, until, limit)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        self.delete(account_pk(account), &template_sk(id)).await
    }
}

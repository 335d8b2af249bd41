//! [`LearningStore`] on DynamoDB: the account's `INTERACTION#` items and the cross-tenant
//! `LEARNING#{month}` partition (both written by `commit`).

use async_trait::async_trait;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::{AccountId, TaskId};
use openloop_core::learning::interaction::{InteractionOutcome, SharedOutcome};
use openloop_core::ports::LearningStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::from_item;

#[async_trait]
impl LearningStore for DynamoStore {
    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError> {
        let item = self.get(account_pk(account), &interaction_sk(task)).await?;
        item.map(from_item).transpose()
    }

    async fn shared_outcomes(
        &self,
        month: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<SharedOutcome>, Option<String>), StoreError> {
        let (items, next) = self.index_page(None, PK, learning_pk(month), None, true, limit, cursor).await?;
        let records = items.into_iter().map(from_item).collect::<Result<_, _>>()?;
        Ok((records, next))
    }
}

//! [`LearningStore`] on DynamoDB: the account's `INTERACTION#` items and the cross-tenant
//! `LEARNING#{month}` partition (both written by `commit`).

use async_trait::async_trait;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::{AccountId, TaskId};
use openloop_core::learning::interaction::{InteractionOutcome, SharedOutcome};
use openloop_core::ports::LearningStore;

use crate::keys::*;

use super::items::{from_item, s};
use super::{DynamoStore, unavailable};

#[async_trait]
impl LearningStore for DynamoStore {
    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError> {
        let item = self.get(account_pk(account), &interaction_sk(task)).await?;
        item.map(from_item).transpose()
    }

    async fn recent_outcomes(
        &self,
        account: AccountId,
        since: jiff::Timestamp,
        limit: usize,
    ) -> Result<Vec<InteractionOutcome>, StoreError> {
        // Task ids are ULIDs: the tasks made since `since` sort at or after the smallest id of then.
        let from = ulid::Ulid::from_parts(u64::try_from(since.as_millisecond()).unwrap_or(0), 0);
        self.count();
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("PK = :pk AND SK BETWEEN :from AND :to")
            .expression_attribute_values(":pk", s(account_pk(account)))
            .expression_attribute_values(":from", s(format!("INTERACTION#{from}")))
            .expression_attribute_values(":to", s("INTERACTION#~"))
            .limit(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000))
            .send()
            .await
            .map_err(unavailable)?;
        // An id is never earlier than its task's creation (a ULID generator only moves
        // forward), so the range holds every task of the window; a few made just before it
        // may sort inside and are left out here.
        let records: Vec<InteractionOutcome> = out.items.unwrap_or_default().into_iter().map(from_item).collect::<Result<_, _>>()?;
        Ok(records.into_iter().filter(|r| r.private.created_at >= since).collect())
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

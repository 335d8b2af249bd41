//! [`Idempotency`] on DynamoDB: the webhook claims (`HOOK#`, TTL) and the action claims
//! (`ACTION#`), one conditional put each.

use std::collections::HashMap;

use async_trait::async_trait;
use jiff::Timestamp;

use aws_sdk_dynamodb::types::{Put, TransactWriteItem};
use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, TaskId};
use openloop_core::ports::Idempotency;
use openloop_core::task::action::{ActionClaim, ActionRecord};
use openloop_core::task::flood::OnceClaim;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, Item, build_error, unavailable};

/// A claim's record: `(source, id)` until `expires_at`.
fn hook_item(source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Item {
    HashMap::from([
        (PK.into(), s(hook_pk(source, id))),
        (SK.into(), s(HOOK_SK)),
        (KIND.into(), s("processed_webhook")),
        (TTL.into(), n(expires_at.as_second())),
        ("received_at".into(), s(now.to_string())),
    ])
}

/// A claim may be written where none is, or over an expired one: TTL deletes late (and never
/// in the emulator), so an expired record counts as absent.
const UNCLAIMED: &str = "attribute_not_exists(PK) OR #ttl < :now";

impl DynamoStore {
    /// A once-only claim written with a task (its creation, or a commit), as one put of its
    /// transaction.
    pub(super) fn once_claim(&self, claim: &OnceClaim) -> Result<TransactWriteItem, StoreError> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(hook_item(&claim.source, &claim.key, claim.now, claim.expires_at)))
            .condition_expression(UNCLAIMED)
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_values(":now", n(claim.now.as_second()))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }
}

#[async_trait]
impl Idempotency for DynamoStore {
    async fn claim_webhook(&self, source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Result<bool, StoreError> {
        match self
            .put_conditional(
                hook_item(source, id, now, expires_at),
                UNCLAIMED,
                &[("#ttl", TTL)],
                vec![(":now", n(now.as_second()))],
                Conflict::AlreadyExists,
            )
            .await
        {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn is_claimed(&self, source: &str, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        let item = self.get(hook_pk(source, id), HOOK_SK).await?;
        let expires = item
            .as_ref()
            .and_then(|i| i.get(TTL))
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse::<i64>().ok());
        Ok(expires.is_some_and(|at| at >= now.as_second()))
    }

    async fn release_webhook(&self, source: &str, id: &str) -> Result<(), StoreError> {
        self.count();
        self.client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(hook_pk(source, id)))
            .key(SK, s(HOOK_SK))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn claim_action(&self, record: &ActionRecord) -> Result<ActionClaim, StoreError> {
        let pk = account_pk(record.account_id);
        let sk = action_sk(record.task_id, &record.key);
        let item = keyed(record, pk.clone(), sk.clone(), "action")?;
        let condition = "attribute_not_exists(PK) OR #state = :failed";
        let names = [("#state", "state")];
        match self
            .put_conditional(item, condition, &names, vec![(":failed", s("failed"))], Conflict::AlreadyExists)
            .await
        {
            Ok(()) => Ok(ActionClaim::Claimed),
            Err(StoreError::Conflict(_)) => {
                let existing = self.get(pk, &sk).await?.ok_or_else(|| StoreError::Corrupt {
                    key: sk.clone(),
                    reason: "an action record refused the claim and then vanished".into(),
                })?;
                Ok(ActionClaim::Existing(Box::new(from_item(existing)?)))
            }
            Err(e) => Err(e),
        }
    }

    async fn finish_action(&self, record: &ActionRecord) -> Result<(), StoreError> {
        let (pk, sk) = (account_pk(record.account_id), action_sk(record.task_id, &record.key));
        self.put(keyed(record, pk, sk, "action")?).await
    }

    async fn task_actions(&self, account: AccountId, task: TaskId) -> Result<Vec<ActionRecord>, StoreError> {
        let prefix = actions_prefix(task);
        let mut records = Vec::new();
        let mut cursor = None;
        loop {
            let (items, next) = self
                .index_page(None, PK, account_pk(account), Some(&prefix), true, 1000, cursor)
                .await?;
            for item in items {
                records.push(from_item(item)?);
            }
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(records),
            }
        }
    }
}

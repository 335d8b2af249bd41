//! [`TriggerStore`] on DynamoDB: one `TRIGGERS` item per account holding its trigger book and
//! the book's version, written conditionally on the version read.

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::trigger::TriggerBook;
use openloop_core::ports::TriggerStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::{from_item, keyed, n};

#[async_trait]
impl TriggerStore for DynamoStore {
    async fn trigger_book(&self, account: AccountId) -> Result<TriggerBook, StoreError> {
        Ok(self
            .get(account_pk(account), TRIGGERS_SK)
            .await?
            .map(from_item)
            .transpose()?
            .unwrap_or_default())
    }

    async fn save_trigger_book(&self, account: AccountId, book: &TriggerBook) -> Result<(), StoreError> {
        let item = keyed(book, account_pk(account), TRIGGERS_SK.into(), "triggers")?;
        match book.version {
            0 => Err(StoreError::Conflict(Conflict::Version)),
            1 => {
                self.put_conditional(item, "attribute_not_exists(PK)", &[], Vec::new(), Conflict::Version)
                    .await
            }
            v => {
                self.put_conditional(item, "#v = :v", &[("#v", "version")], vec![(":v", n(v - 1))], Conflict::Version)
                    .await
            }
        }
    }
}

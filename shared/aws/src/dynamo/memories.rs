//! [`BusinessMemoryStore`] on DynamoDB: one `MEMORIES` item per account holding its book of
//! memories and the book's version, written conditionally on the version read. The item is
//! also read in the send snapshot's batch (`members.rs`).

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::business_memory::MemoryBook;
use openloop_core::ports::BusinessMemoryStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::{from_item, keyed, n};

/// An account's memory book from its stored item.
pub(super) fn from_stored(item: super::Item) -> Result<MemoryBook, StoreError> {
    from_item(item)
}

#[async_trait]
impl BusinessMemoryStore for DynamoStore {
    async fn memory_book(&self, account: AccountId) -> Result<MemoryBook, StoreError> {
        Ok(self
            .get(account_pk(account), MEMORIES_SK)
            .await?
            .map(from_stored)
            .transpose()?
            .unwrap_or_default())
    }

    async fn save_memory_book(&self, account: AccountId, book: &MemoryBook) -> Result<(), StoreError> {
        let item = keyed(book, account_pk(account), MEMORIES_SK.into(), "memories")?;
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

//! [`BusinessMemoryStore`] on DynamoDB: one `MEMORIES` item per account holding its book of
//! memories and the book's version, written conditionally on the version read. The item is
//! also read in the send snapshot's batch (`members.rs`).

use async_trait::async_trait;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::business_memory::MemoryBook;
use openloop_core::ports::BusinessMemoryStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::from_item;

/// An account's memory book from its stored item.
pub(super) fn from_stored(item: super::Item) -> Result<MemoryBook, StoreError> {
    from_item(item)
}

#[async_trait]
impl BusinessMemoryStore for DynamoStore {
    async fn memory_book(&self, account: AccountId) -> Result<MemoryBook, StoreError> {
        self.account_record(account, MEMORIES_SK).await
    }

    async fn save_memory_book(&self, account: AccountId, book: &MemoryBook) -> Result<(), StoreError> {
        self.save_account_record(account, MEMORIES_SK, "memories", book, book.version).await
    }
}

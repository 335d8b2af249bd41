//! [`TriggerStore`] on DynamoDB: one `TRIGGERS` item per account holding its trigger book and
//! the book's version, written conditionally on the version read.

use async_trait::async_trait;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::trigger::TriggerBook;
use openloop_core::ports::TriggerStore;

use crate::keys::*;

use super::DynamoStore;

#[async_trait]
impl TriggerStore for DynamoStore {
    async fn trigger_book(&self, account: AccountId) -> Result<TriggerBook, StoreError> {
        self.account_record(account, TRIGGERS_SK).await
    }

    async fn save_trigger_book(&self, account: AccountId, book: &TriggerBook) -> Result<(), StoreError> {
        self.save_account_record(account, TRIGGERS_SK, "triggers", book, book.version).await
    }
}

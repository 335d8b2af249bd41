//! [`TriggerStore`] in memory: one versioned trigger book per account.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::trigger::TriggerBook;
use crate::ports::TriggerStore;

use super::MemoryStore;

#[async_trait]
impl TriggerStore for MemoryStore {
    async fn trigger_book(&self, account: AccountId) -> Result<TriggerBook, StoreError> {
        Ok(self.lock()?.trigger_books.get(&account).cloned().unwrap_or_default())
    }

    async fn save_trigger_book(&self, account: AccountId, book: &TriggerBook) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let stored = s.trigger_books.get(&account).map_or(0, |b| b.version);
        if book.version != stored + 1 {
            return Err(StoreError::Conflict(Conflict::Version));
        }
        s.trigger_books.insert(account, book.clone());
        Ok(())
    }
}

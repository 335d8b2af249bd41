//! [`BusinessMemoryStore`] in memory: one versioned book of memories per account.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::business_memory::MemoryBook;
use crate::ports::BusinessMemoryStore;

use super::MemoryStore;

#[async_trait]
impl BusinessMemoryStore for MemoryStore {
    async fn memory_book(&self, account: AccountId) -> Result<MemoryBook, StoreError> {
        Ok(self.lock()?.memory_books.get(&account).cloned().unwrap_or_default())
    }

    async fn save_memory_book(&self, account: AccountId, book: &MemoryBook) -> Result<(), StoreError> {
        super::storable(book)?;
        let mut s = self.lock()?;
        let stored = s.memory_books.get(&account).map_or(0, |b| b.version);
        if book.version != stored + 1 {
            return Err(StoreError::Conflict(Conflict::Version));
        }
        s.memory_books.insert(account, book.clone());
        Ok(())
    }
}

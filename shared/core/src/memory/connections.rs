//! [`ConnectionStore`] in memory: one versioned connection per account.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::connection::Connection;
use crate::ports::ConnectionStore;

use super::MemoryStore;

#[async_trait]
impl ConnectionStore for MemoryStore {
    async fn connection(&self, account: AccountId) -> Result<Option<Connection>, StoreError> {
        Ok(self.lock()?.connections.get(&account).cloned())
    }

    async fn save_connection(&self, account: AccountId, connection: &Connection) -> Result<(), StoreError> {
        super::storable(connection)?;
        let mut s = self.lock()?;
        let stored = s.connections.get(&account).map(|c| c.version);
        let expected = connection.version.checked_sub(1).filter(|v| *v > 0);
        if stored != expected {
            return Err(StoreError::Conflict(Conflict::Version));
        }
        s.connections.insert(account, connection.clone());
        Ok(())
    }

    async fn delete_connection(&self, account: AccountId) -> Result<bool, StoreError> {
        Ok(self.lock()?.connections.remove(&account).is_some())
    }
}

//! [`AccountStore`] in memory: accounts, their API tokens and the global configuration.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email};
use crate::owner::account::{Account, SystemConfig};
use crate::owner::sign_in::owner_email_key;
use crate::ports::AccountStore;
use crate::ports::sealing::sealed_account;

use super::{MemoryStore, conflict, storable};

#[async_trait]
impl AccountStore for MemoryStore {
    async fn create_account(&self, account: &Account, api_token_hash: &str) -> Result<(), StoreError> {
        storable(account)?;
        let account = &*sealed_account(&self.keyring, account).await?;
        let mut s = self.lock()?;
        if s.accounts.contains_key(&account.id) || s.tokens.contains_key(api_token_hash) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        s.accounts.insert(account.id, account.clone());
        s.tokens.insert(api_token_hash.to_owned(), account.id);
        Ok(())
    }

    async fn get_account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        Ok(self.lock()?.accounts.get(&id).cloned())
    }

    async fn account_for_token(&self, api_token_hash: &str) -> Result<Option<AccountId>, StoreError> {
        Ok(self.lock()?.tokens.get(api_token_hash).copied())
    }

    async fn accounts_for_owner_email(&self, email: &Email) -> Result<Vec<AccountId>, StoreError> {
        let key = owner_email_key(email);
        let s = self.lock()?;
        let mut found: Vec<AccountId> = s
            .accounts
            .values()
            .filter(|a| a.settings.owner_email.as_ref().is_some_and(|e| owner_email_key(e) == key))
            .map(|a| a.id)
            .collect();
        found.sort();
        Ok(found)
    }

    async fn save_account(&self, account: &Account) -> Result<(), StoreError> {
        storable(account)?;
        let account = &*sealed_account(&self.keyring, account).await?;
        let mut s = self.lock()?;
        match s.accounts.get(&account.id) {
            Some(stored) if stored.version + 1 == account.version => {
                s.accounts.insert(account.id, account.clone());
                Ok(())
            }
            _ => Err(conflict(Conflict::Version)),
        }
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, StoreError> {
        let mut all: Vec<Account> = self.lock()?.accounts.values().cloned().collect();
        all.sort_by_key(|a| a.id);
        Ok(all)
    }

    async fn system_config(&self) -> Result<SystemConfig, StoreError> {
        Ok(self.lock()?.system.clone())
    }

    async fn save_system_config(&self, config: &SystemConfig) -> Result<(), StoreError> {
        self.lock()?.system = config.clone();
        Ok(())
    }
}

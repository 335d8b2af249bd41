//! [`CredentialStore`] in memory: the tokens' retirement times beside the tokens.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::owner::account::Account;
use crate::owner::credentials::TokenHolder;
use crate::ports::CredentialStore;

use super::{MemoryStore, conflict, storable};

#[async_trait]
impl CredentialStore for MemoryStore {
    async fn api_token(&self, api_token_hash: &str) -> Result<Option<TokenHolder>, StoreError> {
        let s = self.lock()?;
        Ok(s.tokens.get(api_token_hash).map(|account_id| TokenHolder {
            account_id: *account_id,
            retires_at: s.token_retirements.get(api_token_hash).copied(),
        }))
    }

    async fn rotate_api_token(&self, account: &Account, old_hash: &str, new_hash: &str, old_until: Timestamp) -> Result<(), StoreError> {
        storable(account)?;
        let account = &*crate::ports::sealing::sealed_account(&self.keyring, account).await?;
        let mut s = self.lock()?;
        if s.tokens.contains_key(new_hash) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        if s.tokens.get(old_hash) != Some(&account.id) {
            return Err(conflict(Conflict::Version));
        }
        match s.accounts.get(&account.id) {
            Some(stored) if stored.version + 1 == account.version => {}
            _ => return Err(conflict(Conflict::Version)),
        }
        s.accounts.insert(account.id, account.clone());
        s.tokens.insert(new_hash.to_owned(), account.id);
        s.token_retirements.insert(old_hash.to_owned(), old_until);
        Ok(())
    }
}

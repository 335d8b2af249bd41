//! [`SignInLinkStore`] in memory: the dashboard's sign-in links by token hash.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::sign_in::SignInLink;
use crate::ports::SignInLinkStore;

use super::{MemoryStore, conflict};

#[async_trait]
impl SignInLinkStore for MemoryStore {
    async fn create_sign_in_link(&self, link: &SignInLink) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        if s.sign_in_links.contains_key(&link.token_hash) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        s.sign_in_links.insert(link.token_hash.clone(), (link.clone(), false));
        Ok(())
    }

    async fn redeem_sign_in_link(&self, token_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError> {
        let mut s = self.lock()?;
        match s.sign_in_links.get_mut(token_hash) {
            Some((link, used)) if !*used && now < link.expires_at => {
                *used = true;
                Ok(Some(link.account_id))
            }
            _ => Ok(None),
        }
    }

    async fn sign_in_link_account(&self, token_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError> {
        Ok(match self.lock()?.sign_in_links.get(token_hash) {
            Some((link, used)) if !*used && now < link.expires_at => Some(link.account_id),
            _ => None,
        })
    }
}

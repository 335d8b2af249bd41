//! API tokens as rotation needs them: who holds a token and until when, and the one write
//! that puts a new token, retires the old one and saves the account that names it.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::owner::account::Account;
use crate::owner::credentials::TokenHolder;

#[async_trait]
pub trait CredentialStore: Send + Sync {
    /// The token's holder by its hash, with its retirement time once rotated out.
    async fn api_token(&self, api_token_hash: &str) -> Result<Option<TokenHolder>, StoreError>;
    /// In one write: store `new_hash` for `account`, mark `old_hash` (which must be the
    /// account's) to stop working at `old_until`, and save `account` over
    /// `account.version - 1` (`Conflict::Version` if it moved; nothing written).
    async fn rotate_api_token(&self, account: &Account, old_hash: &str, new_hash: &str, old_until: Timestamp) -> Result<(), StoreError>;
}

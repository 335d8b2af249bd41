//! The suppression list from the outside: whom a member's unsubscribe link speaks for, and
//! an owner lifting a suppression. (Adding one cancels the member's tasks, so
//! [`Engine::suppress`] lives with the other ways a member says stop, in `replies.rs`.)

use super::Engine;
use crate::error::EngineError;
use crate::ids::{AccountId, Email};

impl Engine {
    /// The account and address an unsubscribe link was signed for; `None` if the token is
    /// not one this deployment signed.
    pub fn unsubscribe_target(&self, token: &str) -> Option<(AccountId, Email)> {
        self.config.signing_key.verify_unsubscribe_token(token)
    }

    /// Take an address off the account's suppression list; `false` if it was not on it.
    pub async fn remove_suppression(&self, account: AccountId, email: &Email) -> Result<bool, EngineError> {
        Ok(self.store.delete_suppression(account, email).await?)
    }
}

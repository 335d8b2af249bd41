//! The account's credentials over time: rotating the owner API token and the inbound webhook
//! secret (the old one works for `ROTATION_OVERLAP`, then stops), and the dashboard's sign-in
//! link asked for without the asker learning anything — not even from how long the answer
//! took: the request only queues the ask (`sign_in_request.rs`), the same for every address.

mod sign_in_request;

pub use sign_in_request::SignInRequest;

use jiff::Timestamp;

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::account::WebhookSecret;
use crate::owner::credentials::{ROTATION_OVERLAP, RetiringSecret};
use crate::task::error::EngineError;

impl Engine {
    /// The account an owner's API token signs in to now, by the token's hash: a token rotated
    /// out works until its overlap ends; none works for an account being removed.
    pub async fn authenticate_owner(&self, api_token_hash: &str) -> Result<Option<AccountId>, EngineError> {
        let now = self.clock.now();
        let Some(holder) = self.store.api_token(api_token_hash).await?.filter(|holder| holder.works_at(now)) else {
            return Ok(None);
        };
        let account = self.store.get_account(holder.account_id).await?;
        Ok(account.filter(|a| a.removal.is_none()).map(|a| a.id))
    }

    /// Give the account a new API token (`new_hash`, the caller made the token); the current
    /// one works until the answer's time. `presented_hash`: the token the request came with
    /// (`None` from a dashboard session), which must be the current one: a token rotated out
    /// still reads and acts for its overlap, but never changes the credentials
    /// (`current_token_required`, 401) — or it could outlive the rotation that retired it.
    pub async fn rotate_api_token(&self, id: AccountId, presented_hash: Option<&str>, new_hash: &str) -> Result<Timestamp, EngineError> {
        let until = self.clock.now() + ROTATION_OVERLAP;
        for _ in 0..4 {
            let mut account = self.account(id).await?;
            current_token(&account, presented_hash)?;
            let Some(old) = account
                .credentials
                .api_token_hash
                .clone()
                .or_else(|| presented_hash.map(str::to_owned))
            else {
                return Err(InvalidInput::new(
                    "api_token_unknown",
                    "this account's current token is not on record: rotate it once through the API (POST /api/v1/settings/api-token/rotate with the token)",
                )
                .into());
            };
            account.credentials.api_token_hash = Some(new_hash.to_owned());
            account.version += 1;
            match self.store.rotate_api_token(&account, &old, new_hash, until).await {
                Ok(()) => {
                    tracing::warn!(account = %id, "API token rotated; the previous one works for the overlap");
                    return Ok(until);
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Give the account a new inbound webhook secret from a dashboard session; deliveries
    /// signed with the current one are still accepted until the answer's time.
    pub async fn rotate_webhook_secret(&self, id: AccountId, new: WebhookSecret) -> Result<Timestamp, EngineError> {
        self.rotate_webhook_secret_from(id, None, new).await
    }

    /// [`Self::rotate_webhook_secret`] from the API: `presented_hash` as for
    /// [`Self::rotate_api_token`], only the current token rotates it.
    pub async fn rotate_webhook_secret_from(
        &self,
        id: AccountId,
        presented_hash: Option<&str>,
        new: WebhookSecret,
    ) -> Result<Timestamp, EngineError> {
        let until = self.clock.now() + ROTATION_OVERLAP;
        self.change_account(id, |account| {
            current_token(account, presented_hash)?;
            // The draw and the pseudonym keep the key they were made with.
            if account.credentials.stable_key.is_none() {
                account.credentials.stable_key = Some(account.webhook_secret.clone());
            }
            account.credentials.retiring_webhook_secret = Some(RetiringSecret {
                secret: account.webhook_secret.clone(),
                until,
            });
            account.webhook_secret = new.clone();
            Ok(true)
        })
        .await?;
        tracing::warn!(account = %id, "inbound webhook secret rotated; the previous one works for the overlap");
        Ok(until)
    }
}

/// Refuse a credential change from a token that is not the account's current one (a token
/// rotated out, during its overlap). An account whose current token's hash is not on record
/// (made before hashes were kept) takes the token it was called with.
fn current_token(account: &crate::owner::account::Account, presented_hash: Option<&str>) -> Result<(), EngineError> {
    match (account.credentials.api_token_hash.as_deref(), presented_hash) {
        (Some(current), Some(presented)) if current != presented => Err(EngineError::Unauthorized(InvalidInput::new(
            "current_token_required",
            "this token has been rotated out: it works until its overlap ends, but only the current token changes credentials",
        ))),
        _ => Ok(()),
    }
}

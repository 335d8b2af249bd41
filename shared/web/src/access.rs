//! Who is asking: the owner by their account's API token, the operator by the admin token
//! (both `Authorization: Bearer …`, compared in constant time or by hash), and the owner's
//! presence, which their use of either face counts for.

use axum::http::HeaderMap;
use secrecy::{ExposeSecret, SecretString};

use openloop_core::engine::Engine;
use openloop_core::kernel::ids::AccountId;
use openloop_edge::http::{ApiError, bearer, secret_matches, token_hash};

/// The admin token, or the contract's 401.
pub fn admin(admin_token: &SecretString, headers: &HeaderMap) -> Result<(), ApiError> {
    match bearer(headers) {
        Some(t) if secret_matches(t, admin_token.expose_secret()) => Ok(()),
        _ => Err(ApiError::unauthorized("the admin token is required (Authorization: Bearer …)")),
    }
}

/// The account whose API token the request carries (its presence noted), or the contract's 401.
pub async fn owner(engine: &Engine, headers: &HeaderMap) -> Result<AccountId, ApiError> {
    let token = bearer(headers).ok_or_else(|| ApiError::unauthorized("an API token is required (Authorization: Bearer …)"))?;
    let account = engine
        .authenticate_owner(&token_hash(token))
        .await?
        .ok_or_else(|| ApiError::unauthorized("the API token is not valid"))?;
    seen(engine, account).await;
    Ok(account)
}

/// The owner's use of the API or the dashboard counts for their presence; trouble writing it
/// down never fails their request.
pub async fn seen(engine: &Engine, account: AccountId) {
    if let Err(e) = engine.note_owner_seen(account).await {
        tracing::warn!(account = %account, error = %e, "the owner's presence not written");
    }
}

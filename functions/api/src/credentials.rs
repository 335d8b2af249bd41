//! Rotating the account's credentials from the API: `POST /api/v1/settings/api-token/rotate`
//! and `POST /api/v1/settings/webhook-secret/rotate`. The new one is answered once; the old
//! one keeps working for the overlap (`owner::credentials::ROTATION_OVERLAP`), then stops.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use openloop_core::owner::credentials::{ApiTokenRotated, WebhookSecretRotated};
use openloop_edge::http::{ApiError, bearer, token_hash};

use openloop_web::secrets::{new_api_token, new_webhook_secret};

use crate::{Shared, json, owner};

/// `POST /api/v1/settings/api-token/rotate` → `200 {"api_token", "previous_token_expires_at"}`.
#[utoipa::path(post, path = "/api/v1/settings/api-token/rotate", tag = "account", summary = "A new API token; the old one works 24 hours more", responses((status = 200, description = "The new token (shown once) and when the old one stops", body = openloop_core::owner::credentials::ApiTokenRotated), crate::openapi::OwnerErrors))]
pub(crate) async fn rotate_api_token(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let presented = bearer(&headers).map(token_hash);
    let api_token = new_api_token()?;
    let previous_token_expires_at = state
        .engine
        .rotate_api_token(account, presented.as_deref(), &token_hash(&api_token))
        .await?;
    Ok(json(
        StatusCode::OK,
        ApiTokenRotated {
            api_token,
            previous_token_expires_at,
        },
    ))
}

/// `POST /api/v1/settings/webhook-secret/rotate` → `200 {"webhook_secret", "previous_secret_expires_at"}`.
#[utoipa::path(post, path = "/api/v1/settings/webhook-secret/rotate", tag = "account", summary = "A new inbound webhook secret; the old one is accepted 24 hours more", responses((status = 200, description = "The new secret (shown once) and when the old one stops", body = openloop_core::owner::credentials::WebhookSecretRotated), crate::openapi::OwnerErrors))]
pub(crate) async fn rotate_webhook_secret(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let presented = bearer(&headers).map(token_hash);
    let secret = new_webhook_secret()?;
    let previous_secret_expires_at = state
        .engine
        .rotate_webhook_secret_from(account, presented.as_deref(), secret.clone())
        .await?;
    Ok(json(
        StatusCode::OK,
        WebhookSecretRotated {
            webhook_secret: secret.expose().to_owned(),
            previous_secret_expires_at,
        },
    ))
}

//! The account as its owner sets it: `GET` and `PUT /api/v1/settings` (any subset of the
//! settings; connecting PushPress and the text settings are fields of it), the onboarding ramp
//! as it stands (`GET /api/v1/autonomy`), suppressions (`POST /api/v1/suppressions`, `DELETE
//! /api/v1/suppressions/{email}`), the owner's kill switch (`GET` and `POST /api/v1/pause`,
//! `POST /api/v1/resume`) and rotating the credentials (`POST
//! /api/v1/settings/api-token/rotate | webhook-secret/rotate`): the new one is answered once;
//! the old one keeps working for the overlap (`owner::credentials::ROTATION_OVERLAP`), then
//! stops.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{delete, get, post};
use serde::Deserialize;

use openloop_core::engine::{Autonomy, SettingsPatch};
use openloop_core::kernel::ids::Email;
use openloop_core::kernel::texts;
use openloop_core::owner::credentials::{ApiTokenRotated, WebhookSecretRotated};
use openloop_core::task::error::EngineError;
use openloop_edge::http::{ApiError, bearer, body_error, json_body, token_hash};
use openloop_web::secrets::{new_api_token, new_webhook_secret};

use crate::extract::{ApiState, Body, Owner, Shared};
use crate::schema::{AutonomyView, Deleted, KillSwitch, OwnerErrors, SettingsView, SuppressionAdded, json};

/// The settings' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/pause", get(account_pause_state).post(pause_account))
        .route("/api/v1/resume", post(resume_account))
        .route("/api/v1/settings", get(get_settings).put(put_settings))
        .route("/api/v1/autonomy", get(autonomy))
        .route("/api/v1/suppressions", post(add_suppression))
        .route("/api/v1/suppressions/{email}", delete(remove_suppression))
        .route("/api/v1/settings/api-token/rotate", post(rotate_api_token))
        .route("/api/v1/settings/webhook-secret/rotate", post(rotate_webhook_secret))
}

/// The owner's kill switch for their own account.
#[utoipa::path(post, path = "/api/v1/pause", tag = "account", summary = "Pause the account (the owner's kill switch)", responses((status = 200, description = "The kill switch", body = KillSwitch), OwnerErrors))]
pub(crate) async fn pause_account(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let account = state.engine.set_account_paused(account, true, "owner").await?;
    Ok(json(StatusCode::OK, KillSwitch::of(&account)))
}

#[utoipa::path(post, path = "/api/v1/resume", tag = "account", summary = "Resume the account", responses((status = 200, description = "The kill switch", body = KillSwitch), OwnerErrors))]
pub(crate) async fn resume_account(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let account = state.engine.set_account_paused(account, false, "owner").await?;
    Ok(json(StatusCode::OK, KillSwitch::of(&account)))
}

#[utoipa::path(get, path = "/api/v1/pause", tag = "account", summary = "Whether the account is paused", responses((status = 200, description = "The kill switch", body = KillSwitch), OwnerErrors))]
pub(crate) async fn account_pause_state(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, KillSwitch::of(&state.engine.account(account).await?)))
}

/// The onboarding ramp as it stands now: the account's phase and each agent's.
#[utoipa::path(get, path = "/api/v1/autonomy", tag = "account", summary = "The onboarding ramp as it stands", responses((status = 200, description = "The ramp", body = AutonomyView), OwnerErrors))]
pub(crate) async fn autonomy(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let Autonomy { account, phase, agents } = state.engine.autonomy(account).await?;
    Ok(json(
        StatusCode::OK,
        AutonomyView {
            execution_mode: &account.settings.execution_mode,
            paused: account.paused,
            onboarded_at: account.settings.onboarded_at,
            phase,
            agents: &agents,
        },
    ))
}

#[utoipa::path(get, path = "/api/v1/settings", tag = "account", summary = "The account's settings", responses((status = 200, description = "The settings", body = SettingsView), OwnerErrors))]
pub(crate) async fn get_settings(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let account = state.engine.account_with_sending_domain(account).await?;
    Ok(json(StatusCode::OK, SettingsView::of(&account, state.engine.now())))
}

#[utoipa::path(put, path = "/api/v1/settings", tag = "account", summary = "Change any subset of the settings", request_body = openloop_core::engine::SettingsPatch, responses((status = 200, description = "The settings after the change", body = SettingsView), OwnerErrors))]
pub(crate) async fn put_settings(State(state): Shared, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let patch: SettingsPatch = json_body(&body.map_err(body_error)?)?;
    let account = state.engine.update_account(account, patch).await?;
    Ok(json(StatusCode::OK, SettingsView::of(&account, state.engine.now())))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewSuppression {
    email: Email,
    /// `owner` by default.
    reason: Option<texts::SuppressionReason>,
}

#[utoipa::path(post, path = "/api/v1/suppressions", tag = "account", summary = "Stop all mail to an address (and cancel its member's tasks)", request_body = NewSuppression, responses((status = 201, description = "The suppression", body = SuppressionAdded), OwnerErrors))]
pub(crate) async fn add_suppression(State(state): Shared, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: NewSuppression = json_body(&body.map_err(body_error)?)?;
    let email = input.email;
    let reason = input.reason.map_or_else(|| "owner".into(), String::from);
    // A member-level stop: every active task about the member is cancelled too (spec §22.1).
    let cancelled = state.engine.suppress(account, &email, &reason).await?;
    Ok(json(
        StatusCode::CREATED,
        SuppressionAdded {
            email: email.as_str().to_owned(),
            reason,
            tasks_cancelled: cancelled,
        },
    ))
}

#[utoipa::path(delete, path = "/api/v1/suppressions/{email}", tag = "account", summary = "Lift a suppression", params(("email" = String, Path, description = "The suppressed address")), responses((status = 200, description = "Deleted", body = Deleted), OwnerErrors))]
pub(crate) async fn remove_suppression(
    State(state): Shared,
    Path(email): Path<String>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let email = Email::parse(&email).map_err(EngineError::from)?;
    if !state.engine.remove_suppression(account, &email).await? {
        return Err(ApiError::not_found("suppression"));
    }
    Ok(json(
        StatusCode::OK,
        Deleted {
            email: Some(email.as_str().to_owned()),
            id: None,
            deleted: true,
        },
    ))
}

/// `POST /api/v1/settings/api-token/rotate` → `200 {"api_token", "previous_token_expires_at"}`.
#[utoipa::path(post, path = "/api/v1/settings/api-token/rotate", tag = "account", summary = "A new API token; the old one works 24 hours more", responses((status = 200, description = "The new token (shown once) and when the old one stops", body = openloop_core::owner::credentials::ApiTokenRotated), OwnerErrors))]
pub(crate) async fn rotate_api_token(State(state): Shared, headers: HeaderMap, Owner(account): Owner) -> Result<Response, ApiError> {
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
#[utoipa::path(post, path = "/api/v1/settings/webhook-secret/rotate", tag = "account", summary = "A new inbound webhook secret; the old one is accepted 24 hours more", responses((status = 200, description = "The new secret (shown once) and when the old one stops", body = openloop_core::owner::credentials::WebhookSecretRotated), OwnerErrors))]
pub(crate) async fn rotate_webhook_secret(State(state): Shared, headers: HeaderMap, Owner(account): Owner) -> Result<Response, ApiError> {
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

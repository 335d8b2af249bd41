//! The operator's calls, each on the admin token (never an owner's): accounts — `POST
//! /api/v1/accounts` (201, its API token and webhook secret shown once), `GET` the list and
//! `DELETE /api/v1/accounts/{id}` (202, removed in the background) —
//! the platform's pause (`POST /api/v1/admin/pause | resume`), one account's kill switch
//! (`POST /api/v1/admin/accounts/{id}/pause | resume`) and the platform-wide learning
//! aggregate (`GET /api/v1/admin/learning?month=`).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{delete, get, post};

use openloop_core::engine::{AccountSecrets, NewAccount};
use openloop_core::kernel::ids::AccountId;
use openloop_edge::http::{ApiError, Params, body_error, json_body, token_hash};

use crate::extract::{Admin, ApiState, Body, MonthParams, Shared};
use crate::schema::{AccountSummary, Accounts, CreatedAccount, KillSwitch, OwnerErrors, SettingsView, json};

/// The operator's routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/accounts", post(create_account).get(list_accounts))
        .route("/api/v1/accounts/{id}", delete(remove_account))
        .route("/api/v1/admin/pause", post(pause))
        .route("/api/v1/admin/resume", post(resume))
        .route("/api/v1/admin/accounts/{id}/pause", post(admin_pause_account))
        .route("/api/v1/admin/accounts/{id}/resume", post(admin_resume_account))
        .route("/api/v1/admin/learning", get(admin_learning))
}

#[utoipa::path(post, path = "/api/v1/accounts", tag = "admin", summary = "Create an account (admin token)", request_body = openloop_core::engine::NewAccount, responses((status = 201, description = "The account, its API token and webhook secret (shown once)", body = CreatedAccount), OwnerErrors))]
pub(crate) async fn create_account(State(state): Shared, _: Admin, body: Body) -> Result<Response, ApiError> {
    let input: NewAccount = json_body(&body.map_err(body_error)?)?;
    let api_token = openloop_web::secrets::new_api_token()?;
    let webhook_secret = openloop_web::secrets::new_webhook_secret()?;
    let secrets = AccountSecrets {
        api_token_hash: token_hash(&api_token),
        api_token: api_token.clone(),
        webhook_secret,
    };
    let account = state.engine.create_account(input, secrets).await?;
    Ok(json(
        StatusCode::CREATED,
        CreatedAccount {
            account_id: account.id,
            api_token,
            webhook_secret: account.webhook_secret.expose(),
            name: &account.name,
            settings: SettingsView::of(&account, state.engine.now()),
        },
    ))
}

#[utoipa::path(get, path = "/api/v1/accounts", tag = "admin", summary = "List the accounts (admin token)", responses((status = 200, description = "The accounts", body = Accounts), OwnerErrors))]
pub(crate) async fn list_accounts(State(state): Shared, _: Admin) -> Result<Response, ApiError> {
    let accounts = state.engine.list_accounts().await?;
    let accounts = accounts
        .iter()
        .map(|a| AccountSummary {
            account_id: a.id,
            name: &a.name,
            paused: a.paused,
            created_at: a.created_at,
            settings: &a.settings,
            removal: a.removal.as_ref(),
        })
        .collect();
    Ok(json(StatusCode::OK, Accounts { accounts }))
}

#[utoipa::path(post, path = "/api/v1/admin/pause", tag = "admin", summary = "Pause the platform (admin token)", responses((status = 200, description = "The platform's pause state", body = openloop_core::owner::account::SystemConfig), OwnerErrors))]
pub(crate) async fn pause(State(state): Shared, _: Admin) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.set_global_pause(true).await?))
}

#[utoipa::path(post, path = "/api/v1/admin/resume", tag = "admin", summary = "Resume the platform (admin token)", responses((status = 200, description = "The platform's pause state", body = openloop_core::owner::account::SystemConfig), OwnerErrors))]
pub(crate) async fn resume(State(state): Shared, _: Admin) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.set_global_pause(false).await?))
}

/// A gym leaves (admin token): the account stops at once and is removed, with all of its data,
/// in the background (`engine/business/account_removal.rs`). `202` with where the removal is,
/// as often as it is asked while it runs; `404` once it is done.
#[utoipa::path(delete, path = "/api/v1/accounts/{id}", tag = "admin", summary = "Remove an account and all of its data (admin token)", params(("id" = String, Path, description = "The account's id")), responses((status = 202, description = "The removal under way: done within a day, and the account then not found", body = openloop_core::engine::AccountRemovalView), OwnerErrors))]
pub(crate) async fn remove_account(State(state): Shared, Path(id): Path<String>, _: Admin) -> Result<Response, ApiError> {
    let removal = state.engine.request_account_removal(account_id(&id)?).await?;
    Ok(json(StatusCode::ACCEPTED, removal))
}

fn account_id(raw: &str) -> Result<AccountId, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("account"))
}

/// An operator pulls one account's kill switch (admin token).
#[utoipa::path(post, path = "/api/v1/admin/accounts/{id}/pause", tag = "admin", summary = "Pause one account (admin token)", params(("id" = String, Path, description = "The account's id")), responses((status = 200, description = "The account's kill switch", body = KillSwitch), OwnerErrors))]
pub(crate) async fn admin_pause_account(State(state): Shared, Path(id): Path<String>, _: Admin) -> Result<Response, ApiError> {
    let account = state.engine.set_account_paused(account_id(&id)?, true, "admin").await?;
    Ok(json(StatusCode::OK, KillSwitch::of(&account)))
}

#[utoipa::path(post, path = "/api/v1/admin/accounts/{id}/resume", tag = "admin", summary = "Resume one account (admin token)", params(("id" = String, Path, description = "The account's id")), responses((status = 200, description = "The account's kill switch", body = KillSwitch), OwnerErrors))]
pub(crate) async fn admin_resume_account(State(state): Shared, Path(id): Path<String>, _: Admin) -> Result<Response, ApiError> {
    let account = state.engine.set_account_paused(account_id(&id)?, false, "admin").await?;
    Ok(json(StatusCode::OK, KillSwitch::of(&account)))
}

/// The operator's platform-wide learning aggregate (admin token; never an owner's):
/// `?month=YYYY-MM` (UTC, default the current month) across every account, per task type and
/// outcome — counts and rates only, no ids, no text.
#[utoipa::path(get, path = "/api/v1/admin/learning", tag = "admin", summary = "The platform-wide learning aggregate (admin token)", params(MonthParams), responses((status = 200, description = "Counts and rates per task type and outcome", body = openloop_core::learning::MonthAggregate), OwnerErrors))]
pub(crate) async fn admin_learning(State(state): Shared, Params(params): Params<MonthParams>, _: Admin) -> Result<Response, ApiError> {
    let month = params.month.as_deref();
    Ok(json(StatusCode::OK, state.engine.platform_learning(month).await?))
}

//! What the owner teaches the agent and what the agent proposes: business memories —
//! `GET /api/v1/memories`, `POST /api/v1/memories` (201), `DELETE /api/v1/memories/{id}` (204) —
//! the evaluator's suggestions: `GET /api/v1/suggestions?status=`, `POST
//! /api/v1/suggestions/{id}/accept | dismiss | remind | undo` — and message experiments
//!: `POST /api/v1/suggestions/{id}/experiment` (201) runs an
//! accepted skill or prompt suggestion on half the new tasks; `GET /api/v1/experiments`
//! reports each version with the lift's interval; `POST /api/v1/experiments/{id}/keep | end`
//! is the owner's word on it. Each is scoped to the bearer token's account; another account's
//! memory, suggestion or experiment is not found.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};

use openloop_core::contract::{MemoryView, SuggestionView};
use openloop_core::engine::NewMemory;
use openloop_edge::http::{ApiError, Params, body_error, json_body};

use crate::extract::{ApiState, Body, Owner, Shared};
use crate::schema::{MemoryList, OwnerErrors, SuggestionList, json};

/// The routes of the memories, the suggestions and the experiments.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/memories", get(list_memories).post(add_memory))
        .route("/api/v1/memories/{id}", delete(delete_memory))
        .route("/api/v1/suggestions", get(list_suggestions))
        .route("/api/v1/suggestions/{id}/{decision}", post(decide_suggestion))
        .route("/api/v1/suggestions/{id}/experiment", post(start_experiment))
        .route("/api/v1/experiments", get(list_experiments))
        .route("/api/v1/experiments/{id}/{decision}", post(decide_experiment))
}

#[utoipa::path(get, path = "/api/v1/memories", tag = "learning", summary = "The business memories", responses((status = 200, description = "The memories", body = MemoryList), OwnerErrors))]
pub(crate) async fn list_memories(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let memories = state.engine.list_memories(account).await?;
    let views: Vec<MemoryView<'_>> = memories.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, MemoryList { memories: views }))
}

#[utoipa::path(post, path = "/api/v1/memories", tag = "learning", summary = "Add a business memory", request_body = openloop_core::engine::NewMemory, responses((status = 201, description = "The memory", body = openloop_core::contract::MemoryView), OwnerErrors))]
pub(crate) async fn add_memory(State(state): Shared, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: NewMemory = json_body(&body.map_err(body_error)?)?;
    let memory = state.engine.add_memory(account, input).await?;
    Ok(json(StatusCode::CREATED, MemoryView::from(&memory)))
}

#[utoipa::path(delete, path = "/api/v1/memories/{id}", tag = "learning", summary = "Delete a business memory", params(("id" = String, Path, description = "The memory's id")), responses((status = 204, description = "Deleted"), OwnerErrors))]
pub(crate) async fn delete_memory(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("memory"))?;
    state.engine.delete_memory(account, id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuggestionQuery {
    /// `pending`, `applied` or `dismissed`.
    #[param(value_type = Option<openloop_core::learning::suggestion::SuggestionStatus>)]
    status: Option<String>,
}

#[utoipa::path(get, path = "/api/v1/suggestions", tag = "learning", summary = "The evaluator's suggestions", params(SuggestionQuery), responses((status = 200, description = "The suggestions", body = SuggestionList), OwnerErrors))]
pub(crate) async fn list_suggestions(
    State(state): Shared,
    Params(query): Params<SuggestionQuery>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let status = query.status.as_deref();
    let suggestions = state.engine.list_suggestions(account, status).await?;
    let views: Vec<SuggestionView<'_>> = suggestions.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, SuggestionList { suggestions: views }))
}

/// What the owner does with a suggestion (any other word is `404`).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Decision {
    Accept,
    Dismiss,
    Remind,
    Undo,
}

/// `POST /api/v1/suggestions/{id}/{decision}`.
#[utoipa::path(post, path = "/api/v1/suggestions/{id}/{decision}", tag = "learning", summary = "Accept, dismiss, remind or undo a suggestion", params(("id" = String, Path, description = "The suggestion's id"), ("decision" = Decision, Path, description = "What to do with it")), responses((status = 200, description = "The suggestion", body = openloop_core::contract::SuggestionView), OwnerErrors))]
pub(crate) async fn decide_suggestion(
    State(state): Shared,
    Path((id, decision)): Path<(String, String)>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("suggestion"))?;
    let engine = &state.engine;
    let decision: Decision = serde_json::from_value(serde_json::Value::String(decision)).map_err(|_| ApiError::not_found("endpoint"))?;
    let decided = match decision {
        Decision::Accept => engine.accept_suggestion(account, id).await?,
        Decision::Dismiss => engine.dismiss_suggestion(account, id).await?,
        Decision::Remind => engine.remind_suggestion(account, id).await?,
        Decision::Undo => engine.undo_suggestion(account, id).await?,
    };
    Ok(json(StatusCode::OK, SuggestionView::from(&decided)))
}

#[utoipa::path(post, path = "/api/v1/suggestions/{id}/experiment", operation_id = "start_experiment", tag = "learning", summary = "Run an applied skill or prompt suggestion as an experiment on half the new tasks", params(("id" = String, Path, description = "The suggestion id")), responses((status = 201, description = "The experiment", body = openloop_core::engine::ExperimentView), OwnerErrors))]
pub(crate) async fn start_experiment(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("suggestion"))?;
    let started = state.engine.start_experiment(account, id).await?;
    Ok(json(StatusCode::CREATED, started))
}

#[utoipa::path(get, path = "/api/v1/experiments", operation_id = "list_experiments", tag = "learning", summary = "The message experiments, each version with its interval", responses((status = 200, description = "The experiments", body = openloop_core::engine::ExperimentsReport), OwnerErrors))]
pub(crate) async fn list_experiments(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.experiments(account).await?))
}

/// `keep` or `end`.
#[utoipa::path(post, path = "/api/v1/experiments/{id}/{decision}", operation_id = "decide_experiment", tag = "learning", summary = "Keep the proposed version, or end the experiment", params(("id" = String, Path, description = "The experiment id"), ("decision" = String, Path, description = "`keep` or `end`")), responses((status = 200, description = "The experiment after the decision", body = openloop_core::engine::ExperimentView), OwnerErrors))]
pub(crate) async fn decide_experiment(
    State(state): Shared,
    Path((id, decision)): Path<(String, String)>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("experiment"))?;
    let decided = match decision.as_str() {
        "keep" => state.engine.keep_experiment(account, id).await?,
        "end" => state.engine.end_experiment(account, id).await?,
        _ => return Err(ApiError::not_found("endpoint")),
    };
    Ok(json(StatusCode::OK, decided))
}

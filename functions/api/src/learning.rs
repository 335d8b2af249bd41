//! What the owner teaches the agent: business memories —
//! `GET /api/v1/memories`, `POST /api/v1/memories` (201), `DELETE /api/v1/memories/{id}` (204) —
//! and the evaluator's suggestions: `GET /api/v1/suggestions?status=`, `POST
//! /api/v1/suggestions/{id}/accept | dismiss | remind | undo`. Each is scoped to the bearer
//! token's account; another account's memory or suggestion is not found.

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use openloop_core::contract::{MemoryView, SuggestionView};
use openloop_core::engine::NewMemory;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{Body, Shared, owner};
use crate::schema::json;

#[utoipa::path(get, path = "/api/v1/memories", tag = "learning", summary = "The business memories", responses((status = 200, description = "The memories", body = crate::schema::MemoryList), crate::schema::OwnerErrors))]
pub(crate) async fn list_memories(axum::extract::State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let memories = state.engine.list_memories(account).await?;
    let views: Vec<MemoryView<'_>> = memories.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, crate::schema::MemoryList { memories: views }))
}

#[utoipa::path(post, path = "/api/v1/memories", tag = "learning", summary = "Add a business memory", request_body = openloop_core::engine::NewMemory, responses((status = 201, description = "The memory", body = openloop_core::contract::MemoryView), crate::schema::OwnerErrors))]
pub(crate) async fn add_memory(axum::extract::State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: NewMemory = json_body(&body.map_err(body_error)?)?;
    let memory = state.engine.add_memory(account, input).await?;
    Ok(json(StatusCode::CREATED, MemoryView::from(&memory)))
}

#[utoipa::path(delete, path = "/api/v1/memories/{id}", tag = "learning", summary = "Delete a business memory", params(("id" = String, Path, description = "The memory's id")), responses((status = 204, description = "Deleted"), crate::schema::OwnerErrors))]
pub(crate) async fn delete_memory(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
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

#[utoipa::path(get, path = "/api/v1/suggestions", tag = "learning", summary = "The evaluator's suggestions", params(SuggestionQuery), responses((status = 200, description = "The suggestions", body = crate::schema::SuggestionList), crate::schema::OwnerErrors))]
pub(crate) async fn list_suggestions(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    openloop_edge::http::Params(query): openloop_edge::http::Params<SuggestionQuery>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let status = query.status.as_deref();
    let suggestions = state.engine.list_suggestions(account, status).await?;
    let views: Vec<SuggestionView<'_>> = suggestions.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, crate::schema::SuggestionList { suggestions: views }))
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
#[utoipa::path(post, path = "/api/v1/suggestions/{id}/{decision}", tag = "learning", summary = "Accept, dismiss, remind or undo a suggestion", params(("id" = String, Path, description = "The suggestion's id"), ("decision" = Decision, Path, description = "What to do with it")), responses((status = 200, description = "The suggestion", body = openloop_core::contract::SuggestionView), crate::schema::OwnerErrors))]
pub(crate) async fn decide_suggestion(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Path((id, decision)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
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

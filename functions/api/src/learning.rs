//! What the owner teaches the agent (issue 16): business memories —
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

use crate::{Body, Shared, json, owner};

pub(crate) async fn list_memories(axum::extract::State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let memories = state.engine.list_memories(account).await?;
    let views: Vec<MemoryView<'_>> = memories.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, serde_json::json!({ "memories": views })))
}

pub(crate) async fn add_memory(axum::extract::State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: NewMemory = json_body(&body.map_err(body_error)?)?;
    let memory = state.engine.add_memory(account, input).await?;
    Ok(json(StatusCode::CREATED, MemoryView::from(&memory)))
}

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

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuggestionQuery {
    status: Option<String>,
}

pub(crate) async fn list_suggestions(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<SuggestionQuery>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let status = query.status.as_deref();
    let suggestions = state.engine.list_suggestions(account, status).await?;
    let views: Vec<SuggestionView<'_>> = suggestions.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, serde_json::json!({ "suggestions": views })))
}

/// `POST /api/v1/suggestions/{id}/{decision}`.
pub(crate) async fn decide_suggestion(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Path((id, decision)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("suggestion"))?;
    let engine = &state.engine;
    let decided = match decision.as_str() {
        "accept" => engine.accept_suggestion(account, id).await?,
        "dismiss" => engine.dismiss_suggestion(account, id).await?,
        "remind" => engine.remind_suggestion(account, id).await?,
        "undo" => engine.undo_suggestion(account, id).await?,
        _ => return Err(ApiError::not_found("endpoint")),
    };
    Ok(json(StatusCode::OK, SuggestionView::from(&decided)))
}

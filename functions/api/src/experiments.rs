//! Message experiments (CONTRACT.md "Honest lift"): `POST /api/v1/suggestions/{id}/experiment`
//! (201) runs an accepted skill or prompt suggestion on half the new tasks; `GET
//! /api/v1/experiments` reports each version with the lift's interval; `POST
//! /api/v1/experiments/{id}/keep | end` is the owner's word on it. Scoped to the bearer token's
//! account; another account's suggestion or experiment is not found.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use openloop_edge::http::ApiError;

use crate::extract::{Shared, owner};
use crate::schema::json;

#[utoipa::path(post, path = "/api/v1/suggestions/{id}/experiment", operation_id = "start_experiment", tag = "learning", summary = "Run an applied skill or prompt suggestion as an experiment on half the new tasks", params(("id" = String, Path, description = "The suggestion id")), responses((status = 201, description = "The experiment", body = openloop_core::engine::ExperimentView), crate::schema::OwnerErrors))]
pub(crate) async fn start(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("suggestion"))?;
    let started = state.engine.start_experiment(account, id).await?;
    Ok(json(StatusCode::CREATED, started))
}

#[utoipa::path(get, path = "/api/v1/experiments", operation_id = "list_experiments", tag = "learning", summary = "The message experiments, each version with its interval", responses((status = 200, description = "The experiments", body = openloop_core::engine::ExperimentsReport), crate::schema::OwnerErrors))]
pub(crate) async fn list(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(json(StatusCode::OK, state.engine.experiments(account).await?))
}

/// `keep` or `end`.
#[utoipa::path(post, path = "/api/v1/experiments/{id}/{decision}", operation_id = "decide_experiment", tag = "learning", summary = "Keep the proposed version, or end the experiment", params(("id" = String, Path, description = "The experiment id"), ("decision" = String, Path, description = "`keep` or `end`")), responses((status = 200, description = "The experiment after the decision", body = openloop_core::engine::ExperimentView), crate::schema::OwnerErrors))]
pub(crate) async fn decide(
    State(state): Shared,
    headers: HeaderMap,
    Path((id, decision)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("experiment"))?;
    let decided = match decision.as_str() {
        "keep" => state.engine.keep_experiment(account, id).await?,
        "end" => state.engine.end_experiment(account, id).await?,
        _ => return Err(ApiError::not_found("endpoint")),
    };
    Ok(json(StatusCode::OK, decided))
}

//! A plan the owner changes before approving it (spec §27.3): `PUT /api/v1/tasks/{id}/plan`
//! `{"steps": [{"step_number", "description"?, "draft_content"?}], "version"?}` — the steps
//! in their new order, a step left out removed — and `POST /api/v1/tasks/{id}/plan/replan`
//! `{"instructions", "version"?}`, the agent planning it again. Each answers the updated
//! `Task`; a task whose plan is not waiting for approval is `409 invalid_state`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use openloop_core::contract::TaskView;
use openloop_core::task::plan_edit::StepEdit;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{Body, Shared, owner, task_id};
use crate::schema::json;

/// The body of `PUT /api/v1/tasks/{id}/plan`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanEditInput {
    /// The plan's steps as they should be, in order; each names a step by its current number.
    steps: Vec<StepEdit>,
    /// The task's version the edit was made on: a task changed since is `409 stale_version`.
    version: Option<u64>,
}

/// The body of `POST /api/v1/tasks/{id}/plan/replan`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplanInput {
    instructions: openloop_core::task::plan_edit::Instructions,
    version: Option<u64>,
}

#[utoipa::path(put, path = "/api/v1/tasks/{id}/plan", tag = "tasks", summary = "Change a plan waiting for approval: its steps in their new order, a step left out removed", params(("id" = String, Path, description = "The task's id")), request_body = PlanEditInput, responses((status = 200, description = "The task with its plan", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
pub(crate) async fn edit_plan(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: PlanEditInput = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.edit_plan(account, task_id(&id)?, &input.steps, input.version).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/plan/replan", tag = "tasks", summary = "Have the agent plan a task again, with the owner's instructions", params(("id" = String, Path, description = "The task's id")), request_body = ReplanInput, responses((status = 200, description = "The task with its new plan", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
pub(crate) async fn replan(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: ReplanInput = json_body(&body.map_err(body_error)?)?;
    let task = state
        .engine
        .replan(account, task_id(&id)?, &input.instructions, input.version)
        .await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

//! Open loops and triggers (CONTRACT.md, "Open loops and triggers"): `GET /api/v1/loops`, the
//! trigger table (`/api/v1/triggers`, with its dry run), and the owner's control of one task
//! or one recurring template (pause, resume, run now; a template's runs).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use openloop_core::engine::LOOPS_PAGE_MAX;
use openloop_core::kernel::ids::MemberId;
use openloop_core::owner::trigger::TriggerInput;
use openloop_core::task::open_loop::LoopStatus;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::{Body, Shared, json, owner, page_limit};

#[derive(Deserialize)]
pub(crate) struct LoopParams {
    status: Option<String>,
    member_id: Option<String>,
    limit: Option<String>,
}

/// `GET /api/v1/loops?status=open|met|expired&member_id=&limit=`: newest first.
pub(crate) async fn list_loops(State(state): Shared, headers: HeaderMap, Query(params): Query<LoopParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let status = match params.status.as_deref() {
        Some(s) => Some(LoopStatus::parse(s).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_status",
                format!("{s:?} is not a loop status (open, met, expired)"),
            )
        })?),
        None => None,
    };
    let member = match params.member_id.as_deref() {
        Some(m) => Some(MemberId::parse(m).map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, &e.code, e.message))?),
        None => None,
    };
    let limit = page_limit(params.limit.as_deref(), LOOPS_PAGE_MAX)?.unwrap_or(100);
    let loops = state.engine.list_loops(account, status, member.as_ref(), limit).await?;
    Ok(json(StatusCode::OK, serde_json::json!({"loops": loops})))
}

/// `GET /api/v1/triggers`: every row, the built-in ones first.
pub(crate) async fn list_triggers(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let triggers = state.engine.triggers(account).await?;
    Ok(json(StatusCode::OK, serde_json::json!({"triggers": triggers})))
}

/// `POST /api/v1/triggers` → `201` Trigger.
pub(crate) async fn create_trigger(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: TriggerInput = json_body(&body.map_err(body_error)?)?;
    Ok(json(StatusCode::CREATED, state.engine.create_trigger(account, input).await?))
}

/// `PUT /api/v1/triggers/{id}` → `200` Trigger (a built-in row takes only `enabled`).
pub(crate) async fn update_trigger(
    State(state): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let patch: serde_json::Value = json_body(&body.map_err(body_error)?)?;
    Ok(json(StatusCode::OK, state.engine.update_trigger(account, &id, patch).await?))
}

/// `DELETE /api/v1/triggers/{id}` → `204`.
pub(crate) async fn delete_trigger(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    state.engine.delete_trigger(account, &id).await?;
    Ok(axum::response::IntoResponse::into_response(StatusCode::NO_CONTENT))
}

/// `POST /api/v1/triggers/{id}/dry-run` → `{"would_open", "members"}`, nothing created.
pub(crate) async fn dry_run_trigger(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(json(StatusCode::OK, state.engine.dry_run_trigger(account, &id).await?))
}

#[derive(Clone, Copy)]
enum Control {
    Pause,
    Resume,
    RunNow,
}

/// `POST /api/v1/tasks/{id}/pause|resume|run-now` → `200` Task.
async fn control_task(state: Shared, headers: HeaderMap, id: String, control: Control) -> Result<Response, ApiError> {
    let State(state) = state;
    let account = owner(&state, &headers).await?;
    let id = crate::task_id(&id)?;
    let task = match control {
        Control::Pause => state.engine.pause_task(account, id).await?,
        Control::Resume => state.engine.resume_task(account, id).await?,
        Control::RunNow => state.engine.run_task_now(account, id).await?,
    };
    Ok(json(StatusCode::OK, openloop_core::contract::TaskView::from(&task)))
}

pub(crate) async fn pause_task(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_task(state, headers, id, Control::Pause).await
}

pub(crate) async fn resume_task(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_task(state, headers, id, Control::Resume).await
}

pub(crate) async fn run_task_now(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_task(state, headers, id, Control::RunNow).await
}

fn template_id(raw: &str) -> Result<ulid::Ulid, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("recurring template"))
}

/// `POST /api/v1/recurring/{id}/pause|resume|run-now` → `200` the template.
async fn control_template(state: Shared, headers: HeaderMap, id: String, control: Control) -> Result<Response, ApiError> {
    let State(state) = state;
    let account = owner(&state, &headers).await?;
    let id = template_id(&id)?;
    let template = match control {
        Control::Pause => state.engine.pause_template(account, id).await?,
        Control::Resume => state.engine.resume_template(account, id).await?,
        Control::RunNow => state.engine.run_template_now(account, id).await?,
    };
    Ok(json(StatusCode::OK, template))
}

pub(crate) async fn pause_template(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_template(state, headers, id, Control::Pause).await
}

pub(crate) async fn resume_template(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_template(state, headers, id, Control::Resume).await
}

pub(crate) async fn run_template_now(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_template(state, headers, id, Control::RunNow).await
}

/// `GET /api/v1/recurring/{id}/runs` → `{"runs": [{"at", "found", "opened", "notified"}]}`, newest first.
pub(crate) async fn template_runs(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let runs = state.engine.template_runs(account, template_id(&id)?).await?;
    Ok(json(StatusCode::OK, serde_json::json!({"runs": runs})))
}

//! Open loops and triggers (CONTRACT.md, "Open loops and triggers"): `GET /api/v1/loops`, the
//! trigger table (`/api/v1/triggers`, with its dry run), and the owner's control of one task
//! or one recurring template (pause, resume, run now; a template's runs).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use openloop_core::engine::LOOPS_PAGE_MAX;
use openloop_core::kernel::ids::MemberId;
use openloop_core::owner::trigger::TriggerInput;
use openloop_core::task::open_loop::LoopStatus;
use openloop_edge::http::{ApiError, Params, body_error, json_body};

use crate::extract::{Body, Shared, owner, page_limit};
use crate::schema::json;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LoopParams {
    /// `open`, `met` or `expired`.
    #[param(value_type = Option<LoopStatus>)]
    status: Option<String>,
    /// Only this member's loops.
    member_id: Option<MemberId>,
    /// How many (default 100).
    #[param(value_type = Option<u32>, minimum = 1)]
    limit: Option<String>,
}

/// `GET /api/v1/loops?status=open|met|expired&member_id=&limit=`: newest first.
#[utoipa::path(get, path = "/api/v1/loops", tag = "automation", summary = "Open loops, newest first", params(LoopParams), responses((status = 200, description = "The loops", body = crate::schema::Loops), crate::schema::OwnerErrors))]
pub(crate) async fn list_loops(State(state): Shared, headers: HeaderMap, Params(params): Params<LoopParams>) -> Result<Response, ApiError> {
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
    let member = params.member_id;
    let limit = page_limit(params.limit.as_deref(), LOOPS_PAGE_MAX)?.unwrap_or(100);
    let loops = state.engine.list_loops(account, status, member.as_ref(), limit).await?;
    Ok(json(StatusCode::OK, crate::schema::Loops { loops }))
}

/// `GET /api/v1/triggers`: every row, the built-in ones first.
#[utoipa::path(get, path = "/api/v1/triggers", tag = "automation", summary = "The trigger table", responses((status = 200, description = "The rows", body = crate::schema::Triggers), crate::schema::OwnerErrors))]
pub(crate) async fn list_triggers(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let triggers = state.engine.triggers(account).await?;
    Ok(json(StatusCode::OK, crate::schema::Triggers { triggers }))
}

/// `POST /api/v1/triggers` → `201` Trigger.
#[utoipa::path(post, path = "/api/v1/triggers", tag = "automation", summary = "Add a trigger row", request_body = openloop_core::owner::trigger::TriggerInput, responses((status = 201, description = "The row", body = openloop_core::owner::trigger::Trigger), crate::schema::OwnerErrors))]
pub(crate) async fn create_trigger(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: TriggerInput = json_body(&body.map_err(body_error)?)?;
    Ok(json(StatusCode::CREATED, state.engine.create_trigger(account, input).await?))
}

/// The fields of a trigger row to change (a built-in row takes only `enabled`); each kept to
/// the rule it has in a new row.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct TriggerPatch {
    event: Option<openloop_core::owner::trigger::TriggerEvent>,
    #[schema(value_type = Option<Object>)]
    filter: Option<serde_json::Value>,
    task_type: Option<openloop_core::task::task_type::RegisteredTaskType>,
    goal: Option<openloop_core::kernel::texts::Goal>,
    delay_hours: Option<u32>,
    reentry: Option<openloop_core::owner::trigger::Reentry>,
    reentry_days: Option<u32>,
    enabled: Option<bool>,
    notify: Option<openloop_core::owner::trigger::Notify>,
}

/// `PUT /api/v1/triggers/{id}` → `200` Trigger (a built-in row takes only `enabled`).
#[utoipa::path(put, path = "/api/v1/triggers/{id}", tag = "automation", summary = "Change a trigger row", params(("id" = String, Path, description = "The trigger's id")), request_body = TriggerPatch, responses((status = 200, description = "The row", body = openloop_core::owner::trigger::Trigger), crate::schema::OwnerErrors))]
pub(crate) async fn update_trigger(
    State(state): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let body = body.map_err(body_error)?;
    // Its fields kept to their rules first; the row's own checks follow in the engine.
    let _: TriggerPatch = json_body(&body)?;
    let patch: serde_json::Value = json_body(&body)?;
    Ok(json(StatusCode::OK, state.engine.update_trigger(account, &id, patch).await?))
}

/// `DELETE /api/v1/triggers/{id}` → `204`.
#[utoipa::path(delete, path = "/api/v1/triggers/{id}", tag = "automation", summary = "Delete an owner's trigger row", params(("id" = String, Path, description = "The trigger's id")), responses((status = 204, description = "Deleted"), crate::schema::OwnerErrors))]
pub(crate) async fn delete_trigger(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    state.engine.delete_trigger(account, &id).await?;
    Ok(axum::response::IntoResponse::into_response(StatusCode::NO_CONTENT))
}

/// `POST /api/v1/triggers/{id}/dry-run` → `{"would_open", "members"}`, nothing created.
#[utoipa::path(post, path = "/api/v1/triggers/{id}/dry-run", tag = "automation", summary = "What a trigger would open now (nothing is created)", params(("id" = String, Path, description = "The trigger's id")), responses((status = 200, description = "The dry run", body = openloop_core::engine::DryRun), crate::schema::OwnerErrors))]
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
    let id = crate::extract::task_id(&id)?;
    let task = match control {
        Control::Pause => state.engine.pause_task(account, id).await?,
        Control::Resume => state.engine.resume_task(account, id).await?,
        Control::RunNow => state.engine.run_task_now(account, id).await?,
    };
    Ok(json(StatusCode::OK, openloop_core::contract::TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/pause", tag = "tasks", summary = "Pause one task", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
pub(crate) async fn pause_task(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_task(state, headers, id, Control::Pause).await
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/resume", tag = "tasks", summary = "Resume a paused task", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
pub(crate) async fn resume_task(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_task(state, headers, id, Control::Resume).await
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/run-now", tag = "tasks", summary = "Run a task's next step now", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
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

#[utoipa::path(post, path = "/api/v1/recurring/{id}/pause", tag = "automation", summary = "Pause a recurring template", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), crate::schema::OwnerErrors))]
pub(crate) async fn pause_template(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_template(state, headers, id, Control::Pause).await
}

#[utoipa::path(post, path = "/api/v1/recurring/{id}/resume", tag = "automation", summary = "Resume a recurring template", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), crate::schema::OwnerErrors))]
pub(crate) async fn resume_template(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_template(state, headers, id, Control::Resume).await
}

#[utoipa::path(post, path = "/api/v1/recurring/{id}/run-now", tag = "automation", summary = "Run a recurring template now", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), crate::schema::OwnerErrors))]
pub(crate) async fn run_template_now(state: Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    control_template(state, headers, id, Control::RunNow).await
}

/// `GET /api/v1/recurring/{id}/runs` → `{"runs": [{"at", "found", "opened", "notified"}]}`, newest first.
#[utoipa::path(get, path = "/api/v1/recurring/{id}/runs", tag = "automation", summary = "A recurring template's runs, newest first", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The runs", body = crate::schema::TemplateRuns), crate::schema::OwnerErrors))]
pub(crate) async fn template_runs(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let runs = state.engine.template_runs(account, template_id(&id)?).await?;
    Ok(json(StatusCode::OK, crate::schema::TemplateRuns { runs }))
}

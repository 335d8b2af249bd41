//! Open loops and triggers: `GET /api/v1/loops`, the
//! trigger table (`/api/v1/triggers`, with its dry run), and the recurring templates
//! (`/api/v1/recurring`: make, list, delete; pause, resume, run one now; its runs). The
//! controls of one task are `tasks`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use serde::Deserialize;

use openloop_core::engine::LOOPS_PAGE_MAX;
use openloop_core::kernel::ids::MemberId;
use openloop_core::owner::recurring::{NewTemplate, TemplateChange};
use openloop_core::owner::trigger::TriggerInput;
use openloop_core::task::open_loop::LoopStatus;
use openloop_edge::http::{ApiError, Params, body_error, json_body};

use crate::extract::{ApiState, Body, Owner, Shared, page_limit};
use crate::schema::{Deleted, Loops, OwnerErrors, RecurringTemplates, TemplateRuns, Triggers, json};

/// The routes of the loops, the triggers and the recurring templates.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/recurring", get(list_templates).post(create_template))
        .route("/api/v1/recurring/{id}", delete(delete_template).put(change_template))
        .route("/api/v1/loops", get(list_loops))
        .route("/api/v1/recurring/{id}/pause", post(pause_template))
        .route("/api/v1/recurring/{id}/resume", post(resume_template))
        .route("/api/v1/recurring/{id}/run-now", post(run_template_now))
        .route("/api/v1/recurring/{id}/runs", get(template_runs))
        .route("/api/v1/triggers", get(list_triggers).post(create_trigger))
        .route("/api/v1/triggers/{id}", put(update_trigger).delete(delete_trigger))
        .route("/api/v1/triggers/{id}/dry-run", post(dry_run_trigger))
}

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
#[utoipa::path(get, path = "/api/v1/loops", tag = "automation", summary = "Open loops, newest first", params(LoopParams), responses((status = 200, description = "The loops", body = Loops), OwnerErrors))]
pub(crate) async fn list_loops(
    State(state): Shared,
    Params(params): Params<LoopParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
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
    Ok(json(StatusCode::OK, Loops { loops }))
}

/// `GET /api/v1/triggers`: every row, the built-in ones first.
#[utoipa::path(get, path = "/api/v1/triggers", tag = "automation", summary = "The trigger table", responses((status = 200, description = "The rows", body = Triggers), OwnerErrors))]
pub(crate) async fn list_triggers(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let triggers = state.engine.triggers(account).await?;
    Ok(json(StatusCode::OK, Triggers { triggers }))
}

/// `POST /api/v1/triggers` → `201` Trigger.
#[utoipa::path(post, path = "/api/v1/triggers", tag = "automation", summary = "Add a trigger row", request_body = openloop_core::owner::trigger::TriggerInput, responses((status = 201, description = "The row", body = openloop_core::owner::trigger::Trigger), OwnerErrors))]
pub(crate) async fn create_trigger(State(state): Shared, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: TriggerInput = json_body(&body.map_err(body_error)?)?;
    Ok(json(StatusCode::CREATED, state.engine.create_trigger(account, input).await?))
}

/// The fields of a trigger row to change (a built-in row takes only `enabled`); each kept to
/// the rule it has in a new row.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct TriggerPatch {
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
#[utoipa::path(put, path = "/api/v1/triggers/{id}", tag = "automation", summary = "Change a trigger row", params(("id" = String, Path, description = "The trigger's id")), request_body = TriggerPatch, responses((status = 200, description = "The row", body = openloop_core::owner::trigger::Trigger), OwnerErrors))]
pub(crate) async fn update_trigger(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    // Its fields kept to their rules first; the row's own checks follow in the engine.
    let _: TriggerPatch = json_body(&body)?;
    let patch: serde_json::Value = json_body(&body)?;
    Ok(json(StatusCode::OK, state.engine.update_trigger(account, &id, patch).await?))
}

/// `DELETE /api/v1/triggers/{id}` → `204`.
#[utoipa::path(delete, path = "/api/v1/triggers/{id}", tag = "automation", summary = "Delete an owner's trigger row", params(("id" = String, Path, description = "The trigger's id")), responses((status = 204, description = "Deleted"), OwnerErrors))]
pub(crate) async fn delete_trigger(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    state.engine.delete_trigger(account, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/v1/triggers/{id}/dry-run` → `{"would_open", "members"}`, nothing created.
#[utoipa::path(post, path = "/api/v1/triggers/{id}/dry-run", tag = "automation", summary = "What a trigger would open now (nothing is created)", params(("id" = String, Path, description = "The trigger's id")), responses((status = 200, description = "The dry run", body = openloop_core::engine::DryRun), OwnerErrors))]
pub(crate) async fn dry_run_trigger(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.dry_run_trigger(account, &id).await?))
}

fn template_id(raw: &str) -> Result<ulid::Ulid, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("recurring template"))
}

#[utoipa::path(post, path = "/api/v1/recurring", tag = "automation", summary = "Create a recurring template", request_body = openloop_core::owner::recurring::NewTemplate, responses((status = 201, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), OwnerErrors))]
pub(crate) async fn create_template(State(state): Shared, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: NewTemplate = json_body(&body.map_err(body_error)?)?;
    let account = state.engine.account(account).await?;
    Ok(json(StatusCode::CREATED, state.engine.create_template(&account, input).await?))
}

#[utoipa::path(get, path = "/api/v1/recurring", tag = "automation", summary = "The recurring templates", responses((status = 200, description = "The templates", body = RecurringTemplates), OwnerErrors))]
pub(crate) async fn list_templates(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let templates = state.engine.list_templates(account).await?;
    Ok(json(StatusCode::OK, RecurringTemplates { templates }))
}

#[utoipa::path(delete, path = "/api/v1/recurring/{id}", tag = "automation", summary = "Delete a recurring template", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "Deleted", body = Deleted), OwnerErrors))]
pub(crate) async fn delete_template(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let id = template_id(&id)?;
    state.engine.delete_template(account, id).await?;
    Ok(json(
        StatusCode::OK,
        Deleted {
            email: None,
            id: Some(id.to_string()),
            deleted: true,
        },
    ))
}

/// `PUT /api/v1/recurring/{id}` (`{"notify"}`): when the owner hears of its runs.
#[utoipa::path(put, path = "/api/v1/recurring/{id}", tag = "automation", summary = "Change a recurring template's notify policy", params(("id" = String, Path, description = "The template's id")), request_body = openloop_core::owner::recurring::TemplateChange, responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), OwnerErrors))]
pub(crate) async fn change_template(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
    let id = template_id(&id)?;
    let change: TemplateChange = json_body(&body.map_err(body_error)?)?;
    Ok(json(
        StatusCode::OK,
        state.engine.set_template_notify(account, id, change.notify).await?,
    ))
}

#[utoipa::path(post, path = "/api/v1/recurring/{id}/pause", tag = "automation", summary = "Pause a recurring template", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), OwnerErrors))]
pub(crate) async fn pause_template(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.pause_template(account, template_id(&id)?).await?))
}

#[utoipa::path(post, path = "/api/v1/recurring/{id}/resume", tag = "automation", summary = "Resume a recurring template", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), OwnerErrors))]
pub(crate) async fn resume_template(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(
        StatusCode::OK,
        state.engine.resume_template(account, template_id(&id)?).await?,
    ))
}

#[utoipa::path(post, path = "/api/v1/recurring/{id}/run-now", tag = "automation", summary = "Run a recurring template now", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), OwnerErrors))]
pub(crate) async fn run_template_now(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(
        StatusCode::OK,
        state.engine.run_template_now(account, template_id(&id)?).await?,
    ))
}

/// `GET /api/v1/recurring/{id}/runs` → `{"runs": [{"at", "found", "opened", "notified"}]}`, newest first.
#[utoipa::path(get, path = "/api/v1/recurring/{id}/runs", tag = "automation", summary = "A recurring template's runs, newest first", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "The runs", body = TemplateRuns), OwnerErrors))]
pub(crate) async fn template_runs(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let runs = state.engine.template_runs(account, template_id(&id)?).await?;
    Ok(json(StatusCode::OK, TemplateRuns { runs }))
}

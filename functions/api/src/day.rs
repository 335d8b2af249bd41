//! The owner's day (CONTRACT.md, "The owner's day"): the to-dos and call list (`GET
//! /api/v1/todos?status=`, `POST /api/v1/todos/{id}/contact | snooze | done`), the morning
//! brief (`GET /api/v1/brief?date=`) and reopening a task closed too early (`POST
//! /api/v1/tasks/{id}/reopen`). Each handler is the engine's operation of the same name.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use openloop_core::contract::TodoView;
use openloop_core::task::feedback::Comment;
use openloop_core::task::todo::{ContactKind, ContactResult, SnoozeUntil, TodoNote, TodoOutcome};
use openloop_edge::http::{ApiError, Params, body_error, json_body};

use crate::extract::{Body, Shared, owner};
use crate::schema::TodoList;
use crate::schema::json;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TodoParams {
    /// `open` (default), `done` or `snoozed`.
    #[param(value_type = Option<openloop_core::task::todo::TodoStatus>)]
    status: Option<String>,
}

fn todo_id(raw: &str) -> Result<ulid::Ulid, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("todo"))
}

#[utoipa::path(get, path = "/api/v1/todos", tag = "day", summary = "The to-dos, soonest due first", params(TodoParams), responses((status = 200, description = "The to-dos", body = crate::schema::TodoList), crate::schema::OwnerErrors))]
pub(crate) async fn list_todos(State(state): Shared, headers: HeaderMap, Params(params): Params<TodoParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let status = openloop_web::todo_status(params.status.as_deref())?;
    let todos = state.engine.todos(account, status).await?;
    let views: Vec<TodoView> = todos.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, TodoList { todos: views }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ContactInput {
    kind: ContactKind,
    result: ContactResult,
    note: Option<TodoNote>,
}

#[utoipa::path(post, path = "/api/v1/todos/{id}/contact", tag = "day", summary = "Log a contact on a to-do", params(("id" = String, Path, description = "The to-do's id")), request_body = ContactInput, responses((status = 200, description = "The to-do", body = openloop_core::contract::TodoView), crate::schema::OwnerErrors))]
pub(crate) async fn log_contact(
    State(state): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id = todo_id(&id)?;
    let input: ContactInput = json_body(&body.map_err(body_error)?)?;
    let todo = state
        .engine
        .log_todo_contact(account, id, input.kind, input.result, input.note.as_deref())
        .await?;
    Ok(json(StatusCode::OK, TodoView::from(&todo)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SnoozeInput {
    /// At most 90 days ahead.
    until: SnoozeUntil,
}

#[utoipa::path(post, path = "/api/v1/todos/{id}/snooze", tag = "day", summary = "Snooze a to-do to a date", params(("id" = String, Path, description = "The to-do's id")), request_body = SnoozeInput, responses((status = 200, description = "The to-do", body = openloop_core::contract::TodoView), crate::schema::OwnerErrors))]
pub(crate) async fn snooze(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id = todo_id(&id)?;
    let input: SnoozeInput = json_body(&body.map_err(body_error)?)?;
    let todo = state.engine.snooze_todo(account, id, &input.until).await?;
    Ok(json(StatusCode::OK, TodoView::from(&todo)))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct DoneInput {
    outcome: Option<TodoOutcome>,
    note: Option<TodoNote>,
}

#[utoipa::path(post, path = "/api/v1/todos/{id}/done", tag = "day", summary = "Mark a to-do done", params(("id" = String, Path, description = "The to-do's id")), request_body = Option<DoneInput>, responses((status = 200, description = "The to-do", body = openloop_core::contract::TodoView), crate::schema::OwnerErrors))]
pub(crate) async fn done(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id = todo_id(&id)?;
    let body = body.map_err(body_error)?;
    let input: DoneInput = if body.iter().all(u8::is_ascii_whitespace) {
        DoneInput::default()
    } else {
        json_body(&body)?
    };
    let todo = state
        .engine
        .complete_todo(account, id, input.outcome.as_deref(), input.note.as_deref())
        .await?;
    Ok(json(StatusCode::OK, TodoView::from(&todo)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct BriefParams {
    /// `YYYY-MM-DD`; today in the gym's time zone by default.
    #[param(value_type = Option<openloop_core::kernel::texts::DateText>)]
    date: Option<String>,
}

/// The brief as CONTRACT.md shapes it: each to-do as a `Todo`.
pub(crate) fn brief_json(brief: &openloop_core::owner::brief::Brief) -> crate::schema::BriefView<'_> {
    crate::schema::BriefView {
        date: brief.date,
        actions: &brief.actions,
        todos: brief.todos.iter().map(Into::into).collect(),
        at_risk: &brief.at_risk,
        payments: &brief.payments,
        yesterday: &brief.yesterday,
        planned_today: brief.planned_today,
        review_expired: brief.review_expired,
        more: &brief.more,
    }
}

/// `GET /api/v1/brief?date=YYYY-MM-DD`: the morning brief (today in the gym's time zone by
/// default) — the content of the morning mail.
#[utoipa::path(get, path = "/api/v1/brief", tag = "day", summary = "The morning brief", params(BriefParams), responses((status = 200, description = "The brief", body = crate::schema::BriefView), crate::schema::OwnerErrors))]
pub(crate) async fn brief(State(state): Shared, headers: HeaderMap, Params(params): Params<BriefParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let brief = state.engine.brief(account, params.date.as_deref()).await?;
    Ok(json(StatusCode::OK, brief_json(&brief)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ReopenInput {
    /// Why the task is not done.
    reason: Comment,
}

/// `POST /api/v1/tasks/{id}/reopen {"reason"}`: a closed task back to work within its
/// attribution window (spec §37.6); `409 invalid_state` otherwise.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/reopen", tag = "tasks", summary = "Reopen a task closed too early", params(("id" = String, Path, description = "The task's id")), request_body = ReopenInput, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
pub(crate) async fn reopen(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: ReopenInput = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.reopen(account, crate::extract::task_id(&id)?, &input.reason).await?;
    Ok(json(StatusCode::OK, openloop_core::contract::TaskView::from(&task)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct MonthParams {
    /// The current month by default.
    month: Option<openloop_core::kernel::texts::MonthText>,
}

/// `GET /api/v1/reports/churn?month=YYYY-MM`: the month's churn report (the current month by
/// default), with its 12-month trend.
#[utoipa::path(get, path = "/api/v1/reports/churn", tag = "day", summary = "The month's churn report", params(MonthParams), responses((status = 200, description = "The report", body = openloop_core::owner::churn_report::ChurnReport), crate::schema::OwnerErrors))]
pub(crate) async fn churn_report(
    State(state): Shared,
    headers: HeaderMap,
    Params(params): Params<MonthParams>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let report = state.engine.monthly_churn_report(account, params.month.as_deref()).await?;
    Ok(json(StatusCode::OK, report))
}

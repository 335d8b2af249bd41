//! The owner's day: the to-dos and call list (`GET
//! /api/v1/todos?status=`, `POST /api/v1/todos/{id}/contact | snooze | done`), the morning
//! brief (`GET /api/v1/brief?date=`) and the month's churn report (`GET
//! /api/v1/reports/churn?month=`). Each handler is the engine's operation of the same name.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_core::contract::TodoView;
use openloop_core::task::todo::{ContactKind, ContactResult, SnoozeUntil, TodoNote, TodoOutcome};
use openloop_edge::http::{ApiError, Params, body_error, json_body};

use crate::extract::{ApiState, Body, MonthParams, Owner, Shared};
use crate::schema::{BriefView, OwnerErrors, TodoList, json};

/// The day's routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/brief", get(brief))
        .route("/api/v1/reports/churn", get(churn_report))
        .route("/api/v1/todos", get(list_todos))
        .route("/api/v1/todos/{id}/contact", post(log_contact))
        .route("/api/v1/todos/{id}/snooze", post(snooze))
        .route("/api/v1/todos/{id}/done", post(done))
}

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

#[utoipa::path(get, path = "/api/v1/todos", tag = "day", summary = "The to-dos, soonest due first", params(TodoParams), responses((status = 200, description = "The to-dos", body = TodoList), OwnerErrors))]
pub(crate) async fn list_todos(
    State(state): Shared,
    Params(params): Params<TodoParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
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

#[utoipa::path(post, path = "/api/v1/todos/{id}/contact", tag = "day", summary = "Log a contact on a to-do", params(("id" = String, Path, description = "The to-do's id")), request_body = ContactInput, responses((status = 200, description = "The to-do", body = openloop_core::contract::TodoView), OwnerErrors))]
pub(crate) async fn log_contact(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
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

#[utoipa::path(post, path = "/api/v1/todos/{id}/snooze", tag = "day", summary = "Snooze a to-do to a date", params(("id" = String, Path, description = "The to-do's id")), request_body = SnoozeInput, responses((status = 200, description = "The to-do", body = openloop_core::contract::TodoView), OwnerErrors))]
pub(crate) async fn snooze(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
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

#[utoipa::path(post, path = "/api/v1/todos/{id}/done", tag = "day", summary = "Mark a to-do done", params(("id" = String, Path, description = "The to-do's id")), request_body = Option<DoneInput>, responses((status = 200, description = "The to-do", body = openloop_core::contract::TodoView), OwnerErrors))]
pub(crate) async fn done(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
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
fn brief_json(brief: &openloop_core::owner::brief::Brief) -> BriefView<'_> {
    BriefView {
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
#[utoipa::path(get, path = "/api/v1/brief", tag = "day", summary = "The morning brief", params(BriefParams), responses((status = 200, description = "The brief", body = BriefView), OwnerErrors))]
pub(crate) async fn brief(State(state): Shared, Params(params): Params<BriefParams>, Owner(account): Owner) -> Result<Response, ApiError> {
    let brief = state.engine.brief(account, params.date.as_deref()).await?;
    Ok(json(StatusCode::OK, brief_json(&brief)))
}

/// `GET /api/v1/reports/churn?month=YYYY-MM`: the month's churn report (the current month by
/// default), with its 12-month trend.
#[utoipa::path(get, path = "/api/v1/reports/churn", tag = "day", summary = "The month's churn report", params(MonthParams), responses((status = 200, description = "The report", body = openloop_core::owner::churn_report::ChurnReport), OwnerErrors))]
pub(crate) async fn churn_report(
    State(state): Shared,
    Params(params): Params<MonthParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let report = state.engine.monthly_churn_report(account, params.month.as_deref()).await?;
    Ok(json(StatusCode::OK, report))
}

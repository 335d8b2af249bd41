//! The owner's day (CONTRACT.md, "The owner's day"): the to-dos and call list (`GET
//! /api/v1/todos?status=`, `POST /api/v1/todos/{id}/contact | snooze | done`), the morning
//! brief (`GET /api/v1/brief?date=`) and reopening a task closed too early (`POST
//! /api/v1/tasks/{id}/reopen`). Each handler is the engine's operation of the same name.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use openloop_core::contract::TodoView;
use openloop_core::task::todo::{ContactKind, ContactResult, TodoStatus};
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::{Body, Shared, json, owner};

#[derive(Deserialize)]
pub(crate) struct TodoParams {
    status: Option<String>,
}

fn todo_id(raw: &str) -> Result<ulid::Ulid, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("todo"))
}

/// `?status=` of a to-do list, open by default.
pub(crate) fn todo_status(raw: Option<&str>) -> Result<TodoStatus, ApiError> {
    match raw {
        None => Ok(TodoStatus::Open),
        Some(s) => TodoStatus::parse(s).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_status",
                format!("{s:?} is not a to-do status (open, done or snoozed)"),
            )
        }),
    }
}

pub(crate) async fn list_todos(State(state): Shared, headers: HeaderMap, Query(params): Query<TodoParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let status = todo_status(params.status.as_deref())?;
    let todos = state.engine.todos(account, status).await?;
    let views: Vec<TodoView> = todos.iter().map(Into::into).collect();
    Ok(json(StatusCode::OK, serde_json::json!({"todos": views})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContactInput {
    kind: ContactKind,
    result: ContactResult,
    note: Option<String>,
}

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SnoozeInput {
    until: String,
}

pub(crate) async fn snooze(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id = todo_id(&id)?;
    let input: SnoozeInput = json_body(&body.map_err(body_error)?)?;
    let todo = state.engine.snooze_todo(account, id, &input.until).await?;
    Ok(json(StatusCode::OK, TodoView::from(&todo)))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DoneInput {
    outcome: Option<String>,
    note: Option<String>,
}

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

#[derive(Deserialize)]
pub(crate) struct BriefParams {
    date: Option<String>,
}

/// The brief as CONTRACT.md shapes it: each to-do as a `Todo`.
pub(crate) fn brief_json(brief: &openloop_core::owner::brief::Brief) -> serde_json::Value {
    let mut body = serde_json::to_value(brief).unwrap_or_default();
    let todos: Vec<TodoView> = brief.todos.iter().map(Into::into).collect();
    body["todos"] = serde_json::to_value(todos).unwrap_or_default();
    body
}

/// `GET /api/v1/brief?date=YYYY-MM-DD`: the morning brief (today in the gym's time zone by
/// default) — the content of the morning mail.
pub(crate) async fn brief(State(state): Shared, headers: HeaderMap, Query(params): Query<BriefParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let brief = state.engine.brief(account, params.date.as_deref()).await?;
    Ok(json(StatusCode::OK, brief_json(&brief)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReopenInput {
    reason: String,
}

/// `POST /api/v1/tasks/{id}/reopen {"reason"}`: a closed task back to work within its
/// attribution window (spec §37.6); `409 invalid_state` otherwise.
pub(crate) async fn reopen(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: ReopenInput = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.reopen(account, crate::task_id(&id)?, &input.reason).await?;
    Ok(json(StatusCode::OK, openloop_core::contract::TaskView::from(&task)))
}

#[derive(Deserialize)]
pub(crate) struct MonthParams {
    month: Option<String>,
}

/// `GET /api/v1/reports/churn?month=YYYY-MM`: the month's churn report (the current month by
/// default), with its 12-month trend.
pub(crate) async fn churn_report(
    State(state): Shared,
    headers: HeaderMap,
    Query(params): Query<MonthParams>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let report = state.engine.monthly_churn_report(account, params.month.as_deref()).await?;
    Ok(json(StatusCode::OK, report))
}

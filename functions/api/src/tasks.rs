//! Tasks: `GET /api/v1/tasks?status=&member_id=&limit=&cursor=`, newest first; `GET
//! /api/v1/tasks/{id}` with its log and conversation; the owner's own tasks — `POST
//! /api/v1/tasks` (a manual trigger), `POST /api/v1/tasks/batch` (one type for many members)
//! and `POST /api/v1/tasks/{id}/subtasks` — and the controls of one task: `POST
//! /api/v1/tasks/{id}/pause | resume | run-now`. What the owner decides about a task waiting on
//! them is `review`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_core::contract::{TaskDetailView, TaskView};
use openloop_core::engine::{CreateOptions, NewTask};
use openloop_core::kernel::ids::MemberId;
use openloop_core::kernel::texts;
use openloop_core::ports::TaskQuery;
use openloop_core::rails::gate::GateContext;
use openloop_core::task::controls::TaskMode;
use openloop_core::task::error::EngineError;
use openloop_core::task::subtasks::Requirement;
use openloop_core::task::{Draft, TaskStatus, TriggerType};
use openloop_edge::http::{ApiError, Params, body_error, json_body};

use crate::extract::{ApiState, Body, DraftInput, Owner, Shared, page_limit, task_id};
use crate::schema::{BatchCreated, OwnerErrors, Refused, TaskList, json};

/// The tasks' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/tasks", get(list_tasks).post(create_task))
        .route("/api/v1/tasks/{id}", get(get_task))
        .route("/api/v1/tasks/{id}/subtasks", post(create_subtask))
        .route("/api/v1/tasks/batch", post(create_batch))
        .route("/api/v1/tasks/{id}/pause", post(pause_task))
        .route("/api/v1/tasks/{id}/resume", post(resume_task))
        .route("/api/v1/tasks/{id}/run-now", post(run_task_now))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListParams {
    /// Only tasks in this status.
    #[param(value_type = Option<TaskStatus>)]
    status: Option<String>,
    /// Only the tasks of this member.
    member_id: Option<MemberId>,
    /// How many (1–200, default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    limit: Option<String>,
    cursor: Option<texts::CursorText>,
}

#[utoipa::path(get, path = "/api/v1/tasks", tag = "tasks", summary = "List tasks, newest first", params(ListParams), responses((status = 200, description = "A page of tasks", body = TaskList), OwnerErrors))]
pub(crate) async fn list_tasks(
    State(state): Shared,
    Params(params): Params<ListParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let status = match params.status.as_deref() {
        Some(s) => Some(TaskStatus::parse(s).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_status",
                format!("{s:?} is not a task status"),
            )
        })?),
        None => None,
    };
    let limit = page_limit(params.limit.as_deref(), 200)?.unwrap_or(50);
    let query = TaskQuery {
        status,
        member_id: params.member_id,
        limit,
        cursor: params.cursor.map(String::from),
    };
    let (tasks, next) = state.engine.list_tasks(account, &query).await?;
    let views: Vec<TaskView> = tasks.iter().map(Into::into).collect();
    Ok(json(
        StatusCode::OK,
        TaskList {
            tasks: views,
            next_cursor: next,
        },
    ))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}", tag = "tasks", summary = "A task with its log and conversation", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task", body = openloop_core::contract::TaskDetailView), OwnerErrors))]
pub(crate) async fn get_task(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let id = task_id(&id)?;
    let (owner_account, history) = tokio::try_join!(state.engine.account(account), state.engine.task(account, id))?;
    Ok(json(
        StatusCode::OK,
        TaskDetailView::for_owner(&history, &owner_account.settings.time_zone()),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"task_type": "win_back", "member_id": "mem_123", "goal": "Bring Dana back to class"}))]
struct CreateTask {
    task_type: texts::TaskTypeName,
    member_id: MemberId,
    goal: texts::Goal,
    /// 0–100.
    #[schema(maximum = 100)]
    confidence: Option<u8>,
    draft: Option<DraftInput>,
    /// `live` (default), `dry_run` or `plan`.
    execution_mode: Option<TaskMode>,
    /// Subtasks only (`POST /api/v1/tasks/{id}/subtasks`): `required` (default), `optional`
    /// or `best_effort`.
    requirement: Option<Requirement>,
    /// Automation types only: the actions to run, in order.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    actions: Vec<serde_json::Value>,
    /// `agent`: the agent plans the task's steps as subtasks; `none` (default).
    planning: Option<Planning>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum Planning {
    None,
    Agent,
}

impl CreateTask {
    /// The engine's input for an owner's task (manual trigger), checked.
    fn into_parts(self) -> Result<(NewTask, CreateOptions), ApiError> {
        let member_id = self.member_id;
        member_id.refuse_reserved().map_err(EngineError::from)?;
        if self.confidence.is_some_and(|c| c > 100) {
            return Err(EngineError::from(openloop_core::kernel::error::InvalidInput::new(
                "invalid_confidence",
                "confidence must be 0-100",
            ))
            .into());
        }
        let actions = openloop_core::task::action::parse_actions(&self.actions).map_err(EngineError::from)?;
        let options = CreateOptions::with_mode(self.execution_mode.unwrap_or_default())
            .with_actions(actions)
            .with_agent_planning(self.planning == Some(Planning::Agent));
        let input = NewTask {
            task_type: self.task_type.into(),
            member_id,
            goal: self.goal.into(),
            confidence: self.confidence,
            draft: self.draft.map(Draft::from),
            trigger_type: TriggerType::Manual,
            trigger_event_id: None,
            gate: GateContext::default(),
            context: serde_json::Value::Null,
        };
        Ok((input, options))
    }
}

#[utoipa::path(post, path = "/api/v1/tasks", tag = "tasks", summary = "Create a task (manual trigger)", request_body = CreateTask, responses((status = 201, description = "The task made", body = openloop_core::contract::TaskView), (status = 200, description = "The member's active task of this type (no duplicate is made)", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn create_task(State(state): Shared, Owner(account_id): Owner, body: Body) -> Result<Response, ApiError> {
    let input: CreateTask = json_body(&body.map_err(body_error)?)?;
    if input.requirement.is_some() {
        return Err(EngineError::from(openloop_core::kernel::error::InvalidInput::new(
            "invalid_requirement",
            "requirement applies to subtasks: POST /api/v1/tasks/{id}/subtasks",
        ))
        .into());
    }
    let (input, options) = input.into_parts()?;
    let account = state.engine.account(account_id).await?;
    let created = state.engine.create_task_with(&account, input, options).await?;
    let status = match created {
        openloop_core::engine::Created::New(_) => StatusCode::CREATED,
        // The member already has an active task of this type: no duplicate is made.
        openloop_core::engine::Created::Existing(_) => StatusCode::OK,
    };
    Ok(json(status, TaskView::from(created.task())))
}

/// `POST /api/v1/tasks/batch`: one task of a type for many members.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateBatch {
    task_type: texts::TaskTypeName,
    /// The batch's members (their ids in the gym's system).
    #[schema(min_items = 1)]
    member_ids: Vec<MemberId>,
    goal: texts::Goal,
    /// 0–100.
    #[schema(maximum = 100)]
    confidence: Option<u8>,
    draft: Option<DraftInput>,
    execution_mode: Option<TaskMode>,
}

#[utoipa::path(post, path = "/api/v1/tasks/batch", tag = "tasks", summary = "One task of a type for many members", request_body = CreateBatch, responses((status = 201, description = "The parent, its subtasks and the members refused", body = BatchCreated), OwnerErrors))]
pub(crate) async fn create_batch(State(state): Shared, Owner(account_id): Owner, body: Body) -> Result<Response, ApiError> {
    let input: CreateBatch = json_body(&body.map_err(body_error)?)?;
    let members = input.member_ids;
    for member in &members {
        member.refuse_reserved().map_err(EngineError::from)?;
    }
    let first = members.first().cloned().ok_or_else(|| {
        EngineError::from(openloop_core::kernel::error::InvalidInput::new(
            "invalid_member_ids",
            "member_ids names the batch's members",
        ))
    })?;
    let (task, options) = CreateTask {
        task_type: input.task_type,
        member_id: first,
        goal: input.goal,
        confidence: input.confidence,
        draft: input.draft,
        execution_mode: input.execution_mode,
        requirement: None,
        actions: Vec::new(),
        planning: None,
    }
    .into_parts()?;
    let account = state.engine.account(account_id).await?;
    let batch = state.engine.create_batch(&account, task, members, options.mode).await?;
    let refused = batch
        .refused
        .iter()
        .map(|(member, e)| Refused {
            member_id: member.to_string(),
            error: openloop_core::contract::error_body(e).error,
        })
        .collect();
    let subtasks: Vec<TaskView> = batch.subtasks.iter().map(TaskView::from).collect();
    let body = BatchCreated {
        parent: TaskView::from(&batch.parent),
        subtasks,
        refused,
    };
    Ok(json(StatusCode::CREATED, body))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/subtasks", tag = "tasks", summary = "Add a subtask", params(("id" = String, Path, description = "The parent task's id")), request_body = CreateTask, responses((status = 201, description = "The subtask", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn create_subtask(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account_id): Owner,
    body: Body,
) -> Result<Response, ApiError> {
    let parent = task_id(&id)?;
    let input: CreateTask = json_body(&body.map_err(body_error)?)?;
    let requirement = input.requirement.unwrap_or_default();
    let (task, options) = input.into_parts()?;
    let account = state.engine.account(account_id).await?;
    let created = state.engine.create_subtask(&account, parent, task, requirement, options).await?;
    Ok(json(StatusCode::CREATED, TaskView::from(&created)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/pause", tag = "tasks", summary = "Pause one task", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn pause_task(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let task = state.engine.pause_task(account, task_id(&id)?).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/resume", tag = "tasks", summary = "Resume a paused task", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn resume_task(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let task = state.engine.resume_task(account, task_id(&id)?).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/run-now", tag = "tasks", summary = "Run a task's next step now", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn run_task_now(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let task = state.engine.run_task_now(account, task_id(&id)?).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

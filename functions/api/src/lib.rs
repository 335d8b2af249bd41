//! The api function: the owner API of CONTRACT.md (tasks, review, settings, suppressions)
//! and the admin calls (accounts, global pause). Every owner call is scoped to the account of
//! its bearer token; another account's task is simply not found. The owner's dashboard, pages
//! over the same operations, is a crate and a function of its own (`functions/dashboard`).

mod credentials;
mod day;
mod experiments;
mod extract;
mod learning;
mod lift;
mod loops;
mod members;
mod message_templates;
pub mod openapi;
mod plans;
mod schema;
mod sms;
mod webhook_endpoints;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{delete, get, post};
use serde::Deserialize;

use openloop_core::contract::{ActivityView, TaskDetailView, TaskView};
use openloop_core::engine::{AccountSecrets, Autonomy, CreateOptions, NewAccount, NewTask, Resolution, SettingsPatch};
use openloop_core::kernel::ids::{AccountId, Email, MemberId};
use openloop_core::kernel::texts;
use openloop_core::ports::TaskQuery;
use openloop_core::rails::gate::GateContext;
use openloop_core::task::controls::TaskMode;
use openloop_core::task::error::EngineError;
use openloop_core::task::feedback::Comment;
use openloop_core::task::feedback::Rating;
use openloop_core::task::subtasks::Requirement;
use openloop_core::task::{Draft, TaskStatus, TriggerType};
use openloop_edge::http::{ApiError, Params, body_error, json_body, token_hash};

pub use extract::ApiState;
use extract::{Body, PageParams, Shared, admin, owner, page_limit, task_id};
use schema::json;

/// The function's state, from its environment: logging, the configuration, the engine.
pub async fn state_from_env() -> Result<Arc<ApiState>, openloop_edge::apigw::Error> {
    let (config, engine) = openloop_web::engine_from_env().await?;
    Ok(Arc::new(ApiState {
        engine,
        admin_token: config.admin_token,
    }))
}

/// The owner and admin API with everything around its routes: the `api` function.
pub fn router(state: Arc<ApiState>) -> Router {
    openloop_web::layered(routes(state))
}

/// The API's routes on their state, for a router that serves more than this face (the local
/// runtime's, which adds the dashboard's).
pub fn routes(state: Arc<ApiState>) -> Router {
    api_routes().with_state(state)
}

fn api_routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/openapi.json", get(openapi::openapi_json))
        .route("/api/v1/accounts", post(create_account).get(list_accounts))
        .route("/api/v1/admin/pause", post(pause))
        .route("/api/v1/admin/resume", post(resume))
        .route("/api/v1/admin/accounts/{id}/pause", post(admin_pause_account))
        .route("/api/v1/admin/accounts/{id}/resume", post(admin_resume_account))
        .route("/api/v1/admin/learning", get(admin_learning))
        .route("/api/v1/pause", get(account_pause_state).post(pause_account))
        .route("/api/v1/resume", post(resume_account))
        .route("/api/v1/tasks", get(list_tasks).post(create_task))
        .route("/api/v1/tasks/{id}", get(get_task))
        .route("/api/v1/tasks/{id}/approve", post(approve))
        .route("/api/v1/tasks/{id}/skip", post(skip))
        .route("/api/v1/tasks/{id}/cancel", post(cancel))
        .route("/api/v1/tasks/{id}/resolve", post(resolve))
        .route("/api/v1/tasks/{id}/guidance", post(guidance))
        .route("/api/v1/tasks/{id}/feedback", post(feedback))
        .route("/api/v1/tasks/{id}/outcome", post(correct_outcome))
        .route("/api/v1/tasks/{id}/reopen", post(day::reopen))
        .route("/api/v1/tasks/{id}/plan", axum::routing::put(plans::edit_plan))
        .route("/api/v1/tasks/{id}/plan/replan", post(plans::replan))
        .route("/api/v1/tasks/{id}/subtasks", post(create_subtask))
        .route("/api/v1/tasks/batch", post(create_batch))
        .route("/api/v1/settings", get(get_settings).put(put_settings))
        .route("/api/v1/settings/holdout/reshuffle", post(lift::reshuffle))
        .route("/api/v1/lift", get(lift::lift))
        .route("/api/v1/autonomy", get(autonomy))
        .route("/api/v1/suppressions", post(add_suppression))
        .route("/api/v1/suppressions/{email}", delete(remove_suppression))
        .route("/api/v1/scorecard", get(scorecard))
        .route("/api/v1/activity", get(activity))
        .route("/api/v1/metrics", get(metrics))
        .route("/api/v1/notifications", get(notifications))
        .route("/api/v1/recurring", get(list_templates).post(create_template))
        .route("/api/v1/recurring/{id}", delete(delete_template))
        .route("/api/v1/loops", get(loops::list_loops))
        .route("/api/v1/tasks/{id}/pause", post(loops::pause_task))
        .route("/api/v1/tasks/{id}/resume", post(loops::resume_task))
        .route("/api/v1/tasks/{id}/run-now", post(loops::run_task_now))
        .route("/api/v1/recurring/{id}/pause", post(loops::pause_template))
        .route("/api/v1/recurring/{id}/resume", post(loops::resume_template))
        .route("/api/v1/recurring/{id}/run-now", post(loops::run_template_now))
        .route("/api/v1/recurring/{id}/runs", get(loops::template_runs))
        .route("/api/v1/triggers", get(loops::list_triggers).post(loops::create_trigger))
        .route(
            "/api/v1/triggers/{id}",
            axum::routing::put(loops::update_trigger).delete(loops::delete_trigger),
        )
        .route("/api/v1/triggers/{id}/dry-run", post(loops::dry_run_trigger))
        .route("/api/v1/connector", get(members::connector))
        .route("/api/v1/members", get(members::list))
        .route("/api/v1/members/{id}", get(members::detail))
        .route("/api/v1/members/{id}/consent", post(sms::consent))
        .route("/api/v1/memories", get(learning::list_memories).post(learning::add_memory))
        .route("/api/v1/memories/{id}", delete(learning::delete_memory))
        .route("/api/v1/suggestions", get(learning::list_suggestions))
        .route("/api/v1/suggestions/{id}/{decision}", post(learning::decide_suggestion))
        .route("/api/v1/suggestions/{id}/experiment", post(experiments::start))
        .route("/api/v1/experiments", get(experiments::list))
        .route("/api/v1/experiments/{id}/{decision}", post(experiments::decide))
        .route("/api/v1/message-templates", get(message_templates::list))
        .route(
            "/api/v1/message-templates/{task_type}/{touch}",
            axum::routing::put(message_templates::put).delete(message_templates::delete),
        )
        .route("/api/v1/settings/api-token/rotate", post(credentials::rotate_api_token))
        .route("/api/v1/settings/webhook-secret/rotate", post(credentials::rotate_webhook_secret))
        .route(
            "/api/v1/webhook-endpoints",
            get(webhook_endpoints::list).post(webhook_endpoints::create),
        )
        .route(
            "/api/v1/webhook-endpoints/{id}",
            get(webhook_endpoints::get).delete(webhook_endpoints::delete),
        )
        .route("/api/v1/webhook-endpoints/{id}/deliveries", get(webhook_endpoints::deliveries))
        .route("/api/v1/brief", get(day::brief))
        .route("/api/v1/reports/churn", get(day::churn_report))
        .route("/api/v1/todos", get(day::list_todos))
        .route("/api/v1/todos/{id}/contact", post(day::log_contact))
        .route("/api/v1/todos/{id}/snooze", post(day::snooze))
        .route("/api/v1/todos/{id}/done", post(day::done))
}

#[utoipa::path(post, path = "/api/v1/accounts", tag = "admin", summary = "Create an account (admin token)", request_body = openloop_core::engine::NewAccount, responses((status = 201, description = "The account, its API token and webhook secret (shown once)", body = crate::schema::CreatedAccount), crate::schema::OwnerErrors))]
async fn create_account(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    let input: NewAccount = json_body(&body.map_err(body_error)?)?;
    let api_token = openloop_web::secrets::new_api_token()?;
    let webhook_secret = openloop_web::secrets::new_webhook_secret()?;
    let secrets = AccountSecrets {
        api_token_hash: token_hash(&api_token),
        api_token: api_token.clone(),
        webhook_secret,
    };
    let account = state.engine.create_account(input, secrets).await?;
    Ok(json(
        StatusCode::CREATED,
        schema::CreatedAccount {
            account_id: account.id,
            api_token,
            webhook_secret: account.webhook_secret.expose(),
            name: &account.name,
            settings: settings_view(&account, state.engine.now()),
        },
    ))
}

#[utoipa::path(get, path = "/api/v1/accounts", tag = "admin", summary = "List the accounts (admin token)", responses((status = 200, description = "The accounts", body = crate::schema::Accounts), crate::schema::OwnerErrors))]
async fn list_accounts(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    let accounts = state.engine.list_accounts().await?;
    let accounts = accounts
        .iter()
        .map(|a| schema::AccountSummary {
            account_id: a.id,
            name: &a.name,
            paused: a.paused,
            created_at: a.created_at,
            settings: &a.settings,
        })
        .collect();
    Ok(json(StatusCode::OK, schema::Accounts { accounts }))
}

#[utoipa::path(post, path = "/api/v1/admin/pause", tag = "admin", summary = "Pause the platform (admin token)", responses((status = 200, description = "The platform's pause state", body = openloop_core::owner::account::SystemConfig), crate::schema::OwnerErrors))]
async fn pause(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    Ok(json(StatusCode::OK, state.engine.set_global_pause(true).await?))
}

#[utoipa::path(post, path = "/api/v1/admin/resume", tag = "admin", summary = "Resume the platform (admin token)", responses((status = 200, description = "The platform's pause state", body = openloop_core::owner::account::SystemConfig), crate::schema::OwnerErrors))]
async fn resume(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    Ok(json(StatusCode::OK, state.engine.set_global_pause(false).await?))
}

fn kill_switch(account: &openloop_core::owner::account::Account) -> Response {
    json(
        StatusCode::OK,
        schema::KillSwitch {
            account_id: account.id,
            paused: account.paused,
        },
    )
}

/// The owner's kill switch for their own account (spec §7.6).
#[utoipa::path(post, path = "/api/v1/pause", tag = "account", summary = "Pause the account (the owner's kill switch)", responses((status = 200, description = "The kill switch", body = crate::schema::KillSwitch), crate::schema::OwnerErrors))]
async fn pause_account(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(kill_switch(&state.engine.set_account_paused(account, true, "owner").await?))
}

#[utoipa::path(post, path = "/api/v1/resume", tag = "account", summary = "Resume the account", responses((status = 200, description = "The kill switch", body = crate::schema::KillSwitch), crate::schema::OwnerErrors))]
async fn resume_account(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(kill_switch(&state.engine.set_account_paused(account, false, "owner").await?))
}

#[utoipa::path(get, path = "/api/v1/pause", tag = "account", summary = "Whether the account is paused", responses((status = 200, description = "The kill switch", body = crate::schema::KillSwitch), crate::schema::OwnerErrors))]
async fn account_pause_state(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(kill_switch(&state.engine.account(account).await?))
}

fn account_id(raw: &str) -> Result<AccountId, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("account"))
}

/// An operator pulls one account's kill switch (admin token).
#[utoipa::path(post, path = "/api/v1/admin/accounts/{id}/pause", tag = "admin", summary = "Pause one account (admin token)", params(("id" = String, Path, description = "The account's id")), responses((status = 200, description = "The account's kill switch", body = crate::schema::KillSwitch), crate::schema::OwnerErrors))]
async fn admin_pause_account(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    Ok(kill_switch(
        &state.engine.set_account_paused(account_id(&id)?, true, "admin").await?,
    ))
}

#[utoipa::path(post, path = "/api/v1/admin/accounts/{id}/resume", tag = "admin", summary = "Resume one account (admin token)", params(("id" = String, Path, description = "The account's id")), responses((status = 200, description = "The account's kill switch", body = crate::schema::KillSwitch), crate::schema::OwnerErrors))]
async fn admin_resume_account(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    Ok(kill_switch(
        &state.engine.set_account_paused(account_id(&id)?, false, "admin").await?,
    ))
}

/// The operator's platform-wide learning aggregate (admin token; never an owner's):
/// `?month=YYYY-MM` (UTC, default the current month) across every account, per task type and
/// outcome — counts and rates only, no ids, no text.
#[utoipa::path(get, path = "/api/v1/admin/learning", tag = "admin", summary = "The platform-wide learning aggregate (admin token)", params(ScorecardParams), responses((status = 200, description = "Counts and rates per task type and outcome", body = openloop_core::learning::MonthAggregate), crate::schema::OwnerErrors))]
async fn admin_learning(State(state): Shared, headers: HeaderMap, Params(params): Params<ScorecardParams>) -> Result<Response, ApiError> {
    admin(&state, &headers)?;
    let month = params.month.as_deref();
    Ok(json(StatusCode::OK, state.engine.platform_learning(month).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListParams {
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

#[utoipa::path(get, path = "/api/v1/tasks", tag = "tasks", summary = "List tasks, newest first", params(ListParams), responses((status = 200, description = "A page of tasks", body = crate::schema::TaskList), crate::schema::OwnerErrors))]
async fn list_tasks(State(state): Shared, headers: HeaderMap, Params(params): Params<ListParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
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
        schema::TaskList {
            tasks: views,
            next_cursor: next,
        },
    ))
}

#[utoipa::path(get, path = "/api/v1/tasks/{id}", tag = "tasks", summary = "A task with its log and conversation", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task", body = openloop_core::contract::TaskDetailView), crate::schema::OwnerErrors))]
async fn get_task(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
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
    /// `live` (default), `dry_run` or `plan` (spec §27).
    execution_mode: Option<TaskMode>,
    /// Subtasks only (`POST /api/v1/tasks/{id}/subtasks`): `required` (default), `optional`
    /// or `best_effort` (spec §14.6).
    requirement: Option<Requirement>,
    /// Automation types only: the actions to run, in order (spec §15, §31.5).
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    actions: Vec<serde_json::Value>,
    /// `agent`: the agent plans the task's steps as subtasks (spec §14.2); `none` (default).
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

#[utoipa::path(post, path = "/api/v1/tasks", tag = "tasks", summary = "Create a task (manual trigger)", request_body = CreateTask, responses((status = 201, description = "The task made", body = openloop_core::contract::TaskView), (status = 200, description = "The member's active task of this type (no duplicate is made)", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn create_task(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account_id = owner(&state, &headers).await?;
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

/// `POST /api/v1/tasks/batch`: one task of a type for many members (spec §31.7).
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

#[utoipa::path(post, path = "/api/v1/tasks/batch", tag = "tasks", summary = "One task of a type for many members", request_body = CreateBatch, responses((status = 201, description = "The parent, its subtasks and the members refused", body = crate::schema::BatchCreated), crate::schema::OwnerErrors))]
async fn create_batch(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account_id = owner(&state, &headers).await?;
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
        .map(|(member, e)| schema::Refused {
            member_id: member.to_string(),
            error: openloop_core::contract::error_body(e).error,
        })
        .collect();
    let subtasks: Vec<TaskView> = batch.subtasks.iter().map(TaskView::from).collect();
    let body = schema::BatchCreated {
        parent: TaskView::from(&batch.parent),
        subtasks,
        refused,
    };
    Ok(json(StatusCode::CREATED, body))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/subtasks", tag = "tasks", summary = "Add a subtask", params(("id" = String, Path, description = "The parent task's id")), request_body = CreateTask, responses((status = 201, description = "The subtask", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn create_subtask(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account_id = owner(&state, &headers).await?;
    let parent = task_id(&id)?;
    let input: CreateTask = json_body(&body.map_err(body_error)?)?;
    let requirement = input.requirement.unwrap_or_default();
    let (task, options) = input.into_parts()?;
    let account = state.engine.account(account_id).await?;
    let created = state.engine.create_subtask(&account, parent, task, requirement, options).await?;
    Ok(json(StatusCode::CREATED, TaskView::from(&created)))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Approve {
    subject: Option<texts::Subject>,
    body: Option<texts::MailBody>,
    draft: Option<DraftInput>,
}

/// An edited draft: `{"subject", "body"}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct DraftInput {
    subject: texts::Subject,
    body: texts::MailBody,
}

impl From<DraftInput> for Draft {
    fn from(input: DraftInput) -> Self {
        Draft {
            subject: input.subject.into(),
            body: input.body.into(),
        }
    }
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/approve", tag = "tasks", summary = "Approve a task waiting for review, with an optional edited draft", params(("id" = String, Path, description = "The task's id")), request_body = Option<Approve>, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn approve(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let body = body.map_err(body_error)?;
    let input: Approve = if body.iter().all(u8::is_ascii_whitespace) {
        Approve::default()
    } else {
        json_body(&body)?
    };
    // The edited draft may come flat ({"subject","body"}) or nested ({"draft": {…}}).
    let edited = match (input.draft, input.subject, input.body) {
        (Some(d), None, None) => Some(d.into()),
        (None, Some(subject), Some(body)) => Some(Draft {
            subject: subject.into(),
            body: body.into(),
        }),
        (None, None, None) => None,
        _ => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_draft",
                "send both subject and body (or a draft object), or no body at all",
            ));
        }
    };
    let task = state.engine.approve(account, task_id(&id)?, edited).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Skip {
    reason: Option<texts::SkipReason>,
}

/// `pending_review → cancelled`; an optional `{"reason"}` is kept on the task's log.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/skip", tag = "tasks", summary = "Skip a task waiting for review", params(("id" = String, Path, description = "The task's id")), request_body = Option<Skip>, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn skip(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let body = body.map_err(body_error)?;
    let input: Skip = if body.iter().all(u8::is_ascii_whitespace) {
        Skip::default()
    } else {
        json_body(&body)?
    };
    let task = state.engine.skip(account, task_id(&id)?, input.reason.as_deref()).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/cancel", tag = "tasks", summary = "Cancel a task", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn cancel(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let task = state.engine.cancel(account, task_id(&id)?).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/resolve", tag = "tasks", summary = "Resolve an escalated task with an outcome", params(("id" = String, Path, description = "The task's id")), request_body = openloop_core::engine::Resolution, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn resolve(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: Resolution = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.resolve(account, task_id(&id)?, input).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Guidance {
    /// At most 5,000 bytes too.
    text: texts::GuidanceText,
}

/// `escalated → executing` with the owner's words in the conversation; the agent carries
/// them out at the task's next step.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/guidance", tag = "tasks", summary = "Answer an escalated task with guidance for the agent", params(("id" = String, Path, description = "The task's id")), request_body = Guidance, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn guidance(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: Guidance = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.guidance(account, task_id(&id)?, &input.text).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Feedback {
    rating: Rating,
    comment: Option<Comment>,
    /// With a thumbs-down: `never_came_back`, `would_have_anyway`, `wrong_member`,
    /// `wrong_tone`, `wrong_timing` or `other`.
    reason: Option<openloop_core::task::feedback::FeedbackReason>,
}

/// The owner's thumbs up or down, with an optional comment, on a closed or escalated task
/// (spec §28.5); 409 `invalid_state` on any other.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/feedback", tag = "tasks", summary = "Rate a closed or escalated task", params(("id" = String, Path, description = "The task's id")), request_body = Feedback, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn feedback(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: Feedback = json_body(&body.map_err(body_error)?)?;
    let task = state
        .engine
        .feedback_with_reason(account, task_id(&id)?, input.rating, input.comment.as_deref(), input.reason)
        .await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct OutcomeCorrection {
    outcome: texts::OutcomeCode,
    note: Option<Comment>,
}

/// The owner corrects a closed task's outcome (spec §37.6): the value and the metrics follow;
/// 409 `invalid_state` on an open task (resolve it instead).
#[utoipa::path(post, path = "/api/v1/tasks/{id}/outcome", tag = "tasks", summary = "Correct a closed task's outcome", params(("id" = String, Path, description = "The task's id")), request_body = OutcomeCorrection, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), crate::schema::OwnerErrors))]
async fn correct_outcome(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: OutcomeCorrection = json_body(&body.map_err(body_error)?)?;
    let task = state
        .engine
        .correct_outcome(account, task_id(&id)?, &input.outcome, input.note.as_deref())
        .await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ScorecardParams {
    /// The current month by default.
    month: Option<texts::MonthText>,
}

/// A month of outcomes (CONTRACT.md): `?month=YYYY-MM`, by default the current month in the
/// account's time zone.
#[utoipa::path(get, path = "/api/v1/scorecard", tag = "numbers", summary = "A month of outcomes", params(ScorecardParams), responses((status = 200, description = "The scorecard", body = openloop_core::owner::scorecard::Scorecard), crate::schema::OwnerErrors))]
async fn scorecard(State(state): Shared, headers: HeaderMap, Params(params): Params<ScorecardParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let month = params.month.as_deref();
    Ok(json(StatusCode::OK, state.engine.scorecard(account, month).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct MetricsParams {
    /// `YYYY-MM-DD`, by default 30 days ago (a date that does not parse is `400 invalid_date`).
    #[param(value_type = Option<texts::DateText>)]
    from: Option<String>,
    /// `YYYY-MM-DD`, by default today (at most 92 days after `from`).
    #[param(value_type = Option<texts::DateText>)]
    to: Option<String>,
}

/// The account's daily metrics (spec §28.3): `?from=YYYY-MM-DD&to=YYYY-MM-DD`, by default the
/// last 30 days in the account's time zone, at most 92 days. A bad date or range is a
/// malformed request (400).
#[utoipa::path(get, path = "/api/v1/metrics", tag = "numbers", summary = "Daily metrics of a date range", params(MetricsParams), responses((status = 200, description = "The metrics", body = openloop_core::owner::metrics::MetricsRange), crate::schema::OwnerErrors))]
async fn metrics(State(state): Shared, headers: HeaderMap, Params(params): Params<MetricsParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let from = params.from.as_deref();
    let to = params.to.as_deref();
    match state.engine.metrics(account, from, to).await {
        Ok(report) => Ok(json(StatusCode::OK, report)),
        Err(EngineError::Invalid(e)) => Err(ApiError::bad_request(&e.code, e.message)),
        Err(e) => Err(e.into()),
    }
}

/// The account's decisions across its tasks, newest first: `{"activity": [...], "next_cursor"}`.
#[utoipa::path(get, path = "/api/v1/activity", tag = "numbers", summary = "The decisions across the account's tasks, newest first", params(PageParams), responses((status = 200, description = "A page of the feed", body = crate::schema::ActivityList), crate::schema::OwnerErrors))]
async fn activity(State(state): Shared, headers: HeaderMap, Params(params): Params<PageParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let (limit, cursor) = params.parse()?;
    let (owner_account, (entries, next)) = tokio::try_join!(state.engine.account(account), state.engine.activity(account, limit, cursor))?;
    let tz = owner_account.settings.time_zone();
    let views: Vec<ActivityView> = entries.iter().map(|e| ActivityView::for_owner(e, &tz)).collect();
    Ok(json(
        StatusCode::OK,
        schema::ActivityList {
            activity: views,
            next_cursor: next,
        },
    ))
}

/// The owner's notification feed (spec §35), newest first:
/// `{"notifications": [{id, at, kind, task_id, member_id, title, detail, delivery, digest_at}], "next_cursor"}`.
#[utoipa::path(get, path = "/api/v1/notifications", tag = "numbers", summary = "The owner's notifications, newest first", params(PageParams), responses((status = 200, description = "A page of notifications", body = crate::schema::Notifications), crate::schema::OwnerErrors))]
async fn notifications(State(state): Shared, headers: HeaderMap, Params(params): Params<PageParams>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let (limit, cursor) = params.parse()?;
    let (notices, next) = state.engine.owner_notices(account, limit, cursor).await?;
    let notifications = notices
        .iter()
        .map(|n| schema::NotificationView {
            id: n.id.to_string(),
            at: n.at,
            kind: &n.kind,
            task_id: n.task_id,
            member_id: n.member_id.as_ref(),
            title: &n.title,
            detail: &n.detail,
            delivery: &n.delivery,
            digest_at: n.digest_at,
        })
        .collect();
    Ok(json(
        StatusCode::OK,
        schema::Notifications {
            notifications,
            next_cursor: next,
        },
    ))
}

/// The onboarding ramp as it stands now (spec §26): the account's phase and each agent's.
#[utoipa::path(get, path = "/api/v1/autonomy", tag = "account", summary = "The onboarding ramp as it stands", responses((status = 200, description = "The ramp", body = crate::schema::AutonomyView), crate::schema::OwnerErrors))]
async fn autonomy(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let Autonomy { account, phase, agents } = state.engine.autonomy(owner(&state, &headers).await?).await?;
    Ok(json(
        StatusCode::OK,
        schema::AutonomyView {
            execution_mode: &account.settings.execution_mode,
            paused: account.paused,
            onboarded_at: account.settings.onboarded_at,
            phase,
            agents: &agents,
        },
    ))
}

/// The settings as the owner sees them: CONTRACT.md's fields, plus whether the account has
/// its own PushPress key (`"pushpress": {"api_key": "[set]", "company_id"}` or `null`) — the
/// key itself is write-only and never shown — and `learning_patterns_helped`.
fn settings_view(account: &openloop_core::owner::account::Account, now: jiff::Timestamp) -> schema::SettingsView<'_> {
    schema::SettingsView {
        settings: &account.settings,
        sending: openloop_core::rails::autonomy::sending(&account.settings, now),
        pushpress: account.pushpress.as_ref().map(|c| schema::PushpressKey {
            api_key: "[set]",
            company_id: c.company_id(),
        }),
        sending_identity: sending_identity_view(account),
        // How many cross-business patterns this account's data helped surface: a count,
        // never which businesses joined it.
        learning_patterns_helped: account.learning_patterns.len(),
        // The holdout draw in force (never its salt).
        holdout_draw: lift::draw_view(account),
    }
}

/// The gym's own sending domain (spec §33.1): its status, the DNS records to publish, and the
/// address mail leaves from now (`null` without one).
fn sending_identity_view(account: &openloop_core::owner::account::Account) -> Option<schema::SendingIdentityView<'_>> {
    let identity = account.sending_identity.as_ref()?;
    // The ownership record (the account's own token) is published with SES's.
    let mut records = identity.records.clone();
    records.push(identity.ownership_record());
    Some(schema::SendingIdentityView {
        domain: &identity.domain,
        status: identity.status,
        dkim_status: identity.dkim_status.as_deref(),
        records,
        ownership_proven: identity.proven_at.is_some(),
        sends_from_domain: identity.sends_from_domain(),
        error: identity.error.as_deref(),
        checked_at: identity.checked_at,
    })
}

#[utoipa::path(get, path = "/api/v1/settings", tag = "account", summary = "The account's settings", responses((status = 200, description = "The settings", body = crate::schema::SettingsView), crate::schema::OwnerErrors))]
async fn get_settings(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(json(
        StatusCode::OK,
        settings_view(&state.engine.account_with_sending_domain(account).await?, state.engine.now()),
    ))
}

#[utoipa::path(put, path = "/api/v1/settings", tag = "account", summary = "Change any subset of the settings", request_body = openloop_core::engine::SettingsPatch, responses((status = 200, description = "The settings after the change", body = crate::schema::SettingsView), crate::schema::OwnerErrors))]
async fn put_settings(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let patch: SettingsPatch = json_body(&body.map_err(body_error)?)?;
    Ok(json(
        StatusCode::OK,
        settings_view(&state.engine.update_account(account, patch).await?, state.engine.now()),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewSuppression {
    email: Email,
    /// `owner` by default.
    reason: Option<texts::SuppressionReason>,
}

#[utoipa::path(post, path = "/api/v1/suppressions", tag = "account", summary = "Stop all mail to an address (and cancel its member's tasks)", request_body = NewSuppression, responses((status = 201, description = "The suppression", body = crate::schema::SuppressionAdded), crate::schema::OwnerErrors))]
async fn add_suppression(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: NewSuppression = json_body(&body.map_err(body_error)?)?;
    let email = input.email;
    let reason = input.reason.map_or_else(|| "owner".into(), String::from);
    // A member-level stop: every active task about the member is cancelled too (spec §22.1).
    let cancelled = state.engine.suppress(account, &email, &reason).await?;
    Ok(json(
        StatusCode::CREATED,
        schema::SuppressionAdded {
            email: email.as_str().to_owned(),
            reason,
            tasks_cancelled: cancelled,
        },
    ))
}

#[utoipa::path(delete, path = "/api/v1/suppressions/{email}", tag = "account", summary = "Lift a suppression", params(("email" = String, Path, description = "The suppressed address")), responses((status = 200, description = "Deleted", body = crate::schema::Deleted), crate::schema::OwnerErrors))]
async fn remove_suppression(State(state): Shared, headers: HeaderMap, Path(email): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let email = Email::parse(&email).map_err(EngineError::from)?;
    if !state.engine.remove_suppression(account, &email).await? {
        return Err(ApiError::not_found("suppression"));
    }
    Ok(json(
        StatusCode::OK,
        schema::Deleted {
            email: Some(email.as_str().to_owned()),
            id: None,
            deleted: true,
        },
    ))
}

#[utoipa::path(post, path = "/api/v1/recurring", tag = "automation", summary = "Create a recurring template", request_body = openloop_core::owner::recurring::NewTemplate, responses((status = 201, description = "The template", body = openloop_core::owner::recurring::RecurringTemplate), crate::schema::OwnerErrors))]
async fn create_template(State(state): Shared, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: openloop_core::owner::recurring::NewTemplate = json_body(&body.map_err(body_error)?)?;
    let account = state.engine.account(account).await?;
    Ok(json(StatusCode::CREATED, state.engine.create_template(&account, input).await?))
}

#[utoipa::path(get, path = "/api/v1/recurring", tag = "automation", summary = "The recurring templates", responses((status = 200, description = "The templates", body = crate::schema::RecurringTemplates), crate::schema::OwnerErrors))]
async fn list_templates(State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let templates = state.engine.list_templates(account).await?;
    Ok(json(StatusCode::OK, schema::RecurringTemplates { templates }))
}

#[utoipa::path(delete, path = "/api/v1/recurring/{id}", tag = "automation", summary = "Delete a recurring template", params(("id" = String, Path, description = "The template's id")), responses((status = 200, description = "Deleted", body = crate::schema::Deleted), crate::schema::OwnerErrors))]
async fn delete_template(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let id: ulid::Ulid = id.parse().map_err(|_| ApiError::not_found("recurring template"))?;
    state.engine.delete_template(account, id).await?;
    Ok(json(
        StatusCode::OK,
        schema::Deleted {
            email: None,
            id: Some(id.to_string()),
            deleted: true,
        },
    ))
}

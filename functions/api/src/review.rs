//! What the owner decides about one task: `POST /api/v1/tasks/{id}/approve` (with an optional
//! edited draft), `skip`, `cancel`, `resolve` an escalated task, answer it with `guidance`, rate
//! it (`feedback`), correct a closed task's `outcome` or `reopen` it; and a plan changed before
//! it is approved: `PUT /api/v1/tasks/{id}/plan`
//! `{"steps": [{"step_number", "description"?, "draft_content"?}], "version"?}` — the steps in
//! their new order, a step left out removed — and `POST /api/v1/tasks/{id}/plan/replan`
//! `{"instructions", "version"?}`, the agent planning it again. Each answers the task after
//! the change; one whose state does not take it is `409 invalid_state`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{post, put};
use serde::Deserialize;

use openloop_core::contract::TaskView;
use openloop_core::engine::Resolution;
use openloop_core::kernel::texts;
use openloop_core::task::Draft;
use openloop_core::task::feedback::{Comment, Rating};
use openloop_core::task::plan_edit::StepEdit;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{ApiState, Body, DraftInput, Owner, Shared, task_id};
use crate::schema::{OwnerErrors, json};

/// The review's routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/tasks/{id}/approve", post(approve))
        .route("/api/v1/tasks/{id}/skip", post(skip))
        .route("/api/v1/tasks/{id}/cancel", post(cancel))
        .route("/api/v1/tasks/{id}/resolve", post(resolve))
        .route("/api/v1/tasks/{id}/guidance", post(guidance))
        .route("/api/v1/tasks/{id}/feedback", post(feedback))
        .route("/api/v1/tasks/{id}/outcome", post(correct_outcome))
        .route("/api/v1/tasks/{id}/reopen", post(reopen))
        .route("/api/v1/tasks/{id}/plan", put(edit_plan))
        .route("/api/v1/tasks/{id}/plan/replan", post(replan))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Approve {
    subject: Option<texts::Subject>,
    body: Option<texts::MailBody>,
    draft: Option<DraftInput>,
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/approve", tag = "tasks", summary = "Approve a task waiting for review, with an optional edited draft", params(("id" = String, Path, description = "The task's id")), request_body = Option<Approve>, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn approve(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
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
#[utoipa::path(post, path = "/api/v1/tasks/{id}/skip", tag = "tasks", summary = "Skip a task waiting for review", params(("id" = String, Path, description = "The task's id")), request_body = Option<Skip>, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn skip(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    let input: Skip = if body.iter().all(u8::is_ascii_whitespace) {
        Skip::default()
    } else {
        json_body(&body)?
    };
    let task = state.engine.skip(account, task_id(&id)?, input.reason.as_deref()).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/cancel", tag = "tasks", summary = "Cancel a task", params(("id" = String, Path, description = "The task's id")), responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn cancel(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let task = state.engine.cancel(account, task_id(&id)?).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/resolve", tag = "tasks", summary = "Resolve an escalated task with an outcome", params(("id" = String, Path, description = "The task's id")), request_body = openloop_core::engine::Resolution, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn resolve(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
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
#[utoipa::path(post, path = "/api/v1/tasks/{id}/guidance", tag = "tasks", summary = "Answer an escalated task with guidance for the agent", params(("id" = String, Path, description = "The task's id")), request_body = Guidance, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn guidance(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
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
///; 409 `invalid_state` on any other.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/feedback", tag = "tasks", summary = "Rate a closed or escalated task", params(("id" = String, Path, description = "The task's id")), request_body = Feedback, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn feedback(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
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

/// The owner corrects a closed task's outcome: the value and the metrics follow;
/// 409 `invalid_state` on an open task (resolve it instead).
#[utoipa::path(post, path = "/api/v1/tasks/{id}/outcome", tag = "tasks", summary = "Correct a closed task's outcome", params(("id" = String, Path, description = "The task's id")), request_body = OutcomeCorrection, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn correct_outcome(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
    let input: OutcomeCorrection = json_body(&body.map_err(body_error)?)?;
    let task = state
        .engine
        .correct_outcome(account, task_id(&id)?, &input.outcome, input.note.as_deref())
        .await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ReopenInput {
    /// Why the task is not done.
    reason: Comment,
}

/// `POST /api/v1/tasks/{id}/reopen {"reason"}`: a closed task back to work within its
/// attribution window; `409 invalid_state` otherwise.
#[utoipa::path(post, path = "/api/v1/tasks/{id}/reopen", tag = "tasks", summary = "Reopen a task closed too early", params(("id" = String, Path, description = "The task's id")), request_body = ReopenInput, responses((status = 200, description = "The task after the change", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn reopen(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: ReopenInput = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.reopen(account, task_id(&id)?, &input.reason).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

/// The body of `PUT /api/v1/tasks/{id}/plan`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PlanEditInput {
    /// The plan's steps as they should be, in order; each names a step by its current number.
    steps: Vec<StepEdit>,
    /// The task's version the edit was made on: a task changed since is `409 stale_version`.
    version: Option<u64>,
}

/// The body of `POST /api/v1/tasks/{id}/plan/replan`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ReplanInput {
    instructions: openloop_core::task::plan_edit::Instructions,
    version: Option<u64>,
}

#[utoipa::path(put, path = "/api/v1/tasks/{id}/plan", tag = "tasks", summary = "Change a plan waiting for approval: its steps in their new order, a step left out removed", params(("id" = String, Path, description = "The task's id")), request_body = PlanEditInput, responses((status = 200, description = "The task with its plan", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn edit_plan(
    State(state): Shared,
    Path(id): Path<String>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
    let input: PlanEditInput = json_body(&body.map_err(body_error)?)?;
    let task = state.engine.edit_plan(account, task_id(&id)?, &input.steps, input.version).await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

#[utoipa::path(post, path = "/api/v1/tasks/{id}/plan/replan", tag = "tasks", summary = "Have the agent plan a task again, with the owner's instructions", params(("id" = String, Path, description = "The task's id")), request_body = ReplanInput, responses((status = 200, description = "The task with its new plan", body = openloop_core::contract::TaskView), OwnerErrors))]
pub(crate) async fn replan(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: ReplanInput = json_body(&body.map_err(body_error)?)?;
    let task = state
        .engine
        .replan(account, task_id(&id)?, &input.instructions, input.version)
        .await?;
    Ok(json(StatusCode::OK, TaskView::from(&task)))
}

//! A plan on its task page: its steps, and while it waits for approval the
//! owner's hand on it — "Save step" (a step's words), "Move up", "Move down", "Remove step",
//! and "Plan again" with instructions. Each form is the engine's operation of `PUT
//! /api/v1/tasks/{id}/plan` or `POST /api/v1/tasks/{id}/plan/replan`, made on the version of
//! the task the page showed; the template is `plan.html`, included by `task.html`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use jiff::tz::TimeZone;

use openloop_core::task::Task;
use openloop_core::task::controls::TaskMode;
use openloop_core::task::error::EngineError;
use openloop_core::task::plan_edit::{self, PlanFeedbackKind, StepEdit};
use openloop_web::Body;

use crate::page::when;
use crate::respond::{PageError, Shared, check_csrf, field, form, page, see_other, task_id};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/tasks/{id}/plan/steps/{step}/{action}", post(step_action))
        .route("/app/tasks/{id}/plan/replan", post(replan))
}

pub struct PlanStepView {
    pub number: u32,
    pub description: String,
    pub draft: Option<String>,
    pub reasoning: String,
    pub timing: String,
    pub action: &'static str,
    pub confidence: u8,
    pub first: bool,
    pub last: bool,
}

pub struct PlanFeedbackView {
    pub at: String,
    pub what: String,
}

/// A task's plan as its page shows it.
pub struct PlanView {
    pub task_id: String,
    /// The task's version the page's forms are made on.
    pub version: u64,
    pub editable: bool,
    pub approved: Option<String>,
    pub steps: Vec<PlanStepView>,
    pub alternative: Option<String>,
    pub messages: u32,
    pub days: u32,
    pub feedback: Vec<PlanFeedbackView>,
    pub description_max: usize,
    pub draft_max: usize,
    pub instructions_max: usize,
}

fn action_words(action_type: &str) -> &'static str {
    match action_type {
        "send_email" => "an e-mail to the member",
        "notify_owner" => "a note to you",
        _ => "an action",
    }
}

/// The plan of `task`, if it has one.
pub fn view(task: &Task, tz: &TimeZone) -> Option<PlanView> {
    let plan = task.controls.plan.as_ref()?;
    let count = plan.steps.len();
    Some(PlanView {
        task_id: task.id.to_string(),
        version: task.version,
        editable: task.status == openloop_core::task::TaskStatus::PendingReview && plan_edit::editable(Some(plan)),
        approved: plan.approved_at.map(|at| when(at, tz)),
        steps: plan
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| PlanStepView {
                number: s.step_number,
                description: s.description.clone(),
                draft: s.draft_content.clone(),
                reasoning: s.reasoning.clone(),
                timing: s.timing.clone(),
                action: action_words(&s.action_type),
                confidence: s.confidence,
                first: i == 0,
                last: i + 1 == count,
            })
            .collect(),
        alternative: plan.alternative_approach.clone(),
        messages: plan.estimated_budget.messages,
        days: plan.estimated_budget.days,
        feedback: plan
            .feedback
            .iter()
            .rev()
            .map(|f| PlanFeedbackView {
                at: when(f.at, tz),
                what: match (f.kind, f.change.as_str(), f.step_number) {
                    (PlanFeedbackKind::Instruction, _, _) => {
                        format!("You asked for a new plan: {}", f.edited.as_deref().unwrap_or_default())
                    }
                    (_, "reordered", _) => format!("You reordered the steps: {}", f.edited.as_deref().unwrap_or_default()),
                    (_, "removed", Some(n)) => format!("You removed step {n}"),
                    (_, _, Some(n)) => format!("You edited step {n}"),
                    (_, change, None) => format!("You {change} the plan"),
                },
            })
            .collect(),
        description_max: plan_edit::DESCRIPTION_MAX_CHARS,
        draft_max: plan_edit::DRAFT_MAX_CHARS,
        instructions_max: plan_edit::INSTRUCTIONS_MAX_CHARS,
    })
}

/// The badge a task's execution mode wears in lists and on its page (none when live).
pub fn mode_badge(task: &Task) -> Option<&'static str> {
    match task.controls.mode {
        TaskMode::DryRun => Some("dry run"),
        TaskMode::Plan => Some("plan"),
        TaskMode::Live => None,
    }
}

/// The version field of a plan form (the page's task version), if it sent one.
fn version(fields: &[(String, String)]) -> Result<Option<u64>, PageError> {
    match field(fields, "version").map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            PageError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "The form's version is not a number: reload the task.",
            )
        }),
    }
}

/// A plan change over a task that changed since the page was shown is refused in words.
fn changed_since(e: EngineError) -> PageError {
    match e {
        EngineError::StaleVersion => PageError::new(
            StatusCode::CONFLICT,
            "This task changed since the page was opened. Nothing was changed: reload the task and try again.",
        ),
        other => other.into(),
    }
}

/// `POST /app/tasks/{id}/plan/steps/{step}/save | up | down | remove`.
async fn step_action(
    State(state): Shared,
    headers: HeaderMap,
    Path((id, step, action)): Path<(String, String, String)>,
    body: Body,
) -> Response {
    page(state, &headers, |state, session: Session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        let id = task_id(&id)?;
        let no_step = || PageError::new(StatusCode::NOT_FOUND, "The plan has no such step.");
        let number: u32 = step.parse().map_err(|_| no_step())?;
        let history = state.engine.task(session.account, id).await?;
        let plan = history
            .task
            .controls
            .plan
            .as_ref()
            .ok_or_else(|| PageError::new(StatusCode::CONFLICT, "This task has no plan."))?;
        let mut steps: Vec<StepEdit> = plan
            .steps
            .iter()
            .map(|s| StepEdit {
                step_number: s.step_number,
                ..StepEdit::default()
            })
            .collect();
        let at = steps.iter().position(|s| s.step_number == number).ok_or_else(no_step)?;
        match action.as_str() {
            "save" => {
                steps[at].description = field(&fields, "description").map(str::to_owned);
                steps[at].draft_content = field(&fields, "draft_content").map(str::to_owned);
            }
            "up" if at > 0 => steps.swap(at, at - 1),
            "down" if at + 1 < steps.len() => steps.swap(at, at + 1),
            "up" | "down" => {}
            "remove" => {
                steps.remove(at);
            }
            _ => {
                return Err(PageError::new(
                    StatusCode::NOT_FOUND,
                    "There is no such page. The overview is at /app.",
                ));
            }
        }
        state
            .engine
            .edit_plan(session.account, id, &steps, version(&fields)?)
            .await
            .map_err(changed_since)?;
        Ok(see_other(&format!("/app/tasks/{id}?done=plan_edited")))
    })
    .await
}

/// `POST /app/tasks/{id}/plan/replan` ("Plan again"): the agent plans it again with the
/// owner's instructions.
async fn replan(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    page(state, &headers, |state, session: Session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        let id = task_id(&id)?;
        let instructions = field(&fields, "instructions").unwrap_or_default();
        state
            .engine
            .replan(session.account, id, instructions, version(&fields)?)
            .await
            .map_err(changed_since)?;
        Ok(see_other(&format!("/app/tasks/{id}?done=replanned")))
    })
    .await
}

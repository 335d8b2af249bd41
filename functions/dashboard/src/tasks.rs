//! One task, `/app/tasks/{id}`: what it is and how far its budgets went, its conversation and
//! its log, and what the owner can do with it now — the review card while it waits for them
//! (`review.rs`), the escalation's card while it is escalated (`escalations.rs`), its plan
//! (`plans.rs`) and the owner's word on it (`learning.rs`). The task's actions are here:
//! `POST /app/tasks/{id}/approve`, `/skip`, `/guidance`, `/resolve` and `/cancel`, each the
//! engine's operation of the API's, then back to where the form was (`return_to`).

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Deserialize;

use openloop_core::engine::Resolution;
use openloop_core::kernel::ids::{AccountId, TaskId};
use openloop_core::task::{Draft, Task, TaskStatus};
use openloop_web::Body;

use crate::escalations::{EscalationCard, escalation_card};
use crate::learning::{self, views::OwnerWord};
use crate::notice::notice;
use crate::page::{
    Layout, code, detail_words, layout, money, reason_words, sent_label, status_badge, trigger_label, type_label, when, words,
};
use crate::plans::{self, PlanView};
use crate::respond::{PageError, Shared, check_csrf, form, html, page, see_other, task_id};
use crate::review::{TaskCard, card, draft_digest};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/tasks/{id}", get(task_page))
        .route("/app/tasks/{id}/approve", post(approve))
        .route("/app/tasks/{id}/skip", post(skip))
        .route("/app/tasks/{id}/guidance", post(guidance))
        .route("/app/tasks/{id}/resolve", post(resolve))
        .route("/app/tasks/{id}/cancel", post(cancel))
        .route("/app/tasks/{id}/pause", post(pause))
        .route("/app/tasks/{id}/resume", post(resume))
        .route("/app/tasks/{id}/run-now", post(run_now))
        .route("/app/tasks/{id}/reopen", post(reopen))
}

#[derive(Template)]
#[template(path = "app/task.html")]
pub struct TaskPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub task: TaskSummary,
    /// The review card, while the task waits for the owner.
    pub review: Option<TaskCard>,
    pub messages: Vec<MessageItem>,
    pub log: Vec<LogItem>,
    /// What the owner can do, while the task is escalated.
    pub escalation: Option<EscalationCard>,
    /// The owner's rating and correction, the goal progress, the memories read.
    pub word: OwnerWord,
    /// The task's plan, if it has one (plan mode).
    pub plan: Option<PlanView>,
}

/// The task at the top of its page: what it is, where it stands, its budgets.
pub struct TaskSummary {
    pub id: String,
    pub member: String,
    pub email: Option<String>,
    pub task_type: String,
    pub status: &'static str,
    pub status_class: &'static str,
    pub trigger: &'static str,
    pub goal: String,
    pub confidence: u8,
    pub touch: String,
    pub outcome: Option<String>,
    pub outcome_reason: Option<String>,
    pub attributed_value: Option<String>,
    pub provisional: bool,
    pub created: String,
    pub next_action: Option<String>,
    /// Still at work: it can be paused, resumed and run now.
    pub active: bool,
    pub paused: bool,
    /// Closed, and not held out: it can be reopened.
    pub reopenable: bool,
    pub bars: Vec<Bar>,
    /// `dry run` or `plan` when the task does not run live.
    pub mode: Option<&'static str>,
}

/// A budget as a bar: used of max.
pub struct Bar {
    pub label: &'static str,
    pub used: i64,
    pub max: i64,
}

pub struct MessageItem {
    pub at: String,
    /// `agent`, `member`, `owner` or `system`.
    pub role: String,
    pub content: String,
}

pub struct LogItem {
    pub at: String,
    pub from: Option<&'static str>,
    pub to: &'static str,
    pub reason: String,
    pub code: String,
    pub detail: Option<String>,
}

#[derive(Deserialize)]
struct TaskParams {
    done: Option<String>,
}

/// `GET /app/tasks/{id}`: the task page (404 for another account's task).
async fn task_page(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, Query(params): Query<TaskParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let id = task_id(&id)?;
        let (account, history) = tokio::try_join!(state.engine.account(session.account), state.engine.task(session.account, id),)?;
        let tz = account.settings.time_zone();
        let task = &history.task;
        let word = learning::owner_word(&state, session.account, task, &tz).await?;
        let page = TaskPage {
            layout: layout("Task", "task", Some(state.session_key.csrf(&session)), &account.name),
            notice: notice(params.done.as_deref()),
            task: summary(task, &tz, state.engine.now()),
            review: (task.status == TaskStatus::PendingReview).then(|| card(task, &tz)),
            messages: history.messages.iter().map(|m| message_item(m, &tz)).collect(),
            log: history.log.iter().map(|e| log_item(e, &tz)).collect(),
            escalation: escalation_card(task, &tz),
            word,
            plan: plans::view(task, &tz),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// The fields of a task's action forms; each action reads the ones it needs.
#[derive(Deserialize)]
struct ActionForm {
    csrf: Option<String>,
    subject: Option<String>,
    body: Option<String>,
    draft_digest: Option<String>,
    /// `review` (default) or `task`: where the owner goes afterwards.
    return_to: Option<String>,
    /// Skip's optional reason, kept on the task's log.
    reason: Option<String>,
    /// Send guidance's words.
    text: Option<String>,
    /// Resolve's outcome and optional note.
    outcome: Option<String>,
    note: Option<String>,
}

impl ActionForm {
    /// The draft the owner approved, if they changed it: browsers send a textarea's line
    /// breaks as `\r\n`, so those are read as the `\n` the page showed.
    fn edited(&self) -> Option<Draft> {
        let subject = self.subject.as_deref()?.replace("\r\n", "\n");
        let body = self.body.as_deref()?.replace("\r\n", "\n");
        let unchanged = self.draft_digest.as_deref() == Some(draft_digest(&subject, &body).as_str());
        (!unchanged).then_some(Draft { subject, body })
    }

    /// Where the owner goes after the action, told what it did.
    fn back_to(&self, id: &TaskId, done: &str) -> String {
        match self.return_to.as_deref() {
            Some("task") => format!("/app/tasks/{id}?done={done}"),
            Some("escalations") => format!("/app/escalations?done={done}"),
            _ => format!("/app/review?done={done}"),
        }
    }
}

/// Runs a task's action for a signed-in owner whose form carries the session's CSRF token.
async fn action<F, Fut>(state: Arc<DashboardState>, headers: &HeaderMap, body: Body, act: F) -> Response
where
    F: FnOnce(Arc<DashboardState>, AccountId, ActionForm) -> Fut,
    Fut: Future<Output = Result<Response, PageError>>,
{
    page(state, headers, |state, session| async move {
        let input: ActionForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        act(state, session.account, input).await
    })
    .await
}

/// `POST /app/tasks/{id}/approve`: the same operation as `POST /api/v1/tasks/{id}/approve`,
/// with the owner's edit when the draft they sent differs from the one they were shown.
async fn approve(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let edited = input.edited();
        let done = if edited.is_some() { "approved_edited" } else { "approved" };
        state.engine.approve(account, id, edited).await?;
        Ok(see_other(&input.back_to(&id, done)))
    })
    .await
}

/// `POST /app/tasks/{id}/skip`: `pending_review → cancelled`, as the API's skip.
async fn skip(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        state.engine.skip(account, id, input.reason.as_deref()).await?;
        Ok(see_other(&input.back_to(&id, "skipped")))
    })
    .await
}

/// `POST /app/tasks/{id}/guidance`: the API's guidance — `escalated → executing` with the
/// owner's words; the agent carries them out at the next step.
async fn guidance(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let text = input.text.as_deref().unwrap_or_default().replace("\r\n", "\n");
        state.engine.guidance(account, id, &text).await?;
        Ok(see_other(&input.back_to(&id, "guided")))
    })
    .await
}

/// `POST /app/tasks/{id}/resolve`: the API's resolve — closed with the chosen outcome.
async fn resolve(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let resolution = Resolution {
            outcome: input.outcome.clone().unwrap_or_default(),
            note: input.note.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned),
        };
        state.engine.resolve(account, id, resolution).await?;
        Ok(see_other(&input.back_to(&id, "resolved")))
    })
    .await
}

/// `POST /app/tasks/{id}/cancel`: the API's cancel.
async fn cancel(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        state.engine.cancel(account, id).await?;
        Ok(see_other(&input.back_to(&id, "cancelled")))
    })
    .await
}

/// `POST /app/tasks/{id}/pause`: the task takes no step until resumed (as the API's pause).
async fn pause(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, _| async move {
        let id = task_id(&id)?;
        state.engine.pause_task(account, id).await?;
        Ok(see_other(&format!("/app/tasks/{id}?done=task_paused")))
    })
    .await
}

/// `POST /app/tasks/{id}/resume`: its next step due again when it was scheduled.
async fn resume(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, _| async move {
        let id = task_id(&id)?;
        state.engine.resume_task(account, id).await?;
        Ok(see_other(&format!("/app/tasks/{id}?done=task_resumed")))
    })
    .await
}

/// `POST /app/tasks/{id}/run-now`: its next step now, through every gate.
async fn run_now(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, _| async move {
        let id = task_id(&id)?;
        state.engine.run_task_now(account, id).await?;
        Ok(see_other(&format!("/app/tasks/{id}?done=task_run_now")))
    })
    .await
}

/// `POST /app/tasks/{id}/reopen` (`reason`): a task closed too early back to work, as the
/// API's reopen allows it.
async fn reopen(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let reason = input
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .unwrap_or("reopened by the owner");
        state.engine.reopen(account, id, reason).await?;
        Ok(see_other(&format!("/app/tasks/{id}?done=task_reopened")))
    })
    .await
}

fn summary(task: &Task, tz: &TimeZone, now: Timestamp) -> TaskSummary {
    let status = code(&task.status);
    let (status, status_class) = status_badge(&status);
    let days_total = task.budget.expires_at.duration_since(task.created_at).as_hours() / 24;
    let days_used = now.min(task.budget.expires_at).duration_since(task.created_at).as_hours() / 24;
    TaskSummary {
        id: task.id.to_string(),
        member: task.member.label(),
        email: task.member.email.as_ref().map(ToString::to_string),
        task_type: type_label(&task.task_type),
        status,
        status_class,
        trigger: trigger_label(&code(&task.trigger_type)),
        goal: task.goal.clone(),
        confidence: task.confidence,
        touch: sent_label(task),
        outcome: task.outcome.as_deref().map(words),
        outcome_reason: task.outcome_reason.as_deref().map(words),
        attributed_value: task.attributed_value.map(money),
        provisional: task.provisional,
        created: when(task.created_at, tz),
        next_action: task.next_action_at.map(|t| when(t, tz)),
        active: task.is_active(),
        paused: task.controls.paused_at.is_some(),
        reopenable: !task.is_active() && !task.is_held_out(),
        mode: plans::mode_badge(task),
        bars: vec![
            Bar {
                label: "messages",
                used: i64::from(task.budget.messages_used),
                max: i64::from(task.budget.messages_max),
            },
            Bar {
                label: "turns",
                used: i64::from(task.budget.turns_used),
                max: i64::from(task.budget.turns_max),
            },
            Bar {
                label: "days",
                used: days_used.max(0),
                max: days_total.max(1),
            },
        ],
    }
}

fn log_item(entry: &openloop_core::task::LogEntry, tz: &TimeZone) -> LogItem {
    LogItem {
        at: when(entry.at, tz),
        from: entry.from_status.map(|s| status_badge(&code(&s)).0),
        to: status_badge(&code(&entry.to_status)).0,
        reason: reason_words(&entry.reason),
        code: entry.reason.clone(),
        detail: entry.detail.as_deref().map(|d| detail_words(d, tz)),
    }
}

fn message_item(message: &openloop_core::task::ConversationMessage, tz: &TimeZone) -> MessageItem {
    MessageItem {
        at: when(message.at, tz),
        role: code(&message.role),
        content: message.content.clone(),
    }
}

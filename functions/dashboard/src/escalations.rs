//! The escalations, `/app/escalations`: the escalated tasks, 20 a page (the status index),
//! each as its card — why it stopped, the member's words, the agent's question or draft, and
//! the forms to answer it (the task's guidance, resolve and cancel, `tasks.rs`). The task page
//! shows the same card.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use jiff::tz::TimeZone;

use openloop_core::ports::TaskQuery;
use openloop_core::task::{Task, TaskStatus};

use crate::notice::notice;
use crate::page::{Layout, layout, type_label, when, words};
use crate::plans;
use crate::respond::{ListParams, Shared, html, page};
use crate::state::DashboardState;

/// Escalated tasks per page.
const ESCALATIONS_PAGE: usize = 20;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new().route("/app/escalations", get(escalations))
}

#[derive(Template)]
#[template(path = "app/escalations.html")]
pub struct EscalationsPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub cards: Vec<EscalationCard>,
    pub next_page: Option<String>,
}

/// An escalated task as the owner answers it: why it stopped, the member's words, the agent's
/// question or draft, and the type's outcomes for Resolve.
pub struct EscalationCard {
    pub id: String,
    pub member: String,
    pub task_type: String,
    pub at: String,
    pub blocked_by: String,
    /// The escalation's reason code, in words (`member question needs owner`).
    pub kind: String,
    /// The escalation's own account of why.
    pub reason: String,
    pub member_words: Vec<String>,
    pub question: Option<String>,
    pub draft_reply: Option<String>,
    /// The agent's last draft when it is not an answer to send (a system escalation's).
    pub last_draft: Option<String>,
    /// What that draft is: a message the member got, or a draft not sent.
    pub last_draft_heading: String,
    /// What the owner could do next, in one sentence.
    pub next_step: String,
    pub suggested_actions: Vec<String>,
    /// `(code, label)` of each outcome the task's type allows.
    pub outcomes: Vec<(&'static str, &'static str)>,
    /// `dry run` or `plan` when the task does not run live.
    pub mode: Option<&'static str>,
}

/// `GET /app/escalations`: the escalated tasks, 20 a page (the status index), each with its
/// escalation context and the forms to answer it.
async fn escalations(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let query = TaskQuery {
            status: Some(TaskStatus::Escalated),
            member_id: None,
            limit: ESCALATIONS_PAGE,
            cursor: params.cursor.filter(|c| !c.is_empty()),
        };
        let (account, (tasks, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.list_tasks(session.account, &query),
        )?;
        let tz = account.settings.time_zone();
        let page = EscalationsPage {
            layout: layout("Escalations", "escalations", Some(state.session_key.csrf(&session)), &account.name),
            notice: notice(params.done.as_deref()),
            cards: tasks.iter().filter_map(|t| escalation_card(t, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// The escalation card of an escalated task (`None` for any other).
pub fn escalation_card(task: &Task, tz: &TimeZone) -> Option<EscalationCard> {
    if task.status != TaskStatus::Escalated {
        return None;
    }
    let e = task.escalation.as_ref();
    let def = openloop_core::task::task_type::definition(&task.task_type);
    Some(EscalationCard {
        id: task.id.to_string(),
        member: task.member.label(),
        task_type: type_label(&task.task_type),
        at: when(e.map_or(task.updated_at, |e| e.blocked_at), tz),
        blocked_by: e.map_or_else(|| "the system".to_owned(), |e| e.blocked_by.clone()),
        kind: task.outcome_reason.as_deref().map_or_else(|| "escalated".to_owned(), words),
        // The summary in words; an escalation stored before summaries kept its words in `reason`.
        reason: e
            .map(|e| {
                if e.summary.is_empty() {
                    e.reason.clone()
                } else {
                    e.summary.clone()
                }
            })
            .unwrap_or_default(),
        member_words: e
            .map(|e| {
                let said: Vec<String> = e
                    .conversation_snapshot
                    .iter()
                    .filter(|m| m.role == openloop_core::task::Role::Member)
                    .map(|m| m.content.clone())
                    .collect();
                if said.is_empty() {
                    e.member_words.iter().cloned().collect()
                } else {
                    said
                }
            })
            .unwrap_or_default(),
        question: e.and_then(|e| e.question.clone()),
        draft_reply: e.and_then(|e| e.draft_reply.clone()),
        last_draft: e.filter(|e| e.draft_reply.is_none()).and_then(|e| e.last_draft.clone()),
        last_draft_heading: e
            .map(|e| openloop_core::task::escalation::last_draft_heading(e, task))
            .unwrap_or_default(),
        next_step: e.map(|e| e.suggested_next_step.clone()).unwrap_or_default(),
        suggested_actions: e.map(|e| e.suggested_actions.clone()).unwrap_or_default(),
        outcomes: def.goal.outcomes.iter().map(|o| (o.code, o.label)).collect(),
        mode: plans::mode_badge(task),
    })
}

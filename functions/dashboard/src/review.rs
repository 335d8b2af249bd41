//! The review queue, `/app/review`: the tasks waiting for the owner, 20 a page, each as its
//! card (the draft to edit, approve or skip; the task page shows the same card), and "Approve
//! selected" (`POST /app/review/approve`), which approves the ticked ones one at a time and
//! says which were not and why. A card's approve and skip are the task's own actions
//! (`tasks.rs`).

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::tz::TimeZone;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use openloop_core::kernel::ids::TaskId;
use openloop_core::task::Task;
use openloop_web::Body;

use crate::notice::notice;
use crate::page::{Layout, code, layout, touch_label, trigger_label, type_label, when};
use crate::plans;
use crate::respond::{PageError, Shared, check_csrf, form, html, page, see_other};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/review", get(review))
        .route("/app/review/approve", post(approve_selected))
}

/// Tasks per page of the review queue.
const REVIEW_PAGE: usize = 20;

/// The most tasks one "Approve selected" approves.
const MAX_BULK: usize = 50;

#[derive(Template)]
#[template(path = "app/review.html")]
pub struct ReviewPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    /// What "Approve selected" did, when the owner just used it.
    pub bulk: Option<BulkResult>,
    pub cards: Vec<TaskCard>,
    /// The query string of the next page (`cursor=…`), if there is one.
    pub next_page: Option<String>,
    pub paused: bool,
}

/// A task waiting for the owner, as the review queue shows it.
pub struct TaskCard {
    pub id: String,
    pub member: String,
    pub email: Option<String>,
    pub task_type: String,
    pub touch: String,
    pub why: String,
    /// What opened the task, as `why` words it.
    #[expect(dead_code, reason = "no template reads it: the review card shows `why`")]
    pub trigger: &'static str,
    pub goal: String,
    pub confidence: u8,
    pub priority: String,
    /// When it came to the owner's review (a held follow-up: then, not when it was opened).
    pub waiting_since: String,
    pub subject: String,
    pub body: String,
    /// A digest of the draft as shown, so an approval knows whether the owner edited it
    /// without reading the task again.
    pub draft_digest: String,
    pub has_draft: bool,
    /// `dry run` or `plan` when the task does not run live.
    pub mode: Option<&'static str>,
}

/// The result of approving several tasks at once, as the redirect's query carried it.
pub struct BulkResult {
    pub approved: usize,
    pub failed: Vec<BulkFailure>,
}

/// A task of a bulk approval that was not approved, and why.
pub struct BulkFailure {
    pub id: String,
    pub why: &'static str,
}

#[derive(Deserialize)]
struct ReviewParams {
    cursor: Option<String>,
    done: Option<String>,
    /// After "Approve selected": how many were approved, and `{id}~{code}` of each that was
    /// not, comma-separated.
    approved: Option<String>,
    failed: Option<String>,
}

impl ReviewParams {
    /// What "Approve selected" did, read back from the redirect's query: only numbers, task
    /// ids that parse and error codes from a fixed list make it to the page.
    fn bulk(&self) -> Option<BulkResult> {
        if self.done.as_deref() != Some("bulk") {
            return None;
        }
        let approved = self.approved.as_deref()?.parse().ok()?;
        let failed = self
            .failed
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter_map(|f| {
                let (id, code) = f.split_once('~')?;
                let id: TaskId = id.parse().ok()?;
                Some(BulkFailure {
                    id: id.to_string(),
                    why: bulk_failure_words(code),
                })
            })
            .take(MAX_BULK)
            .collect();
        Some(BulkResult { approved, failed })
    }
}

/// `GET /app/review?cursor=`: the tasks waiting for review, a page of them.
async fn review(State(state): Shared, headers: HeaderMap, Query(params): Query<ReviewParams>) -> Response {
    page(state, &headers, |state, session| async move {
        // The queue in its order (the most urgent, then the most valuable, first); a page's
        // cursor is where it starts in that order.
        let offset = params.cursor.as_deref().and_then(|c| c.parse().ok()).unwrap_or(0);
        let (account, (tasks, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.review_queue(session.account, offset, REVIEW_PAGE),
        )?;
        let tz = account.settings.time_zone();
        let page = ReviewPage {
            layout: layout("Review queue", "review", Some(state.session_key.csrf(&session)), &account.name),
            notice: notice(params.done.as_deref()),
            bulk: params.bulk(),
            cards: tasks.iter().map(|t| card(t, &tz)).collect(),
            next_page: next.map(|offset| format!("cursor={offset}")),
            paused: account.paused,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// `POST /app/review/approve`: "Approve selected" — each ticked task (`task` fields) is
/// approved as drafted, one at a time through the same operation as the API's approve; one
/// that fails does not stop the rest, and the queue reports which ones did and why.
async fn approve_selected(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        let csrf = fields.iter().find(|(k, _)| k == "csrf").map(|(_, v)| v.as_str());
        check_csrf(&state, &session, csrf)?;
        let mut ids: Vec<&str> = fields.iter().filter(|(k, _)| k == "task").map(|(_, v)| v.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() > MAX_BULK {
            return Err(PageError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("Approve at most {MAX_BULK} tasks at once."),
            ));
        }
        let mut approved = 0;
        let mut failed = Vec::new();
        for raw in ids {
            let Ok(id) = raw.parse::<TaskId>() else {
                continue;
            };
            match state.engine.approve(session.account, id, None).await {
                Ok(_) => approved += 1,
                Err(e) => {
                    let code = openloop_core::contract::error_body(&e).error.code;
                    tracing::info!(task = %id, code = %code, "a task of a bulk approval was not approved");
                    failed.push(format!("{id}~{code}"));
                }
            }
        }
        let query = serde_urlencoded::to_string([
            ("done", "bulk".to_owned()),
            ("approved", approved.to_string()),
            ("failed", failed.join(",")),
        ])
        .unwrap_or_default();
        Ok(see_other(&format!("/app/review?{query}")))
    })
    .await
}

/// Why one task of a bulk approval was not approved, from its error code (a fixed list, so
/// nothing from the query string is echoed).
fn bulk_failure_words(code: &str) -> &'static str {
    match code {
        "draft_required" => "it has no draft yet: open it and write one",
        "invalid_transition" => "it no longer waits for review",
        "not_found" => "there is no such task",
        "stale_version" => "it changed while you were approving; try again",
        _ => "it could not be approved",
    }
}

/// The digest an approval compares the submitted draft with (after line endings are made
/// `\n`, as the page showed them).
pub fn draft_digest(subject: &str, body: &str) -> String {
    let mut hash = Sha256::new();
    // Length-prefixed, so no subject/body split reads as another.
    hash.update((subject.len() as u64).to_le_bytes());
    hash.update(subject.as_bytes());
    hash.update(body.as_bytes());
    hex::encode(&hash.finalize()[..16])
}

/// A task's review card: the queue's, and the task page's while the task waits for review.
pub fn card(task: &Task, tz: &TimeZone) -> TaskCard {
    let (subject, body) = task
        .draft
        .as_ref()
        .map_or((String::new(), String::new()), |d| (d.subject.clone(), d.body.clone()));
    let trigger = trigger_label(&code(&task.trigger_type));
    TaskCard {
        id: task.id.to_string(),
        member: task.member.label(),
        email: task.member.email.as_ref().map(ToString::to_string),
        task_type: type_label(&task.task_type),
        touch: touch_label(task),
        why: format!("Opened by {trigger}"),
        trigger,
        goal: task.goal.clone(),
        confidence: task.confidence,
        priority: code(&task.priority),
        waiting_since: when(task.in_review_since(), tz),
        draft_digest: draft_digest(&subject, &body),
        has_draft: task.draft.is_some(),
        mode: plans::mode_badge(task),
        subject,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_tells_an_edit_apart() {
        assert_eq!(draft_digest("Hi", "Body"), draft_digest("Hi", "Body"));
        assert_ne!(draft_digest("Hi", "Body"), draft_digest("Hi", "Body!"));
        assert_ne!(draft_digest("Hi\0", "Body"), draft_digest("Hi", "\0Body"));
    }
}

//! What the owner teaches the agent, in the dashboard: a task's rating and outcome
//! correction, the business memories (`/app/memories`) and the evaluator's suggestions
//! (`/app/suggestions`). Each action is the same engine operation as its JSON call
//! (`POST /api/v1/tasks/{id}/feedback`, `/outcome`, `/api/v1/memories`,
//! `/api/v1/suggestions/{id}/…`); the pages' view models are `learning/views.rs`.
//!
//! Routes: `POST /app/tasks/{id}/feedback`, `POST /app/tasks/{id}/outcome`, `GET|POST
//! /app/memories`, `POST /app/memories/{id}/delete`, `GET /app/suggestions`, `POST
//! /app/suggestions/{id}/accept | dismiss | remind | undo`.

pub mod views;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::tz::TimeZone;

use openloop_core::engine::NewMemory;
use openloop_core::kernel::error::InvalidInput;
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::task::Task;
use openloop_core::task::error::EngineError;
use openloop_core::task::feedback::Rating;
use openloop_edge::http::ApiError;
use openloop_web::Body;

use self::views::{self as lv, MemoriesPage, MemoryForm, SuggestionsPage};
use crate::notice::learned;
use crate::page::layout;
use crate::respond::{Fields, ListParams, PageError, Shared, field, html, page, posted, see_other, task_id};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/tasks/{id}/feedback", post(feedback))
        .route("/app/tasks/{id}/outcome", post(correct_outcome))
        .route("/app/memories", get(memories).post(add_memory))
        .route("/app/memories/{id}/delete", post(delete_memory))
        .route("/app/suggestions", get(suggestions))
        .route("/app/suggestions/{id}/{decision}", post(decide))
}

/// A text field with the browser's `\r\n` read as `\n`; empty is none.
fn text(fields: &Fields, name: &str) -> Option<String> {
    field(fields, name)
        .map(|v| v.replace("\r\n", "\n"))
        .filter(|v| !v.trim().is_empty())
}

/// `POST /app/tasks/{id}/feedback` ("Good" / "Bad", optional `comment`): the API's feedback.
async fn feedback(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let id = task_id(&id)?;
        let rating = match field(&fields, "rating") {
            Some("up") => Rating::Up,
            Some("down") => Rating::Down,
            _ => return Err(PageError::new(StatusCode::UNPROCESSABLE_ENTITY, "Choose Good or Bad.")),
        };
        let comment = text(&fields, "comment");
        // The thumbs-down's reason (the select is ignored with "Good").
        let reason = match (rating, text(&fields, "reason")) {
            (Rating::Down, Some(r)) => Some(
                openloop_core::task::feedback::FeedbackReason::parse(&r)
                    .ok_or_else(|| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, "Choose a reason from the list."))?,
            ),
            _ => None,
        };
        state
            .engine
            .feedback_with_reason(session.account, id, rating, comment.as_deref(), reason)
            .await?;
        Ok(see_other(&format!("/app/tasks/{id}?done=rated")))
    })
    .await
}

/// `POST /app/tasks/{id}/outcome` ("Correct outcome": `outcome`, optional `note`): the API's
/// outcome correction of a closed task.
async fn correct_outcome(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let id = task_id(&id)?;
        let outcome = field(&fields, "outcome").unwrap_or_default();
        let note = text(&fields, "note");
        state.engine.correct_outcome(session.account, id, outcome, note.as_deref()).await?;
        Ok(see_other(&format!("/app/tasks/{id}?done=corrected")))
    })
    .await
}

/// The task page's part of the owner's word: the rating and correction forms, the goal
/// progress, the value's source, and the memories the last AI call read (their text from
/// the memory book: one read, only when it used any).
pub async fn owner_word(state: &DashboardState, account: AccountId, task: &Task, tz: &TimeZone) -> Result<lv::OwnerWord, PageError> {
    let book = if task.memories_used.is_empty() {
        Vec::new()
    } else {
        state.engine.list_memories(account).await?
    };
    Ok(lv::owner_word(task, &book, tz))
}

/// `GET /app/memories`: the account's memories, newest first, and the form to add one.
async fn memories(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let done = params.done.as_deref().and_then(learned);
        memories_page(&state, &session, StatusCode::OK, done, None, MemoryForm::default()).await
    })
    .await
}

/// The memories page; with `error`, the owner's form is shown again as they filled it.
async fn memories_page(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    form: MemoryForm,
) -> Result<Response, PageError> {
    let (account, memories) = tokio::try_join!(state.engine.account(session.account), state.engine.list_memories(session.account),)?;
    let tz = account.settings.time_zone();
    let now = state.engine.now();
    let page = MemoriesPage {
        layout: layout("Memories", "memories", Some(state.session_key.csrf(session)), &account.name),
        notice,
        error,
        count: memories.len(),
        memories: memories.iter().map(|m| lv::memory_row(m, &tz, now)).collect(),
        form,
        categories: lv::CATEGORIES.to_vec(),
        max_chars: openloop_core::kernel::limits::MAX_MEMORY_CHARS,
        cap: openloop_core::kernel::limits::MAX_MEMORIES_PER_ACCOUNT,
    };
    Ok(html(status, &page))
}

/// `POST /app/memories` ("Add"): the API's `POST /api/v1/memories`. What the engine refuses
/// (empty, too long, the cap reached, a past expiry) is said on the page, over the form as
/// the owner filled it.
async fn add_memory(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let filled = MemoryForm {
            content: field(&fields, "content").unwrap_or_default().replace("\r\n", "\n"),
            member_id: field(&fields, "member_id").unwrap_or_default().trim().to_owned(),
            category: field(&fields, "category").unwrap_or_default().trim().to_owned(),
            expires_on: field(&fields, "expires_on").unwrap_or_default().trim().to_owned(),
        };
        let account = session.account;
        let added = async {
            let tz = state.engine.account(account).await?.settings.time_zone();
            let input = new_memory(&filled, &tz)?;
            state.engine.add_memory(account, input).await
        }
        .await;
        match added {
            Ok(_) => Ok(see_other("/app/memories?done=memory_added")),
            Err(e @ (EngineError::Invalid(_) | EngineError::NotFound { .. })) => {
                let e = ApiError::from(e);
                memories_page(&state, &session, e.status, None, Some(sentence(&e.body.error.message)), filled).await
            }
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// The form as `POST /api/v1/memories` takes it: the expiry date is the last day the memory
/// is read, so it expires at the end of that day in the account's time zone.
fn new_memory(form: &MemoryForm, tz: &TimeZone) -> Result<NewMemory, InvalidInput> {
    let member_id = Some(form.member_id.as_str())
        .filter(|m| !m.is_empty())
        .map(MemberId::parse)
        .transpose()?;
    let expires_at = match form.expires_on.as_str() {
        "" => None,
        raw => {
            let bad = || InvalidInput::new("invalid_memory", "the expiry is a date, such as 2026-12-31");
            let day: jiff::civil::Date = raw.parse().map_err(|_| bad())?;
            let next = day.tomorrow().map_err(|_| bad())?;
            Some(next.to_zoned(tz.clone()).map_err(|_| bad())?.timestamp())
        }
    };
    let content = openloop_core::kernel::texts::MemoryContent::parse("content", form.content.trim())
        .map_err(|_| openloop_core::owner::business_memory::content_refused())?;
    let category = Some(form.category.trim())
        .filter(|c| !c.is_empty())
        .map(|c| openloop_core::kernel::texts::MemoryCategory::parse("category", c))
        .transpose()?;
    Ok(NewMemory {
        content,
        member_id,
        category,
        expires_at,
    })
}

/// An engine message as a sentence: `a memory is 1 to 1000 characters` → `A memory is 1 to
/// 1000 characters.`
fn sentence(message: &str) -> String {
    let mut chars = message.chars();
    let mut out: String = chars.next().map(|c| c.to_uppercase().collect()).unwrap_or_default();
    out.push_str(chars.as_str());
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// `POST /app/memories/{id}/delete` ("Delete"): the API's `DELETE /api/v1/memories/{id}`.
async fn delete_memory(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        let id: ulid::Ulid = id
            .parse()
            .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such memory."))?;
        state.engine.delete_memory(session.account, id).await?;
        Ok(see_other("/app/memories?done=memory_deleted"))
    })
    .await
}

/// `GET /app/suggestions`: the pending suggestions with their evidence, and the applied ones
/// (each can be undone).
async fn suggestions(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, pending, applied) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.list_suggestions(session.account, None),
            state.engine.list_suggestions(session.account, Some("applied")),
        )?;
        let tz = account.settings.time_zone();
        let page = SuggestionsPage {
            layout: layout("Suggestions", "suggestions", Some(state.session_key.csrf(&session)), &account.name),
            notice: params.done.as_deref().and_then(learned),
            pending: pending.iter().map(|s| lv::suggestion_card(s, &tz)).collect(),
            applied: applied.iter().map(|s| lv::suggestion_card(s, &tz)).collect(),
            auto_save_memories: account.settings.auto_save_memories,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// `POST /app/suggestions/{id}/accept` ("Accept"), `/dismiss` ("Dismiss"), `/remind`
/// ("Remind me later") and `/undo` ("Undo"): the API's decisions.
async fn decide(State(state): Shared, headers: HeaderMap, Path((id, decision)): Path<(String, String)>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        let not_found = || PageError::new(StatusCode::NOT_FOUND, "There is no such suggestion.");
        let id: ulid::Ulid = id.parse().map_err(|_| not_found())?;
        let (engine, account) = (&state.engine, session.account);
        let done = match decision.as_str() {
            "accept" => engine.accept_suggestion(account, id).await.map(|_| "accepted"),
            "dismiss" => engine.dismiss_suggestion(account, id).await.map(|_| "dismissed"),
            "remind" => engine.remind_suggestion(account, id).await.map(|_| "reminded"),
            "undo" => engine.undo_suggestion(account, id).await.map(|_| "undone"),
            _ => return Err(PageError::new(StatusCode::NOT_FOUND, "There is no such page.")),
        }?;
        Ok(see_other(&format!("/app/suggestions?done={done}")))
    })
    .await
}

/// A settings checkbox: `None` when the form did not show it (`learning` marks the form that
/// does), else whether it was ticked.
pub fn toggle(fields: &[(String, String)], name: &str) -> Option<bool> {
    field(fields, "learning").map(|_| field(fields, name).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(member_id: &str, expires_on: &str) -> MemoryForm {
        MemoryForm {
            content: "Dan prefers texts after 6pm".into(),
            member_id: member_id.into(),
            category: String::new(),
            expires_on: expires_on.into(),
        }
    }

    #[test]
    fn the_expiry_date_is_the_last_day_read_in_the_accounts_zone() {
        let tz = TimeZone::get("America/New_York").expect("zone");
        let input = new_memory(&filled("m_dan", "2026-12-31"), &tz).expect("valid");
        assert_eq!(input.expires_at.map(|t| t.to_string()), Some("2027-01-01T05:00:00Z".to_owned()));
        assert_eq!(input.member_id.map(|m| m.as_str().to_owned()), Some("m_dan".to_owned()));
        assert_eq!(input.category, None);
        let none = new_memory(&filled("", ""), &tz).expect("valid");
        assert_eq!((none.member_id, none.expires_at), (None, None));
        assert_eq!(
            new_memory(&filled("", "31/12/2026"), &tz).map(|_| ()).expect_err("not a date").code,
            "invalid_memory"
        );
        assert_eq!(
            new_memory(&filled("not a member", ""), &tz).map(|_| ()).expect_err("bad id").code,
            "invalid_member_id"
        );
    }

    #[test]
    fn an_engine_message_reads_as_a_sentence() {
        assert_eq!(sentence("a memory is 1 to 1000 characters"), "A memory is 1 to 1000 characters.");
        assert_eq!(sentence("done."), "Done.");
    }

    #[test]
    fn the_toggles_change_only_when_the_form_showed_them() {
        let shown: Fields = vec![("learning".into(), "shown".into()), ("share_learning".into(), "on".into())];
        assert_eq!(toggle(&shown, "share_learning"), Some(true));
        assert_eq!(toggle(&shown, "auto_save_memories"), Some(false));
        assert_eq!(toggle(&[], "share_learning"), None);
    }
}

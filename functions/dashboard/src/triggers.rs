//! The trigger table on the settings page: each row (the built-in ones and the owner's own)
//! with what it does, how often it fired and a switch — `POST /app/settings/triggers/{id}`
//! (`enabled` = `on` | `off`), the same operation as `PUT /api/v1/triggers/{id}`; "What would it
//! open?" (`/app/settings?try={id}`, the dry run: read only); the owner's own rows added
//! (`POST /app/settings/triggers`, as `POST /api/v1/triggers`) and removed
//! (`POST /app/settings/triggers/{id}/delete`).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde::Deserialize;

use openloop_core::owner::trigger::{Trigger, TriggerBook};
use openloop_web::Body;

use crate::respond::{PageError, Shared, check_csrf, form, page, see_other};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/settings/triggers", post(add))
        .route("/app/settings/triggers/{id}", post(switch))
        .route("/app/settings/triggers/{id}/delete", post(delete))
}

/// What the add form offers: every event a trigger may name and every type it may open (those
/// that write to a member or ask the owner to), each as (value, words).
pub struct Choices {
    pub events: Vec<(String, String)>,
    pub types: Vec<(String, String)>,
}

pub fn choices() -> Choices {
    use openloop_core::task::task_type::{Category, REGISTRY};
    let mut events: Vec<(String, String)> = openloop_core::owner::trigger::trigger_events()
        .into_iter()
        .map(|e| (e.to_owned(), capitalised(&openloop_core::task::reason_words::event_words(e))))
        .collect();
    events.sort_by(|a, b| a.1.cmp(&b.1));
    let types = REGISTRY
        .iter()
        .filter(|t| matches!(t.category, Category::Communication | Category::StaffTodo))
        .map(|t| (t.key.to_owned(), t.label.to_owned()))
        .collect();
    Choices { events, types }
}

fn capitalised(words: &str) -> String {
    let mut chars = words.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A dry run as the page says it, under the row it tried.
pub struct Tried {
    pub id: String,
    pub what: String,
    pub would_open: usize,
    pub members: String,
    pub note: String,
}

/// What the row `id` would have opened over the last 30 days; nothing is created.
pub async fn tried(
    state: &DashboardState,
    account: openloop_core::kernel::ids::AccountId,
    book: &TriggerBook,
    id: &str,
    tz: &jiff::tz::TimeZone,
) -> Result<Option<Tried>, PageError> {
    let Some(row) = book.rows().iter().find(|t| t.id == id).map(self::row) else {
        return Ok(None);
    };
    let run = state.engine.dry_run_trigger(account, id).await?;
    let members = run
        .members
        .iter()
        .take(10)
        .map(|m| {
            format!(
                "{} ({})",
                m.name.as_deref().unwrap_or("a member without a name"),
                crate::page::when(m.at, tz)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Some(Tried {
        id: row.id,
        what: row.what,
        would_open: run.would_open,
        members,
        note: run.note,
    }))
}

/// One row as the page shows it.
pub struct TriggerRow {
    pub id: String,
    pub what: String,
    /// The task type it opens, by its label.
    pub opens: String,
    pub enabled: bool,
    pub builtin: bool,
    pub fired_count: u64,
}

pub fn rows(book: &TriggerBook) -> Vec<TriggerRow> {
    book.rows().iter().map(row).collect()
}

fn row(t: &Trigger) -> TriggerRow {
    let delay = match t.delay_hours {
        0 => String::new(),
        h => format!(", after {h} h"),
    };
    TriggerRow {
        id: t.id.clone(),
        what: t
            .label
            .clone()
            .unwrap_or_else(|| format!("On {}{delay}", openloop_core::task::reason_words::event_words(&t.event))),
        opens: crate::page::type_label(&t.task_type),
        enabled: t.enabled,
        builtin: t.builtin,
        fired_count: t.fired_count,
    }
}

/// `POST /app/settings/triggers`: one of the owner's own rows, as `POST /api/v1/triggers`
/// checks it (a refusal names what is wrong and adds nothing).
async fn add(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    crate::respond::posted(state, &headers, body, |state, session, fields| async move {
        let get = |name: &str| crate::respond::field(&fields, name).map(str::trim).filter(|v| !v.is_empty());
        let number = |name: &str| -> Result<Option<u32>, PageError> {
            get(name)
                .map(|v| {
                    v.parse::<u32>().map_err(|_| {
                        PageError::new(
                            StatusCode::UNPROCESSABLE_ENTITY,
                            format!("{v:?} is not a whole number of hours or days."),
                        )
                    })
                })
                .transpose()
        };
        let reentry = get("reentry").unwrap_or("once");
        let mut input = serde_json::json!({
            "event": get("event").unwrap_or_default(),
            "task_type": get("task_type").unwrap_or_default(),
            "reentry": reentry,
            "delay_hours": number("delay_hours")?,
        });
        if reentry == "after_days" {
            input["reentry_days"] = serde_json::json!(number("reentry_days")?.unwrap_or(30));
        }
        if let Some(goal) = get("goal") {
            input["goal"] = serde_json::json!(goal);
        }
        let input = serde_json::from_value(input)
            .map_err(|e| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("The trigger cannot be added: {e}")))?;
        state.engine.create_trigger(session.account, input).await?;
        Ok(see_other("/app/settings?done=trigger_added#triggers-heading"))
    })
    .await
}

/// `POST /app/settings/triggers/{id}/delete`: one of the owner's own rows removed (a built-in
/// row is only switched off).
async fn delete(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    crate::respond::posted(state, &headers, body, |state, session, _| async move {
        state.engine.delete_trigger(session.account, &id).await?;
        Ok(see_other("/app/settings?done=trigger_deleted#triggers-heading"))
    })
    .await
}

#[derive(Deserialize)]
struct Switch {
    csrf: Option<String>,
    enabled: String,
}

/// `POST /app/settings/triggers/{id}`.
async fn switch(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let input: Switch = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        let on = match input.enabled.as_str() {
            "on" => true,
            "off" => false,
            _ => return Err(PageError::new(StatusCode::BAD_REQUEST, "enabled is on or off")),
        };
        state
            .engine
            .update_trigger(session.account, &id, serde_json::json!({"enabled": on}))
            .await?;
        Ok(see_other(if on {
            "/app/settings?done=trigger_on"
        } else {
            "/app/settings?done=trigger_off"
        }))
    })
    .await
}

//! The trigger table on the settings page: each row (the built-in ones and the owner's own)
//! with what it does, how often it fired and a switch — `POST /app/settings/triggers/{id}`
//! (`enabled` = `on` | `off`), the same operation as `PUT /api/v1/triggers/{id}`; "What would it
//! open?" (`/app/settings?try={id}`, the dry run: read only); the owner's own rows added
//! (`POST /app/settings/triggers`, as `POST /api/v1/triggers`), changed (`GET` and `POST
//! /app/settings/triggers/{id}/edit`, the form pre-filled with the row, as `PUT
//! /api/v1/triggers/{id}`) and removed (`POST /app/settings/triggers/{id}/delete`). A built-in
//! row is only switched on or off, as the API allows.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_core::owner::trigger::{Notify, Reentry, Trigger, TriggerBook};
use openloop_core::task::error::EngineError;
use openloop_web::Body;

use crate::page::{Layout, layout};
use crate::respond::{Fields, PageError, Shared, check_csrf, field, form, html, page, see_other};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/settings/triggers", post(add))
        .route("/app/settings/triggers/{id}", post(switch))
        .route("/app/settings/triggers/{id}/delete", post(delete))
        .route("/app/settings/triggers/{id}/edit", get(edit_page).post(edit))
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

/// The choices with the row's own event and type among them (a row made through the API may
/// open a type the add form does not offer).
fn choices_for(row: &Trigger) -> Choices {
    let mut choices = choices();
    if !choices.events.iter().any(|(e, _)| *e == row.event) {
        let words = capitalised(&openloop_core::task::reason_words::event_words(&row.event));
        choices.events.push((row.event.clone(), words));
    }
    if !choices.types.iter().any(|(t, _)| *t == row.task_type) {
        choices.types.push((row.task_type.clone(), crate::page::type_label(&row.task_type)));
    }
    choices
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
    /// What it changes: the owner's rows take the edit form.
    pub editable: bool,
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
        editable: !t.builtin,
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

/// When the owner hears of a trigger's work, as the edit form offers it: a trigger tells of
/// each firing (`always`) and of the wins of its tasks (`always`, `on_win`); `on_change` tells
/// a trigger's owner nothing, as `never` does, so the form shows both as "never".
const TRIGGER_NOTIFY: [(&str, &str); 3] = [
    ("always", "each time it opens a task, and when a task it opened succeeds"),
    ("on_win", "only when a task it opened succeeds"),
    ("never", "never"),
];

fn notify_choice(notify: Notify) -> &'static str {
    match notify {
        Notify::Always => "always",
        Notify::OnWin => "on_win",
        Notify::OnChange | Notify::Never => "never",
    }
}

/// The edit form's values: the row's, or what the owner last posted.
pub struct EditForm {
    pub event: String,
    pub task_type: String,
    pub delay_hours: String,
    /// `once` | `after_days`.
    pub reentry: String,
    pub reentry_days: String,
    pub goal: String,
    /// One of [`TRIGGER_NOTIFY`].
    pub notify: String,
}

impl EditForm {
    fn of(row: &Trigger) -> Self {
        Self {
            event: row.event.clone(),
            task_type: row.task_type.clone(),
            delay_hours: row.delay_hours.to_string(),
            reentry: match row.reentry {
                Reentry::Once => "once".into(),
                Reentry::AfterDays => "after_days".into(),
            },
            reentry_days: row.reentry_days.unwrap_or(30).to_string(),
            goal: row.goal.clone().unwrap_or_default(),
            notify: notify_choice(row.notify).into(),
        }
    }

    fn posted(fields: &Fields) -> Self {
        let get = |name: &str| field(fields, name).map(str::trim).unwrap_or_default().to_owned();
        Self {
            event: get("event"),
            task_type: get("task_type"),
            delay_hours: get("delay_hours"),
            reentry: get("reentry"),
            reentry_days: get("reentry_days"),
            goal: get("goal"),
            notify: get("notify"),
        }
    }

    /// The change `PUT /api/v1/triggers/{id}` takes, or what is wrong with the form, in words.
    /// The notify policy is sent only when the owner changed it (see [`TRIGGER_NOTIFY`]).
    fn patch(&self, row: &Trigger) -> Result<serde_json::Value, String> {
        let whole =
            |v: &str, what: &str| -> Result<u32, String> { v.parse::<u32>().map_err(|_| format!("{what} must be a whole number.")) };
        let delay = match self.delay_hours.as_str() {
            "" => 0,
            v => whole(v, "The wait in hours")?,
        };
        let mut patch = serde_json::json!({
            "event": self.event,
            "task_type": self.task_type,
            "delay_hours": delay,
            "goal": (!self.goal.is_empty()).then_some(&self.goal),
        });
        match self.reentry.as_str() {
            "once" => patch["reentry"] = serde_json::json!("once"),
            "after_days" => {
                patch["reentry"] = serde_json::json!("after_days");
                patch["reentry_days"] = serde_json::json!(whole(&self.reentry_days, "The days before it may fire again")?);
            }
            _ => return Err("Choose from the list what happens for a member who had one already.".into()),
        }
        if !TRIGGER_NOTIFY.iter().any(|(code, _)| *code == self.notify) {
            return Err("Choose from the list when you hear of what it does.".into());
        }
        if self.notify != notify_choice(row.notify) {
            patch["notify"] = serde_json::json!(self.notify);
        }
        Ok(patch)
    }
}

#[derive(Template)]
#[template(path = "app/trigger.html")]
pub struct EditPage {
    pub layout: Layout,
    pub id: String,
    /// The row as the table says it.
    pub what: String,
    /// Why the owner's change was refused, over the form.
    pub error: Option<String>,
    pub form: EditForm,
    pub choices: Choices,
    pub notify_choices: [(&'static str, &'static str); 3],
    /// It has conditions set through the API, which the form keeps.
    pub has_filter: bool,
}

/// The owner's row `id`; a built-in one is only switched on or off.
async fn own_row(state: &DashboardState, session: &Session, id: &str) -> Result<Trigger, PageError> {
    let book = state.engine.trigger_book(session.account).await?;
    match book.rows().iter().find(|t| t.id == id) {
        None => Err(PageError::new(StatusCode::NOT_FOUND, "There is no such trigger.")),
        Some(t) if t.builtin => Err(PageError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "A built-in trigger can only be switched on or off, on the settings page.",
        )),
        Some(t) => Ok(t.clone()),
    }
}

async fn render_edit(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    row: &Trigger,
    form: EditForm,
    error: Option<String>,
) -> Result<Response, PageError> {
    let account = state.engine.account(session.account).await?;
    let page = EditPage {
        layout: layout("Change a trigger", "settings", Some(state.session_key.csrf(session)), &account.name),
        id: row.id.clone(),
        what: self::row(row).what,
        error,
        form,
        choices: choices_for(row),
        notify_choices: TRIGGER_NOTIFY,
        has_filter: !row.filter.is_empty(),
    };
    Ok(html(status, &page))
}

/// `GET /app/settings/triggers/{id}/edit`: the owner's row as a form, pre-filled.
async fn edit_page(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Response {
    page(state, &headers, |state, session| async move {
        let row = own_row(&state, &session, &id).await?;
        render_edit(&state, &session, StatusCode::OK, &row, EditForm::of(&row), None).await
    })
    .await
}

/// A refusal of `update_trigger` in the owner's words; `None`: not one the form can say.
fn refusal_words(e: &EngineError) -> Option<String> {
    let EngineError::Invalid(invalid) = e else {
        return None;
    };
    Some(match invalid.code.as_str() {
        "invalid_event" => "Choose from the list when it fires.".into(),
        "invalid_task_type" => "Choose from the list what it opens.".into(),
        "invalid_goal" => "The goal is at most 2000 characters.".into(),
        "invalid_delay" => "The wait is at most 2160 hours (90 days).".into(),
        "invalid_reentry" => "It may fire again for a member after 1 to 365 days.".into(),
        "invalid_filter" => "Its conditions, set through the API, do not hold any more: change them through the API.".into(),
        "builtin_trigger" => "A built-in trigger can only be switched on or off.".into(),
        _ => invalid.message.clone(),
    })
}

/// `POST /app/settings/triggers/{id}/edit`: the form as a change of the row, as `PUT
/// /api/v1/triggers/{id}` makes it; a refusal is said over the form (422), with what the owner
/// posted, and changes nothing.
async fn edit(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    crate::respond::posted(state, &headers, body, |state, session, fields| async move {
        let row = own_row(&state, &session, &id).await?;
        let form = EditForm::posted(&fields);
        let words = match form.patch(&row) {
            Err(words) => words,
            Ok(patch) => match state.engine.update_trigger(session.account, &id, patch).await {
                Ok(_) => return Ok(see_other("/app/settings?done=trigger_changed#triggers-heading")),
                Err(e) => match refusal_words(&e) {
                    Some(words) => words,
                    None => return Err(e.into()),
                },
            },
        };
        let words = format!("Not changed: {words}");
        render_edit(&state, &session, StatusCode::UNPROCESSABLE_ENTITY, &row, form, Some(words)).await
    })
    .await
}

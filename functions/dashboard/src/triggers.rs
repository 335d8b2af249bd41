//! The trigger table on the settings page: each row (the built-in ones and the owner's own)
//! with what it does, how often it fired and a switch — `POST /app/settings/triggers/{id}`
//! (`enabled` = `on` | `off`), the same operation as `PUT /api/v1/triggers/{id}`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use serde::Deserialize;

use openloop_core::owner::trigger::{Trigger, TriggerBook};
use openloop_web::Body;

use crate::respond::{PageError, Shared, check_csrf, form, page, see_other};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new().route("/app/settings/triggers/{id}", post(switch))
}

/// One row as the page shows it.
pub struct TriggerRow {
    pub id: String,
    pub what: String,
    pub task_type: String,
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
        what: t.label.clone().unwrap_or_else(|| format!("On {}{delay}", t.event)),
        task_type: t.task_type.clone(),
        enabled: t.enabled,
        builtin: t.builtin,
        fired_count: t.fired_count,
    }
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
            _ => return Err(PageError::new(axum::http::StatusCode::BAD_REQUEST, "enabled is on or off")),
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

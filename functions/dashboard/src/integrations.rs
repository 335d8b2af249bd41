//! The settings page's "Webhooks and keys" (`/app/settings/webhooks`): the account's outbound
//! webhook endpoints — listed with their last delivery, added (the signing secret shown this
//! once) and removed — and the rotation of the API token and the inbound webhook secret (the
//! new one shown once, the old one working through the overlap). Every form carries the
//! session's CSRF token; each is the same engine operation as its API route.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_core::owner::outbound_webhook::{EndpointUrl, EventName, EventType, NewWebhookEndpoint};
use openloop_core::task::error::EngineError;
use openloop_edge::http::token_hash;
use openloop_web::Body;

use crate::page::{Layout, layout, when};
use crate::respond::{CsrfForm, PageError, Shared, check_csrf, form, html, page, see_other};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/settings/webhooks", get(show).post(add))
        .route("/app/settings/webhooks/{id}/delete", post(remove))
        .route("/app/settings/api-token/rotate", post(rotate_api_token))
        .route("/app/settings/webhook-secret/rotate", post(rotate_webhook_secret))
}

/// One endpoint as the page lists it.
pub struct EndpointRow {
    pub id: String,
    pub url: String,
    pub events: String,
    pub status: &'static str,
    pub pending: usize,
    pub last: Option<String>,
}

/// A secret or token just made: shown once.
pub struct Revealed {
    pub what: &'static str,
    pub value: String,
    pub note: String,
}

#[derive(Template)]
#[template(path = "app/integrations.html")]
pub struct IntegrationsPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub error: Option<String>,
    pub revealed: Option<Revealed>,
    pub endpoints: Vec<EndpointRow>,
    /// Every event an endpoint may take.
    pub events: Vec<(&'static str, &'static str)>,
    pub url: String,
}

async fn render(
    state: &DashboardState,
    session: &crate::session::Session,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<String>,
    revealed: Option<Revealed>,
    url: String,
) -> Result<Response, PageError> {
    let (account, endpoints) = tokio::try_join!(
        state.engine.account(session.account),
        state.engine.webhook_endpoints(session.account),
    )?;
    let tz = account.settings.time_zone();
    let mut rows = Vec::new();
    for e in endpoints {
        let log = state.engine.webhook_deliveries(session.account, &e.id).await?;
        rows.push(EndpointRow {
            last: log.deliveries.first().map(|d| {
                let answer = d.response_status.map(|s| format!(" ({s})")).unwrap_or_default();
                format!(
                    "{} {}{answer}, {}",
                    d.event_type.words(),
                    crate::page::code(&d.status),
                    when(d.at, &tz)
                )
            }),
            id: e.id,
            url: e.url,
            events: e.events.iter().map(|e| e.words()).collect::<Vec<_>>().join("; "),
            status: match e.status {
                openloop_core::owner::outbound_webhook::EndpointStatus::Active => "active",
                openloop_core::owner::outbound_webhook::EndpointStatus::Disabled => "turned off after a day of failures",
            },
            pending: e.pending,
        });
    }
    let page = IntegrationsPage {
        layout: layout(
            "Webhooks and keys",
            "settings",
            Some(state.session_key.csrf(session)),
            &account.name,
        ),
        notice,
        error,
        revealed,
        endpoints: rows,
        events: EventType::ALL.iter().map(|e| (e.as_str(), e.words())).collect(),
        url,
    };
    Ok(html(status, &page))
}

/// `GET /app/settings/webhooks`.
async fn show(State(state): Shared, headers: HeaderMap, Query(params): Query<Done>) -> Response {
    page(state, &headers, |state, session| async move {
        let notice = match params.done.as_deref() {
            Some("removed") => Some("Endpoint removed: nothing more is sent to it."),
            _ => None,
        };
        render(&state, &session, StatusCode::OK, notice, None, None, String::new()).await
    })
    .await
}

#[derive(Deserialize)]
struct Done {
    done: Option<String>,
}

/// `POST /app/settings/webhooks` (`url`, `events` once per ticked event): the endpoint is
/// added and the page shows its secret once; a refusal shows the page again with the reason.
async fn add(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        let csrf = fields.iter().find(|(k, _)| k == "csrf").map(|(_, v)| v.as_str());
        check_csrf(&state, &session, csrf)?;
        let url = fields
            .iter()
            .find(|(k, _)| k == "url")
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_default();
        let events = fields
            .iter()
            .filter(|(k, _)| k == "events")
            .map(|(_, v)| EventName::parse("events", v.clone()))
            .collect::<Result<Vec<_>, _>>();
        let secret = openloop_web::secrets::new_endpoint_secret().map_err(PageError::from)?;
        let input = match (EndpointUrl::parse("url", url.clone()), events) {
            (Ok(url), Ok(events)) => Ok(NewWebhookEndpoint { url, events }),
            (Err(e), _) | (_, Err(e)) => Err(EngineError::from(e)),
        };
        let created = match input {
            Ok(input) => state.engine.create_webhook_endpoint(session.account, input, secret).await,
            Err(e) => Err(e),
        };
        match created {
            Ok(created) => {
                let revealed = Revealed {
                    what: "Signing secret",
                    value: created.secret,
                    note: format!(
                        "Deliveries to {} are signed with it (Standard Webhooks). It is shown this once: copy it now.",
                        created.url
                    ),
                };
                render(
                    &state,
                    &session,
                    StatusCode::OK,
                    Some("Endpoint added."),
                    None,
                    Some(revealed),
                    String::new(),
                )
                .await
            }
            Err(openloop_core::task::error::EngineError::Invalid(e)) => {
                render(&state, &session, StatusCode::UNPROCESSABLE_ENTITY, None, Some(e.message), None, url).await
            }
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// `POST /app/settings/webhooks/{id}/delete`.
async fn remove(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let input: CsrfForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        state.engine.delete_webhook_endpoint(session.account, &id).await?;
        Ok(see_other("/app/settings/webhooks?done=removed"))
    })
    .await
}

/// `POST /app/settings/api-token/rotate`: a new API token, shown once.
async fn rotate_api_token(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let input: CsrfForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        let token = openloop_web::secrets::new_api_token().map_err(PageError::from)?;
        let until = state.engine.rotate_api_token(session.account, None, &token_hash(&token)).await?;
        let tz = state.engine.account(session.account).await?.settings.time_zone();
        let revealed = Revealed {
            what: "New API token",
            value: token,
            note: format!(
                "The previous token works until {}, then stops. This one is shown once: copy it now.",
                when(until, &tz)
            ),
        };
        render(
            &state,
            &session,
            StatusCode::OK,
            Some("API token rotated."),
            None,
            Some(revealed),
            String::new(),
        )
        .await
    })
    .await
}

/// `POST /app/settings/webhook-secret/rotate`: a new inbound webhook secret, shown once.
async fn rotate_webhook_secret(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let input: CsrfForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        let secret = openloop_web::secrets::new_webhook_secret().map_err(PageError::from)?;
        let until = state.engine.rotate_webhook_secret(session.account, secret.clone()).await?;
        let tz = state.engine.account(session.account).await?.settings.time_zone();
        let revealed = Revealed {
            what: "New webhook secret",
            value: secret.expose().to_owned(),
            note: format!(
                "Member events signed with the previous secret are accepted until {}, then refused. This one is shown once: copy it now.",
                when(until, &tz)
            ),
        };
        render(
            &state,
            &session,
            StatusCode::OK,
            Some("Webhook secret rotated."),
            None,
            Some(revealed),
            String::new(),
        )
        .await
    })
    .await
}

//! The webhooks function: member events in CONTRACT.md's format (Standard Webhooks
//! signatures, dedup by `webhook-id`, enqueue to the signals queue, 202); PushPress's own
//! deliveries (`pushpress_v3.rs`: its signature, dedup on the hash of the signed `data`);
//! inbound e-mail and unsubscribe links; members' texts (`inbound_sms.rs`, signed SNS).
//! The router is served by `openloop_edge::apigw` in Lambda and directly by the local runtime.

mod inbound_sms;
mod pushpress_v3;
pub mod signature;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::post;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use openloop_core::engine::{Accepted, Engine, InboundOutcome};
use openloop_core::kernel::ids::AccountId;
use openloop_core::kernel::limits::{MAX_BODY_BYTES, MAX_INBOUND_MAIL_BYTES};
use openloop_core::members::event::{Parsed, parse_event};
use openloop_core::task::error::EngineError;
use openloop_edge::http::{ApiError, bearer, body_error, secret_matches};

pub struct WebhooksState {
    pub engine: Engine,
    pub inbound_token: SecretString,
    /// Local runtime only: also accept timestamps near the wall clock, so a sender that
    /// signs with real time still works after the test clock was moved.
    pub accept_wall_clock: bool,
    /// Checks the SNS notifications of members' texts (`POST /webhooks/inbound-sms`).
    pub sms_notifications: openloop_aws::sns::SnsVerifier,
}

pub fn router(state: Arc<WebhooksState>) -> Router {
    Router::new()
        .route("/webhooks/pushpress/{account_id}", post(pushpress))
        .route("/webhooks/pushpress-v3/{account_id}", post(pushpress_v3::delivery))
        .route("/webhooks/inbound-sms", post(inbound_sms::inbound_sms))
        .route("/unsubscribe", axum::routing::get(unsubscribe_page).post(unsubscribe))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(|request, next| {
            openloop_edge::http::limit_declared_body(MAX_BODY_BYTES, request, next)
        }))
        // A member's reply may carry a phone photo or two: mail as large as providers deliver.
        .route(
            "/webhooks/inbound-email",
            post(inbound_email)
                .layer(DefaultBodyLimit::max(MAX_INBOUND_MAIL_BYTES))
                .layer(axum::middleware::from_fn(|request, next| {
                    openloop_edge::http::limit_declared_body(MAX_INBOUND_MAIL_BYTES, request, next)
                })),
        )
        .method_not_allowed_fallback(openloop_edge::http::method_not_allowed)
        .layer(axum::middleware::map_response(openloop_edge::json_errors::json_errors))
        .with_state(state)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn pushpress(
    State(state): State<Arc<WebhooksState>>,
    Path(account_id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    let engine = &state.engine;
    let account_id: AccountId = account_id.parse().map_err(|_| ApiError::not_found("account"))?;
    let account = engine.account(account_id).await?;
    let (Some(id), Some(timestamp), Some(signatures)) = (
        header(&headers, "webhook-id"),
        header(&headers, "webhook-timestamp"),
        header(&headers, "webhook-signature"),
    ) else {
        return Err(ApiError::unauthorized(signature::Rejection::MissingHeaders.message()));
    };
    let now = engine.now();
    // The current secret, and one rotated out while its overlap lasts (`Account::inbound_secrets`).
    let check = |secret: &str| {
        let verdict = signature::verify(secret, id, timestamp, signatures, &body, now);
        if verdict == Err(signature::Rejection::StaleTimestamp) && state.accept_wall_clock {
            return signature::verify(secret, id, timestamp, signatures, &body, jiff::Timestamp::now());
        }
        verdict
    };
    let secrets = account.inbound_secrets(now);
    let verdict = secrets
        .iter()
        .map(|secret| check(secret.expose()))
        .reduce(|first, other| if first.is_ok() || other.is_err() { first } else { other })
        .unwrap_or(Err(signature::Rejection::BadSecret));
    if let Err(rejection) = verdict {
        tracing::warn!(account = %account_id, webhook_id = id, ?rejection, "webhook refused");
        return Err(ApiError::unauthorized(rejection.message()));
    }
    if id.is_empty() || id.len() > 256 {
        return Err(ApiError::bad_request("invalid_webhook_id", "webhook-id must be 1-256 characters"));
    }
    // Not JSON is malformed (400); JSON that is not a valid event is well-formed but invalid
    // (422), as the owner API answers a body of the wrong shape.
    let event = match parse_event(&body).map_err(|e| {
        let status = if e.code == "malformed_json" {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        ApiError::new(status, &e.code, e.message)
    })? {
        Parsed::Known(event) => event,
        Parsed::UnknownType(kind) => {
            tracing::info!(account = %account_id, webhook_id = id, kind, "unknown event type accepted and ignored");
            return Ok((
                StatusCode::ACCEPTED,
                axum::Json(serde_json::json!({"status": "ignored", "reason": format!("unknown event type {kind}")})),
            )
                .into_response());
        }
    };
    match engine.accept_member_event(account_id, id, event, now).await {
        Ok(Accepted::Queued) => Ok((StatusCode::ACCEPTED, axum::Json(serde_json::json!({"status": "queued"}))).into_response()),
        Ok(Accepted::Duplicate) => Ok((StatusCode::OK, axum::Json(serde_json::json!({"status": "duplicate"}))).into_response()),
        // Not queued (the claim was given back, so the sender's retry is accepted): say so.
        Err(EngineError::Dependency(_)) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "queue_unavailable",
            "the event could not be queued; retry later",
        )),
        Err(e) => Err(e.into()),
    }
}

/// One raw RFC 5322 message from the mail provider: routed by its signed reply address (or
/// its thread) and stored in the task's conversation before this answers 202. A message that
/// belongs to no task is also 202 (the provider must not retry it) and logged.
async fn inbound_email(
    State(state): State<Arc<WebhooksState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let authorised = bearer(&headers).is_some_and(|t| secret_matches(t, state.inbound_token.expose_secret()));
    if !authorised {
        return Err(ApiError::unauthorized(
            "a valid inbound token is required (Authorization: Bearer …)",
        ));
    }
    let body = body.map_err(body_error)?;
    let outcome = match state.engine.receive_reply(&body).await {
        Ok(outcome) => outcome,
        Err(EngineError::Invalid(e)) => return Err(ApiError::bad_request(&e.code, e.message)),
        Err(e) => return Err(e.into()),
    };
    let body = match outcome {
        InboundOutcome::Stored { task_id, status, .. } => {
            serde_json::json!({"status": "stored", "task_id": task_id.to_string(), "task_status": status})
        }
        InboundOutcome::Duplicate => serde_json::json!({"status": "duplicate"}),
        InboundOutcome::Unrouted(reason) => serde_json::json!({"status": "unrouted", "reason": reason}),
        InboundOutcome::Answered { understood, .. } => serde_json::json!({"status": "owner_answer", "understood": understood}),
    };
    Ok((StatusCode::ACCEPTED, axum::Json(body)).into_response())
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

async fn unsubscribe_page(State(state): State<Arc<WebhooksState>>, Query(q): Query<TokenQuery>) -> Result<Response, ApiError> {
    let (account, email) = q
        .token
        .as_deref()
        .and_then(|t| state.engine.unsubscribe_target(t))
        .ok_or_else(|| ApiError::bad_request("invalid_token", "this unsubscribe link is not valid"))?;
    let gym = escape_html(&state.engine.account(account).await?.business_name());
    let token = q.token.unwrap_or_default();
    let body = format!(
        "<h1>Stop e-mails from {gym}?</h1><p>No more e-mails from {gym} will go to <strong>{}</strong>.</p>\
         <form method=\"post\" action=\"/unsubscribe?token={}\"><button type=\"submit\">Unsubscribe</button></form>\
         <p class=\"small\">Changed your mind? Just close this page: nothing changes until you press the button.</p>",
        escape_html(email.as_str()),
        escape_html(&token)
    );
    Ok(member_page("Unsubscribe", &gym, &body))
}

/// The member pages' look: the gym's name at the top of a card, readable on a phone, the same
/// plain, quiet style as the gym's mail. Inline, and allowed by its hash alone.
const MEMBER_PAGE_STYLE: &str = "body{margin:0;background:#f5f6f8;color:#1b1f24;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\
main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #dde1e6;border-radius:10px;overflow-wrap:anywhere}\
@media (max-width:36rem){main{margin:0;border:0;border-radius:0;min-height:100vh;box-sizing:border-box}}\
.gym{margin:0 0 .5rem;font-weight:700;color:#5b6470;text-transform:none}\
h1{font-size:1.35rem;margin:.25rem 0 .75rem}\
button{font:inherit;font-weight:600;min-height:44px;padding:.55rem 1.2rem;border-radius:6px;border:1px solid #1d5fd1;background:#1d5fd1;color:#fff;cursor:pointer}\
.small{font-size:.875rem;color:#5b6470}";

/// The CSP of a member page: nothing but its own style, no script, no framing.
fn member_page_csp() -> &'static str {
    static CSP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CSP.get_or_init(|| {
        use base64::Engine as _;
        use sha2::Digest as _;
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(MEMBER_PAGE_STYLE.as_bytes()));
        format!("default-src 'none'; style-src 'sha256-{hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    })
}

/// A page a member opens from a mail: a complete document (language, title, a phone's
/// width) under the gym's name (`gym`, escaped already), that runs no script and cannot be
/// framed.
fn member_page(title: &str, gym: &str, body: &str) -> Response {
    let mut response = Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title} · {gym}</title>\
         <style>{MEMBER_PAGE_STYLE}</style></head>\
         <body><main><p class=\"gym\">{gym}</p>{body}</main></body></html>"
    ))
    .into_response();
    let headers = response.headers_mut();
    if let Ok(csp) = axum::http::HeaderValue::from_str(member_page_csp()) {
        headers.insert("content-security-policy", csp);
    }
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, axum::http::HeaderValue::from_static(value));
    }
    response
}

/// Text as HTML text: the member's address is theirs to write.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// RFC 8058 one-click: suppress the member and cancel every active task about them.
async fn unsubscribe(State(state): State<Arc<WebhooksState>>, Query(q): Query<TokenQuery>) -> Result<Response, ApiError> {
    let engine = &state.engine;
    let (account, email) = q
        .token
        .as_deref()
        .and_then(|t| engine.unsubscribe_target(t))
        .ok_or_else(|| ApiError::bad_request("invalid_token", "this unsubscribe link is not valid"))?;
    let cancelled = engine.suppress(account, &email, "unsubscribe_link").await?;
    tracing::info!(%account, cancelled, "member unsubscribed");
    // Unsubscribed already: a trouble reading the gym's name does not say otherwise.
    let gym = engine
        .account(account)
        .await
        .map_or_else(|_| "The gym".to_owned(), |a| escape_html(&a.business_name()));
    let body = format!(
        "<h1>You are unsubscribed</h1><p>{gym} will not e-mail <strong>{}</strong> again.</p>",
        escape_html(email.as_str())
    );
    Ok(member_page("Unsubscribed", &gym, &body))
}

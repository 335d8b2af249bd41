//! The sign-in link: "Email me a sign-in link" on `/app/login` mails the
//! owner a link that signs in once within 15 minutes (`Engine::mail_sign_in_links`);
//! `GET /app/login/link?token=…` shows one "Sign in" button, and `POST /app/login/link/use`
//! redeems the token for the same session cookie as the token sign-in — so a mail scanner
//! that opens links ahead of the owner uses nothing up. The page after asking says the same
//! whether or not the address is known, and takes the same time: asking only queues the ask
//! (`Engine::request_sign_in_link`); the signals consumer looks the address up and mails.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_core::kernel::ids::Email;
use openloop_edge::http::token_hash;
use openloop_web::Body;

use crate::respond::{PageError, Shared, form, random};
use crate::session;
use crate::sign_in::{link_confirm_page, login_page_with, signed_in_response};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/login/link", get(confirm).post(request))
        .route("/app/login/link/use", post(redeem))
}

/// The form's login token matches its cookie (the sign-in page set both), else 403 saying
/// what to open again.
fn login_form_is_ours(state: &DashboardState, headers: &HeaderMap, csrf: Option<&str>, again: &str) -> Result<(), PageError> {
    let nonce = session::cookie(headers, session::LOGIN_COOKIE).unwrap_or_default();
    if state.session_key.login_csrf_matches(nonce, csrf.unwrap_or_default()) {
        Ok(())
    } else {
        Err(PageError::new(
            StatusCode::FORBIDDEN,
            format!("The sign-in form has expired. {again}"),
        ))
    }
}

/// What the owner is told after asking, whatever the address.
const ASKED: &str = "If that address is the owner address of an account, a sign-in link is on its way to it. \
     The link works once, within 15 minutes.";

#[derive(Deserialize)]
struct LinkForm {
    email: Option<String>,
    csrf: Option<String>,
}

/// `POST /app/login/link`: mail a sign-in link to the address, if it owns an account.
async fn request(State(state): Shared, headers: HeaderMap, uri: axum::http::Uri, body: Body) -> Result<Response, PageError> {
    let input: LinkForm = form(body)?;
    login_form_is_ours(&state, &headers, input.csrf.as_deref(), "Open /app/login again.")?;
    let Ok(email) = Email::parse(input.email.as_deref().unwrap_or_default().trim()) else {
        return login_page_with(
            &state,
            &headers,
            &uri,
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("That is not an e-mail address.".into()),
            None,
            None,
        );
    };
    mail(&state, &email, &requester(&headers)).await?;
    tracing::info!("sign-in links asked for");
    login_page_with(&state, &headers, &uri, StatusCode::OK, None, Some(ASKED), None)
}

/// Who asks, for the per-requester allowance: the network address API Gateway (or a proxy)
/// appended last to `X-Forwarded-For` — earlier entries are the client's own to write.
fn requester(headers: &HeaderMap) -> String {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .rfind(|v| !v.is_empty())
        .unwrap_or("direct")
        .to_owned()
}

/// Queue the ask and answer at once: the lookup and the mail happen after the page is sent
/// (the signals consumer), so a known and an unknown address take the same time.
async fn mail(state: &DashboardState, email: &Email, requester: &str) -> Result<(), PageError> {
    Ok(state.engine.request_sign_in_link(email, requester).await?)
}

#[derive(Deserialize)]
struct LinkParams {
    token: Option<String>,
}

/// `GET /app/login/link?token=…`: the page that asks to sign in with the link (it uses
/// nothing: a GET may come from a mail scanner or a link preview).
async fn confirm(
    State(state): Shared,
    headers: HeaderMap,
    uri: axum::http::Uri,
    Query(params): Query<LinkParams>,
) -> Result<Response, PageError> {
    // Looked at, not used: the page names the account the link signs in to.
    let token = params.token.filter(|t| well_formed(t));
    let account = match &token {
        Some(token) => state.engine.sign_in_link_account_name(&token_hash(token)).await?,
        None => None,
    };
    match (token, account) {
        (Some(token), Some(account)) => link_confirm_page(&state, &headers, &uri, token, account),
        _ => login_page_with(&state, &headers, &uri, StatusCode::UNAUTHORIZED, Some(EXPIRED.into()), None, None),
    }
}

#[derive(Deserialize)]
struct UseForm {
    token: Option<String>,
    csrf: Option<String>,
}

/// What a refused link is told.
const EXPIRED: &str = "That sign-in link has expired or was already used. Ask for a new one below.";

/// A token worth looking up (a minted one is 43 characters).
fn well_formed(token: &str) -> bool {
    !token.is_empty() && token.len() <= 200
}

/// `POST /app/login/link/use`: a valid, unused, unexpired link signs in (and is used up);
/// any other is refused with the sign-in page.
async fn redeem(State(state): Shared, headers: HeaderMap, uri: axum::http::Uri, body: Body) -> Result<Response, PageError> {
    let input: UseForm = form(body)?;
    login_form_is_ours(&state, &headers, input.csrf.as_deref(), "Open the link from your mail again.")?;
    let token = input.token.unwrap_or_default();
    let account = if well_formed(&token) {
        state.engine.redeem_sign_in_link(&token_hash(&token)).await?
    } else {
        None
    };
    match account {
        Some(account) => {
            let version = state.engine.session_version(account).await?.unwrap_or_default();
            let session = state.session_key.issue(account, version, jiff::Timestamp::now(), &random::<16>()?);
            Ok(signed_in_response(&session, &headers, &uri))
        }
        None => login_page_with(&state, &headers, &uri, StatusCode::UNAUTHORIZED, Some(EXPIRED.into()), None, None),
    }
}

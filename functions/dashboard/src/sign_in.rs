//! Signing in to the dashboard and out of it: `GET /app/login` (the form, with a fresh login
//! nonce in a cookie of its own that the form's token must match), `POST /app/login` (the
//! account's API token → a session cookie, and on to the overview) and `POST /app/logout`
//! (every session of the account ends, on the server). The mailed sign-in link (`link.rs`)
//! answers with the pages and the session cookie made here; the session and its tokens are
//! `session.rs`.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jiff::Timestamp;
use serde::Deserialize;

use openloop_edge::http::token_hash;
use openloop_web::Body;

use crate::page::{Layout, layout};
use crate::respond::{CsrfForm, PageError, Shared, check_csrf, form, html, random, see_other, signed_in};
use crate::session::{self, COOKIE, LIFETIME, LOGIN_COOKIE, Session};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/login", get(login_form).post(login))
        .route("/app/logout", post(logout))
}

#[derive(Template)]
#[template(path = "app/login.html")]
pub struct LoginPage {
    pub layout: Layout,
    pub login_csrf: String,
    pub error: Option<String>,
    /// What the sign-in link form did (the same words whatever the address).
    pub notice: Option<&'static str>,
    /// A mailed link being followed: the page asks to confirm with one button (a link opened
    /// by a mail scanner signs no one in and stays usable).
    pub link_token: Option<String>,
    /// The account that link signs in to, named on the confirm page.
    pub link_account: Option<String>,
}

/// The request came over https (directly, or as API Gateway forwards it).
fn is_https(headers: &HeaderMap, uri: &axum::http::Uri) -> bool {
    uri.scheme_str() == Some("https")
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// Whether a browser says the request comes from another site: `Sec-Fetch-Site` other than
/// `same-origin` or `none`, or an `Origin` whose host is not the request's `Host`.
fn cross_site(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("?"));
    let fetch_site_foreign = text("sec-fetch-site").is_some_and(|site| !matches!(site, "same-origin" | "none"));
    let origin_foreign = text("origin").is_some_and(|origin| {
        let host = origin.split_once("://").map_or("", |(_, rest)| rest);
        origin == "null" || text("host").is_none_or(|own| !own.eq_ignore_ascii_case(host))
    });
    fetch_site_foreign || origin_foreign
}

/// `GET /app/login`: the sign-in form; an owner still signed in goes on to the overview.
async fn login_form(State(state): Shared, headers: HeaderMap, uri: axum::http::Uri) -> Result<Response, PageError> {
    if let Some(session) = signed_in(&state, &headers)
        && state.engine.session_version(session.account).await? == Some(session.version)
    {
        return Ok(see_other("/app"));
    }
    login_page(&state, &headers, &uri, StatusCode::OK, None)
}

/// The sign-in form with a fresh login nonce (its cookie and the form's token go together).
fn login_page(
    state: &DashboardState,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
    status: StatusCode,
    error: Option<String>,
) -> Result<Response, PageError> {
    login_page_with(state, headers, uri, status, error, None, None)
}

/// [`login_page`] with a notice (what the sign-in link form did).
pub fn login_page_with(
    state: &DashboardState,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
    status: StatusCode,
    error: Option<String>,
    notice: Option<&'static str>,
    link_token: Option<String>,
) -> Result<Response, PageError> {
    use base64::Engine as _;
    let nonce = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random::<16>()?);
    let page = LoginPage {
        layout: layout("Sign in", "", None, ""),
        login_csrf: state.session_key.login_csrf(&nonce),
        error,
        notice,
        link_token,
        link_account: None,
    };
    login_response(headers, uri, status, page, &nonce)
}

/// The page a mailed link opens: one "Sign in" button, naming the account it signs in to.
pub fn link_confirm_page(
    state: &DashboardState,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
    token: String,
    account: String,
) -> Result<Response, PageError> {
    use base64::Engine as _;
    let nonce = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random::<16>()?);
    let page = LoginPage {
        layout: layout("Sign in", "", None, ""),
        login_csrf: state.session_key.login_csrf(&nonce),
        error: None,
        notice: None,
        link_token: Some(token),
        link_account: Some(account),
    };
    login_response(headers, uri, StatusCode::OK, page, &nonce)
}

/// The sign-in page as built, with its login cookie.
fn login_response(
    headers: &HeaderMap,
    uri: &axum::http::Uri,
    status: StatusCode,
    page: LoginPage,
    nonce: &str,
) -> Result<Response, PageError> {
    let mut response = html(status, &page);
    let cookie = session::set_cookie(LOGIN_COOKIE, nonce, 3600, "/app/login", is_https(headers, uri));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

#[derive(Deserialize)]
struct LoginForm {
    token: Option<String>,
    csrf: Option<String>,
}

/// `POST /app/login`: the account's API token → a session cookie, and on to the overview.
async fn login(State(state): Shared, headers: HeaderMap, uri: axum::http::Uri, body: Body) -> Result<Response, PageError> {
    let input: LoginForm = form(body)?;
    let nonce = session::cookie(&headers, LOGIN_COOKIE).unwrap_or_default();
    // The form's login token, when the form sent one, must match its cookie. Without one
    // (CONTRACT.md's `POST /app/login` with the field `token`, as curl or a script sends
    // it), the request must not come from another site: a browser names the page's origin
    // on every cross-site post, so signing a victim into someone else's account is refused.
    let allowed = match input.csrf.as_deref() {
        Some(csrf) => state.session_key.login_csrf_matches(nonce, csrf),
        None => !cross_site(&headers),
    };
    if !allowed {
        return Err(PageError::new(
            StatusCode::FORBIDDEN,
            "The sign-in form has expired. Open /app/login again.",
        ));
    }
    let token = input.token.unwrap_or_default();
    let token = token.trim();
    // Accounts are found by the token's hash; the token itself is never logged or shown.
    let account = if token.is_empty() {
        None
    } else {
        state.engine.authenticate_owner(&token_hash(token)).await?
    };
    let Some(account) = account else {
        return login_page(
            &state,
            &headers,
            &uri,
            StatusCode::UNAUTHORIZED,
            Some("That token is not valid.".into()),
        );
    };
    let version = state.engine.session_version(account).await?.unwrap_or_default();
    let session = state.session_key.issue(account, version, Timestamp::now(), &random::<16>()?);
    Ok(signed_in_response(&session, &headers, &uri))
}

/// On to the overview with the session's cookie (and the sign-in form's cookie cleared).
pub fn signed_in_response(session: &Session, headers: &HeaderMap, uri: &axum::http::Uri) -> Response {
    let secure = is_https(headers, uri);
    let mut response = see_other("/app");
    for cookie in [
        session::set_cookie(COOKIE, session.cookie_value(), LIFETIME.as_secs(), "/app", secure),
        session::set_cookie(LOGIN_COOKIE, "", 0, "/app/login", secure),
    ] {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

/// `POST /app/logout`: the session ends, and every other of the account with it.
async fn logout(State(state): Shared, headers: HeaderMap, uri: axum::http::Uri, body: Body) -> Result<Response, Response> {
    let session = signed_in(&state, &headers).ok_or_else(|| see_other("/app/login"))?;
    let input: CsrfForm = form(body).map_err(IntoResponse::into_response)?;
    check_csrf(&state, &session, input.csrf.as_deref()).map_err(|e| e.within(&state, &session).into_response())?;
    // Ended on the server: every session of the account issued before stops working.
    state
        .engine
        .end_sessions(session.account)
        .await
        .map_err(|e| PageError::from(e).within(&state, &session).into_response())?;
    let mut response = see_other("/app/login");
    let cookie = session::set_cookie(COOKIE, "", 0, "/app", is_https(&headers, &uri));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

//! How every dashboard handler meets its request and answers it, below all the page modules
//! (they import from here; nothing here knows any one page): [`page`] finds the signed-in
//! owner — no session, or one ended on the server, goes to the sign-in page — and turns an
//! error into its page; [`form`] and [`field`] read a posted form, [`check_csrf`] checks its
//! token, and [`posted`] does all three for a page's forms; the answer is a rendered page
//! ([`html`]), a redirect ([`see_other`]) or the error page ([`PageError`], which keeps a
//! signed-in owner's navigation). The frame and the words pages share are `page.rs`.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jiff::Timestamp;
use serde::Deserialize;

use openloop_core::kernel::ids::TaskId;
use openloop_edge::http::ApiError;
use openloop_web::Body;

use crate::page::{Layout, layout};
use crate::session::{self, COOKIE, Session};
use crate::state::DashboardState;

/// The state as a handler extracts it.
pub type Shared = State<Arc<DashboardState>>;

/// The fields of a posted form, in order (a field may come more than once).
pub type Fields = Vec<(String, String)>;

/// What went wrong, as a page with the API's status for it (404 for another account's task).
pub struct PageError {
    status: StatusCode,
    message: String,
    csrf: Option<String>,
}

impl PageError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            csrf: None,
        }
    }

    /// Keeps the navigation (and sign-out) of a signed-in owner on the error page.
    pub fn within(mut self, state: &DashboardState, session: &Session) -> Self {
        self.csrf = Some(state.session_key.csrf(session));
        self
    }
}

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> Self {
        Self::new(e.status, e.body.error.message)
    }
}

impl From<openloop_core::task::error::EngineError> for PageError {
    fn from(e: openloop_core::task::error::EngineError) -> Self {
        ApiError::from(e).into()
    }
}

#[derive(Template)]
#[template(path = "app/error.html")]
pub struct ErrorPage {
    pub layout: Layout,
    pub status: u16,
    pub message: String,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let page = ErrorPage {
            layout: layout("Error", "", self.csrf, ""),
            status: self.status.as_u16(),
            message: self.message,
        };
        html(self.status, &page)
    }
}

/// Any other path under `/app`: the dashboard's own 404 page, not the API's JSON.
pub async fn no_such_page() -> PageError {
    PageError::new(StatusCode::NOT_FOUND, "There is no such page. The overview is at /app.")
}

/// `303 See Other` to `location`: where every form goes once it has done its work.
pub fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// A page, rendered; one that does not render is a plain 500.
pub fn html(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(body) => (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a dashboard page did not render");
            (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be shown").into_response()
        }
    }
}

/// The signed-in owner, if the request carries a valid, unexpired session.
pub fn signed_in(state: &DashboardState, headers: &HeaderMap) -> Option<Session> {
    session::cookie(headers, COOKIE).and_then(|value| state.session_key.open(value, Timestamp::now()))
}

/// The fields of a posted form; a malformed form is a 400 page.
pub fn form<T: serde::de::DeserializeOwned>(body: Body) -> Result<T, PageError> {
    let body = body.map_err(|e| PageError::from(openloop_edge::http::body_error(e)))?;
    serde_urlencoded::from_bytes(&body).map_err(|_| PageError::new(StatusCode::BAD_REQUEST, "The form was not understood."))
}

/// The first value of a form's field of that name.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A form that carries nothing but the session's CSRF token (a button).
#[derive(Deserialize)]
pub struct CsrfForm {
    pub csrf: Option<String>,
}

/// A state-changing form of this session: its CSRF token must be the session's (403 if not).
pub fn check_csrf(state: &DashboardState, session: &Session, presented: Option<&str>) -> Result<(), PageError> {
    match presented {
        Some(token) if state.session_key.csrf_matches(session, token) => Ok(()),
        _ => Err(PageError::new(
            StatusCode::FORBIDDEN,
            "This form has expired or did not come from this dashboard. Reload the page and try again.",
        )),
    }
}

/// `N` random bytes (a session's id, a login nonce); none available is a 503 page.
pub fn random<const N: usize>() -> Result<[u8; N], PageError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|_| PageError::new(StatusCode::SERVICE_UNAVAILABLE, "No randomness available; try again."))?;
    Ok(bytes)
}

/// Runs a page handler for a signed-in owner: no session → the sign-in page; an error → its
/// page, with the owner's navigation.
pub async fn page<F, Fut>(state: Arc<DashboardState>, headers: &HeaderMap, render: F) -> Response
where
    F: FnOnce(Arc<DashboardState>, Session) -> Fut,
    Fut: Future<Output = Result<Response, PageError>>,
{
    let Some(session) = signed_in(&state, headers) else {
        return see_other("/app/login");
    };
    // Signed out since (on the server): the session's version is no longer the account's.
    match state.engine.session_version(session.account).await {
        Ok(Some(version)) if version == session.version => {}
        Ok(_) => return see_other("/app/login"),
        Err(e) => return PageError::from(e).into_response(),
    }
    openloop_web::access::seen(&state.engine, session.account).await;
    match render(state.clone(), session.clone()).await {
        Ok(response) => response,
        Err(e) => e.within(&state, &session).into_response(),
    }
}

/// Runs an action for a signed-in owner whose form carries the session's CSRF token: the
/// forms of the learning, template and lift pages go through here (a task's actions read
/// theirs as `tasks::ActionForm`).
pub async fn posted<F, Fut>(state: Arc<DashboardState>, headers: &HeaderMap, body: Body, act: F) -> Response
where
    F: FnOnce(Arc<DashboardState>, Session, Fields) -> Fut,
    Fut: Future<Output = Result<Response, PageError>>,
{
    page(state, headers, |state, session| async move {
        let fields: Fields = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        act(state, session, fields).await
    })
    .await
}

/// A task's id from the path; one that does not parse is as absent as another account's.
pub fn task_id(raw: &str) -> Result<TaskId, PageError> {
    raw.parse()
        .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such task."))
}

/// The query of a list page: the next page's cursor, and what the owner just did.
#[derive(Deserialize)]
pub struct ListParams {
    pub cursor: Option<String>,
    pub done: Option<String>,
}

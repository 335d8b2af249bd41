//! The owner's dashboard under `/app`: server-rendered pages over the same engine operations
//! as the JSON API (`functions/api`), in a function of its own. Sign in with the account's API token
//! (`session.rs`); every page is scoped to the session's account, so another account's task is
//! simply not found; every form that changes something carries the session's CSRF token.
//!
//! Pages: `/app` (overview, with charts from `charts.rs`), `/app/review` (the review queue),
//! `/app/escalations`, `/app/tasks/{id}` (one task), `/app/settings`, `/app/members`,
//! `/app/notifications`, and what the owner teaches the agent in `learning.rs`
//! (`/app/memories`, `/app/suggestions`, a task's rating and outcome correction). Actions: `POST /app/tasks/{id}/approve`, `/skip`, `/guidance`,
//! `/resolve`, `/cancel`, `POST /app/review/approve` (several at once), `POST /app/settings`,
//! `/app/settings/pause` and `/resume`, `POST /app/login`, `/app/logout`; the mailed sign-in
//! link, `POST /app/login/link`, `GET /app/login/link?token=` and `POST /app/login/link/use`
//! (`link.rs`).
//! Every response carries a Content-Security-Policy without inline script, and pages are
//! never cached.

pub mod assets;
pub mod charts;
pub mod day;
mod integrations;
pub mod learning;
pub mod learning_views;
pub mod lift;
mod link;
mod notice;
pub mod page;
mod plans;
mod respond;
pub mod session;
mod state;
pub mod templates;
mod triggers;
pub mod views;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jiff::Timestamp;
use serde::Deserialize;

use openloop_core::engine::{Resolution, SettingsPatch};
use openloop_core::kernel::ids::{AccountId, Email, TaskId};
use openloop_core::owner::account::{AgentOverride, ExecutionMode};
use openloop_core::owner::owner_notice::NotificationChannel;
use openloop_core::ports::TaskQuery;
use openloop_core::task::{Draft, TaskStatus};
use openloop_edge::http::token_hash;

use notice::notice;
use openloop_web::Body;
use page::layout;
use respond::{CsrfForm, ListParams, PageError, Shared, check_csrf, field, form, html, page, random, see_other, signed_in, task_id};
use session::{COOKIE, LIFETIME, LOGIN_COOKIE, Session};
pub use state::{DashboardState, session_key, state_from_env};
use views::{LoginPage, OverviewPage, ReviewPage, TaskPage};

/// The dashboard with everything around its routes: the `dashboard` function.
pub fn router(state: Arc<DashboardState>) -> Router {
    openloop_web::layered(routes(state))
}

/// Tasks per page of the review queue.
const REVIEW_PAGE: usize = 20;
/// Notices per page of the notifications feed.
const NOTICES_PAGE: usize = 30;
/// Members per page of the members list.
const MEMBERS_PAGE: usize = 50;
/// The most tasks one "Approve selected" approves.
const MAX_BULK: usize = 50;
/// Entries of the activity feed on the overview.
const FEED_ENTRIES: usize = 15;

/// The dashboard's routes on their state, for a router that serves more than this face (the
/// local runtime's, which adds the API's).
pub fn routes(state: Arc<DashboardState>) -> Router {
    page_routes().with_state(state)
}

fn page_routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app", get(overview))
        .route("/app/", get(|| async { see_other("/app") }))
        .route("/app/login", get(login_form).post(login))
        .route("/app/login/link", get(link::confirm).post(link::request))
        .route("/app/login/link/use", post(link::redeem))
        .route("/app/logout", post(logout))
        .route("/app/review", get(review))
        .route("/app/review/approve", post(approve_selected))
        .route("/app/tasks/{id}", get(task_page))
        .route("/app/tasks/{id}/approve", post(approve))
        .route("/app/tasks/{id}/skip", post(skip))
        .route("/app/tasks/{id}/guidance", post(guidance))
        .route("/app/tasks/{id}/resolve", post(resolve))
        .route("/app/tasks/{id}/cancel", post(cancel))
        .route("/app/escalations", get(escalations))
        .route("/app/settings", get(settings).post(save_settings))
        .route("/app/settings/pause", post(pause))
        .route("/app/settings/resume", post(resume))
        .route("/app/settings/triggers/{id}", post(triggers::switch))
        .route("/app/settings/webhooks", get(integrations::show).post(integrations::add))
        .route("/app/settings/webhooks/{id}/delete", post(integrations::remove))
        .route("/app/settings/api-token/rotate", post(integrations::rotate_api_token))
        .route("/app/settings/webhook-secret/rotate", post(integrations::rotate_webhook_secret))
        .route("/app/members", get(members))
        .route("/app/notifications", get(notifications))
        .route("/app/static/{name}", get(assets::serve))
        .merge(learning::routes())
        .merge(lift::routes())
        .merge(templates::routes())
        .merge(day::routes())
        .merge(plans::routes())
        .route("/app/{*rest}", axum::routing::any(respond::no_such_page))
        .layer(axum::middleware::map_response(openloop_web::pages::protect))
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
fn login_page_with(
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
fn link_confirm_page(
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
fn signed_in_response(session: &Session, headers: &HeaderMap, uri: &axum::http::Uri) -> Response {
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

async fn overview(State(state): Shared, headers: HeaderMap) -> Response {
    page(state, &headers, |state, session| async move {
        let account = session.account;
        // The charts' days end today in the account's time zone; they start DAYS before the
        // UTC date, which is the same local day or the one next to it.
        let today_utc = state.engine.now().to_zoned(jiff::tz::TimeZone::UTC).date();
        let from = (today_utc - jiff::Span::new().days(charts::DAYS)).to_string();
        // What costs does not grow with the tasks stored (the tallies, ranged reads).
        let (overview, activity) = tokio::try_join!(
            state.engine.overview(account, charts::MONTHS, &from),
            state.engine.activity(account, Some(FEED_ENTRIES), None),
        )?;
        let openloop_core::engine::Overview {
            autonomy,
            scorecard,
            revenue_by_month,
            pending_review,
            metrics,
        } = overview;
        let tz = autonomy.account.settings.time_zone();
        let execution_mode = page::code(&autonomy.account.settings.execution_mode);
        let phase = autonomy.phase.as_str();
        let page = OverviewPage {
            layout: layout(
                "Overview",
                "overview",
                Some(state.session_key.csrf(&session)),
                &autonomy.account.name,
            ),
            month: openloop_core::owner::scorecard::month_in_words(&scorecard.month),
            heroes: vec![
                views::Hero {
                    label: "members retained",
                    value: scorecard.members_retained.to_string(),
                    href: None,
                },
                views::Hero {
                    label: "revenue retained",
                    value: page::money(scorecard.revenue_retained),
                    href: None,
                },
                views::Hero {
                    label: "conversations active",
                    value: scorecard.conversations_active.to_string(),
                    href: None,
                },
                views::Hero {
                    label: "need your attention",
                    value: scorecard.needs_attention.to_string(),
                    href: Some("/app/review"),
                },
            ],
            pending_review,
            feed: activity.0.iter().map(|e| views::feed_item(e, &tz)).collect(),
            state: views::AccountState {
                execution_mode_explained: views::execution_mode_explained(&execution_mode),
                execution_mode: page::words(&execution_mode),
                phase,
                phase_explained: page::phase_explained(phase),
                paused: autonomy.account.paused,
                timezone: autonomy.account.settings.timezone.clone(),
            },
            charts: {
                let mut all = charts::overview_charts(&metrics.days);
                all.push(charts::revenue_chart(&revenue_by_month));
                all
            },
            weeks: charts::WEEKS,
            months: charts::MONTHS,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
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
    fn bulk(&self) -> Option<views::BulkResult> {
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
                Some(views::BulkFailure {
                    id: id.to_string(),
                    why: views::bulk_failure_words(code),
                })
            })
            .take(MAX_BULK)
            .collect();
        Some(views::BulkResult { approved, failed })
    }
}

async fn review(State(state): Shared, headers: HeaderMap, Query(params): Query<ReviewParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let query = TaskQuery {
            status: Some(TaskStatus::PendingReview),
            member_id: None,
            limit: REVIEW_PAGE,
            cursor: params.cursor.clone().filter(|c| !c.is_empty()),
        };
        let (account, (tasks, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.list_tasks(session.account, &query),
        )?;
        let tz = account.settings.time_zone();
        let page = ReviewPage {
            layout: layout("Review queue", "review", Some(state.session_key.csrf(&session)), &account.name),
            notice: notice(params.done.as_deref()),
            bulk: params.bulk(),
            cards: tasks.iter().map(|t| views::card(t, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
            paused: account.paused,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

#[derive(Deserialize)]
struct TaskParams {
    done: Option<String>,
}

async fn task_page(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, Query(params): Query<TaskParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let id = task_id(&id)?;
        let (account, history) = tokio::try_join!(state.engine.account(session.account), state.engine.task(session.account, id),)?;
        let tz = account.settings.time_zone();
        let task = &history.task;
        let word = learning::owner_word(&state, session.account, task, &tz).await?;
        let page = TaskPage {
            layout: layout("Task", "task", Some(state.session_key.csrf(&session)), &account.name),
            notice: notice(params.done.as_deref()),
            task: views::summary(task, &tz, state.engine.now()),
            review: (task.status == TaskStatus::PendingReview).then(|| views::card(task, &tz)),
            messages: history.messages.iter().map(|m| views::message_item(m, &tz)).collect(),
            log: history.log.iter().map(|e| views::log_item(e, &tz)).collect(),
            escalation: views::escalation_card(task, &tz),
            word,
            plan: plans::view(task, &tz),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

#[derive(Deserialize)]
struct ActionForm {
    csrf: Option<String>,
    subject: Option<String>,
    body: Option<String>,
    draft_digest: Option<String>,
    /// `review` (default) or `task`: where the owner goes afterwards.
    return_to: Option<String>,
    /// Skip's optional reason, kept on the task's log.
    reason: Option<String>,
    /// Send guidance's words.
    text: Option<String>,
    /// Resolve's outcome and optional note.
    outcome: Option<String>,
    note: Option<String>,
}

impl ActionForm {
    /// The draft the owner approved, if they changed it: browsers send a textarea's line
    /// breaks as `\r\n`, so those are read as the `\n` the page showed.
    fn edited(&self) -> Option<Draft> {
        let subject = self.subject.as_deref()?.replace("\r\n", "\n");
        let body = self.body.as_deref()?.replace("\r\n", "\n");
        let unchanged = self.draft_digest.as_deref() == Some(views::draft_digest(&subject, &body).as_str());
        (!unchanged).then_some(Draft { subject, body })
    }

    fn back_to(&self, id: &TaskId, done: &str) -> String {
        match self.return_to.as_deref() {
            Some("task") => format!("/app/tasks/{id}?done={done}"),
            Some("escalations") => format!("/app/escalations?done={done}"),
            _ => format!("/app/review?done={done}"),
        }
    }
}

/// Runs an action for a signed-in owner whose form carries the session's CSRF token.
async fn action<F, Fut>(state: Arc<DashboardState>, headers: &HeaderMap, body: Body, act: F) -> Response
where
    F: FnOnce(Arc<DashboardState>, AccountId, ActionForm) -> Fut,
    Fut: Future<Output = Result<Response, PageError>>,
{
    page(state, headers, |state, session| async move {
        let input: ActionForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        act(state, session.account, input).await
    })
    .await
}

/// `POST /app/tasks/{id}/approve`: the same operation as `POST /api/v1/tasks/{id}/approve`,
/// with the owner's edit when the draft they sent differs from the one they were shown.
async fn approve(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let edited = input.edited();
        let done = if edited.is_some() { "approved_edited" } else { "approved" };
        state.engine.approve(account, id, edited).await?;
        Ok(see_other(&input.back_to(&id, done)))
    })
    .await
}

/// `POST /app/tasks/{id}/skip`: `pending_review → cancelled`, as the API's skip.
async fn skip(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        state.engine.skip(account, id, input.reason.as_deref()).await?;
        Ok(see_other(&input.back_to(&id, "skipped")))
    })
    .await
}

/// `GET /app/escalations`: the escalated tasks, 20 a page (the status index), each with its
/// escalation context and the forms to answer it.
async fn escalations(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let query = TaskQuery {
            status: Some(TaskStatus::Escalated),
            member_id: None,
            limit: REVIEW_PAGE,
            cursor: params.cursor.filter(|c| !c.is_empty()),
        };
        let (account, (tasks, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.list_tasks(session.account, &query),
        )?;
        let tz = account.settings.time_zone();
        let page = views::EscalationsPage {
            layout: layout("Escalations", "escalations", Some(state.session_key.csrf(&session)), &account.name),
            notice: notice(params.done.as_deref()),
            cards: tasks.iter().filter_map(|t| views::escalation_card(t, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// `POST /app/tasks/{id}/guidance`: the API's guidance — `escalated → executing` with the
/// owner's words; the agent carries them out at the next step.
async fn guidance(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let text = input.text.as_deref().unwrap_or_default().replace("\r\n", "\n");
        state.engine.guidance(account, id, &text).await?;
        Ok(see_other(&input.back_to(&id, "guided")))
    })
    .await
}

/// `POST /app/tasks/{id}/resolve`: the API's resolve — closed with the chosen outcome.
async fn resolve(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        let resolution = Resolution {
            outcome: input.outcome.clone().unwrap_or_default(),
            note: input.note.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned),
        };
        state.engine.resolve(account, id, resolution).await?;
        Ok(see_other(&input.back_to(&id, "resolved")))
    })
    .await
}

/// `POST /app/tasks/{id}/cancel`: the API's cancel.
async fn cancel(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    action(state, &headers, body, |state, account, input| async move {
        let id = task_id(&id)?;
        state.engine.cancel(account, id).await?;
        Ok(see_other(&input.back_to(&id, "cancelled")))
    })
    .await
}

/// `GET /app/settings`: the account's settings as a form, the kill switch, the ramp, and the
/// PushPress connection with its import (what `GET /api/v1/connector` answers).
async fn settings(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (autonomy, connector, book) = tokio::try_join!(
            state.engine.autonomy(session.account),
            state.engine.connector_status(session.account),
            state.engine.trigger_book(session.account),
        )?;
        let tz = autonomy.account.settings.time_zone();
        let page = views::SettingsPage {
            layout: layout(
                "Settings",
                "settings",
                Some(state.session_key.csrf(&session)),
                &autonomy.account.name,
            ),
            notice: notice(params.done.as_deref()),
            s: views::settings_view(&autonomy, &connector, &tz),
            triggers: triggers::rows(&book),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// A whole number from a settings field; an empty field keeps the stored value.
fn number<T: std::str::FromStr>(fields: &[(String, String)], name: &str, label: &str) -> Result<Option<T>, PageError> {
    match field(fields, name).map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("{label} must be a whole number."))),
    }
}

/// The settings form as a patch of `PUT /api/v1/settings`: what the page shows is what is
/// sent; the profile and the agents' instructions keep every part the page does not edit.
fn settings_patch(fields: &[(String, String)], current: &openloop_core::owner::account::Settings) -> Result<SettingsPatch, PageError> {
    let invalid = |message: &str| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, message);
    let execution_mode = match field(fields, "execution_mode") {
        None => None,
        Some("manual") => Some(ExecutionMode::Manual),
        Some("limited_auto") => Some(ExecutionMode::LimitedAuto),
        Some(_) => return Err(invalid("Choose an execution mode from the list.")),
    };
    let owner_notification_channel = match field(fields, "owner_notification_channel") {
        None => None,
        Some("email") => Some(NotificationChannel::Email),
        Some("dashboard_only") => Some(NotificationChannel::DashboardOnly),
        Some("email_and_sms") => Some(NotificationChannel::EmailAndSms),
        Some(_) => return Err(invalid("Choose a notification channel from the list.")),
    };
    let owner_email = match field(fields, "owner_email").map(str::trim).filter(|e| !e.is_empty()) {
        None => None,
        Some(e) => Some(Email::parse(e).map_err(|e| invalid(&e.message))?),
    };
    let mut profile = current.profile.clone();
    for (name, _) in views::PROFILE_FIELDS {
        if let (Some(value), Some(slot)) = (field(fields, name), views::profile_field(&mut profile, name)) {
            let value = value.trim();
            *slot = (!value.is_empty()).then(|| value.to_owned());
        }
    }
    if let Some(lines) = field(fields, "never_mention") {
        profile.never_mention = lines.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
    }
    let mut agent_overrides = current.agent_overrides.clone();
    if let Some(additions) = field(fields, "agent_additions") {
        let additions = additions.replace("\r\n", "\n");
        let additions = additions.trim();
        let every = |o: &AgentOverride| o.agent == views::EVERY_AGENT && o.task_type.is_none();
        match agent_overrides.iter_mut().find(|o| every(o)) {
            Some(o) => o.prompt_additions = (!additions.is_empty()).then(|| additions.to_owned()),
            None if !additions.is_empty() => agent_overrides.push(AgentOverride {
                agent: views::EVERY_AGENT.to_owned(),
                task_type: None,
                prompt_override: None,
                prompt_additions: Some(additions.to_owned()),
            }),
            None => {}
        }
        agent_overrides.retain(|o| !every(o) || o.prompt_override.is_some() || o.prompt_additions.is_some());
    }
    Ok(SettingsPatch {
        execution_mode,
        member_weekly_limit: number(fields, "member_weekly_limit", "Messages a week")?,
        daily_send_limit: number(fields, "daily_send_limit", "Messages a day")?,
        timezone: field(fields, "timezone")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        send_window_start: number(fields, "send_window_start", "Send from")?,
        send_window_end: number(fields, "send_window_end", "Send until")?,
        profile: Some(profile),
        agent_overrides: Some(agent_overrides),
        owner_email,
        owner_notification_channel,
        auto_save_memories: learning::toggle(fields, "auto_save_memories"),
        share_learning: learning::toggle(fields, "share_learning"),
        holdout_percent: number(fields, "holdout_percent", "Members held out")?,
        brief_hour: brief_hour(fields)?,
        quiet_hours: quiet_hours(fields, current)?,
        review_expiry_days: number(fields, "review_expiry_days", "Close undecided reviews after")?,
        ..SettingsPatch::default()
    })
}

/// The brief's hour from the settings form: a number, or empty for no morning mail; a post
/// without the field keeps it.
fn brief_hour(fields: &[(String, String)]) -> Result<Option<Option<u8>>, PageError> {
    match field(fields, "brief_hour").map(str::trim) {
        None => Ok(None),
        Some("") => Ok(Some(None)),
        Some(v) => v.parse::<u8>().map(|h| Some(Some(h))).map_err(|_| {
            PageError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Morning brief at must be an hour, 0-23, or empty for no morning mail.",
            )
        }),
    }
}

/// The quiet hours from the settings form (an empty or missing end keeps the stored one).
fn quiet_hours(
    fields: &[(String, String)],
    current: &openloop_core::owner::account::Settings,
) -> Result<Option<openloop_core::owner::quiet::QuietHours>, PageError> {
    let start: Option<u8> = number(fields, "quiet_start", "Quiet from")?;
    let end: Option<u8> = number(fields, "quiet_end", "Quiet until")?;
    if start.is_none() && end.is_none() {
        return Ok(None);
    }
    Ok(Some(openloop_core::owner::quiet::QuietHours {
        start: start.unwrap_or(current.quiet_hours.start),
        end: end.unwrap_or(current.quiet_hours.end),
    }))
}

/// `POST /app/settings` ("Save"): the same operation as `PUT /api/v1/settings` — all of it
/// is checked and saved, or nothing is.
async fn save_settings(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        let current = state.engine.account(session.account).await?;
        let changed_since = || {
            PageError::new(
                StatusCode::CONFLICT,
                "These settings were changed since this page was opened (in another window or through the API). \
                 Nothing was saved: open Settings again to see them, then make your change.",
            )
        };
        // The page's form posts every field it showed, with the version it showed: saved only
        // over those settings. (A post of a few fields without a version changes only them.)
        let shown: Option<u64> = match field(&fields, "settings_version").map(str::trim) {
            None => None,
            Some(v) => Some(v.parse().map_err(|_| {
                PageError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "The form's version is not a number: open Settings again.",
                )
            })?),
        };
        if shown.is_some_and(|v| v != current.version) {
            return Err(changed_since());
        }
        let patch = SettingsPatch {
            expected_version: shown,
            ..settings_patch(&fields, &current.settings)?
        };
        match state.engine.update_account(session.account, patch).await {
            Err(openloop_core::task::error::EngineError::StaleVersion) => return Err(changed_since()),
            other => other?,
        };
        Ok(see_other("/app/settings?done=saved"))
    })
    .await
}

/// `POST /app/settings/pause` and `/resume`: the owner's kill switch, as
/// `POST /api/v1/pause` and `/api/v1/resume`.
async fn set_paused(state: Arc<DashboardState>, headers: &HeaderMap, body: Body, paused: bool) -> Response {
    page(state, headers, |state, session| async move {
        let input: CsrfForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        state.engine.set_account_paused(session.account, paused, "owner").await?;
        Ok(see_other(if paused {
            "/app/settings?done=paused"
        } else {
            "/app/settings?done=resumed"
        }))
    })
    .await
}

async fn pause(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    set_paused(state, &headers, body, true).await
}

async fn resume(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    set_paused(state, &headers, body, false).await
}

/// `GET /app/members?cursor=`: the account's members, 50 a page (as `GET /api/v1/members`).
async fn members(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, (members, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state
                .engine
                .list_members(session.account, Some(MEMBERS_PAGE), params.cursor.filter(|c| !c.is_empty())),
        )?;
        let tz = account.settings.time_zone();
        let page = views::MembersPage {
            layout: layout("Members", "settings", Some(state.session_key.csrf(&session)), &account.name),
            members: members.iter().map(|m| views::member_row(m, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// `GET /app/notifications?cursor=`: the owner's notices (`GET /api/v1/notifications`),
/// newest first, 30 a page.
async fn notifications(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, (notices, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state
                .engine
                .owner_notices(session.account, Some(NOTICES_PAGE), params.cursor.filter(|c| !c.is_empty())),
        )?;
        let tz = account.settings.time_zone();
        let page = views::NotificationsPage {
            layout: layout(
                "Notifications",
                "notifications",
                Some(state.session_key.csrf(&session)),
                &account.name,
            ),
            notices: notices.iter().map(|n| views::notice_item(n, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
            mailed: account.settings.owner_email.is_some() && account.settings.owner_notification_channel.mails(),
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

//! What the outreach caused, in the dashboard (`GET /app/lift?from=&to=`): the same operation
//! as `GET /api/v1/lift`, per task type the contacted and the held-out members' success rates,
//! the difference with its 95% interval and the verdict, and revenue after outreach beside
//! revenue caused by it; the message experiments with each version's results and the
//! owner's "Keep" and "End" (`POST /app/experiments/{id}/keep | end`), started from an applied
//! suggestion's "Test it on half the new tasks" (`POST /app/suggestions/{id}/experiment`); and
//! the send hours the account's own sends chose, with why.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_core::engine::{ExperimentView, ExperimentsReport, LiftReport};
use openloop_core::learning::lift::{Group, TypeLift};
use openloop_core::owner::experiment::ExperimentStatus;
use openloop_core::owner::send_hours::SendHours;
use openloop_core::task::error::EngineError;
use openloop_core::task::task_type;
use openloop_web::Body;

use crate::page::{Layout, layout, money, when};
use crate::respond::{self, PageError, Shared, html, see_other};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/lift", get(lift))
        .route("/app/suggestions/{id}/experiment", post(start_experiment))
        .route("/app/experiments/{id}/{decision}", post(decide_experiment))
        .route("/app/send-hours/{choice}", post(choose_send_hours))
}

#[derive(Deserialize)]
struct LiftParams {
    from: Option<String>,
    to: Option<String>,
}

#[derive(Template)]
#[template(path = "app/lift.html")]
pub struct LiftPage {
    pub layout: Layout,
    pub from: String,
    pub to: String,
    pub holdout_percent: u8,
    pub rows: Vec<LiftRow>,
    pub revenue_after: String,
    pub revenue_caused: String,
    pub experiments: Vec<ExperimentRow>,
    /// The send hours in force and why.
    pub send_hours: SendHoursView,
    pub csrf: String,
}

/// One experiment's line.
pub struct ExperimentRow {
    pub id: String,
    pub title: String,
    pub status: &'static str,
    pub types: String,
    pub current: String,
    pub proposed: String,
    pub difference: String,
    pub interval: String,
    pub verdict: String,
    pub started: String,
    pub ends: String,
    /// Still splitting: the owner may keep or end it.
    pub open: bool,
}

/// The send hours as the page says them.
pub struct SendHoursView {
    pub first_touch: String,
    pub follow_up: String,
    /// From the account's own sends (else the usual hours).
    pub learned: bool,
    pub why: String,
    /// Whether touches go at the learned hours now, and why, in words.
    pub in_use: bool,
    pub state: &'static str,
    /// The owner chose (yes or no): "Let the agent decide" is offered.
    pub chosen: bool,
}

/// One task type's line.
pub struct LiftRow {
    pub task_type: String,
    pub label: &'static str,
    pub contacted: String,
    pub held_out: String,
    pub difference: String,
    pub interval: String,
    pub verdict: String,
    /// "members whose task opened 2026-06-04 to 2026-11-18, each followed for 14 days".
    pub window: String,
    /// "Still in their window: 12 contacted, 3 held out (counted once it has passed)", or empty.
    pub waiting: String,
    /// "2 held-out members got a message another way (still counted as held out)", or empty.
    pub crossed: String,
    /// "across N gyms like yours, …", or empty.
    pub pooled: String,
}

fn group(g: &Group) -> String {
    match g.rate {
        Some(rate) => format!("{} of {} ({:.1}%)", g.succeeded, g.n, rate * 100.0),
        None => "none yet".to_owned(),
    }
}

fn points(v: f64) -> String {
    format!("{:+.1} points", v * 100.0)
}

fn row(l: &TypeLift) -> LiftRow {
    LiftRow {
        label: task_type::lookup(&l.task_type).map_or("", |d| d.label),
        task_type: l.task_type.clone(),
        contacted: group(&l.contacted),
        held_out: group(&l.held_out),
        difference: l.difference.map_or_else(|| "—".to_owned(), points),
        interval: l
            .ci95
            .map_or_else(|| "—".to_owned(), |[low, high]| format!("{} to {}", points(low), points(high))),
        verdict: l.verdict.clone(),
        window: {
            let days = openloop_core::kernel::plural::count(l.window_days, "day", "days");
            match (l.cohort.from, l.cohort.to) {
                (Some(from), Some(to)) => format!("members whose task opened {from} to {to}, each followed for {days}"),
                _ => format!("each member followed for {days}: nobody's time has passed yet"),
            }
        },
        waiting: match (l.still_in_window.contacted, l.still_in_window.held_out) {
            (0, 0) => String::new(),
            (c, h) => format!("Still in their window: {c} contacted, {h} held out (counted once it has passed)."),
        },
        crossed: match l.crossed_over {
            0 => String::new(),
            1 => "1 held-out member got a message another way (still counted as held out).".to_owned(),
            n => format!("{n} held-out members got a message another way (still counted as held out)."),
        },
        pooled: l.pooled.as_ref().map_or_else(String::new, |p| {
            let mut s = p.summary.clone();
            if let Some(first) = s.get(..1) {
                s = first.to_uppercase() + &s[1..];
            }
            format!("{s} ({}).", p.month)
        }),
    }
}

fn count(v: &openloop_core::learning::experiment::VariantCount) -> String {
    match v.rate {
        Some(rate) => format!("{} of {} ({:.1}%)", v.succeeded, v.n, rate * 100.0),
        None => "none yet".to_owned(),
    }
}

fn experiment_row(e: &ExperimentView, tz: &jiff::tz::TimeZone) -> ExperimentRow {
    let variant = |name: &str| {
        e.variants
            .iter()
            .find(|v| v.name == name)
            .map_or_else(|| "none yet".to_owned(), count)
    };
    ExperimentRow {
        id: e.id.to_string(),
        title: e.title.clone(),
        status: match e.status {
            ExperimentStatus::Running => "running",
            ExperimentStatus::Won => "won: keep it?",
            ExperimentStatus::Kept if e.auto_kept => "kept (on its own, by your settings)",
            ExperimentStatus::Kept => "kept",
            ExperimentStatus::Ended => "ended",
        },
        types: e
            .task_types
            .iter()
            .map(|t| task_type::lookup(t).map_or(t.as_str(), |d| d.label))
            .collect::<Vec<_>>()
            .join(", "),
        current: variant("current"),
        proposed: variant("proposed"),
        difference: e.difference.map_or_else(|| "—".to_owned(), points),
        interval: e
            .ci95
            .map_or_else(|| "—".to_owned(), |[low, high]| format!("{} to {}", points(low), points(high))),
        verdict: e.verdict.clone(),
        started: when(e.started_at, tz),
        ends: when(e.ends_at, tz),
        open: e.status.splits(),
    }
}

fn send_hours_view(settings: &openloop_core::owner::account::Settings) -> SendHoursView {
    let hours = settings.send_hours.as_ref();
    let in_use = settings
        .learned_send_hours()
        .is_some_and(|h| h.first_touch.is_some() || h.follow_up.is_some());
    let state = match (settings.use_learned_send_hours, settings.auto_save_memories) {
        (Some(true), _) => "In use: you chose them.",
        (Some(false), _) => "Not in use: you keep the usual hours.",
        (None, true) => "In use: you let the agent save what it learns (Settings, Learning).",
        (None, false) => "Not in use until you say so: the agent does not change when your members hear from you on its own.",
    };
    let view = send_hours_of(hours);
    SendHoursView {
        in_use,
        state,
        chosen: settings.use_learned_send_hours.is_some(),
        ..view
    }
}

fn send_hours_of(hours: Option<&SendHours>) -> SendHoursView {
    let span = |[from, to]: [i8; 2]| format!("{from}:00-{to}:00");
    let usual = |(from, to): (i8, i8)| span([from, to]);
    let (first, follow) = (
        openloop_core::kernel::limits::FIRST_TOUCH_HOURS,
        openloop_core::kernel::limits::FOLLOW_UP_HOURS,
    );
    match hours {
        Some(h) if h.first_touch.is_some() => SendHoursView {
            first_touch: h.first_touch.map_or_else(|| usual(first), span),
            follow_up: h.follow_up.map_or_else(|| usual(follow), span),
            learned: true,
            why: h.why.clone(),
            in_use: false,
            state: "",
            chosen: false,
        },
        other => SendHoursView {
            first_touch: usual(first),
            follow_up: usual(follow),
            learned: false,
            why: other.map_or_else(
                || "The usual hours, until the account has sent enough messages to choose its own.".to_owned(),
                |h| h.why.clone(),
            ),
            in_use: false,
            state: "",
            chosen: false,
        },
    }
}

pub fn page(
    report: &LiftReport,
    experiments: &ExperimentsReport,
    account: &openloop_core::owner::account::Account,
    csrf: String,
    layout: Layout,
) -> LiftPage {
    let tz = account.settings.time_zone();
    LiftPage {
        experiments: experiments.experiments.iter().map(|e| experiment_row(e, &tz)).collect(),
        send_hours: send_hours_view(&account.settings),
        csrf,
        layout,
        from: report.from.to_string(),
        to: report.to.to_string(),
        holdout_percent: report.holdout_percent,
        rows: report.groups.iter().map(row).collect(),
        revenue_after: money(report.revenue_after_outreach),
        revenue_caused: money(report.revenue_caused),
    }
}

async fn lift(State(state): Shared, headers: HeaderMap, Query(params): Query<LiftParams>) -> Response {
    respond::page(state, &headers, |state, session| async move {
        let from = params.from.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let to = params.to.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let (account, report, experiments) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.lift(session.account, from, to, None),
            state.engine.experiments(session.account),
        )
        .map_err(|e| match e {
            EngineError::Invalid(e) => PageError::new(StatusCode::UNPROCESSABLE_ENTITY, e.message),
            other => other.into(),
        })?;
        let csrf = state.session_key.csrf(&session);
        let frame = layout("Lift", "lift", Some(csrf.clone()), &account.name);
        Ok(html(StatusCode::OK, &page(&report, &experiments, &account, csrf, frame)))
    })
    .await
}

/// Runs an action for a signed-in owner whose form carries the session's CSRF token (the
/// dashboard's one form check, `respond::posted`), with the owner's account.
async fn posted<F, Fut>(state: Shared, headers: &HeaderMap, body: Body, act: F) -> Response
where
    F: FnOnce(std::sync::Arc<crate::state::DashboardState>, openloop_core::kernel::ids::AccountId) -> Fut,
    Fut: Future<Output = Result<Response, PageError>>,
{
    let State(state) = state;
    respond::posted(state, headers, body, |state, session, _| act(state, session.account)).await
}

/// `POST /app/suggestions/{id}/experiment` ("Test it on half the new tasks"): the API's
/// `POST /api/v1/suggestions/{id}/experiment`; 303 to the experiments.
async fn start_experiment(state: Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, account| async move {
        let id: ulid::Ulid = id
            .parse()
            .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such suggestion."))?;
        state.engine.start_experiment(account, id).await?;
        Ok(see_other("/app/lift?done=experiment_started#experiments"))
    })
    .await
}

/// `POST /app/experiments/{id}/keep` ("Keep it") and `/end` ("End it"); 303 back.
/// `POST /app/send-hours/{choice}`: the learned send hours used (`use`), the usual ones kept
/// (`usual`), or left to the trust setting (`auto`), as `PUT /api/v1/settings`'s
/// `use_learned_send_hours`.
async fn choose_send_hours(state: Shared, headers: HeaderMap, Path(choice): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, account| async move {
        let value = match choice.as_str() {
            "use" => serde_json::json!(true),
            "usual" => serde_json::json!(false),
            "auto" => serde_json::Value::Null,
            _ => return Err(PageError::new(StatusCode::NOT_FOUND, "There is no such page.")),
        };
        let patch = serde_json::from_value(serde_json::json!({ "use_learned_send_hours": value }))
            .map_err(|e| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
        state.engine.update_settings(account, patch).await?;
        Ok(see_other("/app/lift#send-hours"))
    })
    .await
}

async fn decide_experiment(state: Shared, headers: HeaderMap, Path((id, decision)): Path<(String, String)>, body: Body) -> Response {
    posted(state, &headers, body, |state, account| async move {
        let id: ulid::Ulid = id
            .parse()
            .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such experiment."))?;
        let done = match decision.as_str() {
            "keep" => state.engine.keep_experiment(account, id).await.map(|_| "experiment_kept"),
            "end" => state.engine.end_experiment(account, id).await.map(|_| "experiment_ended"),
            _ => return Err(PageError::new(StatusCode::NOT_FOUND, "There is no such page.")),
        }?;
        Ok(see_other(&format!("/app/lift?done={done}#experiments")))
    })
    .await
}

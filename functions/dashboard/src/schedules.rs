//! The owner's schedules (recurring templates) on the dashboard (`/app/schedules`, linked from
//! the settings page): each in words — what it opens, for whom, when it runs (its cron read in
//! the gym's time zone) and when next — with Pause / Resume, Run now, its notify policy and
//! its latest runs. Each control is the engine's own operation, as `POST
//! /api/v1/recurring/{id}/pause`, `…/resume`, `…/run-now` and `PUT /api/v1/recurring/{id}`
//! are: the same rules (a run now within its instance cap, one that found its task still open
//! counted nothing) and the same refusals, said in words over the page.
//!
//! Routes: `GET /app/schedules`, `POST /app/schedules/{id}/pause`, `…/resume`, `…/run-now`,
//! `…/notify` (`notify` = `always` | `on_change` | `on_win` | `never`).

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::tz::TimeZone;

use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::recurring::{RecurringTemplate, TemplateRun};
use openloop_core::owner::trigger::Notify;
use openloop_core::task::error::EngineError;
use openloop_web::Body;

use crate::page::{Layout, layout, type_label, when};
use crate::respond::{PageError, Shared, field, html, page, posted, see_other};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/schedules", get(list))
        .route("/app/schedules/{id}/pause", post(pause))
        .route("/app/schedules/{id}/resume", post(resume))
        .route("/app/schedules/{id}/run-now", post(run_now))
        .route("/app/schedules/{id}/notify", post(notify))
}

/// The runs a schedule's card lists, newest first.
const RUNS_SHOWN: usize = 5;

#[derive(Template)]
#[template(path = "app/schedules.html")]
pub struct SchedulesPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    /// Why the owner's last press was refused, over the schedule it was for.
    pub error: Option<(String, String)>,
    pub schedules: Vec<Schedule>,
    pub policies: Vec<(&'static str, &'static str)>,
    pub tz: String,
}

/// One schedule as the owner reads it.
pub struct Schedule {
    pub id: String,
    pub what: String,
    /// The goal each task it opens is given.
    pub goal: String,
    pub when: String,
    /// When it runs next, or why it does not.
    pub next: String,
    pub made: String,
    pub paused: bool,
    /// It may still make tasks: Run now is offered.
    pub live: bool,
    pub notify: &'static str,
    pub runs: Vec<Run>,
}

/// One run, in words.
pub struct Run {
    pub at: String,
    pub by: &'static str,
    pub what: String,
    pub task: Option<String>,
    pub told: &'static str,
}

/// Every notify policy, as the form offers it.
fn policies() -> Vec<(&'static str, &'static str)> {
    vec![
        ("always", "after every run, and when a task it opened succeeds"),
        ("on_change", "when a run differs from the last one"),
        ("on_win", "only when a task it opened succeeds"),
        ("never", "never"),
    ]
}

fn policy_code(notify: Notify) -> &'static str {
    match notify {
        Notify::Always => "always",
        Notify::OnChange => "on_change",
        Notify::OnWin => "on_win",
        Notify::Never => "never",
    }
}

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// A day-of-week field's one value (0–7 or a name) as its day's name.
fn day_name(field: &str) -> Option<&'static str> {
    let lower = field.to_ascii_lowercase();
    let index = match lower.parse::<usize>() {
        Ok(n) if n <= 7 => n % 7,
        Ok(_) => return None,
        Err(_) => DAYS.iter().position(|d| d[..3].eq_ignore_ascii_case(&lower))?,
    };
    DAYS.get(index).copied()
}

fn ordinal(day: u32) -> String {
    let suffix = match (day % 10, day % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{day}{suffix}")
}

/// When a five-field cron runs, in words, for the common shapes (every day, some weekdays, a
/// day of the month, every hour); any other reads "on its own schedule", and the next run
/// beside it says when.
pub fn cron_words(cron: &str) -> String {
    let fields: Vec<&str> = cron.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = fields[..] else {
        return "on its own schedule".into();
    };
    let Ok(minute) = minute.parse::<u32>() else {
        return "on its own schedule".into();
    };
    let at = match hour.parse::<u32>() {
        Ok(h) if h < 24 => format!("at {h:02}:{minute:02}"),
        _ if hour == "*" => return format!("every hour at {minute} past the hour"),
        _ => return "on its own schedule".into(),
    };
    if month != "*" {
        return "on its own schedule".into();
    }
    match (dom, dow) {
        ("*", "*") => format!("every day {at}"),
        ("*", days) => {
            let lower = days.to_ascii_lowercase();
            if lower == "1-5" || lower == "mon-fri" {
                return format!("every weekday (Monday to Friday) {at}");
            }
            let names: Option<Vec<&str>> = days.split(',').map(day_name).collect();
            match names.as_deref() {
                Some([one]) => format!("every {one} {at}"),
                Some([init @ .., last]) if !init.is_empty() => format!("every {} and {last} {at}", init.join(", ")),
                _ => "on its own schedule".into(),
            }
        }
        (day, "*") => match day.parse::<u32>() {
            Ok(d) if (1..=31).contains(&d) => format!("on the {} of every month {at}", ordinal(d)),
            _ => "on its own schedule".into(),
        },
        _ => "on its own schedule".into(),
    }
}

/// A run as the owner reads it.
fn run_words(run: &TemplateRun, tz: &TimeZone) -> Run {
    let what = match (run.found, run.opened, run.skipped.as_deref()) {
        (_, _, Some(_)) => "Skipped: the member has asked not to hear from the gym".to_owned(),
        (0, _, _) => "Opened nothing: the task could not be made then (a limit, or the member is gone)".to_owned(),
        (_, 0, _) => "Found its task still open: nothing new, and it counted nothing".to_owned(),
        (_, 1, _) => "Opened a task".to_owned(),
        (_, n, _) => format!("Opened {n} tasks"),
    };
    Run {
        at: when(run.at, tz),
        by: if run.by == "run_now" { "you, with Run now" } else { "its schedule" },
        what,
        task: run.task_id.map(|t| format!("/app/tasks/{t}")),
        told: if run.notified.is_some() { "you were told" } else { "not told" },
    }
}

async fn schedule(state: &DashboardState, account: AccountId, t: RecurringTemplate, tz: &TimeZone) -> Schedule {
    let whom = if t.member_id.as_str() == openloop_core::owner::recurring::ACCOUNT_WIDE_MEMBER {
        "for the whole gym".to_owned()
    } else {
        match state.engine.member_detail(account, &t.member_id).await {
            Ok(detail) => format!("for {}", detail.member.name.unwrap_or_else(|| "a member without a name".into())),
            Err(_) => "for a member no longer on file".to_owned(),
        }
    };
    let exhausted = t.instances_created >= t.max_instances || !t.enabled;
    let next = match (t.paused, exhausted, t.next_at) {
        (_, true, _) if t.max_instances == 1 => "Done: it made the one task it may make.".to_owned(),
        (_, true, _) => format!("Done: it made all the {} tasks it may make.", t.max_instances),
        (true, _, _) => "Paused: it runs again once you resume it.".to_owned(),
        (false, false, Some(at)) => format!("Next run {}.", when(at, tz)),
        (false, false, None) => "No run ahead.".to_owned(),
    };
    let runs: Vec<Run> = t.runs.iter().rev().take(RUNS_SHOWN).map(|r| run_words(r, tz)).collect();
    let every = if t.backoff.every > 1 {
        format!(
            " (it found nothing for a while, so it runs on every {} of these for now)",
            ordinal(t.backoff.every)
        )
    } else {
        String::new()
    };
    Schedule {
        id: t.id.to_string(),
        what: format!("{} {whom}", type_label(&t.task_type)),
        goal: t.goal.clone(),
        when: format!("Runs {}{every}.", cron_words(&t.cron)),
        next,
        made: format!("{} of {} tasks made.", t.instances_created, t.max_instances),
        paused: t.paused,
        live: !exhausted,
        notify: policy_code(t.notify),
        runs,
    }
}

async fn render(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Option<&'static str>,
    error: Option<(String, String)>,
) -> Result<Response, PageError> {
    let (account, templates) = tokio::try_join!(state.engine.account(session.account), state.engine.list_templates(session.account))?;
    let tz = account.settings.time_zone();
    let mut schedules = Vec::with_capacity(templates.len());
    for t in templates {
        schedules.push(schedule(state, session.account, t, &tz).await);
    }
    let page = SchedulesPage {
        layout: layout("Schedules", "settings", Some(state.session_key.csrf(session)), &account.name),
        notice,
        error,
        schedules,
        policies: policies(),
        tz: tz.iana_name().unwrap_or("UTC").to_owned(),
    };
    Ok(html(status, &page))
}

#[derive(serde::Deserialize)]
struct Params {
    done: Option<String>,
}

/// What the owner just did, said back (only these fixed words reach the page).
fn done_words(done: Option<&str>) -> Option<&'static str> {
    match done? {
        "paused" => Some("Paused: it opens nothing until you resume it."),
        "resumed" => Some("Resumed: it runs again at its next time (missed runs are not made up)."),
        "ran" => Some("Run now: it opened a task."),
        "ran_open" => Some("Run now: its task was still open, so nothing new was opened and nothing was counted."),
        "ran_skipped" => Some("Run now: the member has asked not to hear from the gym, so nothing was opened."),
        "ran_nothing" => Some("Run now: the task could not be made now (a limit, or the member is gone); nothing was counted."),
        "notify" => Some("Saved: you hear of its runs as you chose."),
        _ => None,
    }
}

/// `GET /app/schedules`.
async fn list(State(state): Shared, headers: HeaderMap, Query(params): Query<Params>) -> Response {
    page(state, &headers, |state, session| async move {
        render(&state, &session, StatusCode::OK, done_words(params.done.as_deref()), None).await
    })
    .await
}

/// A schedule's id from the path; one that does not parse is as absent as another account's.
fn schedule_id(raw: &str) -> Result<ulid::Ulid, PageError> {
    raw.parse()
        .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such schedule."))
}

/// An operation's refusal in words over the page (422/409/429), or the error page.
async fn refused(state: &DashboardState, session: &Session, id: &str, e: EngineError) -> Result<Response, PageError> {
    let words = match &e {
        EngineError::Invalid(invalid) if invalid.code == "template_exhausted" => {
            "Not run: it has made all the tasks it may make. Make a new schedule to go on.".to_owned()
        }
        EngineError::Limited(_) => "Not run: a limit on how many tasks open at once was reached; try again later.".to_owned(),
        EngineError::StaleVersion => "It changed while you pressed; look again and press once more.".to_owned(),
        EngineError::NotFound { .. } => return Err(PageError::new(StatusCode::NOT_FOUND, "There is no such schedule.")),
        _ => return Err(e.into()),
    };
    let status = openloop_edge::http::ApiError::from(e).status;
    render(state, session, status, None, Some((id.to_owned(), words))).await
}

/// `POST /app/schedules/{id}/pause`: as `POST /api/v1/recurring/{id}/pause`.
async fn pause(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        match state.engine.pause_template(session.account, schedule_id(&id)?).await {
            Ok(_) => Ok(see_other(&format!("/app/schedules?done=paused#s-{id}"))),
            Err(e) => refused(&state, &session, &id, e).await,
        }
    })
    .await
}

/// `POST /app/schedules/{id}/resume`: as `POST /api/v1/recurring/{id}/resume`.
async fn resume(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        match state.engine.resume_template(session.account, schedule_id(&id)?).await {
            Ok(_) => Ok(see_other(&format!("/app/schedules?done=resumed#s-{id}"))),
            Err(e) => refused(&state, &session, &id, e).await,
        }
    })
    .await
}

/// `POST /app/schedules/{id}/run-now`: as `POST /api/v1/recurring/{id}/run-now`; the page
/// says what the run did.
async fn run_now(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        match state.engine.run_template_now(session.account, schedule_id(&id)?).await {
            Ok(t) => {
                let done = match t.runs.last() {
                    Some(r) if r.skipped.is_some() => "ran_skipped",
                    Some(r) if r.found == 0 => "ran_nothing",
                    Some(r) if r.opened == 0 => "ran_open",
                    _ => "ran",
                };
                Ok(see_other(&format!("/app/schedules?done={done}#s-{id}")))
            }
            Err(e) => refused(&state, &session, &id, e).await,
        }
    })
    .await
}

/// `POST /app/schedules/{id}/notify` (`notify`): as `PUT /api/v1/recurring/{id}`.
async fn notify(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let notify: Notify = serde_json::from_value(serde_json::json!(field(&fields, "notify").unwrap_or_default()))
            .map_err(|_| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, "Choose when you hear of its runs from the list."))?;
        match state.engine.set_template_notify(session.account, schedule_id(&id)?, notify).await {
            Ok(_) => Ok(see_other(&format!("/app/schedules?done=notify#s-{id}"))),
            Err(e) => refused(&state, &session, &id, e).await,
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_in_words() {
        assert_eq!(cron_words("0 8 * * 1"), "every Monday at 08:00");
        assert_eq!(cron_words("30 7 * * mon,thu"), "every Monday and Thursday at 07:30");
        assert_eq!(cron_words("0 9 * * 1-5"), "every weekday (Monday to Friday) at 09:00");
        assert_eq!(cron_words("0 6 1 * *"), "on the 1st of every month at 06:00");
        assert_eq!(cron_words("15 * * * *"), "every hour at 15 past the hour");
        assert_eq!(cron_words("0 18 * * *"), "every day at 18:00");
        assert_eq!(cron_words("0 8 1 6 *"), "on its own schedule");
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(12), "12th");
    }
}

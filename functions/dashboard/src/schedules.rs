//! The owner's schedules (recurring templates) on the dashboard (`/app/schedules`, linked from
//! the settings page): each in words — what it opens, for whom, when it runs (its cron read in
//! the gym's time zone) and when next — with Pause / Resume, Run now, its notify policy and
//! its latest runs. Each control is the engine's own operation, as `POST
//! /api/v1/recurring/{id}/pause`, `…/resume`, `…/run-now` and `PUT /api/v1/recurring/{id}`
//! are: the same rules (a run now within its instance cap, one that found its task still open
//! counted nothing) and the same refusals, said in words over the page. "New schedule" makes
//! one (`POST /app/schedules`, as `POST /api/v1/recurring`): what it opens, for whom, its
//! goal, and when — every day, every weekday, every week on a day or every month on a day, at
//! an hour of the gym's time zone — turned into the cron the API takes. "Remove" asks first
//! (`/app/schedules?remove={id}`), then deletes it (`POST /app/schedules/{id}/delete`, as
//! `DELETE /api/v1/recurring/{id}`).
//!
//! Routes: `GET /app/schedules`, `POST /app/schedules`, `POST /app/schedules/{id}/pause`,
//! `…/resume`, `…/run-now`, `…/notify` (`notify` = `always` | `on_change` | `on_win` | `never`),
//! `…/delete`.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::tz::TimeZone;

use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::recurring::{NewTemplate, RecurringTemplate, TemplateRun};
use openloop_core::owner::trigger::Notify;
use openloop_core::task::error::EngineError;
use openloop_web::Body;

use crate::page::{Layout, layout, type_label, when};
use crate::respond::{Fields, PageError, Shared, field, html, page, posted, see_other};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/schedules", get(list).post(create))
        .route("/app/schedules/{id}/delete", post(delete))
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
    /// The schedule whose Remove was pressed: its card asks to confirm.
    pub removing: Option<String>,
    /// The "New schedule" form: its choices and values.
    pub new: NewForm,
}

/// The "New schedule" form: what it may open, for whom, and when, with the values shown (the
/// defaults, or what the owner posted when it was refused).
pub struct NewForm {
    /// Every task type, as (type, its label).
    pub types: Vec<(String, String)>,
    /// The whole gym (`""`) and each member, as (id, name).
    pub members: Vec<(String, String)>,
    pub days: Vec<(String, &'static str)>,
    pub hours: Vec<(String, String)>,
    pub task_type: String,
    pub member: String,
    pub goal: String,
    /// `day` | `weekdays` | `week` | `month`.
    pub every: String,
    pub weekday: String,
    pub day: String,
    pub hour: String,
    pub max_instances: String,
    pub notify: String,
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

/// What the page shows besides its schedules: a notice, a refusal over the schedule (or the new
/// form, `"new"`) it was for, a Remove to confirm, the new form's values.
#[derive(Default)]
struct Shown {
    notice: Option<&'static str>,
    error: Option<(String, String)>,
    removing: Option<String>,
    posted: Option<Fields>,
}

async fn render(state: &DashboardState, session: &Session, status: StatusCode, shown: Shown) -> Result<Response, PageError> {
    let Shown {
        notice,
        error,
        removing,
        posted,
    } = shown;
    let (account, templates, (members, _)) = tokio::try_join!(
        state.engine.account(session.account),
        state.engine.list_templates(session.account),
        state.engine.list_members(session.account, Some(MEMBERS_OFFERED), None),
    )?;
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
        removing,
        new: new_form(&members, posted.as_deref()),
    };
    Ok(html(status, &page))
}

#[derive(serde::Deserialize)]
struct Params {
    done: Option<String>,
    /// A schedule whose Remove was pressed, to confirm.
    remove: Option<String>,
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
        "made" => Some("Schedule made: it runs at the time below."),
        "removed" => Some("Schedule removed: it opens nothing more. The tasks it opened stay as they are."),
        _ => None,
    }
}

/// `GET /app/schedules`.
async fn list(State(state): Shared, headers: HeaderMap, Query(params): Query<Params>) -> Response {
    page(state, &headers, |state, session| async move {
        let shown = Shown {
            notice: done_words(params.done.as_deref()),
            removing: params.remove.filter(|r| !r.is_empty()),
            ..Shown::default()
        };
        render(&state, &session, StatusCode::OK, shown).await
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
    let shown = Shown {
        error: Some((id.to_owned(), words)),
        ..Shown::default()
    };
    render(state, session, status, shown).await
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

/// The members the new form offers by name (the API's largest page of them).
const MEMBERS_OFFERED: usize = 200;

/// The new form's values: `posted`'s, or the defaults (a weekly Monday at 08:00, told on a
/// change).
fn new_form(members: &[openloop_core::engine::MemberView], posted: Option<&[(String, String)]>) -> NewForm {
    let value = |name: &str, default: &str| {
        posted
            .and_then(|fields| field(fields, name))
            .map_or_else(|| default.to_owned(), |v| v.trim().to_owned())
    };
    let mut types: Vec<(String, String)> = openloop_core::task::task_type::REGISTRY
        .iter()
        .map(|t| (t.key.to_owned(), t.label.to_owned()))
        .collect();
    types.sort_by(|a, b| a.1.cmp(&b.1));
    let mut whom: Vec<(String, String)> = members
        .iter()
        .map(|m| {
            let name = m
                .name
                .clone()
                .or_else(|| m.email.as_ref().map(ToString::to_string))
                .unwrap_or_else(|| "A member without a name".into());
            (m.id.as_str().to_owned(), name)
        })
        .collect();
    whom.sort_by(|a, b| a.1.cmp(&b.1));
    whom.insert(0, (String::new(), "The whole gym (a to-do or a report for you)".into()));
    NewForm {
        types,
        members: whom,
        days: (1..=7).map(|d| ((d % 7).to_string(), DAYS[d % 7])).collect(),
        hours: (0..24).map(|h| (h.to_string(), format!("{h:02}:00"))).collect(),
        task_type: value("task_type", "monthly_churn_analysis"),
        member: value("member_id", ""),
        goal: value("goal", ""),
        every: value("every", "week"),
        weekday: value("weekday", "1"),
        day: value("day", "1"),
        hour: value("hour", "8"),
        max_instances: value("max_instances", ""),
        notify: value("notify", "on_change"),
    }
}

/// When the new form says it runs, as the five-field cron `POST /api/v1/recurring` takes (read
/// in the gym's time zone), or what is wrong, in words.
fn cron_of(fields: &[(String, String)]) -> Result<String, &'static str> {
    let number = |name: &str, range: std::ops::RangeInclusive<u32>| {
        field(fields, name)
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|n| range.contains(n))
    };
    let hour = number("hour", 0..=23).ok_or("Choose the hour from the list.")?;
    Ok(match field(fields, "every").unwrap_or_default() {
        "day" => format!("0 {hour} * * *"),
        "weekdays" => format!("0 {hour} * * 1-5"),
        "week" => format!(
            "0 {hour} * * {}",
            number("weekday", 0..=6).ok_or("Choose the day of the week from the list.")?
        ),
        "month" => format!(
            "0 {hour} {} * *",
            number("day", 1..=28).ok_or("The day of the month is 1 to 28, so that every month has it.")?
        ),
        _ => return Err("Choose how often it runs from the list."),
    })
}

/// The new form as `POST /api/v1/recurring`'s body, or what is wrong, in words.
fn new_template(fields: &[(String, String)]) -> Result<NewTemplate, String> {
    let get = |name: &str| field(fields, name).map(str::trim).filter(|v| !v.is_empty());
    let max_instances = match get("max_instances") {
        None => None,
        Some(v) => Some(
            v.parse::<u32>()
                .map_err(|_| "How many tasks it may make must be a whole number.".to_owned())?,
        ),
    };
    let notify = get("notify").unwrap_or("on_change");
    if !policies().iter().any(|(code, _)| *code == notify) {
        return Err("Choose from the list when you hear of its runs.".into());
    }
    let body = serde_json::json!({
        "task_type": get("task_type").unwrap_or_default(),
        "cron": cron_of(fields)?,
        "goal": get("goal"),
        "member_id": get("member_id"),
        "max_instances": max_instances,
        "notify": notify,
    });
    serde_json::from_value(body).map_err(|_| {
        "Choose what it opens and for whom from the lists, and keep the goal to one line of at most 2000 characters.".to_owned()
    })
}

/// A refusal of `create_template` in the owner's words; `None`: not one the form can say.
fn create_refusal(e: &EngineError, task_type: &str) -> Option<String> {
    let EngineError::Invalid(invalid) = e else {
        return None;
    };
    Some(match invalid.code.as_str() {
        "invalid_task_type" => "Choose what it opens from the list.".into(),
        "missing_member_id" => format!("{} writes to a member: choose the member it is for.", type_label(task_type)),
        "invalid_max_instances" => format!("It may make 1 to {} tasks.", openloop_core::owner::recurring::MAX_INSTANCES_CAP),
        "invalid_goal" => "The goal is at most 2000 characters.".into(),
        "invalid_cron" => "That time cannot be a schedule: choose it from the lists.".into(),
        "reserved_member_id" | "invalid_member_id" => "Choose the member it is for from the list.".into(),
        "too_many_templates" => format!(
            "You have {} schedules, the most an account keeps: remove one first.",
            openloop_core::kernel::limits::MAX_RECURRING_TEMPLATES
        ),
        _ => invalid.message.clone(),
    })
}

/// `POST /app/schedules` ("Make the schedule"): as `POST /api/v1/recurring`; a refusal is said
/// over the form (422), with what the owner chose, and makes nothing.
async fn create(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let task_type = field(&fields, "task_type").unwrap_or_default().trim().to_owned();
        let words = match new_template(&fields) {
            Err(words) => words,
            Ok(input) => {
                let account = state.engine.account(session.account).await?;
                match state.engine.create_template(&account, input).await {
                    Ok(t) => return Ok(see_other(&format!("/app/schedules?done=made#s-{}", t.id))),
                    Err(e) => match create_refusal(&e, &task_type) {
                        Some(words) => words,
                        None => return Err(e.into()),
                    },
                }
            }
        };
        let shown = Shown {
            error: Some(("new".to_owned(), format!("Not made: {words}"))),
            posted: Some(fields),
            ..Shown::default()
        };
        render(&state, &session, StatusCode::UNPROCESSABLE_ENTITY, shown).await
    })
    .await
}

/// `POST /app/schedules/{id}/delete` (the confirmation's "Yes, remove it"): as `DELETE
/// /api/v1/recurring/{id}`.
async fn delete(State(state): Shared, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        match state.engine.delete_template(session.account, schedule_id(&id)?).await {
            Ok(()) => Ok(see_other("/app/schedules?done=removed")),
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

    #[test]
    fn the_new_form_reads_as_a_cron_its_words_say() {
        let form =
            |pairs: &[(&str, &str)]| -> Vec<(String, String)> { pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect() };
        let cron = |pairs: &[(&str, &str)]| cron_of(&form(pairs)).map(|c| cron_words(&c));
        assert_eq!(cron(&[("every", "day"), ("hour", "7")]), Ok("every day at 07:00".into()));
        assert_eq!(
            cron(&[("every", "weekdays"), ("hour", "9")]),
            Ok("every weekday (Monday to Friday) at 09:00".into())
        );
        assert_eq!(
            cron(&[("every", "week"), ("weekday", "0"), ("hour", "18")]),
            Ok("every Sunday at 18:00".into())
        );
        assert_eq!(
            cron(&[("every", "month"), ("day", "2"), ("hour", "6")]),
            Ok("on the 2nd of every month at 06:00".into())
        );
        assert!(cron(&[("every", "month"), ("day", "31"), ("hour", "6")]).is_err());
        assert!(cron(&[("every", "day"), ("hour", "24")]).is_err());
        assert!(cron(&[("every", "fortnight"), ("hour", "1")]).is_err());
    }
}

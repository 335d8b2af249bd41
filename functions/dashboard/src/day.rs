//! The owner's day in the dashboard: the call list (`/app/todos`, with "Log contact",
//! "Snooze" and "Done" on each to-do) and the morning brief (`/app/today`). Each action is
//! the engine's operation of the API's call (`POST /api/v1/todos/{id}/contact | snooze |
//! done`); the views are here, the templates `todos.html` and `today.html`.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use openloop_core::owner::scorecard::month_in_words;
use serde::Deserialize;

use openloop_core::task::todo::{ContactKind, ContactResult, Todo, TodoStatus};
use openloop_web::Body;

use crate::page::{Layout, code, layout, when, words};
use crate::respond::{PageError, Shared, check_csrf, field, form, html, page, see_other};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/today", get(today))
        .route("/app/conversations", get(conversations))
        .route("/app/reports/churn", get(churn))
        .route("/app/todos", get(todos))
        .route("/app/todos/{id}/{action}", post(act))
        .route("/app/payments/{member}/{action}", post(payment_act))
}

/// What the owner just did here, said back to them (a fixed list).
fn notice(done: &str) -> Option<&'static str> {
    match done {
        "contact" => Some("Contact logged."),
        "snooze" => Some("Snoozed: it comes back on the day you chose."),
        "done" => Some("Done: it leaves the list, and its task is settled with it."),
        _ => None,
    }
}

pub struct ContactRow {
    pub at: String,
    pub kind: String,
    pub result: String,
    pub note: Option<String>,
}

pub struct TodoRow {
    pub id: String,
    pub task_id: String,
    pub kind: String,
    pub what: String,
    pub member_name: String,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub due: String,
    pub overdue: bool,
    pub snoozed_until: Option<String>,
    pub done: bool,
    pub done_at: String,
    pub outcome: Option<String>,
    pub note: Option<String>,
    pub contacts: Vec<ContactRow>,
}

/// A to-do as the owner reads it.
pub fn todo_row(t: &Todo, tz: &TimeZone, now: Timestamp) -> TodoRow {
    TodoRow {
        id: t.id.to_string(),
        task_id: t.task_id.to_string(),
        kind: code(&t.kind),
        what: t.what.clone(),
        member_name: t.member.label(),
        phone: t.member.phone.clone(),
        email: t.member.email.as_ref().map(ToString::to_string),
        due: when(t.due_at, tz),
        overdue: t.status == TodoStatus::Open && t.due_at + jiff::SignedDuration::from_hours(24) < now,
        snoozed_until: t.snoozed_until.filter(|_| t.status == TodoStatus::Snoozed).map(|u| when(u, tz)),
        done: t.status == TodoStatus::Done,
        done_at: t.done_at.map(|d| when(d, tz)).unwrap_or_default(),
        outcome: t.outcome.as_deref().map(words),
        note: t.note.clone(),
        contacts: t
            .contacts
            .iter()
            .rev()
            .map(|c| ContactRow {
                at: when(c.at, tz),
                kind: words(&code(&c.kind)),
                result: words(&code(&c.result)),
                note: c.note.clone(),
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "app/todos.html")]
pub struct TodosPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub status: &'static str,
    pub todos: Vec<TodoRow>,
    /// The snooze form's default: tomorrow in the gym's time zone.
    pub tomorrow: String,
}

#[derive(Deserialize)]
struct TodoListParams {
    status: Option<String>,
    done: Option<String>,
}

/// `GET /app/todos?status=`: the open to-dos (soonest due first), the snoozed or the done ones.
async fn todos(State(state): Shared, headers: HeaderMap, Query(params): Query<TodoListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let status = openloop_web::todo_status(params.status.as_deref())?;
        let (account, todos) = tokio::try_join!(state.engine.account(session.account), state.engine.todos(session.account, status))?;
        let tz = account.settings.time_zone();
        let now = state.engine.now();
        let tomorrow = now
            .to_zoned(tz.clone())
            .date()
            .tomorrow()
            .map(|d| d.to_string())
            .unwrap_or_default();
        let page = TodosPage {
            layout: layout("To-dos", "todos", Some(state.session_key.csrf(&session)), &account.name),
            notice: params.done.as_deref().and_then(notice),
            status: status.as_str(),
            todos: todos.iter().map(|t| todo_row(t, &tz, now)).collect(),
            tomorrow,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// `POST /app/todos/{id}/contact | snooze | done`: the API's calls, then back to the list.
async fn act(State(state): Shared, headers: HeaderMap, Path((id, action)): Path<(String, String)>, body: Body) -> Response {
    page(state, &headers, |state, session: Session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        let id: ulid::Ulid = id
            .parse()
            .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such to-do."))?;
        let text = |name: &str| field(&fields, name).map(str::trim).filter(|v| !v.is_empty());
        let account = session.account;
        match action.as_str() {
            "contact" => {
                let kind: ContactKind = choice(text("kind"), "Choose how you made contact.")?;
                let result: ContactResult = choice(text("result"), "Choose how it went.")?;
                state.engine.log_todo_contact(account, id, kind, result, text("note")).await?;
            }
            "snooze" => {
                let until =
                    text("until").ok_or_else(|| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, "Choose a day to snooze it to."))?;
                state.engine.snooze_todo(account, id, until).await?;
            }
            "done" => {
                state.engine.complete_todo(account, id, text("outcome"), text("note")).await?;
            }
            _ => {
                return Err(PageError::new(
                    StatusCode::NOT_FOUND,
                    "There is no such page. The overview is at /app.",
                ));
            }
        }
        Ok(see_other(&format!("/app/todos?done={action}")))
    })
    .await
}

/// What the owner just did to a failing payment on Today, said back to them.
fn payment_notice(done: &str) -> Option<&'static str> {
    match done {
        "checked" => Some("Marked as checked: the brief leaves it out unless the payment fails again."),
        "tomorrow" => Some("Put off: it comes back tomorrow."),
        _ => None,
    }
}

/// `POST /app/payments/{member}/checked | tomorrow`: the owner's word on a failing payment
/// nothing works on (the brief's "Check X's payment"), as its mail links give it; back to Today.
async fn payment_act(State(state): Shared, headers: HeaderMap, Path((member, action)): Path<(String, String)>, body: Body) -> Response {
    page(state, &headers, |state, session: Session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        let member = openloop_core::kernel::ids::MemberId::parse(&member)
            .map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such member."))?;
        let snooze = match action.as_str() {
            "checked" => false,
            "tomorrow" => true,
            _ => {
                return Err(PageError::new(
                    StatusCode::NOT_FOUND,
                    "There is no such page. The overview is at /app.",
                ));
            }
        };
        let account = state.engine.account(session.account).await?;
        state.engine.set_payment_aside(&account, &member, snooze).await?;
        Ok(see_other(&format!("/app/today?done={action}")))
    })
    .await
}

/// A form's choice read as the API's code for it.
fn choice<T: serde::de::DeserializeOwned>(raw: Option<&str>, message: &str) -> Result<T, PageError> {
    raw.and_then(|v| serde_json::from_value(serde_json::Value::String(v.to_owned())).ok())
        .ok_or_else(|| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, message))
}

pub struct ActionRow {
    pub kind: &'static str,
    pub title: String,
    pub why: String,
    pub href: Option<String>,
    /// A failing payment nothing works on: the member its buttons decide.
    pub payment_of: Option<String>,
}

pub struct MemberRow {
    pub member_id: String,
    pub name: String,
    pub value: String,
    pub days: String,
    pub task_id: Option<String>,
}

#[derive(Template)]
#[template(path = "app/today.html")]
pub struct TodayPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub date: String,
    pub empty: bool,
    pub actions: Vec<ActionRow>,
    pub todos: Vec<TodoRow>,
    pub more_todos: usize,
    pub at_risk: Vec<MemberRow>,
    pub more_at_risk: usize,
    pub payments: Vec<MemberRow>,
    pub more_payments: usize,
    pub yesterday: openloop_core::owner::brief::Yesterday,
    pub planned_today: usize,
    pub review_expired: usize,
}

#[derive(Deserialize)]
struct TodayParams {
    done: Option<String>,
}

/// `GET /app/today`: the morning brief, as `GET /api/v1/brief` gives it.
async fn today(State(state): Shared, headers: HeaderMap, Query(params): Query<TodayParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, brief) = tokio::try_join!(state.engine.account(session.account), state.engine.brief(session.account, None))?;
        let tz = account.settings.time_zone();
        let now = state.engine.now();
        let money = crate::page::money;
        let page = TodayPage {
            layout: layout("Today", "today", Some(state.session_key.csrf(&session)), &account.name),
            notice: params.done.as_deref().and_then(payment_notice),
            date: brief.date.strftime("%A, %B %-d").to_string(),
            empty: brief.is_empty(),
            actions: brief
                .actions
                .iter()
                .map(|a| ActionRow {
                    kind: a.kind,
                    title: a.title.clone(),
                    why: a.why.clone(),
                    href: match (a.kind, a.task_id) {
                        ("todo", _) => Some("/app/todos".to_owned()),
                        ("review", _) => Some("/app/review".to_owned()),
                        (_, Some(id)) => Some(format!("/app/tasks/{id}")),
                        // A member id keeps to path characters (`MEMBER_ID_RULE`).
                        _ => a.member_id.as_ref().map(|m| format!("/app/members/{m}")),
                    },
                    payment_of: (a.kind == "payment" && a.task_id.is_none())
                        .then(|| a.member_id.as_ref().map(ToString::to_string))
                        .flatten(),
                })
                .collect(),
            todos: brief.todos.iter().map(|t| todo_row(t, &tz, now)).collect(),
            more_todos: brief.more.todos,
            at_risk: brief
                .at_risk
                .iter()
                .map(|m| MemberRow {
                    member_id: m.member_id.to_string(),
                    name: m.name.clone(),
                    value: money(m.monthly_value),
                    days: m
                        .days_since_checkin
                        .map_or("never".to_owned(), |d| openloop_core::kernel::plural::count(d, "day", "days")),
                    task_id: m.task_id.map(|t| t.to_string()),
                })
                .collect(),
            more_at_risk: brief.more.at_risk,
            payments: brief
                .payments
                .iter()
                .map(|p| MemberRow {
                    member_id: p.member_id.to_string(),
                    name: p.name.clone(),
                    value: money(p.monthly_value),
                    days: String::new(),
                    task_id: p.task_id.map(|t| t.to_string()),
                })
                .collect(),
            more_payments: brief.more.payments,
            yesterday: brief.yesterday.clone(),
            planned_today: brief.planned_today,
            review_expired: brief.review_expired,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

pub struct ConversationRow {
    pub task_id: String,
    pub task_type: String,
    pub member: String,
    pub touches: u32,
    /// Who, when, what (cut to a line's worth).
    pub last: Option<(String, String, String)>,
    pub next: String,
    /// `dry run` when the conversation sends nothing.
    pub mode: Option<&'static str>,
}

#[derive(Template)]
#[template(path = "app/conversations.html")]
pub struct ConversationsPage {
    pub layout: Layout,
    pub conversations: Vec<ConversationRow>,
    pub types: Vec<(&'static str, &'static str)>,
    pub selected: String,
}

#[derive(Deserialize)]
struct ConversationParams {
    #[serde(rename = "type")]
    task_type: Option<String>,
}

/// What happens next in a conversation, in words.
fn next_step(task: &openloop_core::task::Task, tz: &TimeZone) -> String {
    use openloop_core::task::TaskStatus;
    let at = task.next_action_at.map(|a| when(a, tz));
    match (task.status, at) {
        (TaskStatus::Escalated, _) => "waits for you".into(),
        (TaskStatus::Dormant, Some(at)) => format!("a quiet check {at}"),
        (TaskStatus::Waiting, Some(at)) => format!("next step by the agent {at}"),
        (TaskStatus::Executing, _) => "the agent is on it now".into(),
        (_, Some(at)) => at,
        (_, None) => "waiting for the member".into(),
    }
}

/// `GET /app/conversations?type=`: every conversation in progress, its last message and next step.
async fn conversations(State(state): Shared, headers: HeaderMap, Query(params): Query<ConversationParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let selected = params.task_type.unwrap_or_default();
        let wanted = Some(selected.as_str()).filter(|t| !t.is_empty());
        let (account, list) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.conversations(session.account, wanted)
        )?;
        let tz = account.settings.time_zone();
        let rows = list
            .iter()
            .map(|c| ConversationRow {
                task_id: c.task.id.to_string(),
                task_type: words(&c.task.task_type),
                member: c.task.member.label(),
                touches: c.task.touch,
                last: c.last.as_ref().map(|m| {
                    let text: String = m.content.chars().take(280).collect();
                    (words(&code(&m.role)), when(m.at, &tz), text)
                }),
                next: next_step(&c.task, &tz),
                mode: crate::plans::mode_badge(&c.task),
            })
            .collect();
        let types = openloop_core::task::task_type::REGISTRY
            .iter()
            .filter(|d| d.category == openloop_core::task::task_type::Category::Communication)
            .map(|d| (d.key, d.label))
            .collect();
        let page = ConversationsPage {
            layout: layout(
                "Conversations",
                "conversations",
                Some(state.session_key.csrf(&session)),
                &account.name,
            ),
            conversations: rows,
            types,
            selected,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

#[derive(Template)]
#[template(path = "app/churn.html")]
pub struct ChurnPage {
    pub layout: Layout,
    pub r: openloop_core::owner::churn_report::ChurnReport,
    /// The report's month in words ("December 2026").
    pub month: String,
    pub rate: String,
    pub revenue: String,
    pub trend: Vec<(String, String)>,
    /// The month's cancellations by what their reasons read as, most first.
    pub classes: Vec<ClassRow>,
    /// What the risk scan would have seen in the members who left: (factor, count).
    pub risk_factors: Vec<(String, u32)>,
}

/// One class of the month's cancellations: its name in the owner's words, how many, and the
/// reasons as given (the members' words, escaped by the template) with their counts.
pub struct ClassRow {
    pub class: &'static str,
    pub label: String,
    pub count: u32,
    pub reasons: Vec<(String, u32)>,
}

/// The report's cancellations grouped by class, each class's own reasons under it.
fn class_rows(r: &openloop_core::owner::churn_report::ChurnReport) -> Vec<ClassRow> {
    use openloop_core::members::cancellation::CancellationClass;
    r.classes
        .iter()
        .map(|c| ClassRow {
            class: c.class.as_str(),
            label: crate::page::cancellation_class_words(c.class).unwrap_or("other reasons").to_owned(),
            count: c.count,
            reasons: r
                .reasons
                .iter()
                .filter(|x| x.source == "cancellation")
                // The report writes a missing reason as "not given", which reads as `other`.
                .filter(|x| CancellationClass::of(Some(&x.reason)) == c.class)
                .map(|x| {
                    let said = if x.reason == "not given" {
                        "no reason given".to_owned()
                    } else {
                        format!("\u{201c}{}\u{201d}", x.reason)
                    };
                    (said, x.count)
                })
                .collect(),
        })
        .collect()
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

#[derive(Deserialize)]
struct MonthParams {
    month: Option<String>,
}

/// `GET /app/reports/churn?month=`: the churn report, as `GET /api/v1/reports/churn` gives it.
async fn churn(State(state): Shared, headers: HeaderMap, Query(params): Query<MonthParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let month = params.month.filter(|m| !m.is_empty());
        let (account, r) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.monthly_churn_report(session.account, month.as_deref())
        )?;
        let page = ChurnPage {
            layout: layout("Churn report", "churn", Some(state.session_key.csrf(&session)), &account.name),
            rate: percent(r.churn_rate),
            revenue: crate::page::money(r.revenue_retained),
            month: month_in_words(&r.month),
            trend: r.trend.iter().map(|t| (month_in_words(&t.month), percent(t.churn_rate))).collect(),
            classes: class_rows(&r),
            risk_factors: r
                .reasons
                .iter()
                .filter(|x| x.source == "risk_scan")
                .map(|x| (x.reason.clone(), x.count))
                .collect(),
            r,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

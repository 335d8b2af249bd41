//! The overview, `/app` (`/app/` is sent on to it): the month's headline numbers, the
//! account's execution mode and ramp phase, what waits for review, the latest of the activity
//! feed, and the charts (`overview/charts.rs`). What it costs does not grow with the tasks
//! stored: the tallies and ranged reads of the engine's overview.

mod charts;

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use jiff::tz::TimeZone;

use crate::page::{
    Layout, code, detail_words, layout, mode_in_words, money, phase_explained, phase_in_words, reason_words, status_badge, type_label,
    when, zone_in_words,
};
use crate::respond::{Shared, html, page, see_other};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app", get(overview))
        .route("/app/", get(|| async { see_other("/app") }))
}

/// Entries of the activity feed on the overview.
const FEED_ENTRIES: usize = 15;

#[derive(Template)]
#[template(path = "app/overview.html")]
pub struct OverviewPage {
    pub layout: Layout,
    pub month: String,
    pub heroes: Vec<Hero>,
    pub pending_review: usize,
    pub feed: Vec<FeedItem>,
    pub state: AccountState,
    pub charts: Vec<charts::Chart>,
    pub weeks: usize,
}

/// One of the overview's headline numbers.
pub struct Hero {
    pub label: &'static str,
    pub value: String,
    /// Where it leads, if anywhere.
    pub href: Option<&'static str>,
}

/// A step of one of the account's tasks, as the activity feed lists it.
pub struct FeedItem {
    pub at: String,
    pub task_id: String,
    pub member: String,
    pub task_type: String,
    pub status: &'static str,
    pub status_class: &'static str,
    pub reason: String,
    pub detail: Option<String>,
}

/// Where the account stands: its execution mode, its ramp phase, the kill switch.
pub struct AccountState {
    pub execution_mode: String,
    pub execution_mode_explained: &'static str,
    pub phase: String,
    pub phase_explained: &'static str,
    pub paused: bool,
    pub timezone: String,
}

/// `GET /app`: the overview.
async fn overview(State(state): Shared, headers: HeaderMap) -> Response {
    page(state, &headers, |state, session| async move {
        let account = session.account;
        // The charts' days end today in the account's time zone; they start DAYS before the
        // UTC date, which is the same local day or the one next to it.
        let today_utc = state.engine.now().to_zoned(TimeZone::UTC).date();
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
        let execution_mode = code(&autonomy.account.settings.execution_mode);
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
                Hero {
                    label: "members retained",
                    value: scorecard.members_retained.to_string(),
                    href: None,
                },
                Hero {
                    label: "revenue retained",
                    value: money(scorecard.revenue_retained),
                    href: None,
                },
                Hero {
                    label: "conversations open",
                    value: scorecard.conversations_open.to_string(),
                    href: Some("/app/conversations"),
                },
                Hero {
                    label: "need your attention",
                    value: scorecard.needs_attention.to_string(),
                    href: Some("/app/review"),
                },
            ],
            pending_review,
            feed: activity.0.iter().map(|e| feed_item(e, &tz)).collect(),
            state: AccountState {
                execution_mode_explained: execution_mode_explained(&execution_mode),
                execution_mode: mode_in_words(&execution_mode),
                phase: phase_in_words(phase),
                phase_explained: phase_explained(phase),
                paused: autonomy.account.paused,
                timezone: zone_in_words(&autonomy.account.settings.timezone),
            },
            charts: {
                let made = autonomy.account.created_at.to_zoned(tz.clone()).date();
                let mut all = charts::overview_charts(&metrics.days, made);
                all.push(charts::revenue_chart(&revenue_by_month));
                all
            },
            weeks: charts::WEEKS,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// One entry of the activity feed: a step of a task, in words.
fn feed_item(entry: &openloop_core::task::history::ActivityEntry, tz: &TimeZone) -> FeedItem {
    let (status, status_class) = status_badge(&code(&entry.entry.to_status));
    FeedItem {
        at: when(entry.entry.at, tz),
        task_id: entry.task_id.to_string(),
        member: entry.member_name.clone().unwrap_or_else(|| entry.member_id.to_string()),
        task_type: type_label(&entry.task_type),
        status,
        status_class,
        reason: reason_words(&entry.entry.reason),
        detail: entry.entry.detail.as_deref().map(|d| detail_words(d, tz)),
    }
}

/// What the account's execution mode means for the owner.
fn execution_mode_explained(mode: &str) -> &'static str {
    match mode {
        "manual" => "Every message waits for your approval in the review queue.",
        "limited_auto" => "Confident tasks without escalation triggers go out on their own; the rest wait for you.",
        _ => "",
    }
}

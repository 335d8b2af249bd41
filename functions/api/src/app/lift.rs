//! What the outreach caused, in the dashboard (`GET /app/lift?from=&to=`): the same operation
//! as `GET /api/v1/lift`, per task type the contacted and the held-out members' success rates,
//! the difference with its 95% interval and the verdict, and revenue after outreach beside
//! revenue caused by it.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;

use openloop_core::engine::LiftReport;
use openloop_core::learning::lift::{Group, TypeLift};
use openloop_core::task::error::EngineError;
use openloop_core::task::task_type;

use super::page::{Layout, money};
use super::{PageError, Shared, html, layout};
use crate::ApiState;

pub fn routes() -> Router<Arc<ApiState>> {
    Router::new().route("/app/lift", get(lift))
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
        pooled: l.pooled.as_ref().map_or_else(String::new, |p| {
            let mut s = p.summary.clone();
            if let Some(first) = s.get(..1) {
                s = first.to_uppercase() + &s[1..];
            }
            format!("{s} ({}).", p.month)
        }),
    }
}

pub fn page(report: &LiftReport, layout: Layout) -> LiftPage {
    LiftPage {
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
    super::page(state, &headers, |state, session| async move {
        let from = params.from.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let to = params.to.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let (account, report) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.lift(session.account, from, to, None),
        )
        .map_err(|e| match e {
            EngineError::Invalid(e) => PageError::new(StatusCode::UNPROCESSABLE_ENTITY, e.message),
            other => other.into(),
        })?;
        let frame = layout("Lift", "lift", Some(state.session_key.csrf(&session)), &account.name);
        Ok(html(StatusCode::OK, &page(&report, frame)))
    })
    .await
}

//! The owner's numbers: a month of outcomes (`GET /api/v1/scorecard?month=`), the daily metrics
//! of a date range (`GET /api/v1/metrics?from=&to=`), the decisions across the account's tasks
//! (`GET /api/v1/activity?limit=&cursor=`) and the owner's notifications (`GET
//! /api/v1/notifications?limit=&cursor=`), the feeds newest first. Honest lift is `lift`.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;

use openloop_core::contract::ActivityView;
use openloop_core::kernel::texts;
use openloop_core::task::error::EngineError;
use openloop_edge::http::{ApiError, Params};

use crate::extract::{ApiState, MonthParams, Owner, PageParams, Shared};
use crate::schema::{ActivityList, NotificationView, Notifications, OwnerErrors, json};

/// The numbers' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/scorecard", get(scorecard))
        .route("/api/v1/activity", get(activity))
        .route("/api/v1/metrics", get(metrics))
        .route("/api/v1/notifications", get(notifications))
}

/// A month of outcomes: `?month=YYYY-MM`, by default the current month in the
/// account's time zone.
#[utoipa::path(get, path = "/api/v1/scorecard", tag = "numbers", summary = "A month of outcomes", params(MonthParams), responses((status = 200, description = "The scorecard", body = openloop_core::owner::scorecard::Scorecard), OwnerErrors))]
pub(crate) async fn scorecard(
    State(state): Shared,
    Params(params): Params<MonthParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let month = params.month.as_deref();
    Ok(json(StatusCode::OK, state.engine.scorecard(account, month).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct MetricsParams {
    /// `YYYY-MM-DD`, by default 30 days ago (a date that does not parse is `400 invalid_date`).
    #[param(value_type = Option<texts::DateText>)]
    from: Option<String>,
    /// `YYYY-MM-DD`, by default today (at most 92 days after `from`).
    #[param(value_type = Option<texts::DateText>)]
    to: Option<String>,
}

/// The account's daily metrics: `?from=YYYY-MM-DD&to=YYYY-MM-DD`, by default the
/// last 30 days in the account's time zone, at most 92 days. A bad date or range is a
/// malformed request (400).
#[utoipa::path(get, path = "/api/v1/metrics", tag = "numbers", summary = "Daily metrics of a date range", params(MetricsParams), responses((status = 200, description = "The metrics", body = openloop_core::owner::metrics::MetricsRange), OwnerErrors))]
pub(crate) async fn metrics(
    State(state): Shared,
    Params(params): Params<MetricsParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let from = params.from.as_deref();
    let to = params.to.as_deref();
    match state.engine.metrics(account, from, to).await {
        Ok(report) => Ok(json(StatusCode::OK, report)),
        Err(EngineError::Invalid(e)) => Err(ApiError::bad_request(&e.code, e.message)),
        Err(e) => Err(e.into()),
    }
}

/// The account's decisions across its tasks, newest first: `{"activity": [...], "next_cursor"}`.
#[utoipa::path(get, path = "/api/v1/activity", tag = "numbers", summary = "The decisions across the account's tasks, newest first", params(PageParams), responses((status = 200, description = "A page of the feed", body = ActivityList), OwnerErrors))]
pub(crate) async fn activity(
    State(state): Shared,
    Params(params): Params<PageParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let (limit, cursor) = params.parse()?;
    let (owner_account, (entries, next)) = tokio::try_join!(state.engine.account(account), state.engine.activity(account, limit, cursor))?;
    let tz = owner_account.settings.time_zone();
    let views: Vec<ActivityView> = entries.iter().map(|e| ActivityView::for_owner(e, &tz)).collect();
    Ok(json(
        StatusCode::OK,
        ActivityList {
            activity: views,
            next_cursor: next,
        },
    ))
}

/// The owner's notification feed, newest first:
/// `{"notifications": [{id, at, kind, task_id, member_id, title, detail, delivery, digest_at}], "next_cursor"}`.
#[utoipa::path(get, path = "/api/v1/notifications", tag = "numbers", summary = "The owner's notifications, newest first", params(PageParams), responses((status = 200, description = "A page of notifications", body = Notifications), OwnerErrors))]
pub(crate) async fn notifications(
    State(state): Shared,
    Params(params): Params<PageParams>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    let (limit, cursor) = params.parse()?;
    let (notices, next) = state.engine.owner_notices(account, limit, cursor).await?;
    let notifications = notices
        .iter()
        .map(|n| NotificationView {
            id: n.id.to_string(),
            at: n.at,
            kind: &n.kind,
            task_id: n.task_id,
            member_id: n.member_id.as_ref(),
            title: &n.title,
            detail: &n.detail,
            delivery: &n.delivery,
            digest_at: n.digest_at,
        })
        .collect();
    Ok(json(
        StatusCode::OK,
        Notifications {
            notifications,
            next_cursor: next,
        },
    ))
}

//! Honest lift: `GET /api/v1/lift?from=&to=&task_type=` — per task
//! type the contacted and held-out groups, the difference with its 95% interval and a verdict
//! — and `POST /api/v1/settings/holdout/reshuffle`, the owner's new draw of the groups (at most
//! once every 30 days; sooner is `422 reshuffle_too_soon`).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;

use openloop_edge::http::{ApiError, Params};

use crate::extract::{ApiState, Owner, Shared};
use crate::schema::{HoldoutDraw, OwnerErrors, json};

/// The lift's routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/settings/holdout/reshuffle", post(reshuffle))
        .route("/api/v1/lift", get(lift))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LiftParams {
    /// `YYYY-MM-DD` in 2000–2099 (any other is `422 invalid_date`).
    #[param(value_type = Option<openloop_core::kernel::texts::DateText>)]
    from: Option<String>,
    /// `YYYY-MM-DD`.
    #[param(value_type = Option<openloop_core::kernel::texts::DateText>)]
    to: Option<String>,
    /// Only this task type.
    task_type: Option<openloop_core::kernel::texts::TaskTypeName>,
}

/// A date that is not a day in 2000–2099, a reversed range or an unknown type: 422.
#[utoipa::path(get, path = "/api/v1/lift", tag = "numbers", summary = "Honest lift: contacted against held-out members", params(LiftParams), responses((status = 200, description = "The lift per task type", body = openloop_core::engine::LiftReport), OwnerErrors))]
pub(crate) async fn lift(State(state): Shared, Params(params): Params<LiftParams>, Owner(account): Owner) -> Result<Response, ApiError> {
    let report = state
        .engine
        .lift(account, params.from.as_deref(), params.to.as_deref(), params.task_type.as_deref())
        .await?;
    Ok(json(StatusCode::OK, report))
}

/// `{"generation", "drawn_at", "next_reshuffle_after"}` of the new draw.
#[utoipa::path(post, path = "/api/v1/settings/holdout/reshuffle", tag = "numbers", summary = "Draw the holdout group anew (at most once in 30 days)", responses((status = 200, description = "The new draw", body = HoldoutDraw), OwnerErrors))]
pub(crate) async fn reshuffle(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let account = state.engine.reshuffle_holdout(account).await?;
    Ok(json(StatusCode::OK, HoldoutDraw::of(&account)))
}

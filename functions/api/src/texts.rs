//! Text messages on the owner API: `POST /api/v1/members/{id}/consent {"sms", "source"}`
//! records a member's consent (yes or no, where it came from, when); no text goes to a member
//! without a "yes". The text settings are `PUT /api/v1/settings` (`sms`, `owner_phone`).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;

use openloop_core::engine::ConsentInput;
use openloop_core::kernel::ids::MemberId;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{ApiState, Body, Owner, Shared};
use crate::schema::{OwnerErrors, json};

/// The texts' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new().route("/api/v1/members/{id}/consent", post(consent))
}

#[utoipa::path(post, path = "/api/v1/members/{id}/consent", operation_id = "record_consent", tag = "members", summary = "Record a member's consent to texts (yes or no, and where it came from)", params(("id" = String, Path, description = "The member's id")), request_body = openloop_core::engine::ConsentInput, responses((status = 200, description = "The member's consent as recorded", body = openloop_core::engine::ConsentView), OwnerErrors))]
pub(crate) async fn consent(State(state): Shared, Path(id): Path<String>, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    let input: ConsentInput = json_body(&body.map_err(body_error)?)?;
    Ok(json(StatusCode::OK, state.engine.record_consent(account, &member, input).await?))
}

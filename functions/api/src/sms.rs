//! Text messages on the owner API: `POST /api/v1/members/{id}/consent {"sms", "source"}`
//! records a member's consent (yes or no, where it came from, when); no text goes to a member
//! without a "yes". The text settings are `PUT /api/v1/settings` (`sms`, `owner_phone`).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use openloop_core::engine::ConsentInput;
use openloop_core::kernel::ids::MemberId;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{Shared, owner};
use crate::schema::json;

#[utoipa::path(post, path = "/api/v1/members/{id}/consent", operation_id = "record_consent", tag = "members", summary = "Record a member's consent to texts (yes or no, and where it came from)", params(("id" = String, Path, description = "The member's id")), request_body = openloop_core::engine::ConsentInput, responses((status = 200, description = "The member's consent as recorded", body = openloop_core::engine::ConsentView), crate::schema::OwnerErrors))]
pub(crate) async fn consent(
    State(state): Shared,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    let input: ConsentInput = json_body(&body.map_err(body_error)?)?;
    Ok(json(StatusCode::OK, state.engine.record_consent(account, &member, input).await?))
}

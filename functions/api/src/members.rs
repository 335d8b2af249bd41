//! The PushPress connection and the members it brings (issue 14): `GET /api/v1/connector`
//! (where the connection and its import stand), `GET /api/v1/members?limit=&cursor=` and
//! `GET /api/v1/members/{id}` (with Openloop's own tags and notes on them). Connecting is
//! `PUT /api/v1/settings {"pushpress": …}` (in `lib.rs`).

use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use openloop_core::kernel::ids::MemberId;
use openloop_edge::http::ApiError;

use crate::{PageParams, Shared, json, owner};

pub(crate) async fn connector(axum::extract::State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(json(StatusCode::OK, state.engine.connector_status(account).await?))
}

pub(crate) async fn list(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Query(params): Query<PageParams>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let (limit, cursor) = params.parse_within(openloop_core::engine::MEMBERS_PAGE_MAX)?;
    let (members, next) = state.engine.list_members(account, limit, cursor).await?;
    Ok(json(StatusCode::OK, serde_json::json!({"members": members, "next_cursor": next})))
}

pub(crate) async fn detail(axum::extract::State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    Ok(json(StatusCode::OK, state.engine.member_detail(account, &member).await?))
}

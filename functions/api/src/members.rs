//! The PushPress connection and the members it brings: `GET /api/v1/connector`
//! (where the connection and its import stand), `GET /api/v1/members?limit=&cursor=` and
//! `GET /api/v1/members/{id}` (with Openloop's own tags and notes on them). Connecting is
//! `PUT /api/v1/settings {"pushpress": …}` (in `lib.rs`).

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use openloop_core::kernel::ids::MemberId;
use openloop_edge::http::{ApiError, Params};

use crate::extract::{PageParams, Shared, owner};
use crate::schema::json;

#[utoipa::path(get, path = "/api/v1/connector", tag = "members", summary = "The PushPress connection and its import", responses((status = 200, description = "The connection", body = openloop_core::engine::ConnectorView), crate::schema::OwnerErrors))]
pub(crate) async fn connector(axum::extract::State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    Ok(json(StatusCode::OK, state.engine.connector_status(account).await?))
}

#[utoipa::path(get, operation_id = "list_members", path = "/api/v1/members", tag = "members", summary = "The members, a page at a time", params(crate::extract::PageParams), responses((status = 200, description = "A page of members", body = crate::schema::Members), crate::schema::OwnerErrors))]
pub(crate) async fn list(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Params(params): Params<PageParams>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let (limit, cursor) = params.parse_within(openloop_core::engine::MEMBERS_PAGE_MAX)?;
    let (members, next) = state.engine.list_members(account, limit, cursor).await?;
    Ok(json(
        StatusCode::OK,
        crate::schema::Members {
            members,
            next_cursor: next,
        },
    ))
}

#[utoipa::path(get, operation_id = "member_detail", path = "/api/v1/members/{id}", tag = "members", summary = "One member with Openloop's tags and notes", params(("id" = String, Path, description = "The member's id")), responses((status = 200, description = "The member", body = openloop_core::engine::MemberDetail), crate::schema::OwnerErrors))]
pub(crate) async fn detail(axum::extract::State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    Ok(json(StatusCode::OK, state.engine.member_detail(account, &member).await?))
}

//! The PushPress connection and the members it brings: `GET /api/v1/connector`
//! (where the connection and its import stand), `GET /api/v1/members?limit=&cursor=` and
//! `GET /api/v1/members/{id}` (with Openloop's own tags and notes on them). Connecting is
//! `PUT /api/v1/settings {"pushpress": …}` (`settings`); a member's consent to texts is
//! `texts`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;

use openloop_core::kernel::ids::MemberId;
use openloop_edge::http::{ApiError, Params};

use crate::extract::{ApiState, Owner, PageParams, Shared};
use crate::schema::{Members, OwnerErrors, json};

/// The members' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/connector", get(connector))
        .route("/api/v1/members", get(list))
        .route("/api/v1/members/{id}", get(detail))
}

#[utoipa::path(get, path = "/api/v1/connector", tag = "members", summary = "The PushPress connection and its import", responses((status = 200, description = "The connection", body = openloop_core::engine::ConnectorView), OwnerErrors))]
pub(crate) async fn connector(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.connector_status(account).await?))
}

#[utoipa::path(get, operation_id = "list_members", path = "/api/v1/members", tag = "members", summary = "The members, a page at a time", params(PageParams), responses((status = 200, description = "A page of members", body = Members), OwnerErrors))]
pub(crate) async fn list(State(state): Shared, Params(params): Params<PageParams>, Owner(account): Owner) -> Result<Response, ApiError> {
    let (limit, cursor) = params.parse_within(openloop_core::engine::MEMBERS_PAGE_MAX)?;
    let (members, next) = state.engine.list_members(account, limit, cursor).await?;
    Ok(json(
        StatusCode::OK,
        Members {
            members,
            next_cursor: next,
        },
    ))
}

#[utoipa::path(get, operation_id = "member_detail", path = "/api/v1/members/{id}", tag = "members", summary = "One member with Openloop's tags and notes", params(("id" = String, Path, description = "The member's id")), responses((status = 200, description = "The member", body = openloop_core::engine::MemberDetail), OwnerErrors))]
pub(crate) async fn detail(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    Ok(json(StatusCode::OK, state.engine.member_detail(account, &member).await?))
}

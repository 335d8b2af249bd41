//! The PushPress connection and the members it brings: `GET /api/v1/connector`
//! (where the connection and its import stand), `GET /api/v1/members?limit=&cursor=` and
//! `GET /api/v1/members/{id}` (with Openloop's own tags and notes on them); people's data:
//! `GET /api/v1/members/{id}/export` (everything held about one member) and
//! `DELETE /api/v1/members/{id}` (forget them, `204`; once forgotten, `404`). Connecting is
//! `PUT /api/v1/settings {"pushpress": …}` (`settings`); a member's consent to texts is
//! `texts`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
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
        .route("/api/v1/members/{id}", get(detail).delete(erase))
        .route("/api/v1/members/{id}/export", get(export))
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

#[utoipa::path(get, operation_id = "export_member", path = "/api/v1/members/{id}/export", tag = "members", summary = "Everything held about one member, as one document", params(("id" = String, Path, description = "The member's id")), responses((status = 200, description = "The member's data", body = openloop_core::engine::MemberExport), OwnerErrors))]
pub(crate) async fn export(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    Ok(json(StatusCode::OK, state.engine.export_member(account, &member).await?))
}

#[utoipa::path(delete, operation_id = "erase_member", path = "/api/v1/members/{id}", tag = "members", summary = "Erase a member's personal data", description = "Their facts, tasks, conversations, to-dos and loops are removed; the owner's numbers keep counting their tasks, and their address and phone stay suppressed as a keyed hash. Erasing again answers 404.", params(("id" = String, Path, description = "The member's id")), responses((status = 204, description = "Erased"), OwnerErrors))]
pub(crate) async fn erase(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    let member = MemberId::parse(&id).map_err(|_| ApiError::not_found("member"))?;
    state.engine.erase_member(account, &member).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

//! Outbound webhooks: `POST /api/v1/webhook-endpoints`
//! (`201` with the `whsec_` secret, shown once), `GET` the list, `GET`/`DELETE` one, and
//! `GET …/{id}/deliveries`, its delivery log. The bodies are the core's named types
//! (`owner::outbound_webhook`).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing;

use openloop_core::owner::outbound_webhook::{NewWebhookEndpoint, WebhookEndpointList};
use openloop_edge::http::{ApiError, body_error, json_body};
use openloop_web::secrets::new_endpoint_secret;

use crate::extract::{ApiState, Body, Owner, Shared};
use crate::schema::{OwnerErrors, json};

/// The webhook endpoints' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/webhook-endpoints", routing::get(list).post(create))
        .route("/api/v1/webhook-endpoints/{id}", routing::get(get).delete(delete))
        .route("/api/v1/webhook-endpoints/{id}/deliveries", routing::get(deliveries))
}

/// `POST /api/v1/webhook-endpoints {"url", "events"}` → `201 {"id", "url", "events", "secret", …}`.
#[utoipa::path(post, path = "/api/v1/webhook-endpoints", operation_id = "create_webhook_endpoint", tag = "account", summary = "Add an endpoint for outbound webhooks", request_body = openloop_core::owner::outbound_webhook::NewWebhookEndpoint, responses((status = 201, description = "The endpoint with its `whsec_` secret (shown once)", body = openloop_core::owner::outbound_webhook::CreatedWebhookEndpoint), OwnerErrors))]
pub(crate) async fn create(State(state): Shared, Owner(account): Owner, body: Body) -> Result<Response, ApiError> {
    let input: NewWebhookEndpoint = json_body(&body.map_err(body_error)?)?;
    let created = state.engine.create_webhook_endpoint(account, input, new_endpoint_secret()?).await?;
    Ok(json(StatusCode::CREATED, created))
}

/// `GET /api/v1/webhook-endpoints` → `{"webhook_endpoints": [...]}` (never a secret).
#[utoipa::path(get, path = "/api/v1/webhook-endpoints", operation_id = "list_webhook_endpoints", tag = "account", summary = "The account's webhook endpoints", responses((status = 200, description = "The endpoints (never a secret)", body = openloop_core::owner::outbound_webhook::WebhookEndpointList), OwnerErrors))]
pub(crate) async fn list(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let webhook_endpoints = state.engine.webhook_endpoints(account).await?;
    Ok(json(StatusCode::OK, WebhookEndpointList { webhook_endpoints }))
}

/// `GET /api/v1/webhook-endpoints/{id}`.
#[utoipa::path(get, path = "/api/v1/webhook-endpoints/{id}", operation_id = "get_webhook_endpoint", tag = "account", summary = "One webhook endpoint", params(("id" = String, Path, description = "The endpoint id")), responses((status = 200, description = "The endpoint (never its secret)", body = openloop_core::owner::outbound_webhook::WebhookEndpointView), OwnerErrors))]
pub(crate) async fn get(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.webhook_endpoint(account, &id).await?))
}

/// `DELETE /api/v1/webhook-endpoints/{id}` → `204`.
#[utoipa::path(delete, path = "/api/v1/webhook-endpoints/{id}", operation_id = "delete_webhook_endpoint", tag = "account", summary = "Remove a webhook endpoint", params(("id" = String, Path, description = "The endpoint id")), responses((status = 204, description = "Removed"), OwnerErrors))]
pub(crate) async fn delete(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    state.engine.delete_webhook_endpoint(account, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /api/v1/webhook-endpoints/{id}/deliveries` → `{"deliveries": [...]}`, newest first.
#[utoipa::path(get, path = "/api/v1/webhook-endpoints/{id}/deliveries", operation_id = "webhook_endpoint_deliveries", tag = "account", summary = "The endpoint's delivery log, newest first", params(("id" = String, Path, description = "The endpoint id")), responses((status = 200, description = "The deliveries", body = openloop_core::owner::outbound_webhook::WebhookDeliveryLog), OwnerErrors))]
pub(crate) async fn deliveries(State(state): Shared, Path(id): Path<String>, Owner(account): Owner) -> Result<Response, ApiError> {
    Ok(json(StatusCode::OK, state.engine.webhook_deliveries(account, &id).await?))
}

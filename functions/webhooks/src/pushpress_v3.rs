//! `POST /webhooks/pushpress-v3/{account_id}`: PushPress's own deliveries, at the URL that
//! connecting registered. The signature is checked against the subscription's secret before
//! anything is read (`openloop_pushpress::webhook`); a forged or tampered delivery is `401`
//! and changes nothing. Then `202` queued (or acknowledged: an event with nothing to change),
//! `200` for a delivery seen before.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use openloop_core::engine::{Accepted, DeliveryOutcome};
use openloop_core::kernel::ids::AccountId;
use openloop_core::task::error::EngineError;
use openloop_edge::http::{ApiError, body_error};
use openloop_pushpress::webhook;

use crate::WebhooksState;

pub(crate) async fn delivery(
    State(state): State<Arc<WebhooksState>>,
    Path(account_id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    let engine = &state.engine;
    let account_id: AccountId = account_id.parse().map_err(|_| ApiError::not_found("account"))?;
    engine.account(account_id).await?;
    let Some(secret) = engine.pushpress_signing_secret(account_id).await? else {
        return Err(ApiError::unauthorized(
            "this account holds no PushPress subscription: connect PushPress first",
        ));
    };
    let signature = headers.get("webhook-signature").and_then(|v| v.to_str().ok());
    if let Err(rejection) = webhook::verify(secret.expose(), signature, &body) {
        tracing::warn!(account = %account_id, ?rejection, "PushPress delivery refused");
        return Err(ApiError::unauthorized(rejection.message()));
    }
    // Not JSON is malformed (400); JSON that is not a delivery is well-formed but invalid (422).
    let delivery = webhook::parse(&body).map_err(|why| {
        if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok() {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_event", why)
        } else {
            ApiError::bad_request("malformed_json", why)
        }
    })?;
    match engine.accept_pushpress_delivery(account_id, delivery, engine.now()).await {
        Ok(DeliveryOutcome::Accepted(Accepted::Queued)) => {
            Ok((StatusCode::ACCEPTED, axum::Json(json!({"status": "queued"}))).into_response())
        }
        Ok(DeliveryOutcome::Accepted(Accepted::Duplicate)) => {
            Ok((StatusCode::OK, axum::Json(json!({"status": "duplicate"}))).into_response())
        }
        Ok(DeliveryOutcome::Erased) => Ok((StatusCode::ACCEPTED, axum::Json(json!({"status": "erased"}))).into_response()),
        Ok(DeliveryOutcome::Acknowledged(reason)) => {
            Ok((StatusCode::ACCEPTED, axum::Json(json!({"status": "ignored", "reason": reason}))).into_response())
        }
        Err(EngineError::Dependency(_)) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "queue_unavailable",
            "the event could not be queued; retry later",
        )),
        Err(e) => Err(e.into()),
    }
}

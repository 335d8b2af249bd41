//! `POST /webhooks/inbound-sms`: members' texts, as AWS End User Messaging SMS publishes them
//! to its two-way SNS topic and SNS delivers them over HTTPS. Every envelope's signature is
//! checked first, as the signals function checks inbound mail's (`openloop_aws::sns`): a
//! forged, tampered or other topic's message is `401` and never read. The topic's
//! subscription confirmation is visited once signed (SNS's own host only); a notification
//! is the member's text, read by the engine (`receive_text`) and answered `202`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use openloop_aws::sns::SnsError;
use openloop_edge::http::{ApiError, body_error};

use crate::WebhooksState;

pub(crate) async fn inbound_sms(
    State(state): State<Arc<WebhooksState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    let body = std::str::from_utf8(&body).map_err(|_| ApiError::bad_request("invalid_notification", "the body is not UTF-8"))?;
    let message = match state.sms_notifications.verify(body).await {
        Ok(message) => message,
        Err(SnsError::Malformed(e)) => return Err(ApiError::bad_request("invalid_notification", format!("not an SNS message: {e}"))),
        Err(SnsError::Rejected(e)) => {
            tracing::warn!(error = %e, "inbound text refused: its SNS signature does not hold");
            return Err(ApiError::unauthorized(&format!("the SNS message is not genuine: {e}")));
        }
        Err(SnsError::CertificateUnavailable(e)) => {
            // SNS retries: nothing was read.
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "dependency_unavailable",
                format!("the SNS signing certificate could not be fetched: {e}"),
            ));
        }
    };
    match message.kind.as_str() {
        "SubscriptionConfirmation" => {
            confirm(&message).await;
            return Ok((StatusCode::OK, axum::Json(serde_json::json!({"status": "confirmed"}))).into_response());
        }
        "Notification" => {}
        other => {
            tracing::info!(kind = other, "signed SNS message needs nothing");
            return Ok((StatusCode::OK, axum::Json(serde_json::json!({"status": "ignored"}))).into_response());
        }
    }
    let Some(text) = openloop_aws::sms::inbound_text(&message.message) else {
        tracing::warn!(topic = %message.topic_arn, "a signed notification that is not a member's text; ignored");
        return Ok((StatusCode::ACCEPTED, axum::Json(serde_json::json!({"status": "ignored"}))).into_response());
    };
    let outcome = state.engine.receive_text(text).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(outcome)).into_response())
}

/// Visit a signed subscription confirmation's `SubscribeURL`, on SNS's own host only.
async fn confirm(message: &openloop_aws::sns::SnsMessage) {
    let Some(url) = message.subscribe_url.as_deref() else {
        return;
    };
    let on_sns = reqwest::Url::parse(url).ok().is_some_and(|u| {
        u.scheme() == "https"
            && u.host_str()
                .is_some_and(|h| h.starts_with("sns.") && (h.ends_with(".amazonaws.com") || h.ends_with(".amazonaws.com.cn")))
    });
    if !on_sns {
        tracing::warn!(%url, "a subscription confirmation whose SubscribeURL is not SNS's; not visited");
        return;
    }
    match reqwest::get(url).await.and_then(reqwest::Response::error_for_status) {
        Ok(_) => tracing::info!(topic = %message.topic_arn, "inbound-text subscription confirmed"),
        Err(e) => tracing::error!(topic = %message.topic_arn, error = %e, "inbound-text subscription not confirmed"),
    }
}

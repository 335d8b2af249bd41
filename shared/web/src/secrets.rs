//! New credentials, from the operating system's randomness: an account's API token, its
//! inbound webhook secret, an outbound endpoint's signing secret. Either face makes them (the
//! API's rotate calls, the dashboard's buttons); each is shown once.

use axum::http::StatusCode;
use base64::Engine as _;

use openloop_core::owner::account::WebhookSecret;
use openloop_edge::http::ApiError;

/// 32 random bytes, or a 503 when the system has none to give.
pub fn random_bytes() -> Result<[u8; 32], ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "no_randomness", e.to_string()))?;
    Ok(bytes)
}

/// A new owner API token (`olk_` and 32 random bytes in hex), as accounts are made with.
pub fn new_api_token() -> Result<String, ApiError> {
    Ok(format!("olk_{}", hex::encode(random_bytes()?)))
}

/// A new inbound webhook secret (`whsec_` and 32 random bytes in base64).
pub fn new_webhook_secret() -> Result<WebhookSecret, ApiError> {
    Ok(WebhookSecret::new(format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(random_bytes()?)
    )))
}

/// A new outbound endpoint's signing secret: `whsec_` and 24 random bytes in base64
/// (Standard Webhooks).
pub fn new_endpoint_secret() -> Result<WebhookSecret, ApiError> {
    let bytes = random_bytes()?;
    Ok(WebhookSecret::new(format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes[..24])
    )))
}

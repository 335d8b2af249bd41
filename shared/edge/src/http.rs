//! What the HTTP functions (api, webhooks) share: the CONTRACT.md error response, strict JSON
//! bodies, bearer tokens compared in constant time. Handlers stay a dozen lines.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use openloop_core::contract::{ErrorBody, error_response};
use openloop_core::error::EngineError;

/// An error as CONTRACT.md shapes it.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorBody::new(code, message),
        }
    }
    pub fn unauthorized(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", format!("{what} not found"))
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let (status, body) = error_response(&e);
        if status >= 500 {
            tracing::error!(error = ?e, "request failed");
        }
        Self {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.body)).into_response()
    }
}

/// Parse a JSON body: syntax errors are 400, well-formed but wrong shapes 422.
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        if e.is_data() {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_body",
                format!("the body is not valid for this call: {e}"),
            )
        } else {
            ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
        }
    })
}

/// The bearer token of a request, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Compare a presented secret with the expected one in constant time.
pub fn secret_matches(presented: &str, expected: &str) -> bool {
    // Hash both first so the comparison's length does not depend on the secret's.
    Sha256::digest(presented.as_bytes())
        .ct_eq(&Sha256::digest(expected.as_bytes()))
        .into()
}

/// How API tokens are stored: only their SHA-256.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A 413 for bodies over the limit (axum's own rejection is plain text).
pub fn body_error(err: axum::extract::rejection::BytesRejection) -> ApiError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "the body is larger than 256 KiB")
    } else {
        ApiError::bad_request("unreadable_body", err.body_text())
    }
}

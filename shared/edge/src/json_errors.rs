//! Every error in the contract's shape, whoever made it: axum's extractors answer their
//! rejections (a path id with an invalid percent-escape, a query with a repeated key, a body
//! of the wrong content type) in plain text, and a method router's own 405 is empty. This
//! middleware, on every router, turns any error response that is neither JSON nor a page
//! (`text/html`, the dashboard's and the unsubscribe page's) into
//! `{"error":{"code","message"}}` with the same status. Handlers' own errors are JSON already
//! and pass untouched. Checked through the routers in `tests/stack/walls.rs`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::http::ApiError;

/// The most of a rejection's text kept in the message (it echoes the request).
const MESSAGE_CHARS: usize = 300;

/// Middleware: error responses in the contract's shape. Use with `axum::middleware::map_response`.
pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") || content_type.starts_with("text/html") {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let mut shaped = shape(status, &text).into_response();
    // Keep what the router said beside the body (an `Allow`, a `WWW-Authenticate`…).
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            shaped.headers_mut().insert(name.clone(), value.clone());
        }
    }
    shaped
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    shaped
}

/// The contract's error for a status and a rejection's text.
fn shape(status: StatusCode, text: &str) -> ApiError {
    let text = text.trim();
    let code = if text.starts_with("Failed to deserialize query string") {
        "invalid_query"
    } else if text.starts_with("Invalid URL") || text.contains("path argument") {
        "invalid_path"
    } else {
        match status {
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::UNPROCESSABLE_ENTITY => "invalid_body",
            StatusCode::UNAUTHORIZED => "unauthorized",
            s if s.is_server_error() => "internal_error",
            _ => "bad_request",
        }
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("the request was refused").to_owned()
    } else {
        text.chars().filter(|c| !c.is_control()).take(MESSAGE_CHARS).collect()
    };
    ApiError::new(status, code, message)
}

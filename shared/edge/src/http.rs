//! What the HTTP functions (api, webhooks) share: the CONTRACT.md error response — the one
//! place a domain error gets its HTTP status — strict JSON bodies, bearer tokens compared in
//! constant time. Handlers stay a dozen lines.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use openloop_core::contract::{ErrorBody, error_body};
use openloop_core::kernel::error::StoreError;
use openloop_core::task::error::EngineError;

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

/// The HTTP status of a domain error: bad input 422, a bad cursor 400, unknown
/// 404, a conflict 409, a limit 429, anything that may pass on a retry 503.
pub fn status(e: &EngineError) -> StatusCode {
    match e {
        EngineError::Invalid(_) | EngineError::MemberSuppressed { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        EngineError::NotFound { .. } => StatusCode::NOT_FOUND,
        EngineError::InvalidTransition { .. } | EngineError::InvalidState { .. } | EngineError::StaleVersion | EngineError::Taken(_) => {
            StatusCode::CONFLICT
        }
        EngineError::Store(StoreError::InvalidCursor) => StatusCode::BAD_REQUEST,
        EngineError::Paused(_) | EngineError::Store(_) | EngineError::Dependency(_) | EngineError::NotConfigured(_) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        EngineError::Limited(_) => StatusCode::TOO_MANY_REQUESTS,
        EngineError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let status = status(&e);
        if status.is_server_error() {
            tracing::error!(error = ?e, "request failed");
        }
        Self {
            status,
            body: error_body(&e),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let challenge = self.status == StatusCode::UNAUTHORIZED;
        let mut response = (self.status, axum::Json(self.body)).into_response();
        if challenge {
            // RFC 9110 §11.6.1: a 401 names the scheme it wants.
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"openloop\""),
            );
        }
        response
    }
}

/// Parse a JSON body: syntax errors are 400, well-formed but wrong shapes 422 — a number out
/// of a whole-number field's range (`-5`, `1e126`, `1e-131` for a limit) among them — the
/// message naming the field (`member_weekly_limit: invalid value…`).
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let (path, e) = match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(value) => match deserializer.end() {
            Ok(()) => return Ok(value),
            Err(e) => (".".to_owned(), e),
        },
        Err(e) => (e.path().to_string(), e.into_inner()),
    };
    // serde_json calls some wrong shapes syntax (an integer where an enum's name belongs, as
    // in `[1]` for an object): a body that is valid JSON is well-formed, so its error is 422.
    let well_formed = e.is_data() || serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
    Err(if well_formed {
        let field = if path == "." { String::new() } else { format!("{path}: ") };
        // A field kept to a rule (`kernel::bounded`) refused it: its code, the field named.
        let text = e.to_string();
        if let Some((code, message)) = openloop_core::kernel::bounded::parse_refusal(&text) {
            let message = message.strip_prefix("the value ").unwrap_or(message);
            let field = if path == "." { "the value".to_owned() } else { path };
            return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, format!("{field} {message}")));
        }
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            format!("the body is not valid for this call: {field}{e}"),
        )
    } else {
        ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
    })
}

/// A query string read into `T` as a JSON body is ([`json_body`]): a value a field's rule
/// refuses (`kernel::bounded`) is `422` with the rule's code, naming the parameter; a query
/// that does not parse, or a value of the wrong kind, is `400 invalid_query`. Use as
/// `Params(params): Params<T>`.
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, ApiError> {
        let malformed = |e: String| ApiError::bad_request("invalid_query", format!("Failed to deserialize query string: {e}"));
        let axum::extract::Query(pairs) =
            axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri).map_err(|e| malformed(e.body_text()))?;
        let mut fields = serde_json::Map::new();
        for (key, value) in pairs {
            if fields.insert(key.clone(), serde_json::Value::String(value)).is_some() {
                return Err(malformed(format!("{key} is given twice")));
            }
        }
        match serde_path_to_error::deserialize::<_, T>(serde_json::Value::Object(fields)) {
            Ok(value) => Ok(Params(value)),
            Err(e) => {
                let path = e.path().to_string();
                let text = e.into_inner().to_string();
                match openloop_core::kernel::bounded::parse_refusal(&text) {
                    Some((code, message)) => {
                        let message = message.strip_prefix("the value ").unwrap_or(message);
                        Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, format!("{path} {message}")))
                    }
                    None => Err(malformed(format!("{path}: {text}"))),
                }
            }
        }
    }
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

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("the body is larger than this endpoint takes ({} KiB)", limit / 1024),
    )
}

/// A 405 in the contract's shape: every router's `method_not_allowed_fallback` (axum's own is
/// an empty body).
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method",
    )
}

/// A 413 for bodies over the limit (axum's own rejection is plain text).
pub fn body_error(err: axum::extract::rejection::BytesRejection) -> ApiError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            "the body is larger than this endpoint takes",
        )
    } else {
        ApiError::bad_request("unreadable_body", err.body_text())
    }
}

/// Middleware: a request that declares a body over `limit` is refused with a 413 in the
/// contract's shape before any handler runs — also on calls that read no body (skip, cancel),
/// which would otherwise take any size. Use with `axum::middleware::from_fn`.
pub async fn limit_declared_body(limit: usize, request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit).into_response();
    }
    next.run(request).await
}

/// Middleware: the query's empty parameters dropped before any handler reads it, so an empty
/// one is an absent one on every route (CONTRACT.md writes the lists as
/// `?status=&member_id=&limit=&cursor=`). Use with `axum::middleware::map_request`.
pub async fn drop_empty_query_params(mut request: axum::extract::Request) -> axum::extract::Request {
    let Some(query) = request.uri().query() else {
        return request;
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| pair.split_once('=').is_some_and(|(_, value)| !value.is_empty()))
        .collect();
    if kept.len() == query.split('&').count() {
        return request;
    }
    let path = request.uri().path();
    let path_and_query = if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    };
    let mut parts = request.uri().clone().into_parts();
    if let Ok(pq) = path_and_query.parse() {
        parts.path_and_query = Some(pq);
        if let Ok(uri) = axum::http::Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use openloop_core::kernel::error::InvalidInput;

    fn status_and_code(e: EngineError) -> (u16, String) {
        let error = ApiError::from(e);
        (error.status.as_u16(), error.body.error.code)
    }

    /// Issue 47: every body error is in the contract's codes — valid JSON of the wrong shape
    /// is 422 (`[1]` where an object with an enum belongs), only JSON that does not parse 400.
    #[test]
    fn a_well_formed_body_of_the_wrong_shape_is_422_and_only_broken_json_400() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        enum Kind {
            #[serde(rename = "call")]
            Call,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Contact {
            kind: Kind,
        }
        for body in [
            &b"[1]"[..],
            b"[]",
            b"1",
            b"\"call\"",
            b"{\"kind\": 1}",
            b"{\"kind\": \"fax\"}",
            b"[[1]]",
        ] {
            let status = json_body::<Contact>(body).map(|_| ()).map_err(|e| e.status.as_u16());
            assert_eq!(status, Err(422), "{}", String::from_utf8_lossy(body));
        }
        for body in [&b"[1"[..], b"{\"kind\":", b"{\"kind\": \"call\"} x", b""] {
            let status = json_body::<Contact>(body).map(|_| ()).map_err(|e| e.status.as_u16());
            assert_eq!(status, Err(400), "{}", String::from_utf8_lossy(body));
        }
        assert!(json_body::<Contact>(br#"{"kind": "call"}"#).is_ok());
    }

    #[test]
    fn each_domain_error_has_its_contract_status_and_code() {
        let refusal = openloop_core::task::flood::Refusal {
            limit: openloop_core::task::flood::Limit::DailyTasks,
            max: 50,
        };
        let cases = [
            (
                EngineError::Invalid(InvalidInput::new("invalid_month", "no such month")),
                422,
                "invalid_month",
            ),
            (EngineError::NotFound { what: "task" }, 404, "not_found"),
            (EngineError::StaleVersion, 409, "stale_version"),
            (
                EngineError::InvalidState {
                    status: openloop_core::task::TaskStatus::Waiting,
                    action: "feedback",
                },
                409,
                "invalid_state",
            ),
            (EngineError::Paused("paused".into()), 503, "paused"),
            (EngineError::Store(StoreError::InvalidCursor), 400, "invalid_cursor"),
            (EngineError::Dependency("down".into()), 503, "dependency_unavailable"),
            (EngineError::Limited(refusal), 429, "limited"),
            (
                EngineError::Taken(InvalidInput::new("sending_domain_taken", "another account's")),
                409,
                "sending_domain_taken",
            ),
            (
                EngineError::NotConfigured(InvalidInput::new("connector_not_configured", "no connector")),
                503,
                "connector_not_configured",
            ),
            (
                EngineError::Unauthorized(InvalidInput::new("current_token_required", "rotated out")),
                401,
                "current_token_required",
            ),
        ];
        for (error, status, code) in cases {
            assert_eq!(status_and_code(error), (status, code.to_owned()));
        }
    }

    #[tokio::test]
    async fn empty_query_parameters_are_dropped_and_the_rest_kept() {
        let request = |uri: &str| {
            axum::extract::Request::builder()
                .uri(uri)
                .body(axum::body::Body::empty())
                .unwrap_or_default()
        };
        let cases = [
            ("/api/v1/tasks?status=&member_id=&limit=&cursor=", "/api/v1/tasks"),
            ("/api/v1/tasks?status=&limit=20", "/api/v1/tasks?limit=20"),
            ("/api/v1/tasks?limit=20&cursor=abc", "/api/v1/tasks?limit=20&cursor=abc"),
            ("/api/v1/tasks?flag&a=b=", "/api/v1/tasks?a=b="),
            ("/api/v1/tasks", "/api/v1/tasks"),
        ];
        for (given, expected) in cases {
            let out = drop_empty_query_params(request(given)).await;
            assert_eq!(out.uri().to_string(), expected, "{given}");
        }
    }
}

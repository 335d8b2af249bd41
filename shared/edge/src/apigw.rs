//! The HTTP functions in Lambda (api, dashboard, webhooks): an API Gateway HTTP API event
//! (payload format 2.0, the only kind the template routes) becomes an `http::Request` for the
//! function's axum router, and the router's response goes back as the event's answer.
//!
//! The format is AWS's ("Working with AWS Lambda proxy integrations for HTTP APIs"):
//! `rawPath` and `rawQueryString` as the client sent them, `headers` with repeated values
//! joined by commas, `cookies` apart from the headers, and a body that is text or base64.
//! The answer puts `Set-Cookie` headers in `cookies` and sends a body as text only when it is
//! uncompressed text (JSON, HTML, CSS, JavaScript, XML) and valid UTF-8; anything else goes as
//! base64 (the gzipped OpenAPI document, for one).
//!
//! Ours rather than `lambda_http`'s: the few fields we use, read straight, keep each HTTP
//! binary about 0.2 MB smaller (no character-set tables, no event kinds we never receive).
//! An event that cannot become a request (an unknown method, a header that is not a header)
//! is answered 400 with CONTRACT.md's error body, never an invocation error.

use std::collections::BTreeMap;
use std::convert::Infallible;

use axum::Router;
use axum::body::Body;
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE, COOKIE, SET_COOKIE};
use axum::http::response::Parts;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use axum::response::IntoResponse;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use http_body_util::BodyExt;
use lambda_runtime::{LambdaEvent, service_fn};
use serde::{Deserialize, Serialize};
use tower::ServiceExt;

use crate::http::ApiError;

/// What a function's `main` returns.
pub use lambda_runtime::Error;

/// Serve `router` to API Gateway until the Lambda runtime stops the process.
pub async fn run(router: Router) -> Result<(), Error> {
    let router = &router;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<HttpApiEvent>| async move {
        Ok::<_, Infallible>(answer(router.clone(), event.payload).await)
    }))
    .await
}

/// One event through the router.
pub async fn answer(router: Router, event: HttpApiEvent) -> HttpApiAnswer {
    let response = match event.into_request() {
        Ok(request) => match router.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
        Err(refused) => refused.into_response(),
    };
    HttpApiAnswer::from_response(response).await
}

/// The fields of a payload 2.0 event that make a request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpApiEvent {
    #[serde(default)]
    raw_path: Option<String>,
    #[serde(default)]
    raw_query_string: Option<String>,
    #[serde(default)]
    cookies: Option<Vec<String>>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    request_context: RequestContext,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    is_base64_encoded: bool,
}

#[derive(Debug, Deserialize)]
struct RequestContext {
    http: HttpDescription,
}

#[derive(Debug, Deserialize)]
struct HttpDescription {
    method: String,
}

impl HttpApiEvent {
    fn into_request(self) -> Result<Request<Body>, ApiError> {
        let invalid = |what: String| ApiError::bad_request("invalid_request", what);
        let method = Method::from_bytes(self.request_context.http.method.as_bytes())
            .map_err(|_| invalid(format!("unknown method {:?}", self.request_context.http.method)))?;
        let path = match self.raw_path.as_deref() {
            Some(path) if path.starts_with('/') => path.to_owned(),
            Some(path) => format!("/{path}"),
            None => "/".to_owned(),
        };
        let uri = match self.raw_query_string.as_deref() {
            Some(query) if !query.is_empty() => format!("{path}?{query}"),
            _ => path,
        };
        let body = match (self.body, self.is_base64_encoded) {
            (None, _) => Vec::new(),
            (Some(text), false) => text.into_bytes(),
            (Some(encoded), true) => BASE64
                .decode(encoded)
                .map_err(|_| invalid("the body is not valid base64".to_owned()))?,
        };
        let mut request = Request::builder()
            .method(method)
            .uri(&uri)
            .body(Body::from(body))
            .map_err(|_| invalid(format!("not a request path: {uri:?}")))?;
        let headers = request.headers_mut();
        for (name, value) in self.headers.unwrap_or_default() {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid(format!("not a header name: {name:?}")))?;
            let value = HeaderValue::from_str(&value).map_err(|_| invalid(format!("not a value for header {name}")))?;
            headers.append(name, value);
        }
        if let Some(cookies) = self.cookies.filter(|cookies| !cookies.is_empty()) {
            let joined = HeaderValue::from_str(&cookies.join("; ")).map_err(|_| invalid("not a cookie".to_owned()))?;
            headers.insert(COOKIE, joined);
        }
        Ok(request)
    }
}

/// A payload 2.0 answer.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpApiAnswer {
    pub status_code: u16,
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cookies: Vec<String>,
    pub body: String,
    pub is_base64_encoded: bool,
}

impl HttpApiAnswer {
    async fn from_response(response: Response<Body>) -> Self {
        let (parts, body) = response.into_parts();
        match body.collect().await {
            Ok(collected) => Self::from_parts(&parts, &collected.to_bytes()),
            Err(e) => {
                // A body that fails while being read is our fault: a 500, and the log says why.
                tracing::error!(error = %e, "the response body could not be read");
                let failed = ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the response could not be completed");
                let (parts, body) = failed.into_response().into_parts();
                let bytes = body.collect().await.map(|collected| collected.to_bytes()).unwrap_or_default();
                Self::from_parts(&parts, &bytes)
            }
        }
    }

    fn from_parts(parts: &Parts, bytes: &[u8]) -> Self {
        let mut headers = BTreeMap::<String, String>::new();
        let mut cookies = Vec::new();
        for (name, value) in &parts.headers {
            let Ok(value) = value.to_str() else { continue };
            if name == SET_COOKIE {
                cookies.push(value.to_owned());
            } else {
                headers
                    .entry(name.as_str().to_owned())
                    .and_modify(|joined| {
                        joined.push(',');
                        joined.push_str(value);
                    })
                    .or_insert_with(|| value.to_owned());
            }
        }
        let texty = !parts.headers.contains_key(CONTENT_ENCODING)
            && parts.headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(is_text);
        let (body, is_base64_encoded) = match std::str::from_utf8(bytes) {
            Ok(text) if texty || bytes.is_empty() => (text.to_owned(), false),
            _ => (BASE64.encode(bytes), true),
        };
        Self {
            status_code: parts.status.as_u16(),
            headers,
            cookies,
            body,
            is_base64_encoded,
        }
    }
}

/// A media type whose body API Gateway may carry as text.
fn is_text(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || ["application/json", "application/javascript", "application/xml", "application/yaml"].contains(&essence.as_str())
        || ["+json", "+xml", "+yaml"].iter().any(|suffix| essence.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::{get, post};
    use serde_json::json;

    fn echo() -> Router {
        Router::new()
            .route(
                "/echo/{name}",
                post(|request: Request<Body>| async move {
                    let (parts, body) = request.into_parts();
                    let body = body.collect().await.expect("in the test").to_bytes();
                    let header = |name: &str| parts.headers.get(name).map(|v| v.to_str().expect("in the test").to_owned());
                    axum::Json(json!({
                        "method": parts.method.as_str(),
                        "uri": parts.uri.to_string(),
                        "cookie": header("cookie"),
                        "accept": header("accept"),
                        "body": String::from_utf8_lossy(&body),
                    }))
                }),
            )
            .route(
                "/gzip",
                get(|| async {
                    (
                        [(CONTENT_TYPE, "application/json"), (CONTENT_ENCODING, "gzip")],
                        vec![0x1f_u8, 0x8b, 0, 0xff],
                    )
                }),
            )
            .route(
                "/cookies",
                get(|| async {
                    let mut response = Response::new(Body::from("<p>ok</p>"));
                    let headers = response.headers_mut();
                    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
                    headers.append(SET_COOKIE, HeaderValue::from_static("a=1; Secure"));
                    headers.append(SET_COOKIE, HeaderValue::from_static("b=2; HttpOnly"));
                    headers.append("vary", HeaderValue::from_static("accept"));
                    headers.append("vary", HeaderValue::from_static("cookie"));
                    response
                }),
            )
    }

    fn event(value: serde_json::Value) -> HttpApiEvent {
        serde_json::from_value(value).expect("a payload 2.0 event")
    }

    #[tokio::test]
    async fn an_event_is_the_request_the_client_sent() {
        let answer = answer(
            echo(),
            event(json!({
                "version": "2.0",
                "routeKey": "$default",
                "rawPath": "/echo/x%20y",
                "rawQueryString": "a=1&b=%2F",
                "cookies": ["s=abc", "t=def"],
                "headers": {"accept": "application/json,text/html", "content-type": "text/plain"},
                "requestContext": {"http": {"method": "POST", "path": "/echo/x y", "sourceIp": "192.0.2.1"}, "stage": "$default"},
                "body": "aGVsbG8=",
                "isBase64Encoded": true
            })),
        )
        .await;
        assert_eq!(answer.status_code, 200);
        assert!(!answer.is_base64_encoded);
        let seen: serde_json::Value = serde_json::from_str(&answer.body).expect("in the test");
        assert_eq!(
            seen,
            json!({
                "method": "POST",
                "uri": "/echo/x%20y?a=1&b=%2F",
                "cookie": "s=abc; t=def",
                "accept": "application/json,text/html",
                "body": "hello",
            })
        );
        assert_eq!(answer.headers["content-type"], "application/json");
    }

    #[tokio::test]
    async fn set_cookies_go_apart_and_repeated_headers_are_joined() {
        let answer = answer(
            echo(),
            event(json!({"rawPath": "/cookies", "requestContext": {"http": {"method": "GET"}}})),
        )
        .await;
        assert_eq!(answer.cookies, vec!["a=1; Secure", "b=2; HttpOnly"]);
        assert!(!answer.headers.contains_key("set-cookie"));
        assert_eq!(answer.headers["vary"], "accept,cookie");
        assert_eq!((answer.body.as_str(), answer.is_base64_encoded), ("<p>ok</p>", false));
    }

    #[tokio::test]
    async fn a_compressed_body_goes_as_base64() {
        let answer = answer(
            echo(),
            event(json!({"rawPath": "/gzip", "requestContext": {"http": {"method": "GET"}}})),
        )
        .await;
        assert!(answer.is_base64_encoded);
        assert_eq!(BASE64.decode(&answer.body).expect("in the test"), vec![0x1f, 0x8b, 0, 0xff]);
        assert_eq!(answer.headers["content-encoding"], "gzip");
    }

    #[tokio::test]
    async fn an_event_that_is_no_request_is_a_400_with_the_error_body() {
        for bad in [
            json!({"rawPath": "/echo/x", "requestContext": {"http": {"method": "GE T"}}}),
            json!({"rawPath": "/echo/x", "requestContext": {"http": {"method": "POST"}}, "body": "%%%", "isBase64Encoded": true}),
            json!({"rawPath": "/echo/x", "requestContext": {"http": {"method": "POST"}}, "headers": {"bad header": "1"}}),
            json!({"rawPath": "/echo/x", "requestContext": {"http": {"method": "POST"}}, "headers": {"x": "line\nbreak"}}),
        ] {
            let answer = answer(echo(), event(bad.clone())).await;
            assert_eq!(answer.status_code, 400, "{bad}");
            let body: serde_json::Value = serde_json::from_str(&answer.body).expect("in the test");
            assert_eq!(body["error"]["code"], "invalid_request", "{bad}");
        }
    }

    #[tokio::test]
    async fn an_unknown_path_is_the_routers_404_and_nulls_are_absent_fields() {
        let answer = answer(
            echo(),
            event(
                json!({"rawPath": "/nowhere", "rawQueryString": "", "cookies": null, "headers": null, "body": null,
                         "requestContext": {"http": {"method": "GET"}}}),
            ),
        )
        .await;
        assert_eq!(answer.status_code, 404);
        assert_eq!((answer.body.as_str(), answer.is_base64_encoded), ("", false));
    }

    #[test]
    fn text_types() {
        for text in [
            "text/html; charset=utf-8",
            "application/json",
            "application/problem+json",
            "TEXT/CSS",
            "application/javascript",
        ] {
            assert!(is_text(text), "{text}");
        }
        for binary in ["image/png", "application/octet-stream", "application/gzip", "application/jsonx"] {
            assert!(!is_text(binary), "{binary}");
        }
    }
}

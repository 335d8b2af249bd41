//! DynamoDB behind a proxy that fails as [`crate::faults::Dice`] says, for the fault harness
//! on the emulator: every request the store makes is, at the dice's rate, throttled
//! (`ThrottlingException`, which the SDK retries), failed before it reaches the table
//! (`InternalServerError`), or applied with its answer lost (the table's answer thrown away
//! and a 500 sent instead, which DynamoDB can answer). A killed function's requests are
//! refused with an error the SDK does not retry, so nothing after the kill is written.
//!
//! The SDK's standard retries are kept, three attempts, with their back-off shortened to a
//! few milliseconds: the test waits for no real second.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use openloop_aws::dynamo::DynamoStore;

use crate::faults::Dice;

#[derive(Clone)]
struct Proxy {
    upstream: String,
    client: reqwest::Client,
    dice: Arc<Dice>,
}

/// What the emulator answered a request passed on as it came.
pub struct Upstream {
    pub status: StatusCode,
    content_type: Option<axum::http::HeaderValue>,
    bytes: Bytes,
}

impl Upstream {
    /// Pass `method`, `uri`, `headers` and `body` on to `upstream` (the emulator); `None` when
    /// it did not answer.
    pub async fn ask(
        client: &reqwest::Client,
        upstream: &str,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Option<Self> {
        let url = format!("{upstream}{}", uri.path_and_query().map_or("/", |p| p.as_str()));
        let mut request = client.request(method, url).body(body);
        for (name, value) in headers {
            if name != axum::http::header::HOST && name != axum::http::header::CONTENT_LENGTH {
                request = request.header(name, value);
            }
        }
        let answer = request.send().await.ok()?;
        let status = answer.status();
        let content_type = answer.headers().get(reqwest::header::CONTENT_TYPE).cloned();
        let bytes = answer.bytes().await.unwrap_or_default();
        Some(Self {
            status,
            content_type,
            bytes,
        })
    }

    /// The answer as the proxy's own.
    pub fn answer(self) -> Response {
        let mut response = (self.status, self.bytes).into_response();
        if let Some(content_type) = self.content_type {
            response.headers_mut().insert(axum::http::header::CONTENT_TYPE, content_type);
        }
        response
    }
}

/// An error as DynamoDB answers it.
pub fn dynamodb_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = format!(r#"{{"__type":"{kind}","message":"{message}"}}"#);
    (status, [("content-type", "application/x-amz-json-1.0")], body).into_response()
}

async fn forward(State(proxy): State<Proxy>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let dice = &proxy.dice;
    if dice.killed_at_this_call() {
        return dynamodb_error(
            StatusCode::BAD_REQUEST,
            "com.amazon.coral.validate#ValidationException",
            "injected: the function was killed",
        );
    }
    let third = dice.rate() / 3.0;
    if dice.roll_at("dynamodb requests throttled (the SDK tries again)", third) {
        return dynamodb_error(
            StatusCode::BAD_REQUEST,
            "com.amazonaws.dynamodb.v20120810#ThrottlingException",
            "injected: rate exceeded",
        );
    }
    if dice.roll_at("dynamodb requests failed before the table (InternalServerError)", third) {
        return dynamodb_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "com.amazonaws.dynamodb.v20120810#InternalServerError",
            "injected: internal server error",
        );
    }
    let Some(answer) = Upstream::ask(&proxy.client, &proxy.upstream, method, &uri, &headers, body).await else {
        return (StatusCode::BAD_GATEWAY, "the emulator did not answer").into_response();
    };
    if answer.status.is_success() && dice.roll_at("dynamodb writes and reads applied, answer lost", third) {
        return dynamodb_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "com.amazonaws.dynamodb.v20120810#InternalServerError",
            "injected: the answer was lost",
        );
    }
    answer.answer()
}

/// The DynamoDB store on `table`, its requests through a faulting proxy of `dice`'s.
pub async fn faulty_dynamodb(clients: &openloop_edge::config::Clients, table: &str, dice: &Arc<Dice>) -> DynamoStore {
    let proxy = Proxy {
        upstream: crate::endpoint(),
        client: reqwest::Client::new(),
        dice: dice.clone(),
    };
    let app = axum::Router::new().fallback(forward).with_state(proxy);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let url = format!("http://{}", listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}")));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let retries = RetryConfig::standard()
        .with_max_attempts(3)
        .with_initial_backoff(Duration::from_millis(2))
        .with_max_backoff(Duration::from_millis(20));
    let config = clients
        .dynamodb
        .config()
        .to_builder()
        .endpoint_url(url)
        .retry_config(retries)
        .build();
    DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(config), table)
}

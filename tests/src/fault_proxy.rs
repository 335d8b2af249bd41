//! DynamoDB behind a proxy that fails as [`crate::faults::Dice`] says, for the fault harness
//! on the emulator: every request the store makes is, at the dice's rate, throttled
//! (`ThrottlingException`, which the SDK retries), failed before it reaches the table
//! (`InternalServerError`), a transaction cancelled by another on the same item
//! (`TransactionConflict`), or applied with its answer lost (the table's answer thrown away
//! and a 500 sent instead, which DynamoDB can answer), or answered slower than the client
//! waits for an attempt — held before it reaches the table (so it lands after the SDK gave it
//! up and perhaps after its retry) or after. A killed function's requests are refused with an
//! error the SDK does not retry, so nothing after the kill is written.
//!
//! The SDK's standard retries are kept, three attempts, with their back-off shortened to a
//! few milliseconds and the attempt timeout to [`ATTEMPT_TIMEOUT`]: a slow answer costs the
//! run [`SLOW`] of real time, and nothing else waits.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use openloop_aws::dynamo::DynamoStore;

use crate::faults::Dice;

/// The faulty store's attempt timeout (the product's is
/// [`openloop_aws::clients::DYNAMODB_ATTEMPT_TIMEOUT`]), shortened as the back-off is — but
/// well above what the emulator takes when the machine is busy, so only the proxy's own slow
/// answers pass it.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a slow answer takes: past [`ATTEMPT_TIMEOUT`].
pub const SLOW: Duration = Duration::from_millis(1300);

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
    // A transaction another one is writing the same item with: cancelled, that item's reason
    // `TransactionConflict`, the others' `None`, as DynamoDB answers it; nothing applied.
    let transaction = headers
        .get("x-amz-target")
        .is_some_and(|t| t.as_bytes().ends_with(b".TransactWriteItems"));
    if transaction
        && dice.roll_at(
            "dynamodb transactions cancelled by another on the same item (TransactionConflict)",
            third,
        )
    {
        let items = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|b| b["TransactItems"].as_array().map(Vec::len))
            .unwrap_or(1)
            .max(1);
        let conflicted = dice.pick(items as u32) as usize - 1;
        let reasons: Vec<serde_json::Value> = (0..items)
            .map(|i| match i == conflicted {
                true => serde_json::json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}),
                false => serde_json::json!({"Code": "None"}),
            })
            .collect();
        let body = serde_json::json!({
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons",
            "CancellationReasons": reasons,
        });
        return (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/x-amz-json-1.0")],
            body.to_string(),
        )
            .into_response();
    }
    // Slow answers are rarer (each costs real time). Held before the table, the request is
    // passed on by a task of its own, so it lands even after the SDK has given it up.
    let slow = dice.rate() / 64.0;
    let late = dice.roll_at("dynamodb requests slower than the attempt timeout, applied late", slow);
    let slow_answer = !late && dice.roll_at("dynamodb requests applied, answered after the attempt timeout", slow);
    let ask = tokio::spawn(async move {
        if late {
            tokio::time::sleep(SLOW).await;
        }
        Upstream::ask(&proxy.client, &proxy.upstream, method, &uri, &headers, body).await
    });
    let Ok(Some(answer)) = ask.await else {
        return (StatusCode::BAD_GATEWAY, "the emulator did not answer").into_response();
    };
    if slow_answer {
        tokio::time::sleep(SLOW).await;
    }
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
        .timeout_config(openloop_aws::clients::dynamodb_timeouts(ATTEMPT_TIMEOUT, Duration::from_secs(8)))
        .build();
    DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(config), table)
}

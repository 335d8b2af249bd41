//! A fake PushPress for the stack tests: the Platform API v3 as `../shared/PUSHPRESS.md`
//! describes it, served from data a test sets — `GET /company`, customers and enrollments
//! paged by `page`/`limit` (`{"data": {"resultArray": […]}}`, a short page is the last),
//! check-ins of each kind filtered by `after` (unix seconds; class check-ins carry millisecond
//! timestamps, the others seconds), the appointment check-ins by a `next` cursor, and
//! `GET /plans/{id}` (PushPress lists no plans), `GET/POST/DELETE /webhooks`. It checks the `API-KEY`, can be told to fail (429 with
//! `Retry-After`, 5xx) on one list page, and records every request; a request to any other
//! endpoint is recorded as `unknown` (and answered 404), so a test can assert there was none.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// What the fake knows and does.
#[derive(Default)]
pub struct FakeState {
    pub key: String,
    pub company: Value,
    pub customers: Vec<Value>,
    pub enrollments: Vec<Value>,
    /// Plans, each read by id.
    pub plans: Vec<Value>,
    /// By kind (`class`, `event`, `open`, `appointment`), each with a `timestamp`.
    pub checkins: BTreeMap<String, Vec<Value>>,
    pub webhooks: Vec<Value>,
    /// `(list path, page, status)`: that page answers `status` until told otherwise.
    pub failing_page: Option<(String, u32, u16)>,
    /// Every request: `(method, path?query)`.
    pub seen: Vec<(String, String)>,
    /// Requests to endpoints PushPress does not have.
    pub unknown: Vec<String>,
    next_webhook: u32,
}

/// A running fake; `base` is its `/v3` URL.
#[derive(Clone)]
pub struct FakePushPress {
    pub base: String,
    pub state: Arc<Mutex<FakeState>>,
}

impl FakePushPress {
    pub async fn start(key: &str) -> Self {
        let state = Arc::new(Mutex::new(FakeState {
            key: key.to_owned(),
            company: json!({"id": "cmp_renegade", "name": "CrossFit Renegade", "subdomain": "renegade",
                "defaultTimezone": "America/Denver", "phone": null, "email": null, "url": null}),
            ..FakeState::default()
        }));
        let app = axum::Router::new()
            .route("/v3/company", get(company))
            .route("/v3/customers", get(customers))
            .route("/v3/customers/{id}", get(customer))
            .route("/v3/enrollments", get(enrollments))
            .route("/v3/plans/{id}", get(plan))
            .route("/v3/checkins/{kind}", get(checkins))
            .route("/v3/webhooks", get(list_webhooks).post(create_webhook))
            .route("/v3/webhooks/{id}", axum::routing::delete(delete_webhook))
            .fallback(unknown)
            .layer(axum::middleware::from_fn_with_state(state.clone(), record))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base: format!("http://{addr}/v3"),
            state,
        }
    }

    pub fn with<T>(&self, f: impl FnOnce(&mut FakeState) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// How many requests matched `method` and started with `path_and_query`.
    pub fn asked(&self, method: &str, path_and_query: &str) -> usize {
        self.with(|s| s.seen.iter().filter(|(m, p)| m == method && p.starts_with(path_and_query)).count())
    }
}

type Fake = State<Arc<Mutex<FakeState>>>;

fn lock(state: &Arc<Mutex<FakeState>>) -> std::sync::MutexGuard<'_, FakeState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

async fn record(State(state): Fake, request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let path = request.uri().path_and_query().map(ToString::to_string).unwrap_or_default();
    let key_ok = {
        let mut s = lock(&state);
        s.seen.push((request.method().to_string(), path));
        request
            .headers()
            .get("API-KEY")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|k| k == s.key)
    };
    if !key_ok {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"message": "invalid API key"}))).into_response();
    }
    next.run(request).await
}

async fn unknown(State(state): Fake, method: Method, uri: Uri) -> Response {
    lock(&state).unknown.push(format!("{method} {uri}"));
    (StatusCode::NOT_FOUND, axum::Json(json!({"message": "no such endpoint"}))).into_response()
}

/// A page of `items` as PushPress pages, or the failure set for it.
fn paged(state: &FakeState, list: &str, items: &[Value], query: &BTreeMap<String, String>) -> Response {
    let page: u32 = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
    let limit: usize = query.get("limit").and_then(|p| p.parse().ok()).unwrap_or(10);
    if let Some((failing, at, status)) = &state.failing_page
        && failing == list
        && *at == page
    {
        let mut response = (
            StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "try later",
        )
            .into_response();
        if *status == 429 {
            response
                .headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from_static("0"));
        }
        return response;
    }
    let start = (page.max(1) as usize - 1) * limit;
    let slice: Vec<Value> = items.iter().skip(start).take(limit).cloned().collect();
    axum::Json(json!({"data": {"resultArray": slice}})).into_response()
}

async fn company(State(state): Fake) -> Response {
    axum::Json(lock(&state).company.clone()).into_response()
}

async fn customers(State(state): Fake, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let s = lock(&state);
    paged(&s, "customers", &s.customers, &query)
}

async fn customer(State(state): Fake, Path(id): Path<String>) -> Response {
    let s = lock(&state);
    match s.customers.iter().find(|c| c["id"] == id.as_str()) {
        Some(c) => axum::Json(c.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn plan(State(state): Fake, Path(id): Path<String>) -> Response {
    let s = lock(&state);
    match s.plans.iter().find(|p| p["id"] == id.as_str()) {
        Some(p) => axum::Json(p.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn enrollments(State(state): Fake, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let s = lock(&state);
    let items: Vec<Value> = match query.get("customerId") {
        Some(id) => s.enrollments.iter().filter(|e| e["customerId"] == id.as_str()).cloned().collect(),
        None => s.enrollments.clone(),
    };
    paged(&s, "enrollments", &items, &query)
}

fn seconds(timestamp: &Value) -> i64 {
    let t = timestamp.as_i64().unwrap_or(0);
    if t > 100_000_000_000 { t / 1000 } else { t }
}

async fn checkins(State(state): Fake, Path(kind): Path<String>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let s = lock(&state);
    let after: i64 = query.get("after").and_then(|a| a.parse().ok()).unwrap_or(0);
    let items: Vec<Value> = s
        .checkins
        .get(&kind)
        .into_iter()
        .flatten()
        .filter(|c| seconds(&c["timestamp"]) >= after)
        .filter(|c| query.get("customer").is_none_or(|id| c["customer"] == id.as_str()))
        .cloned()
        .collect();
    if kind != "appointment" {
        return paged(&s, &format!("checkins/{kind}"), &items, &query);
    }
    // The appointment list pages by an opaque cursor (here: the offset), 25 at a time.
    let offset: usize = query.get("next").and_then(|n| n.parse().ok()).unwrap_or(0);
    let slice: Vec<Value> = items.iter().skip(offset).take(25).cloned().collect();
    let next = (offset + 25 < items.len()).then(|| (offset + 25).to_string());
    axum::Json(json!({"data": {"resultArray": slice}, "next": next})).into_response()
}

async fn list_webhooks(State(state): Fake) -> Response {
    axum::Json(json!({"data": lock(&state).webhooks.clone()})).into_response()
}

async fn create_webhook(State(state): Fake, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let _ = headers;
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, axum::Json(json!({"message": "not JSON"}))).into_response();
    };
    let mut s = lock(&state);
    s.next_webhook += 1;
    let webhook = json!({"id": format!("wh_{}", s.next_webhook), "url": body["url"], "eventTypes": body["eventTypes"],
        "active": true, "signingSecret": format!("pp_secret_{}", s.next_webhook)});
    s.webhooks.push(webhook.clone());
    (StatusCode::CREATED, axum::Json(webhook)).into_response()
}

async fn delete_webhook(State(state): Fake, Path(id): Path<String>) -> Response {
    let mut s = lock(&state);
    let before = s.webhooks.len();
    s.webhooks.retain(|w| w["id"] != id.as_str());
    if s.webhooks.len() == before {
        StatusCode::NOT_FOUND.into_response()
    } else {
        StatusCode::NO_CONTENT.into_response()
    }
}

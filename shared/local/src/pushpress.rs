//! A PushPress of its own: the Platform API v3 as `../shared/PUSHPRESS.md` describes it, served
//! from data held here — `GET /company`, customers and enrollments paged by `page`/`limit`
//! (`{"data": {"resultArray": […]}}`, a short page is the last), check-ins of each kind
//! filtered by `after` (unix seconds; class check-ins carry millisecond timestamps, the others
//! seconds), the appointment check-ins by a `next` cursor, and `GET /plans/{id}` (PushPress
//! lists no plans), `GET/POST/DELETE /webhooks`. Nothing else: a request to any other endpoint
//! is answered 404 (and recorded as `unknown`, so a test can assert there was none).
//!
//! Two uses, one fake:
//! - **The local stand-in** ([`FakePushPress::stand_in`]): `make run` starts it on a loopback
//!   port when `OPENLOOP_PUSHPRESS_BASE_URL` is unset, seeded with the demo gym's members, so a
//!   gym can connect. It takes every `API-KEY` that starts with [`STAND_IN_KEY_PREFIX`]
//!   (`local_demo`, say) and refuses any other `401 {"message"}`, as PushPress refuses a key —
//!   which the owner gets as `422 pushpress_refused`.
//! - **The tests' fake** ([`FakePushPress::start`]): one key, data a test sets; it can be told
//!   to fail (429 with `Retry-After`, 5xx) on one list page, and records every request.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jiff::Timestamp;
use serde_json::{Value, json};

/// The `API-KEY`s the stand-in takes: every one that starts with this.
pub const STAND_IN_KEY_PREFIX: &str = "local_";

/// Which `API-KEY`s the fake takes; any other is refused `401`.
#[derive(Clone, Debug)]
pub enum Keys {
    /// Exactly this one (a test's).
    Exactly(String),
    /// Every one that starts with this (the stand-in's rule).
    StartingWith(String),
}

impl Default for Keys {
    fn default() -> Self {
        Self::Exactly(String::new())
    }
}

impl Keys {
    pub fn accepts(&self, key: &str) -> bool {
        match self {
            Self::Exactly(k) => key == k,
            Self::StartingWith(prefix) => key.starts_with(prefix.as_str()) && key.len() > prefix.len(),
        }
    }
}

/// What the fake knows and does.
#[derive(Default)]
pub struct FakeState {
    pub keys: Keys,
    /// Keep no record of requests (the stand-in, which runs for as long as `make run`).
    pub quiet: bool,
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
    /// The tests' fake: `key` is the only key it takes; it knows the company and nothing else
    /// until the test says (served until the test's runtime ends).
    pub async fn start(key: &str) -> Self {
        let state = FakeState {
            keys: Keys::Exactly(key.to_owned()),
            company: json!({"id": "cmp_renegade", "name": "CrossFit Renegade", "subdomain": "renegade",
                "defaultTimezone": "America/Denver", "phone": null, "email": null, "url": null}),
            ..FakeState::default()
        };
        let (fake, _server) = Self::serve(state, "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")))
            .await
            .unwrap_or_else(|e| panic!("the fake PushPress did not start: {e}"));
        fake
    }

    /// The local stand-in at `addr` (a loopback address), seeded with the demo gym as of
    /// `now`, taking the keys that start with [`STAND_IN_KEY_PREFIX`]. The handle ends it.
    pub async fn stand_in(addr: SocketAddr, now: Timestamp) -> std::io::Result<(Self, tokio::task::JoinHandle<()>)> {
        Self::serve(demo_gym(now), addr).await
    }

    /// Serve `state` at `addr`.
    pub async fn serve(state: FakeState, addr: SocketAddr) -> std::io::Result<(Self, tokio::task::JoinHandle<()>)> {
        let state = Arc::new(Mutex::new(state));
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
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the PushPress stand-in stopped");
            }
        });
        Ok((
            Self {
                base: format!("http://{addr}/v3"),
                state,
            },
            server,
        ))
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
        if !s.quiet {
            s.seen.push((request.method().to_string(), path));
        }
        request
            .headers()
            .get("API-KEY")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|k| s.keys.accepts(k))
    };
    if !key_ok {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"message": "invalid API key"}))).into_response();
    }
    next.run(request).await
}

async fn unknown(State(state): Fake, method: Method, uri: Uri) -> Response {
    let mut s = lock(&state);
    if !s.quiet {
        s.unknown.push(format!("{method} {uri}"));
    }
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

async fn create_webhook(State(state): Fake, body: axum::body::Bytes) -> Response {
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

/// The demo gym's members, as `make demo` names them, as PushPress would hold them at `now`:
/// five members on a monthly plan (one paused) and a lead, each member with class check-ins
/// over the last weeks — fewer lately for some, as a gym's are.
fn demo_gym(now: Timestamp) -> FakeState {
    let now = now.as_second();
    let day = 86_400;
    let mut state = FakeState {
        keys: Keys::StartingWith(STAND_IN_KEY_PREFIX.to_owned()),
        quiet: true,
        company: json!({"id": "cmp_demo", "name": "CrossFit Renegade", "subdomain": "renegade",
            "defaultTimezone": "America/New_York", "phone": null, "email": null, "url": null}),
        plans: vec![
            json!({"id": "plan_unlimited", "name": "Unlimited", "companyId": "cmp_demo", "category": {"name": "Membership"},
            "policies": {"allowClassCheckins": true, "allowOpenGymCheckins": true, "allow24HourAccess": false},
            "recurrenceDetails": {"type": "recurring"}}),
        ],
        ..FakeState::default()
    };
    // (first name, role, enrollment status, days since the last of 12 check-ins, days between them)
    let members = [
        ("Sarah", "member", Some("active"), 1, 3),
        ("Alex", "member", Some("active"), 16, 4),
        ("Jordan", "member", Some("alert"), 9, 5),
        ("Priya", "member", Some("active"), 2, 2),
        ("Sam", "member", Some("paused"), 30, 5),
        ("Lee", "lead", None, 0, 0),
    ];
    let mut class = Vec::new();
    for (i, (first, role, status, last, every)) in members.into_iter().enumerate() {
        let id = format!("usr_demo_{i}");
        state.customers.push(json!({"id": id, "companyId": "cmp_demo", "name": {"first": first, "last": "Demo", "nickname": null},
            "email": format!("{}@example.com", first.to_ascii_lowercase()), "phone": null, "role": role,
            "account": {"type": "primary"}, "membershipDetails": {"initialMembershipStartDate": if status.is_some() { json!("2025-09-01") } else { Value::Null }}}));
        let Some(status) = status else { continue };
        state.enrollments.push(
            json!({"id": format!("sub_demo_{i}"), "customerId": id, "companyId": "cmp_demo", "planId": "plan_unlimited",
            "billingSchedule": {"period": "month", "interval": 1}, "status": status, "startDate": "2025-09-01", "endDate": null,
            "lastCharge": null, "nextCharge": null, "paidUntil": null, "checkinDetails": {"checkins": 0, "limit": -1}, "entitlements": []}),
        );
        for n in 0..12 {
            let at = now - (last + n * every) * day;
            class.push(
                json!({"id": format!("chk_demo_{i}_{n}"), "customer": id, "company": "cmp_demo", "timestamp": at * 1000,
                "enrollmentId": format!("sub_demo_{i}"), "kind": "class", "name": "WOD", "classId": "cls_wod", "typeId": "typ_wod",
                "type": {"id": "typ_wod", "name": "WOD"}, "source": "", "result": "success", "failureReason": null, "role": "attendee"}),
            );
        }
    }
    state.checkins.insert("class".into(), class);
    state
}

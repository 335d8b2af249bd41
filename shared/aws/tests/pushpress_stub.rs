//! The PushPress connector against a local HTTP stub: what is asked (paths, key and company
//! headers), how a member is read, and that rate limits, server errors, timeouts, refusals and
//! malformed answers end in the right error — never in made-up facts.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use jiff::Timestamp;
use openloop_aws::pushpress::{PushPress, PushPressConfig};
use openloop_core::connector::{Connector, ConnectorError, MemberChange};
use openloop_core::event::MemberStatus;
use openloop_core::ids::{AccountId, MemberId};
use secrecy::SecretString;
use serde_json::json;

const KEY: &str = "pp-test-91c2-do-not-leak";

#[derive(Clone)]
struct Answer {
    status: u16,
    body: String,
    retry_after: Option<&'static str>,
    delay: Duration,
}

impl Answer {
    fn json(status: u16, body: serde_json::Value) -> Self {
        Self::raw(status, &body.to_string())
    }
    fn raw(status: u16, body: &str) -> Self {
        Self {
            status,
            body: body.to_owned(),
            retry_after: None,
            delay: Duration::ZERO,
        }
    }
}

#[derive(Clone, Debug)]
struct Seen {
    method: Method,
    path_and_query: String,
    headers: HeaderMap,
    body: String,
}

#[derive(Default)]
struct Script {
    answers: Mutex<VecDeque<Answer>>,
    seen: Mutex<Vec<Seen>>,
}

async fn answer(State(script): State<Arc<Script>>, method: Method, uri: Uri, headers: HeaderMap, body: String) -> Response {
    script.seen.lock().expect("lock").push(Seen {
        method,
        path_and_query: uri.path_and_query().map(|p| p.to_string()).unwrap_or_default(),
        headers,
        body,
    });
    let next = script.answers.lock().expect("lock").pop_front();
    let Some(a) = next else {
        return (StatusCode::IM_A_TEAPOT, "the script has no more answers").into_response();
    };
    tokio::time::sleep(a.delay).await;
    let mut response = (
        StatusCode::from_u16(a.status).expect("status"),
        [("content-type", "application/json")],
        a.body,
    )
        .into_response();
    if let Some(after) = a.retry_after {
        response.headers_mut().insert("retry-after", after.parse().expect("header"));
    }
    response
}

struct Stub {
    script: Arc<Script>,
    client: PushPress,
}

impl Stub {
    fn seen(&self) -> Vec<Seen> {
        self.script.seen.lock().expect("lock").clone()
    }
}

async fn stub(answers: Vec<Answer>) -> Stub {
    let script = Arc::new(Script {
        answers: Mutex::new(answers.into()),
        seen: Mutex::default(),
    });
    let app = Router::new().fallback(answer).with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    Stub {
        script,
        client: client(&format!("http://{addr}/v3")),
    }
}

fn client(base: &str) -> PushPress {
    let mut config = PushPressConfig::new(base, SecretString::from(KEY)).expect("config");
    config.timeout = Duration::from_millis(300);
    config.backoff = Duration::from_millis(10);
    PushPress::new(config).expect("client")
}

fn account() -> AccountId {
    AccountId::generate(since())
}

fn member() -> MemberId {
    MemberId::parse("m_1").expect("member")
}

fn since() -> Timestamp {
    "2026-11-01T00:00:00Z".parse().expect("time")
}

fn customer() -> Answer {
    Answer::json(
        200,
        json!({"id": "m_1", "status": "active", "email": "sam@example.com",
               "last_checkin_at": "2026-11-03T12:00:00Z", "payment_status": "failing",
               "last_payment_failed_at": "2026-11-02T08:00:00Z"}),
    )
}

fn checkins() -> Answer {
    Answer::json(
        200,
        json!({"data": [{"checked_in_at": "2026-11-02T12:00:00Z"}, {"checked_in_at": "2026-11-03T12:00:00Z"}]}),
    )
}

#[tokio::test]
async fn a_member_is_read_from_the_customer_and_their_checkins_with_key_and_company() {
    let stub = stub(vec![customer(), checkins()]).await;
    let account = account();
    let fresh = stub
        .client
        .member(account, &member(), since())
        .await
        .expect("member")
        .expect("known");
    assert_eq!(fresh.status, Some(MemberStatus::Active));
    assert_eq!(fresh.payment_failing, Some(true));
    assert_eq!(fresh.checkins.len(), 2);
    assert_eq!(fresh.email.map(|e| e.as_str().to_owned()), Some("sam@example.com".to_owned()));
    let seen = stub.seen();
    assert_eq!(seen[0].path_and_query, "/v3/customers/m_1");
    assert_eq!(seen[1].path_and_query, "/v3/customers/m_1/checkins?since=2026-11-01T00%3A00%3A00Z");
    for request in &seen {
        assert_eq!(request.headers.get("api-key").and_then(|v| v.to_str().ok()), Some(KEY));
        assert_eq!(
            request.headers.get("company-id").and_then(|v| v.to_str().ok()),
            Some(account.to_string().as_str())
        );
    }
}

#[tokio::test]
async fn an_unknown_member_is_none_not_an_error() {
    let stub = stub(vec![Answer::raw(404, "{}")]).await;
    assert!(stub.client.member(account(), &member(), since()).await.expect("ok").is_none());
    assert_eq!(stub.seen().len(), 1);
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_and_retried() {
    let mut limited = Answer::raw(429, "slow down");
    limited.retry_after = Some("0");
    let stub = stub(vec![limited, customer(), Answer::raw(503, "busy"), checkins()]).await;
    let fresh = stub.client.member(account(), &member(), since()).await.expect("member");
    assert!(fresh.is_some());
    assert_eq!(stub.seen().len(), 4, "each 429/5xx was retried once");
}

#[tokio::test]
async fn three_server_errors_make_the_connector_unavailable() {
    let stub = stub(vec![
        Answer::raw(500, "a"),
        Answer::raw(502, "b"),
        Answer::raw(500, "c"),
        customer(),
    ])
    .await;
    let err = stub.client.member(account(), &member(), since()).await.expect_err("down");
    assert!(matches!(err, ConnectorError::Unavailable(_)), "{err}");
    assert_eq!(stub.seen().len(), 3, "three attempts, no more");
}

#[tokio::test]
async fn a_long_retry_after_ends_the_call_at_once() {
    let mut limited = Answer::raw(429, "come back in an hour");
    limited.retry_after = Some("3600");
    let stub = stub(vec![limited, customer()]).await;
    let err = stub.client.member(account(), &member(), since()).await.expect_err("limited");
    assert!(matches!(err, ConnectorError::Unavailable(_)));
    assert_eq!(stub.seen().len(), 1);
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let mut slow = customer();
    slow.delay = Duration::from_secs(2);
    let stub = stub(vec![slow.clone(), slow.clone(), slow]).await;
    let started = std::time::Instant::now();
    let err = stub.client.member(account(), &member(), since()).await.expect_err("timeout");
    assert!(
        matches!(err, ConnectorError::Unavailable(ref why) if why.contains("timed out")),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "each attempt gives up at its timeout");
}

#[tokio::test]
async fn malformed_answers_are_refused_not_guessed_at() {
    for body in [
        "not json",
        r#"{"status": "vacationing"}"#,
        r#"{"status": "active", "last_checkin_at": "yesterday"}"#,
    ] {
        let stub = stub(vec![Answer::raw(200, body), customer()]).await;
        let err = stub.client.member(account(), &member(), since()).await.expect_err("malformed");
        assert!(matches!(err, ConnectorError::Malformed(_)), "{body}: {err}");
        assert_eq!(stub.seen().len(), 1, "a malformed answer is not retried");
    }
    let stub = stub(vec![customer(), Answer::raw(200, r#"{"checkins": []}"#)]).await;
    let err = stub.client.member(account(), &member(), since()).await.expect_err("malformed");
    assert!(matches!(err, ConnectorError::Malformed(_)));
}

#[tokio::test]
async fn a_refusal_is_not_retried_and_never_quotes_the_key() {
    let stub = stub(vec![Answer::raw(401, &format!("bad key {KEY}")), customer()]).await;
    let err = stub.client.member(account(), &member(), since()).await.expect_err("refused");
    assert!(matches!(err, ConnectorError::Refused(_)));
    assert!(!err.to_string().contains(KEY), "{err}");
    assert!(!format!("{:?}", stub.client).contains(KEY), "Debug redacts the key");
    assert_eq!(stub.seen().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let client = client(&format!("http://{addr}"));
    let err = client.member(account(), &member(), since()).await.expect_err("refused");
    assert!(matches!(err, ConnectorError::Unavailable(_)), "{err}");
}

/// Each change an automation action makes is one request with its method, path, JSON body and
/// the action's idempotency key; an empty answer is fine, a 404 means PushPress does not know
/// the member, a 5xx is retried with the same key.
#[tokio::test]
async fn member_changes_are_sent_with_their_idempotency_key() {
    let stub = stub(vec![
        Answer::json(201, json!({"tags": ["vip"]})),
        Answer::raw(204, ""),
        Answer::json(503, json!({})),
        Answer::json(200, json!({"id": "m_1", "status": "frozen"})),
        Answer::json(201, json!({"id": "note_1"})),
        Answer::json(201, json!({"id": "task_9"})),
        Answer::json(404, json!({})),
    ])
    .await;
    let account = account();
    let m = member();
    let changes = [
        MemberChange::AddTag("vip".into()),
        MemberChange::RemoveTag("at risk".into()),
        MemberChange::Status(MemberStatus::Frozen),
        MemberChange::AppendNote("Prefers mornings".into()),
        MemberChange::StaffTask("Call Sam".into()),
    ];
    let mut answers = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        answers.push(stub.client.apply(account, &m, change, &format!("key-{i}")).await.expect("applied"));
    }
    assert_eq!(answers[0], json!({"tags": ["vip"]}));
    assert_eq!(answers[1], serde_json::Value::Null, "an empty answer is no error");
    let unknown = stub.client.apply(account, &m, &changes[0], "key-x").await;
    assert!(
        matches!(unknown, Err(ConnectorError::Refused(ref why)) if why.contains("does not know")),
        "{unknown:?}"
    );

    let seen = stub.seen();
    let asked: Vec<(String, String, String, String)> = seen
        .iter()
        .map(|s| {
            (
                s.method.to_string(),
                s.path_and_query.clone(),
                s.headers
                    .get("idempotency-key")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned(),
                s.body.clone(),
            )
        })
        .collect();
    let row = |m: &str, p: &str, k: &str, b: serde_json::Value| (m.to_owned(), p.to_owned(), k.to_owned(), b.to_string());
    assert_eq!(
        asked,
        vec![
            row("POST", "/v3/customers/m_1/tags", "key-0", json!({"tag": "vip"})),
            row("DELETE", "/v3/customers/m_1/tags/at%20risk", "key-1", json!({})),
            row("PATCH", "/v3/customers/m_1", "key-2", json!({"status": "frozen"})),
            row("PATCH", "/v3/customers/m_1", "key-2", json!({"status": "frozen"})),
            row("POST", "/v3/customers/m_1/notes", "key-3", json!({"note": "Prefers mornings"})),
            row("POST", "/v3/tasks", "key-4", json!({"customer_id": "m_1", "title": "Call Sam"})),
            row("POST", "/v3/customers/m_1/tags", "key-x", json!({"tag": "vip"})),
        ]
    );
    assert!(
        seen.iter()
            .all(|s| s.headers.get("api-key").and_then(|v| v.to_str().ok()) == Some(KEY))
    );
}

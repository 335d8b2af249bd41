//! The PushPress connector against a fake PushPress (wiremock): what is asked (paths, key and
//! company headers — each account's own, or the process-wide key), how a member is read, and
//! that rate limits, server errors, timeouts, refusals and malformed answers end in the right
//! error — never in made-up facts.

use std::time::Duration;

use jiff::Timestamp;
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::members::connector::{Connector, ConnectorCredentials, ConnectorError};
use openloop_core::members::event::MemberStatus;
use openloop_pushpress::{PushPress, PushPressConfig};
use secrecy::SecretString;
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "pp-test-91c2-do-not-leak";

/// A fake PushPress that gives `answers` in order, one per request (404 once they are used up).
async fn scripted(answers: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    for answer in answers {
        Mock::given(method("GET"))
            .respond_with(answer)
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    server
}

async fn seen(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

fn client(base: &str, key: Option<&str>) -> PushPress {
    let mut config = PushPressConfig::new(base, key.map(SecretString::from)).expect("config");
    config.timeout = Duration::from_millis(300);
    config.backoff = Duration::from_millis(10);
    PushPress::new(config).expect("client")
}

fn client_of(server: &MockServer) -> PushPress {
    client(&format!("{}/v3", server.uri()), Some(KEY))
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

fn raw(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.to_owned(), "application/json")
}

fn customer() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"id": "m_1", "status": "active", "email": "sam@example.com",
           "last_checkin_at": "2026-11-03T12:00:00Z", "payment_status": "failing",
           "last_payment_failed_at": "2026-11-02T08:00:00Z"}))
}

fn checkins() -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_json(json!({"data": [{"checked_in_at": "2026-11-02T12:00:00Z"}, {"checked_in_at": "2026-11-03T12:00:00Z"}]}))
}

fn header_of<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn a_member_is_read_from_the_customer_and_their_checkins_with_key_and_company() {
    let server = scripted(vec![customer(), checkins()]).await;
    let account = account();
    let fresh = client_of(&server)
        .member(account, None, &member(), since())
        .await
        .expect("member")
        .expect("known");
    assert_eq!(fresh.status, Some(MemberStatus::Active));
    assert_eq!(fresh.payment_failing, Some(true));
    assert_eq!(fresh.checkins.len(), 2);
    assert_eq!(fresh.email.map(|e| e.as_str().to_owned()), Some("sam@example.com".to_owned()));
    let seen = seen(&server).await;
    assert_eq!(seen[0].url.path(), "/v3/customers/m_1");
    assert_eq!(seen[1].url.path(), "/v3/customers/m_1/checkins");
    assert_eq!(seen[1].url.query(), Some("since=2026-11-01T00%3A00%3A00Z"));
    for request in &seen {
        assert_eq!(header_of(request, "api-key"), Some(KEY));
        assert_eq!(header_of(request, "company-id"), Some(account.to_string().as_str()));
    }
}

/// Each account's calls carry its own key (and its company, or its id when it named none);
/// an account without a key of its own falls back to the process-wide one. Without a
/// process-wide key, such an account is not served, and no request is made for it.
#[tokio::test]
async fn each_accounts_calls_carry_its_own_key_and_the_rest_use_the_process_wide_one() {
    let server = MockServer::start().await;
    let (a, b, c) = (account(), account(), account());
    let own_a = ConnectorCredentials::new("pp_key_gym_a", Some("co_a".into())).expect("credentials");
    let own_b = ConnectorCredentials::new("pp_key_gym_b", None).expect("credentials");
    let b_id = b.to_string();
    let c_id = c.to_string();
    for (key, company) in [("pp_key_gym_a", "co_a"), ("pp_key_gym_b", b_id.as_str()), (KEY, c_id.as_str())] {
        for (route, body) in [("/v3/customers/m_1", customer()), ("/v3/customers/m_1/checkins", checkins())] {
            Mock::given(method("GET"))
                .and(path(route))
                .and(header("API-KEY", key))
                .and(header("company-id", company))
                .respond_with(body)
                .expect(1)
                .named(format!("{route} as {company}"))
                .mount(&server)
                .await;
        }
    }
    let pushpress = client_of(&server);
    for (account, credentials) in [(a, Some(&own_a)), (b, Some(&own_b)), (c, None)] {
        assert!(pushpress.serves(credentials));
        let fresh = pushpress.member(account, credentials, &member(), since()).await.expect("member");
        assert!(fresh.is_some(), "{account}: answered by the mock for its own key");
    }
    server.verify().await;

    let accounts_only = client(&format!("{}/v3", server.uri()), None);
    assert!(accounts_only.serves(Some(&own_a)) && !accounts_only.serves(None));
    let before = seen(&server).await.len();
    let err = accounts_only.member(c, None, &member(), since()).await.expect_err("no key");
    assert!(matches!(err, ConnectorError::Refused(_)), "{err}");
    assert_eq!(seen(&server).await.len(), before, "no request without a key");
}

#[tokio::test]
async fn an_accounts_own_key_is_never_quoted_in_an_error() {
    let server = scripted(vec![raw(403, "key pp_key_gym_a is not allowed for company co_a")]).await;
    let own = ConnectorCredentials::new("pp_key_gym_a", Some("co_a".into())).expect("credentials");
    let err = client_of(&server)
        .member(account(), Some(&own), &member(), since())
        .await
        .expect_err("refused");
    assert!(matches!(err, ConnectorError::Refused(_)));
    assert!(!err.to_string().contains("pp_key_gym_a"), "{err}");
}

#[tokio::test]
async fn an_unknown_member_is_none_not_an_error() {
    let server = scripted(vec![raw(404, "{}")]).await;
    assert!(
        client_of(&server)
            .member(account(), None, &member(), since())
            .await
            .expect("ok")
            .is_none()
    );
    assert_eq!(seen(&server).await.len(), 1);
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_and_retried() {
    let limited = raw(429, "slow down").insert_header("retry-after", "0");
    let server = scripted(vec![limited, customer(), raw(503, "busy"), checkins()]).await;
    let fresh = client_of(&server)
        .member(account(), None, &member(), since())
        .await
        .expect("member");
    assert!(fresh.is_some());
    assert_eq!(seen(&server).await.len(), 4, "each 429/5xx was retried once");
}

#[tokio::test]
async fn three_server_errors_make_the_connector_unavailable() {
    let server = scripted(vec![raw(500, "a"), raw(502, "b"), raw(500, "c"), customer()]).await;
    let err = client_of(&server)
        .member(account(), None, &member(), since())
        .await
        .expect_err("down");
    assert!(matches!(err, ConnectorError::Unavailable(_)), "{err}");
    assert_eq!(seen(&server).await.len(), 3, "three attempts, no more");
}

#[tokio::test]
async fn a_long_retry_after_ends_the_call_at_once() {
    let limited = raw(429, "come back in an hour").insert_header("retry-after", "3600");
    let server = scripted(vec![limited, customer()]).await;
    let err = client_of(&server)
        .member(account(), None, &member(), since())
        .await
        .expect_err("limited");
    assert!(matches!(err, ConnectorError::Unavailable(_)));
    assert_eq!(seen(&server).await.len(), 1);
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let slow = customer().set_delay(Duration::from_secs(2));
    let server = scripted(vec![slow.clone(), slow.clone(), slow]).await;
    let started = std::time::Instant::now();
    let err = client_of(&server)
        .member(account(), None, &member(), since())
        .await
        .expect_err("timeout");
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
        let server = scripted(vec![raw(200, body), customer()]).await;
        let err = client_of(&server)
            .member(account(), None, &member(), since())
            .await
            .expect_err("malformed");
        assert!(matches!(err, ConnectorError::Malformed(_)), "{body}: {err}");
        assert_eq!(seen(&server).await.len(), 1, "a malformed answer is not retried");
    }
    let server = scripted(vec![customer(), raw(200, r#"{"checkins": []}"#)]).await;
    let err = client_of(&server)
        .member(account(), None, &member(), since())
        .await
        .expect_err("malformed");
    assert!(matches!(err, ConnectorError::Malformed(_)));
}

#[tokio::test]
async fn a_refusal_is_not_retried_and_never_quotes_the_key() {
    let server = scripted(vec![raw(401, &format!("bad key {KEY}")), customer()]).await;
    let pushpress = client_of(&server);
    let err = pushpress.member(account(), None, &member(), since()).await.expect_err("refused");
    assert!(matches!(err, ConnectorError::Refused(_)));
    assert!(!err.to_string().contains(KEY), "{err}");
    assert!(!format!("{pushpress:?}").contains(KEY), "Debug redacts the key");
    assert_eq!(seen(&server).await.len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let err = client(&format!("http://{addr}"), Some(KEY))
        .member(account(), None, &member(), since())
        .await
        .expect_err("refused");
    assert!(matches!(err, ConnectorError::Unavailable(_)), "{err}");
}

/// Each change an automation action makes is one request with its method, path, JSON body,
/// the account's own key and the action's idempotency key; an empty answer is fine, a 5xx is
/// retried with the same key, and a 404 means PushPress does not know the member.
#[tokio::test]
async fn member_changes_are_sent_with_their_idempotency_key() {
    use openloop_core::members::connector::MemberChange;
    let server = MockServer::start().await;
    let answers = [
        ResponseTemplate::new(201).set_body_json(json!({"tags": ["vip"]})),
        ResponseTemplate::new(204),
        ResponseTemplate::new(503),
        ResponseTemplate::new(200).set_body_json(json!({"id": "m_1", "status": "frozen"})),
        ResponseTemplate::new(201).set_body_json(json!({"id": "note_1"})),
        ResponseTemplate::new(201).set_body_json(json!({"id": "task_9"})),
        ResponseTemplate::new(404),
    ];
    for answer in answers {
        Mock::given(wiremock::matchers::any())
            .respond_with(answer)
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    let pushpress = client_of(&server);
    let own = ConnectorCredentials::new("pp_key_gym_a", None).expect("credentials");
    let (account, m) = (account(), member());
    let changes = [
        MemberChange::AddTag("vip".into()),
        MemberChange::RemoveTag("at risk".into()),
        MemberChange::Status(MemberStatus::Frozen),
        MemberChange::AppendNote("Prefers mornings".into()),
        MemberChange::StaffTask("Call Sam".into()),
    ];
    let mut answers = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        let answer = pushpress.apply(account, Some(&own), &m, change, &format!("key-{i}")).await;
        answers.push(answer.expect("applied"));
    }
    assert_eq!(answers[0], json!({"tags": ["vip"]}));
    assert_eq!(answers[1], serde_json::Value::Null, "an empty answer is no error");
    let unknown = pushpress.apply(account, Some(&own), &m, &changes[0], "key-x").await;
    assert!(
        matches!(unknown, Err(ConnectorError::Refused(ref why)) if why.contains("does not know")),
        "{unknown:?}"
    );

    let seen = seen(&server).await;
    let asked: Vec<(String, String, String, serde_json::Value)> = seen
        .iter()
        .map(|r| {
            (
                r.method.to_string(),
                r.url.path().to_owned(),
                header_of(r, "idempotency-key").unwrap_or_default().to_owned(),
                serde_json::from_slice(&r.body).unwrap_or_default(),
            )
        })
        .collect();
    let row = |m: &str, p: &str, k: &str, b: serde_json::Value| (m.to_owned(), p.to_owned(), k.to_owned(), b);
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
        seen.iter().all(|r| header_of(r, "api-key") == Some("pp_key_gym_a")),
        "the account's own key"
    );
}

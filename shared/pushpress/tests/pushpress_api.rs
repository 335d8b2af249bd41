//! The PushPress client against a fake PushPress (wiremock) speaking the Platform API v3 as
//! `../shared/PUSHPRESS.md` describes it: the paths, `API-KEY` and `company-id` headers, paging
//! by `page`/`limit` (the last page is the short one) and by the appointment `next` cursor,
//! `after` in unix seconds, timestamps in seconds or milliseconds, webhook subscriptions; and
//! that 429 (with `Retry-After`), 5xx, timeouts, refusals and malformed answers end in the
//! right error — never in made-up facts. A catch-all that must never be hit stands behind
//! every fake: no call goes to an endpoint PushPress does not have.

use std::time::Duration;

use jiff::Timestamp;
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::members::connector::{Connector, ConnectorCredentials, ConnectorError};
use openloop_core::members::event::MemberStatus;
use openloop_core::members::source::{CheckinKind, CustomerRole, EnrollmentStatus, MemberSource, PageCursor};
use openloop_pushpress::{PushPress, PushPressConfig};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "pp-test-91c2-do-not-leak";

/// A fake PushPress whose unmatched requests are a failure of the test.
async fn pushpress() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(500).set_body_string("no such endpoint in PUSHPRESS.md"))
        .with_priority(u8::MAX)
        .expect(0)
        .named("an endpoint PushPress does not have")
        .mount(&server)
        .await;
    server
}

fn client(base: &str, key: Option<&str>) -> PushPress {
    let mut config = PushPressConfig::new(base, key.map(SecretString::from)).expect("config");
    config.timeout = Duration::from_millis(300);
    config.backoff = Duration::from_millis(10);
    config.page_size = 2;
    PushPress::new(config).expect("client")
}

fn client_of(server: &MockServer) -> PushPress {
    client(&format!("{}/v3", server.uri()), None)
}

fn own(company: Option<&str>) -> ConnectorCredentials {
    ConnectorCredentials::new(KEY, company.map(str::to_owned)).expect("credentials")
}

fn member() -> MemberId {
    MemberId::parse("usr_1").expect("member")
}

fn since() -> Timestamp {
    "2026-11-01T00:00:00Z".parse().expect("time")
}

fn page(items: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"data": {"resultArray": items}}))
}

fn customer_json(id: &str, role: &str) -> Value {
    json!({"id": id, "companyId": "cmp_1", "name": {"first": "Ana", "last": "Lima", "nickname": null},
        "email": format!("{id}@example.com"), "phone": null, "role": role, "gender": null, "dob": null,
        "address": {"line1": "", "line2": "", "city": "", "state": "", "zip": "", "country": ""},
        "account": {"type": "primary"}, "membershipDetails": {"initialMembershipStartDate": "2025-03-01"}})
}

fn header_of<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

/// Given three pages of customers (two full, one short), when they are read page by page,
/// then each request names its page and limit with the key and company, and the short page
/// is the last.
#[tokio::test]
async fn customers_are_paged_as_pushpress_pages() {
    let server = pushpress().await;
    for (n, ids) in [("1", vec!["usr_1", "usr_2"]), ("2", vec!["usr_3", "usr_4"]), ("3", vec!["usr_5"])] {
        let items: Vec<Value> = ids.iter().map(|id| customer_json(id, "member")).collect();
        Mock::given(method("GET"))
            .and(path("/v3/customers"))
            .and(query_param("page", n))
            .and(query_param("limit", "2"))
            .and(header("API-KEY", KEY))
            .and(header("company-id", "cmp_1"))
            .respond_with(page(Value::Array(items)))
            .mount(&server)
            .await;
    }
    let pushpress = client_of(&server);
    let credentials = own(Some("cmp_1"));
    let mut at = PageCursor::first();
    let mut ids = Vec::new();
    loop {
        let page = pushpress.customers(&credentials, &at).await.expect("page");
        ids.extend(page.items.iter().map(|c| c.id.to_string()));
        match page.next {
            Some(next) => at = next,
            None => break,
        }
    }
    assert_eq!(ids, ["usr_1", "usr_2", "usr_3", "usr_4", "usr_5"]);
    let first = pushpress
        .customers(&credentials, &PageCursor::first())
        .await
        .map(|p| p.items.into_iter().next());
    let first = first.expect("page").expect("a customer");
    assert_eq!(
        (first.role, first.first_name.as_deref(), first.member_since.map(|t| t.to_string())),
        (Some(CustomerRole::Member), Some("Ana"), Some("2025-03-01T00:00:00Z".to_owned()))
    );
}

/// Given a customer, their enrollments and check-ins of every kind (some in milliseconds,
/// some in seconds, one failed), when the stale guard reads them, then each list is asked
/// for with `customer` and `after` in seconds, the status comes from the enrollments, the
/// failed check-in is left out and both units read as the same clock.
#[tokio::test]
async fn a_member_is_read_from_their_customer_enrollments_and_checkins() {
    let server = pushpress().await;
    let after = since().as_second().to_string();
    Mock::given(method("GET"))
        .and(path("/v3/customers/usr_1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(customer_json("usr_1", "ex-member")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v3/enrollments"))
        .and(query_param("customerId", "usr_1"))
        .respond_with(page(
            json!([{"id": "sub_1", "customerId": "usr_1", "companyId": "cmp_1", "planId": "pln_1",
            "billingSchedule": {"period": "month", "interval": 1}, "status": "paused", "startDate": "2025-03-01",
            "endDate": null, "lastCharge": null, "nextCharge": null, "paidUntil": "2026-12-01",
            "checkinDetails": {"checkins": 3, "limit": -1}, "entitlements": []}]),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let checkins = [
        (
            "class",
            json!([{"id": "chk_1", "customer": "usr_1", "company": "cmp_1", "timestamp": 1_793_620_800_000_i64, "kind": "class",
            "name": "WOD", "classId": "cls_1", "typeId": "t", "type": {"id": "t", "name": "WOD"}, "source": "", "result": "success", "role": "attendee"},
            {"id": "chk_2", "customer": "usr_1", "company": "cmp_1", "timestamp": 1_793_707_200_i64, "kind": "class", "name": "WOD",
            "result": "failure", "failureReason": "no credits", "role": "attendee"}]),
        ),
        ("event", json!([])),
        (
            "open",
            json!([{"id": "chk_3", "customer": "usr_1", "company": "cmp_1", "timestamp": 1_793_793_600_i64, "kind": "open"}]),
        ),
    ];
    for (kind, items) in checkins {
        Mock::given(method("GET"))
            .and(path(format!("/v3/checkins/{kind}")))
            .and(query_param("customer", "usr_1"))
            .and(query_param("after", after.as_str()))
            .respond_with(page(items))
            .expect(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/v3/checkins/appointment"))
        .and(query_param("customer", "usr_1"))
        .and(query_param("after", after.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": {"resultArray": []}})))
        .expect(1)
        .mount(&server)
        .await;
    let fresh = client_of(&server)
        .member(AccountId::generate(since()), Some(&own(None)), &member(), since())
        .await
        .expect("member")
        .expect("known");
    assert_eq!(fresh.status, Some(MemberStatus::Frozen), "a paused enrollment, whatever the role");
    let times: Vec<String> = fresh.checkins.iter().map(ToString::to_string).collect();
    assert_eq!(
        times,
        ["2026-11-02T12:00:00Z", "2026-11-04T12:00:00Z"],
        "ms and s alike; the failed one left out"
    );
    assert_eq!(fresh.payment_failing, None, "PushPress has no payment data");
    let asked = server.received_requests().await.unwrap_or_default();
    assert!(
        asked.iter().all(|r| header_of(r, "company-id").is_none()),
        "no company named, none sent"
    );
    assert!(asked.iter().all(|r| header_of(r, "API-KEY") == Some(KEY)));
}

/// Given appointment check-ins over two cursors (one at the top level, one inside `data`, as
/// the SDK disagrees with itself), when they are read, then each page sends the cursor it was
/// given and a blank cursor ends the list.
#[tokio::test]
async fn appointment_checkins_follow_the_next_cursor() {
    let server = pushpress().await;
    let appt = |id: &str, ts: i64| json!({"id": id, "customer": "usr_1", "company": "cmp_1", "timestamp": ts, "kind": "appointment", "appointmentId": "apt", "typeId": "t", "staffId": "s"});
    Mock::given(method("GET"))
        .and(path("/v3/checkins/appointment"))
        .and(wiremock::matchers::query_param_is_missing("next"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"data": {"resultArray": [appt("chk_a", 1_793_620_800)]}, "next": "c2"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v3/checkins/appointment"))
        .and(query_param("next", "c2"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"data": {"resultArray": [appt("chk_b", 1_793_707_200)], "next": " "}})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let pushpress = client_of(&server);
    let first = pushpress
        .checkins(&own(None), CheckinKind::Appointment, since(), &PageCursor::first())
        .await
        .expect("page");
    let next = first.next.clone().expect("a next page");
    assert_eq!(next.next.as_deref(), Some("c2"));
    let second = pushpress
        .checkins(&own(None), CheckinKind::Appointment, since(), &next)
        .await
        .expect("page");
    assert!(second.next.is_none(), "a blank cursor ends the list");
    assert_eq!(
        [&first.items[0], &second.items[0]].map(|c| (c.id.as_str(), c.kind)),
        [("chk_a", CheckinKind::Appointment), ("chk_b", CheckinKind::Appointment)]
    );
}

/// Answers from a script, one per request, then the last one again.
struct Script(std::sync::Mutex<Vec<ResponseTemplate>>);

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut answers = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if answers.len() > 1 { answers.remove(0) } else { answers[0].clone() }
    }
}

async fn company_answers(answers: Vec<ResponseTemplate>) -> MockServer {
    let server = pushpress().await;
    Mock::given(method("GET"))
        .and(path("/v3/company"))
        .respond_with(Script(std::sync::Mutex::new(answers)))
        .mount(&server)
        .await;
    server
}

fn company() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"id": "cmp_1", "name": "Renegade", "subdomain": "renegade",
        "defaultTimezone": "America/Denver", "phone": null, "email": null, "url": null}))
}

fn raw(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_string(body.to_owned())
}

#[tokio::test]
async fn the_company_is_the_keys_check_and_gives_its_time_zone() {
    let server = company_answers(vec![company()]).await;
    let company = client_of(&server).company(&own(None)).await.expect("company");
    assert_eq!(
        (company.id.as_str(), company.name.as_str(), company.timezone.as_deref()),
        ("cmp_1", "Renegade", Some("America/Denver"))
    );
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_as_retry_after_asks() {
    let limited = raw(429, r#"{"message": "slow down"}"#).insert_header("retry-after", "1");
    let server = company_answers(vec![limited, raw(503, "busy"), company()]).await;
    let started = std::time::Instant::now();
    client_of(&server).company(&own(None)).await.expect("company");
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After honoured");
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        3,
        "429 and 503 each retried"
    );
}

#[tokio::test]
async fn three_server_errors_make_pushpress_unavailable() {
    let server = company_answers(vec![raw(500, "a"), raw(502, "b"), raw(500, "c"), company()]).await;
    let err = client_of(&server).company(&own(None)).await.expect_err("down");
    assert!(matches!(err, ConnectorError::Unavailable(_)), "{err}");
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        3,
        "three attempts, no more"
    );
}

#[tokio::test]
async fn a_long_retry_after_ends_the_call_at_once() {
    let limited = raw(429, "come back in an hour").insert_header("retry-after", "3600");
    let server = company_answers(vec![limited, company()]).await;
    let err = client_of(&server).company(&own(None)).await.expect_err("limited");
    assert!(matches!(err, ConnectorError::Unavailable(ref why) if why.contains("3600")), "{err}");
    assert_eq!(server.received_requests().await.unwrap_or_default().len(), 1);
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let slow = company().set_delay(Duration::from_secs(2));
    let server = company_answers(vec![slow]).await;
    let started = std::time::Instant::now();
    let err = client_of(&server).company(&own(None)).await.expect_err("timeout");
    assert!(
        matches!(err, ConnectorError::Unavailable(ref why) if why.contains("timed out")),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "each attempt gives up at its timeout");
}

#[tokio::test]
async fn a_refused_key_is_not_retried_and_never_quoted() {
    let server = company_answers(vec![raw(401, &format!(r#"{{"message": "bad key {KEY}"}}"#))]).await;
    let pushpress = client_of(&server);
    let err = pushpress.company(&own(None)).await.expect_err("refused");
    assert!(matches!(err, ConnectorError::Refused(ref why) if why.contains("401")), "{err}");
    assert!(!err.to_string().contains(KEY), "{err}");
    assert_eq!(server.received_requests().await.unwrap_or_default().len(), 1);
}

#[tokio::test]
async fn malformed_answers_are_refused_not_guessed_at() {
    let server = company_answers(vec![raw(200, "not json")]).await;
    let err = client_of(&server).company(&own(None)).await.expect_err("malformed");
    assert!(matches!(err, ConnectorError::Malformed(_)), "{err}");
}

#[tokio::test]
async fn a_refused_connection_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let err = client(&format!("http://{addr}"), None)
        .company(&own(None))
        .await
        .expect_err("refused");
    assert!(matches!(err, ConnectorError::Unavailable(_)), "{err}");
}

/// Without an account key the process-wide one is used, no company is named, and an unknown
/// customer is nobody rather than an error.
#[tokio::test]
async fn the_process_wide_key_stands_in_for_accounts_without_their_own() {
    let server = pushpress().await;
    Mock::given(method("GET"))
        .and(path("/v3/customers/usr_1"))
        .and(header("API-KEY", "process-key"))
        .respond_with(ResponseTemplate::new(404))
        .expect(1)
        .mount(&server)
        .await;
    let pushpress = client(&format!("{}/v3", server.uri()), Some("process-key"));
    let unknown = pushpress.member(AccountId::generate(since()), None, &member(), since()).await;
    assert!(unknown.expect("no error").is_none());
    assert!(!format!("{pushpress:?}").contains("process-key"), "Debug redacts the key");
}

/// Subscriptions: listed with their secrets, made with the URL and data event types, removed
/// (a subscription already gone is fine).
#[tokio::test]
async fn webhook_subscriptions_are_listed_made_and_removed() {
    let server = pushpress().await;
    Mock::given(method("GET"))
        .and(path("/v3/webhooks"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"data": [{"id": "wh_1", "url": "https://x/hook",
            "eventTypes": ["customer.created"], "active": true, "signingSecret": "sec_1"}]})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v3/webhooks"))
        .and(body_json(
            json!({"url": "https://openloop.example/webhooks/pushpress-v3/a1", "eventTypes": ["customer.created", "checkin.created"]}),
        ))
        .respond_with(
            ResponseTemplate::new(201).set_body_json(json!({"id": "wh_2", "url": "https://openloop.example/webhooks/pushpress-v3/a1",
            "eventTypes": ["customer.created", "checkin.created"], "active": true, "signingSecret": "sec_2"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    for (id, status) in [("wh_1", 204), ("wh_gone", 404)] {
        Mock::given(method("DELETE"))
            .and(path(format!("/v3/webhooks/{id}")))
            .respond_with(ResponseTemplate::new(status))
            .expect(1)
            .mount(&server)
            .await;
    }
    let pushpress = client_of(&server);
    let listed = pushpress.subscriptions(&own(None)).await.expect("list");
    assert_eq!(listed[0].signing_secret.as_deref(), Some("sec_1"));
    assert!(!format!("{listed:?}").contains("sec_1"), "Debug hides the secret");
    let made = pushpress
        .subscribe(
            &own(None),
            "https://openloop.example/webhooks/pushpress-v3/a1",
            &["customer.created", "checkin.created"],
        )
        .await
        .expect("subscribe");
    assert_eq!((made.id.as_str(), made.signing_secret.as_deref()), ("wh_2", Some("sec_2")));
    pushpress.unsubscribe(&own(None), "wh_1").await.expect("removed");
    pushpress.unsubscribe(&own(None), "wh_gone").await.expect("already gone");
}

/// Enrollments read with every documented status, and an undocumented one left out.
#[tokio::test]
async fn enrollments_read_every_documented_status() {
    let server = pushpress().await;
    let e = |id: &str, status: &str| json!({"id": id, "customerId": "usr_1", "companyId": "cmp_1", "planId": null, "status": status});
    Mock::given(method("GET"))
        .and(path("/v3/enrollments"))
        .and(query_param("page", "1"))
        .respond_with(page(json!([e("sub_1", "alert"), e("sub_2", "vacation"), e("sub_3", "pendcancel")])))
        .mount(&server)
        .await;
    let page = client_of(&server)
        .enrollments(&own(None), &PageCursor::first())
        .await
        .expect("page");
    assert_eq!(
        page.items.iter().map(|e| e.status).collect::<Vec<_>>(),
        [EnrollmentStatus::Alert, EnrollmentStatus::Pendcancel],
        "the undocumented status is left out"
    );
    assert!(page.next.is_some(), "a full page (of what was asked) is followed by another");
}

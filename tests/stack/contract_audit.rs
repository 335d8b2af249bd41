//! A new user's walk through CONTRACT.md with a plain HTTP client: what the contract says of
//! every error (its JSON shape), of sign-in, and of the lists, holds on every route — the
//! webhooks' and the local runtime's too, not only the owner API's.

use openloop_tests::Stack;
use reqwest::Method;
use serde_json::{Value, json};

/// `(status, content type, body)` of one raw request.
async fn raw(request: reqwest::RequestBuilder) -> (u16, String, Value) {
    let response = request.send().await.unwrap_or_else(|e| panic!("{e}"));
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap_or_default();
    (status, content_type, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn is_contract_error(body: &Value, code: &str) -> bool {
    body["error"]["code"] == code && body["error"]["message"].as_str().is_some_and(|m| !m.is_empty())
}

#[tokio::test]
async fn every_route_answers_a_wrong_method_and_a_huge_body_in_the_error_shape() {
    let stack = Stack::start("audit-shapes").await;
    let gym = stack.create_account("manual").await;
    let http = &stack.http;
    let url = &stack.url;

    for (method, path) in [
        (Method::GET, format!("/webhooks/pushpress/{}", gym.id)),
        (Method::GET, format!("/webhooks/pushpress-v3/{}", gym.id)),
        (Method::GET, "/webhooks/inbound-email".to_owned()),
        (Method::PUT, "/unsubscribe?token=x".to_owned()),
        (Method::POST, "/health".to_owned()),
        (Method::DELETE, "/_local/clock".to_owned()),
        (Method::GET, "/_local/run".to_owned()),
        (Method::POST, "/_local/outbox".to_owned()),
    ] {
        let (status, content_type, body) = raw(http.request(method.clone(), format!("{url}{path}"))).await;
        assert_eq!(status, 405, "{method} {path}");
        assert!(
            content_type.starts_with("application/json") && is_contract_error(&body, "method_not_allowed"),
            "{method} {path}: {content_type} {body}"
        );
    }

    let huge = format!("{{\"now\": \"{}\"}}", "9".repeat(3 << 20));
    let (status, content_type, body) = raw(http.post(format!("{url}/_local/clock")).body(huge)).await;
    assert_eq!(status, 413);
    assert!(
        content_type.starts_with("application/json") && is_contract_error(&body, "body_too_large"),
        "{content_type} {body}"
    );
    stack.running.stop();
}

#[tokio::test]
async fn every_paged_list_checks_its_limit_as_the_task_list_does() {
    let stack = Stack::start("audit-members").await;
    let gym = stack.create_account("manual").await;
    // CONTRACT.md: 400 malformed (not a number), 422 well-formed but invalid (out of range).
    for (query, expected) in [
        ("limit=0", 422),
        ("limit=201", 422),
        ("limit=100000", 422),
        ("limit=-1", 400),
        ("limit=abc", 400),
    ] {
        let (status, tasks) = stack.get(&format!("/api/v1/tasks?{query}"), &gym.token).await;
        assert_eq!(
            (status, tasks["error"]["code"].as_str()),
            (expected, Some("invalid_limit")),
            "{query}: {tasks}"
        );
        for list in ["members", "activity", "notifications"] {
            let (other_status, other) = stack.get(&format!("/api/v1/{list}?{query}"), &gym.token).await;
            assert_eq!(
                (other_status, other["error"]["code"].as_str()),
                (status, tasks["error"]["code"].as_str()),
                "{query}: tasks {tasks}, {list} {other}"
            );
        }
    }
    for list in ["tasks", "members", "activity", "notifications"] {
        let (status, body) = stack.get(&format!("/api/v1/{list}?limit=200"), &gym.token).await;
        assert_eq!(status, 200, "{list}: {body}");
    }
    stack.running.stop();
}

#[tokio::test]
async fn connecting_pushpress_without_a_connector_says_why() {
    // No OPENLOOP_PUSHPRESS_BASE_URL: the README says gyms cannot connect (503); the message
    // says what is missing instead of "retry shortly", and nothing changes.
    let stack = Stack::start_with("audit-connect", |config| config.pushpress = None).await;
    let (_, status, error) = stack.refused_pushpress_key("pp_key").await;
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["code"], "connector_not_configured", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("OPENLOOP_PUSHPRESS_BASE_URL")),
        "{error}"
    );
    stack.running.stop();
}

#[tokio::test]
async fn signing_in_with_the_token_field_alone_redirects_to_the_dashboard() {
    let stack = Stack::start("audit-login").await;
    let gym = stack.create_account("manual").await;
    let http = openloop_aws::tls::http_client()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let login = format!("{}/app/login", stack.url);

    // CONTRACT.md: `POST /app/login` with the form field `token` sets a session and 303s to /app.
    let response = http
        .post(&login)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", gym.token))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 303);
    assert_eq!(response.headers().get("location").and_then(|v| v.to_str().ok()), Some("/app"));
    let cookie = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("ol_session="))
        .map(|c| c.split(';').next().unwrap_or_default().to_owned())
        .unwrap_or_else(|| panic!("no session cookie"));
    let overview = http
        .get(format!("{}/app", stack.url))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(overview.status().as_u16(), 200, "the session opens the overview");

    let wrong = http
        .post(&login)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("token=olk_wrong")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wrong.status().as_u16(), 401, "a wrong token is refused");

    // Another site's form posting into the dashboard (login CSRF) is still refused.
    let forged = http
        .post(&login)
        .header("origin", "https://evil.example")
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", gym.token))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(forged.status().as_u16(), 403, "a cross-site sign-in is refused");
    stack.running.stop();
}

#[tokio::test]
async fn the_unsubscribe_page_is_a_real_page_with_the_address_as_text() {
    let stack = Stack::start("audit-unsubscribe").await;
    let day = crate::morning(1);
    stack.set_clock(&day.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = format!("tom&jerry+{}@example.com", gym.id.to_ascii_lowercase());
    let event = openloop_tests::events::member_created("m_tj", &email, "Tom", &day.to_string());
    let (status, body) = stack.webhook(&gym, "evt_tj", event).await;
    assert_eq!(status, 202, "{body}");
    stack.approved_task(&gym, "ad_hoc", "m_tj").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    let header = mail.first().and_then(|m| m["list_unsubscribe"].as_str()).unwrap_or_default();
    let start = header.find("/unsubscribe?token=").unwrap_or_else(|| panic!("no link in {mail:?}"));
    let path = header[start..].trim_end_matches('>');

    let response = stack
        .http
        .get(format!("{}{path}", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 200);
    let csp = response
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(csp.contains("default-src 'none'"), "no script on the member's page: {csp:?}");
    let page = response.text().await.unwrap_or_default();
    for part in ["<html lang=\"en\">", "<title>", "<meta charset=\"utf-8\">", "name=\"viewport\""] {
        assert!(page.contains(part), "{part} in {page}");
    }
    assert!(page.contains("tom&amp;jerry+"), "the address is shown as text: {page}");
    assert!(page.contains("<button type=\"submit\">Unsubscribe</button>"), "{page}");
    // The gym's own page: its name at the top and in the question, styled by its hash alone.
    let name = "CrossFit Renegade";
    assert!(
        page.contains(&format!("<p class=\"gym\">{name}</p>")) && page.contains(&format!("Stop e-mails from {name}?")),
        "{page}"
    );
    assert!(page.contains("<style>") && csp.contains("style-src 'sha256-"), "{csp}");

    let response = stack
        .http
        .post(format!("{}{path}", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 200, "one click");
    let done = response.text().await.unwrap_or_default();
    assert!(done.contains(&format!("{name} will not e-mail")), "{done}");
    stack.running.stop();
}

#[tokio::test]
async fn empty_query_parameters_read_as_absent_as_the_contract_writes_them() {
    // CONTRACT.md writes the list as `GET /api/v1/tasks?status=&member_id=&limit=&cursor=`.
    let stack = Stack::start("audit-empty-query").await;
    let gym = stack.create_account("manual").await;
    let (status, created) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "ad_hoc", "member_id": "m_1", "goal": "Say hello"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let (_, plain) = stack.get("/api/v1/tasks", &gym.token).await;
    let (status, empty) = stack.get("/api/v1/tasks?status=&member_id=&limit=&cursor=", &gym.token).await;
    assert_eq!((status, &empty), (200, &plain), "empty parameters are no parameters");

    let (status, suggestions) = stack.get("/api/v1/suggestions?status=", &gym.token).await;
    assert_eq!(status, 200, "{suggestions}");
    assert!(suggestions["suggestions"].is_array(), "{suggestions}");

    let (status, outbox) = stack.call(Method::GET, "/_local/outbox?to=&after=", None, None).await;
    assert_eq!((status, outbox.is_array()), (200, true), "{outbox}");
    stack.running.stop();
}

#[tokio::test]
async fn a_filter_value_that_is_not_one_the_list_knows_is_422_as_everywhere() {
    let stack = Stack::start("audit-filters").await;
    let gym = stack.create_account("manual").await;
    for (path, code) in [
        ("/api/v1/tasks?status=bogus", "invalid_status"),
        ("/api/v1/suggestions?status=bogus", "invalid_status"),
        ("/api/v1/tasks?member_id=m%231", "invalid_member_id"),
        ("/api/v1/scorecard?month=2026-13", "invalid_month"),
    ] {
        let (status, error) = stack.get(path, &gym.token).await;
        assert_eq!((status, error["error"]["code"].as_str()), (422, Some(code)), "{path}: {error}");
    }
    stack.running.stop();
}

#[tokio::test]
async fn a_401_names_the_scheme_it_wants() {
    // RFC 9110 §11.6.1: a 401 carries WWW-Authenticate; HTTP clients and test suites read it.
    let stack = Stack::start("audit-401").await;
    for (path, token) in [
        ("/api/v1/tasks", None),
        ("/api/v1/tasks", Some("olk_wrong")),
        ("/api/v1/accounts", Some("olk_wrong")),
    ] {
        let mut request = stack.http.get(format!("{}{path}", stack.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status().as_u16(), 401, "{path}");
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(challenge.starts_with("Bearer"), "{path}: {challenge:?}");
    }
    stack.running.stop();
}

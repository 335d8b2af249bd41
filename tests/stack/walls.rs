//! Tenant walls through CONTRACT.md: errors in the contract's shape wherever axum answered for
//! the handler (an extractor's rejection, a router's 405), and the dashboard's own headers on
//! every response to a dashboard path.

use openloop_tests::Stack;
use serde_json::Value;

async fn raw(stack: &Stack, method: reqwest::Method, path: &str, token: Option<&str>) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = stack.http.request(method, format!("{}{path}", stack.url));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    (status, headers, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Given a path id with an invalid percent-escape, a repeated query key, an unknown method on
/// the owner API and on the webhooks, then each is a 4xx with `{"error":{"code","message"}}`.
#[tokio::test]
async fn every_rejection_is_in_the_contracts_error_shape() {
    let stack = Stack::start("walls-shapes").await;
    let gym = stack.create_account("manual").await;
    for (method, path, status) in [
        (reqwest::Method::GET, "/api/v1/tasks/%ZZ", 404),
        (reqwest::Method::GET, "/api/v1/tasks/%FF", 400),
        (reqwest::Method::GET, "/api/v1/members/%E0%A4%A", 400),
        (reqwest::Method::POST, "/api/v1/tasks/%C3%28/approve", 400),
        (reqwest::Method::GET, "/api/v1/tasks?limit=5&limit=6", 400),
        (reqwest::Method::GET, "/api/v1/scorecard?month=2026-11&month=2026-10", 400),
        (reqwest::Method::PATCH, "/api/v1/settings", 405),
        (reqwest::Method::GET, "/webhooks/inbound-email", 405),
    ] {
        let (got, headers, body) = raw(&stack, method.clone(), path, Some(&gym.token)).await;
        assert_eq!(got, status, "{method} {path}: {body}");
        assert!(
            body["error"]["code"].as_str().is_some_and(|c| !c.is_empty()) && body["error"]["message"].is_string(),
            "{method} {path}: {body}"
        );
        assert!(
            headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json")),
            "{method} {path}"
        );
    }
}

/// Given a method the dashboard does not take, then its 405 carries the dashboard's security
/// headers like every dashboard page.
#[tokio::test]
async fn the_dashboards_405s_carry_its_security_headers() {
    let stack = Stack::start("walls-405").await;
    for (method, path) in [
        (reqwest::Method::DELETE, "/app/login"),
        (reqwest::Method::PUT, "/app/settings"),
        (reqwest::Method::POST, "/app/members"),
    ] {
        let (status, headers, _) = raw(&stack, method.clone(), path, None).await;
        assert_eq!(status, 405, "{method} {path}");
        for name in [
            "content-security-policy",
            "x-content-type-options",
            "x-frame-options",
            "referrer-policy",
        ] {
            assert!(headers.contains_key(name), "{method} {path}: {name} missing in {headers:?}");
        }
    }
}

/// The version the settings page shows, from its form.
fn shown_version(page: &str) -> String {
    let at = page
        .find("name=\"settings_version\" value=\"")
        .unwrap_or_else(|| panic!("no version in the form: {page}"));
    let rest = &page[at + "name=\"settings_version\" value=\"".len()..];
    rest[..rest.find('"').unwrap_or(0)].to_owned()
}

/// Given an owner with the settings page open, when the API changes a setting and the owner
/// then saves the page (which posts every field it showed), then nothing is saved, the page
/// says why, and the API's change stands; saved from a page opened after it, the owner's
/// change lands beside it.
#[tokio::test]
async fn a_settings_page_opened_before_an_api_change_does_not_undo_it() {
    use serde_json::json;
    let stack = Stack::start("walls-settings-race").await;
    let gym = stack.create_account("manual").await;
    let owner = crate::dashboard::sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    let version = shown_version(&page);

    let (status, _) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"daily_send_limit": 40})),
        )
        .await;
    assert_eq!(status, 200);
    let form = |version: &str| {
        vec![
            ("csrf", owner.csrf.clone()),
            ("settings_version", version.to_owned()),
            ("execution_mode", "manual".to_owned()),
            ("daily_send_limit", "15".to_owned()),
            ("member_weekly_limit", "2".to_owned()),
            ("timezone", "America/New_York".to_owned()),
        ]
    };
    let stale = form(&version);
    let stale: Vec<(&str, &str)> = stale.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, said) = owner.post_page("/app/settings", &stale).await;
    assert_eq!(status, 409, "{said}");
    assert!(said.contains("changed since this page was opened"), "{said}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (&settings["daily_send_limit"], &settings["member_weekly_limit"]),
        (&json!(40), &json!(3)),
        "the API's change stands and nothing of the form was saved: {settings}"
    );

    let (_, page) = owner.get("/app/settings").await;
    let fresh = form(&shown_version(&page));
    let fresh: Vec<(&str, &str)> = fresh
        .iter()
        .map(|(k, v)| (*k, if *k == "daily_send_limit" { "40" } else { v.as_str() }))
        .collect();
    let (status, _) = owner.post("/app/settings", &fresh).await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (&settings["daily_send_limit"], &settings["member_weekly_limit"]),
        (&json!(40), &json!(2))
    );
}

/// `_account` names the whole business: no member event and no owner call may use it as a
/// member (PushPress's deliveries: `openloop_pushpress::webhook`'s own test).
#[tokio::test]
async fn the_whole_business_id_is_refused_as_a_member() {
    use serde_json::json;
    let stack = Stack::start("walls-reserved").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await;
    let (status, body) = stack
        .webhook(
            &gym,
            "evt_reserved",
            json!({"type": "member.created", "timestamp": now, "data": {"member_id": "_account", "email": "x@example.com", "status": "active"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("reserved_member_id")),
        "{body}"
    );
    let (status, body) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "_account", "goal": "Win back"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("reserved_member_id")),
        "{body}"
    );
    let (status, body) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "_account", "cron": "0 8 * * 1"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("reserved_member_id")),
        "{body}"
    );
}

/// Issue 47: every day and month the API takes is bounded: given a day or month out of
/// 2000–2099 (or not written exactly), then `422` in the contract's shape — never a dropped
/// connection, never `200`. (The metrics' range keeps its documented `400`.)
#[tokio::test]
async fn days_and_months_out_of_bounds_are_refused() {
    let stack = Stack::start("walls-dates").await;
    let gym = stack.create_account("manual").await;
    for (path, expected, code) in [
        ("/api/v1/brief?date=9999-12-31", 422, "invalid_date"),
        ("/api/v1/brief?date=0000-01-01", 422, "invalid_date"),
        ("/api/v1/brief?date=-0001-01-01", 422, "invalid_date"),
        ("/api/v1/lift?from=0001-01-01", 422, "invalid_date"),
        ("/api/v1/lift?to=9999-12-31", 422, "invalid_date"),
        ("/api/v1/metrics?from=9999-12-01", 400, "invalid_date"),
        ("/api/v1/scorecard?month=9999-12", 422, "invalid_month"),
        ("/api/v1/scorecard?month=0000-01", 422, "invalid_month"),
        ("/api/v1/reports/churn?month=9999-12", 422, "invalid_month"),
        ("/api/v1/reports/churn?month=0000-01", 422, "invalid_month"),
    ] {
        let (status, _, body) = raw(&stack, reqwest::Method::GET, path, Some(&gym.token)).await;
        assert_eq!((status, body["error"]["code"].as_str()), (expected, Some(code)), "{path}: {body}");
    }
    let (status, _, body) = raw(&stack, reqwest::Method::GET, "/api/v1/brief?date=2026-11-03", Some(&gym.token)).await;
    assert_eq!(status, 200, "a day in bounds: {body}");
}

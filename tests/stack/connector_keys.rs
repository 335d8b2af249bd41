//! Through CONTRACT.md with a fake PushPress (wiremock) and no process-wide key: each gym's
//! own PushPress key — set by the admin when the account is made, or by the owner in the
//! settings — is what the connector's calls for that gym's members carry, and no API view
//! ever shows it.

use std::time::Duration;

use openloop_pushpress::{PushPress, PushPressConfig};
use openloop_tests::{Account, Stack};
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY_A: &str = "pp_key_gym_a_5d1e";
const KEY_B: &str = "pp_key_gym_b_77c0";

/// The fake answers `member` only when asked with `key` (and `company`, when the gym named
/// one) on PushPress's own endpoints; anything else is refused by a catch-all that must never
/// be hit.
async fn expect_calls(server: &MockServer, key: &str, company: Option<&str>, member: &str) {
    let customer = json!({"id": member, "companyId": "cmp", "name": {"first": "A", "last": "B"}, "email": format!("{member}@example.com"), "role": "member"});
    let routes = [
        (format!("/v3/customers/{member}"), customer),
        ("/v3/enrollments".to_owned(), json!({"data": {"resultArray": []}})),
        ("/v3/checkins/class".to_owned(), json!({"data": {"resultArray": []}})),
        ("/v3/checkins/event".to_owned(), json!({"data": {"resultArray": []}})),
        ("/v3/checkins/open".to_owned(), json!({"data": {"resultArray": []}})),
        ("/v3/checkins/appointment".to_owned(), json!({"data": {"resultArray": []}})),
    ];
    for (route, body) in routes {
        let mut mock = Mock::given(method("GET")).and(path(route.as_str())).and(header("API-KEY", key));
        mock = match company {
            Some(company) => mock.and(header("company-id", company)),
            None => mock.and(wiremock::matchers::header_exists("API-KEY")),
        };
        mock.respond_with(ResponseTemplate::new(200).set_body_json(body))
            .expect(1..)
            .named(format!("{route} with {key}"))
            .mount(server)
            .await;
    }
}

/// What connecting asks with `key`: the company, the subscriptions, and the import's list of
/// customers (the other lists are `expect_calls`'s).
async fn expect_connect(server: &MockServer, key: &str) {
    let answers = [
        (
            "GET",
            "/v3/company",
            200,
            json!({"id": "cmp", "name": "Gym", "defaultTimezone": "America/New_York"}),
        ),
        ("GET", "/v3/webhooks", 200, json!({"data": []})),
        (
            "POST",
            "/v3/webhooks",
            201,
            json!({"id": format!("wh_{key}"), "url": "u", "eventTypes": [], "signingSecret": "s"}),
        ),
        ("GET", "/v3/customers", 200, json!({"data": {"resultArray": []}})),
    ];
    for (verb, route, status, body) in answers {
        Mock::given(method(verb))
            .and(path(route))
            .and(header("API-KEY", key))
            .respond_with(ResponseTemplate::new(status).set_body_json(body))
            .expect(1..)
            .named(format!("{verb} {route} with {key}"))
            .mount(server)
            .await;
    }
}

#[tokio::test]
async fn each_gyms_members_are_refreshed_with_the_gyms_own_pushpress_key() {
    let pushpress = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(10)
        .expect(0)
        .named("a call with someone else's key")
        .mount(&pushpress)
        .await;
    expect_connect(&pushpress, KEY_A).await;
    expect_connect(&pushpress, KEY_B).await;
    expect_calls(&pushpress, KEY_A, Some("co_gym_a"), "m_a").await;
    expect_calls(&pushpress, KEY_B, None, "m_b").await;
    let base = format!("{}/v3", pushpress.uri());
    let stack = Stack::start_with("connector-keys", |config| {
        let mut client = PushPressConfig::new(&base, None).expect("connector config");
        client.backoff = Duration::from_millis(10);
        config.pushpress = Some(PushPress::new(client).expect("connector"));
    })
    .await;

    // Gym A brings its key when the admin makes the account (an established gym: it says when
    // it was onboarded, else the connect would start its ramp and nothing would be sent today).
    let body = json!({"name": "Gym A", "timezone": "America/New_York", "execution_mode": "manual",
        "onboarded_at": "2026-10-01T00:00:00Z", "pushpress": {"api_key": KEY_A, "company_id": "co_gym_a"}});
    let (status, created) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    assert_eq!(status, 201, "{created}");
    assert!(!created.to_string().contains(KEY_A), "{created}");
    assert_eq!(
        created["settings"]["pushpress"],
        json!({"api_key": "[set]", "company_id": "co_gym_a"})
    );
    let gym_a = Account {
        id: created["account_id"].as_str().unwrap_or_default().to_owned(),
        token: created["api_token"].as_str().unwrap_or_default().to_owned(),
        webhook_secret: created["webhook_secret"].as_str().unwrap_or_default().to_owned(),
    };
    // Gym B's owner sets one in the settings, without a company (none is named to PushPress).
    let gym_b = stack.create_account("manual").await;
    let (status, settings) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym_b.token),
            Some(json!({"pushpress": {"api_key": KEY_B}})),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    assert_eq!(settings["pushpress"], json!({"api_key": "[set]", "company_id": null}));
    for gym in [&gym_a, &gym_b] {
        let (_, shown) = stack.get("/api/v1/settings", &gym.token).await;
        let (_, listed) = stack.get("/api/v1/accounts", &stack.admin_token).await;
        for view in [shown.to_string(), listed.to_string()] {
            assert!(!view.contains(KEY_A) && !view.contains(KEY_B), "a key in a view: {view}");
        }
    }

    stack.set_clock(&crate::morning(1).to_string()).await;
    let now = stack.now().await;
    let email_a = stack.member(&gym_a, "m_a", "Ana", now).await;
    let email_b = stack.member(&gym_b, "m_b", "Ben", now).await;
    stack.approved_task(&gym_a, "churn_risk", "m_a").await;
    stack.approved_task(&gym_b, "churn_risk", "m_b").await;
    stack.run().await;
    assert_eq!(
        stack.outbox_to(&email_a).await.len(),
        1,
        "gym A's member was refreshed, then mailed"
    );
    assert_eq!(
        stack.outbox_to(&email_b).await.len(),
        1,
        "gym B's member was refreshed, then mailed"
    );
    pushpress.verify().await;
}

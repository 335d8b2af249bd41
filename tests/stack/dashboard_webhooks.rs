//! "Webhooks and keys" on the settings page: in a real browser (headless Chromium, as
//! `dashboard_browser.rs`) the owner adds an endpoint, sees its secret once, removes it, and
//! rotates the API token (the new one signs in; the page passes axe-core); over HTTP a form
//! without the session's CSRF token changes nothing.

use openloop_tests::Stack;
use openloop_tests::browser::Browser;
use openloop_tests::receiver::Receiver;

fn fail(e: String) -> ! {
    panic!("{e}")
}

async fn accessible(browser: &Browser, page: &str) {
    let violations = browser.axe_violations().await.unwrap_or_else(|e| fail(e));
    assert!(violations.is_empty(), "axe-core on {page}: {violations:#?}");
}

async fn sign_in(browser: &Browser, url: &str, token: &str) {
    browser.goto(&format!("{url}/app/login")).await.unwrap_or_else(|e| fail(e));
    let field = browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&field, token).await.unwrap_or_else(|e| fail(e));
    let button = browser.find("button[type=submit]").await.unwrap_or_else(|e| fail(e));
    browser.click(&button).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the overview", || async { Ok(browser.url().await?.ends_with("/app")) })
        .await
        .unwrap_or_else(|e| fail(e));
}

async fn press(browser: &Browser, label: &str) {
    for button in browser.find_all("main button").await.unwrap_or_else(|e| fail(e)) {
        if browser.text(&button).await.unwrap_or_else(|e| fail(e)) == label {
            browser.click(&button).await.unwrap_or_else(|e| fail(e));
            return;
        }
    }
    panic!("no {label} button");
}

#[tokio::test]
async fn an_owner_adds_and_removes_an_endpoint_and_rotates_the_token_in_a_browser() {
    let stack = Stack::start("app-webhooks").await;
    let receiver = Receiver::start(200).await;
    let gym = stack.create_account("manual").await;
    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    sign_in(&browser, &stack.url, &gym.token).await;

    browser
        .goto(&format!("{}/app/settings", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let link = browser.find("a[href=\"/app/settings/webhooks\"]").await.unwrap_or_else(|e| fail(e));
    browser.click(&link).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the webhooks page", || async {
            Ok(browser.url().await?.ends_with("/app/settings/webhooks"))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    accessible(&browser, "/app/settings/webhooks").await;

    let url = browser.find("input[name=url]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&url, &receiver.url).await.unwrap_or_else(|e| fail(e));
    press(&browser, "Add endpoint").await;
    browser
        .wait_for("the secret shown once", || async {
            Ok(browser.text_of("[data-revealed]").await?.is_some_and(|s| s.starts_with("whsec_")))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    accessible(&browser, "the page with the new secret").await;
    let (_, list) = stack.get("/api/v1/webhook-endpoints", &gym.token).await;
    assert_eq!(list["webhook_endpoints"][0]["url"], receiver.url.as_str(), "{list}");
    assert_eq!(
        list["webhook_endpoints"][0]["events"].as_array().map(Vec::len),
        Some(5),
        "every event ticked"
    );

    browser
        .goto(&format!("{}/app/settings/webhooks", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let secret_again = browser.text_of("[data-revealed]").await.unwrap_or_else(|e| fail(e));
    assert!(secret_again.is_none(), "the secret is shown only once");
    press(&browser, "Remove").await;
    browser
        .wait_for("the endpoint removed", || async {
            Ok(browser.url().await?.ends_with("?done=removed") && browser.find_all("[data-endpoint-id]").await?.is_empty())
        })
        .await
        .unwrap_or_else(|e| fail(e));

    press(&browser, "Rotate the API token").await;
    let mut token = String::new();
    browser
        .wait_for("the new token shown", || async {
            Ok(browser.text_of("[data-revealed]").await?.is_some_and(|s| s.starts_with("olk_")))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    if let Some(t) = browser.text_of("[data-revealed]").await.unwrap_or_else(|e| fail(e)) {
        token = t;
    }
    assert_ne!(token, gym.token);
    assert_eq!(stack.get("/api/v1/settings", &token).await.0, 200, "the new token works");
    assert_eq!(
        stack.get("/api/v1/settings", &gym.token).await.0,
        200,
        "the old one through the overlap"
    );
    drop(browser);
    stack.running.stop();
}

/// A form posted without the session's CSRF token is refused (403) and adds nothing.
#[tokio::test]
async fn a_webhooks_form_without_its_csrf_token_changes_nothing() {
    let stack = Stack::start("app-webhooks-csrf").await;
    let gym = stack.create_account("manual").await;
    let http = openloop_aws::tls::http_client()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let login = http
        .post(format!("{}/app/login", stack.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", gym.token))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let cookie = login
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("ol_session="))
        .map(|c| c.split(';').next().unwrap_or_default().to_owned())
        .unwrap_or_else(|| panic!("a session cookie: {:?}", login.headers()));
    for (path, body) in [
        (
            "/app/settings/webhooks",
            "url=https%3A%2F%2Fexample.com%2Fx&events=task.closed".to_owned(),
        ),
        ("/app/settings/api-token/rotate", String::new()),
        ("/app/settings/webhook-secret/rotate", "csrf=forged".to_owned()),
    ] {
        let response = http
            .post(format!("{}{path}", stack.url))
            .header("cookie", &cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status().as_u16(), 403, "{path}");
    }
    let (_, list) = stack.get("/api/v1/webhook-endpoints", &gym.token).await;
    assert_eq!(list["webhook_endpoints"], serde_json::json!([]));
    assert_eq!(stack.get("/api/v1/settings", &gym.token).await.0, 200, "the token was not rotated");
}

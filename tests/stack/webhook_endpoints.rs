//! Outbound webhooks through CONTRACT.md ("For other programs") on the local runtime: an
//! endpoint at a local receiver gets a signed `task.escalated` when a task escalates — from
//! the queue, not inside the request — and the official Standard Webhooks library accepts the
//! signature; a failing receiver is tried again as the clock moves; the endpoint API's shapes.

use openloop_tests::receiver::Receiver;
use openloop_tests::{Account, Client, Stack};
use serde_json::{Value, json};

/// An account whose local time is now 09:xx (a first touch goes at once in the morning hours),
/// so the test clock can stay at the real time the receiver's library checks against.
async fn gym_at_nine(stack: &Stack) -> Account {
    let now = stack.now().await;
    let hour = i64::from(now.to_zoned(jiff::tz::TimeZone::UTC).hour());
    let mut offset = 9 - hour;
    if offset < -12 {
        offset += 24;
    }
    let timezone = if offset >= 0 {
        format!("Etc/GMT-{offset}")
    } else {
        format!("Etc/GMT+{}", -offset)
    };
    let body = json!({"name": "Harbour Gym", "timezone": timezone, "execution_mode": "manual",
        "onboarded_at": "2026-10-01T00:00:00Z", "profile": {"display_name": "Harbour Gym", "sign_off": "Coach Mike"}});
    let (status, account) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    assert_eq!(status, 201, "{account}");
    Account {
        id: account["account_id"].as_str().unwrap_or_default().to_owned(),
        token: account["api_token"].as_str().unwrap_or_default().to_owned(),
        webhook_secret: account["webhook_secret"].as_str().unwrap_or_default().to_owned(),
    }
}

async fn add_endpoint(stack: &Stack, gym: &Account, url: &str, events: &[&str]) -> Value {
    let (status, created) = stack
        .post("/api/v1/webhook-endpoints", &gym.token, json!({"url": url, "events": events}))
        .await;
    assert_eq!(status, 201, "{created}");
    created
}

/// Given an endpoint for `task.escalated` at a local receiver, when a member's reply escalates
/// a task, then nothing is posted in the request that carried the reply; the queue delivers one
/// signed `{"type", "timestamp", "data"}` that the official library verifies with the secret.
#[tokio::test]
async fn an_escalation_reaches_a_local_receiver_signed_as_standard_webhooks_sign() {
    let stack = Stack::start_without_consumer("hooks-escalation").await;
    let receiver = Receiver::start(200).await;
    let gym = gym_at_nine(&stack).await;
    let created = add_endpoint(&stack, &gym, &receiver.url, &["task.escalated"]).await;
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    assert!(secret.starts_with("whsec_"), "{created}");
    assert_eq!(created["events"], json!(["task.escalated"]));

    let email = stack.member(&gym, "m_hook", "Sam", stack.now().await).await;
    stack.run().await;
    let task = stack.approved_task(&gym, "churn_risk", "m_hook").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    let first = mail.last().unwrap_or_else(|| panic!("the first touch was sent"));
    let (status, body) = stack
        .inbound(&Client::reply_to(
            first,
            "threat@example.net",
            "Stop harassing me or you'll hear from my lawyer.",
        ))
        .await;
    assert!(status < 300, "{body}");
    let (_, detail) = stack.get(&format!("/api/v1/tasks/{task}"), &gym.token).await;
    assert_eq!(detail["status"], "escalated", "{detail}");
    assert!(receiver.deliveries().is_empty(), "nothing posted inside the request");

    stack.run().await;
    let deliveries = receiver.deliveries();
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    let delivery = &deliveries[0];
    let mut headers = standardwebhooks_headers(delivery);
    let verifier = standardwebhooks::Webhook::new(&secret).unwrap_or_else(|e| panic!("secret: {e:?}"));
    verifier
        .verify(&delivery.body, &headers)
        .unwrap_or_else(|e| panic!("the official library refused the signature: {e:?}"));
    let event = delivery.json();
    assert_eq!(event["type"], "task.escalated");
    assert_eq!(event["data"]["task_id"], task.as_str());
    assert!(event["timestamp"].is_string());
    // Tampered, it is refused: the check is real.
    headers.insert("webhook-id", "msg_other".parse().unwrap_or_else(|e| panic!("{e}")));
    assert!(verifier.verify(&delivery.body, &headers).is_err());

    let id = created["id"].as_str().unwrap_or_default();
    let (status, log) = stack.get(&format!("/api/v1/webhook-endpoints/{id}/deliveries"), &gym.token).await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(log["deliveries"][0]["status"], "delivered", "{log}");
    assert_eq!(log["deliveries"][0]["response_status"], 200);
}

fn standardwebhooks_headers(delivery: &openloop_tests::receiver::Delivery) -> axum::http::HeaderMap {
    let mut headers = axum::http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        headers.insert(name, delivery.header(name).parse().unwrap_or_else(|e| panic!("{name}: {e}")));
    }
    headers
}

/// Given a receiver that answers 503, the log says when the delivery is tried again (5 seconds
/// on), and with the clock moved past it, it is, with the same message id.
#[tokio::test]
async fn a_failing_receiver_is_tried_again_after_its_back_off() {
    let stack = Stack::start("hooks-retry").await;
    let receiver = Receiver::start(503).await;
    let gym = stack.create_account("manual").await;
    let created = add_endpoint(&stack, &gym, &receiver.url, &["task.closed"]).await;
    stack.member(&gym, "m_retry", "Ada", stack.now().await).await;
    let task = stack.approved_task(&gym, "churn_risk", "m_retry").await;
    let (status, body) = stack.post(&format!("/api/v1/tasks/{task}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    assert_eq!(receiver.deliveries().len(), 1);
    // (The test clock flows with real time, so only the manual clock of the engine's tests can
    // show nothing goes before the back-off; here the log says when the next try is.)
    let id = created["id"].as_str().unwrap_or_default();
    let (_, log) = stack.get(&format!("/api/v1/webhook-endpoints/{id}/deliveries"), &gym.token).await;
    let at = |field: &str| -> jiff::Timestamp {
        log["deliveries"][0][field]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{field}: {log}"))
    };
    assert_eq!(
        at("next_attempt_at").duration_since(at("at")),
        jiff::SignedDuration::from_secs(5),
        "{log}"
    );
    let now = stack.now().await;
    stack.set_clock(&(now + jiff::SignedDuration::from_secs(6)).to_string()).await;
    receiver.answer(200);
    stack.run().await;
    let deliveries = receiver.deliveries();
    assert_eq!(deliveries.len(), 2, "tried again after 5 seconds");
    assert_eq!(deliveries[0].header("webhook-id"), deliveries[1].header("webhook-id"));
    assert_eq!(deliveries[1].json()["data"]["outcome"], deliveries[0].json()["data"]["outcome"]);
    let (_, log) = stack.get(&format!("/api/v1/webhook-endpoints/{id}/deliveries"), &gym.token).await;
    let statuses: Vec<&str> = log["deliveries"]
        .as_array()
        .map(|d| d.iter().filter_map(|e| e["status"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(statuses, ["delivered", "failed"], "{log}");
}

/// The endpoint API: listed without the secret, one read, another account's not found, bad
/// input in the error shape, deleted.
#[tokio::test]
async fn endpoints_are_listed_without_secrets_scoped_and_removed() {
    let stack = Stack::start("hooks-api").await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;
    let created = add_endpoint(&stack, &gym, "http://127.0.0.1:9/hook", &["todo.created", "brief.ready"]).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, list) = stack.get("/api/v1/webhook-endpoints", &gym.token).await;
    assert_eq!(status, 200);
    assert_eq!(list["webhook_endpoints"][0]["id"], id.as_str());
    assert!(!list.to_string().contains("whsec_"), "{list}");
    let (status, _) = stack.get(&format!("/api/v1/webhook-endpoints/{id}"), &other.token).await;
    assert_eq!(status, 404);
    for body in [
        json!({"url": "ftp://example.com/x", "events": ["task.closed"]}),
        json!({"url": "http://example.com/x", "events": ["task.closed"]}),
        json!({"url": "https://example.com/x", "events": ["task.exploded"]}),
        json!({"url": "https://example.com/x", "events": []}),
    ] {
        let (status, error) = stack.post("/api/v1/webhook-endpoints", &gym.token, body.clone()).await;
        assert_eq!(status, 422, "{body}: {error}");
        assert!(error["error"]["code"].is_string(), "{error}");
    }
    let (status, _) = stack
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/webhook-endpoints/{id}"),
            Some(&other.token),
            None,
        )
        .await;
    assert_eq!(status, 404, "another account's");
    let (status, _) = stack
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/webhook-endpoints/{id}"),
            Some(&gym.token),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (_, list) = stack.get("/api/v1/webhook-endpoints", &gym.token).await;
    assert_eq!(list["webhook_endpoints"], json!([]));
}

/// The deployed transport outside local mode: a loopback or private address is refused, by
/// its text and by what its name resolves to (at creation and again at delivery), and nothing
/// is sent; the local runtime's takes http to loopback.
#[tokio::test]
async fn the_transport_refuses_private_addresses_outside_local_mode_on_resolution() {
    use openloop_core::ports::{TransportError, WebhookTransport};
    use openloop_edge::webhook_transport::HttpWebhookTransport;
    let receiver = Receiver::start(200).await;
    let strict = HttpWebhookTransport::new(false);
    let port = receiver.url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/hook");
    for url in [
        format!("https://127.0.0.1:{port}/hook"),
        format!("https://localhost:{port}/hook"),
        "https://10.0.0.1/x".to_owned(),
        "https://[::1]:9/x".to_owned(),
        "https://169.254.169.254/latest/meta-data".to_owned(),
    ] {
        let err = strict.check_address(&url).await.expect_err(&url);
        assert_eq!(err.code, "webhook_address_refused", "{url}");
    }
    // `localhost` is a name: refused on resolution at delivery too, and nothing arrives.
    match strict.post(&format!("https://localhost:{port}/hook"), &[], "{}").await {
        Err(TransportError::Refused(_)) => {}
        other => panic!("localhost must be refused, got {other:?}"),
    }
    assert!(receiver.deliveries().is_empty());
    let local = HttpWebhookTransport::new(true);
    local.check_address(&receiver.url).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(local.post(&receiver.url, &[], "{}").await.ok(), Some(200));
    assert_eq!(receiver.deliveries().len(), 1);
}

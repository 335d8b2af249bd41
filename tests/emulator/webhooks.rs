//! Outbound webhooks on the emulator: the deliveries queue is SQS and the endpoints live in
//! DynamoDB (their due index on GSI1). A closed task reaches a local receiver signed, as the
//! official Standard Webhooks library checks; a failing receiver is tried again once the
//! tick finds its back-off ended in the index; a removed endpoint is gone.

use openloop_tests::Stack;
use openloop_tests::receiver::Receiver;
use serde_json::json;

fn verified(secret: &str, delivery: &openloop_tests::receiver::Delivery) {
    let mut headers = axum::http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        headers.insert(name, delivery.header(name).parse().unwrap_or_else(|e| panic!("{name}: {e}")));
    }
    standardwebhooks::Webhook::new(secret)
        .unwrap_or_else(|e| panic!("{e:?}"))
        .verify(&delivery.body, &headers)
        .unwrap_or_else(|e| panic!("the official library refused it: {e:?}"));
}

#[tokio::test]
async fn a_closed_task_is_delivered_through_sqs_and_retried_from_the_dynamodb_due_index() {
    let stack = Stack::on_emulator("hooks-queue").await;
    let receiver = Receiver::start(503).await;
    let gym = stack.create_account("manual").await;
    let (status, created) = stack
        .post(
            "/api/v1/webhook-endpoints",
            &gym.token,
            json!({"url": receiver.url, "events": ["task.closed"]}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    stack.member(&gym, "m_sqs", "Ada", stack.now().await).await;
    stack.run().await;
    let task = stack.approved_task(&gym, "churn_risk", "m_sqs").await;
    let (status, body) = stack.post(&format!("/api/v1/tasks/{task}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    let first = receiver.deliveries();
    assert_eq!(first.len(), 1, "the first try, from SQS");
    verified(&secret, &first[0]);
    assert_eq!(first[0].json()["data"]["task_id"], task.as_str());

    // (The test clock flows with real time, so only the manual clock of the engine's tests can
    // show nothing goes before the back-off; here the log says when the next try is.)
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
    receiver.answer(200);
    let now = stack.now().await;
    stack.set_clock(&(now + jiff::SignedDuration::from_secs(6)).to_string()).await;
    stack.run().await;
    let all = receiver.deliveries();
    assert_eq!(all.len(), 2, "tried again once the due index said so");
    verified(&secret, &all[1]);
    assert_eq!(all[0].header("webhook-id"), all[1].header("webhook-id"));
    let (_, log) = stack.get(&format!("/api/v1/webhook-endpoints/{id}/deliveries"), &gym.token).await;
    assert_eq!(log["deliveries"][0]["status"], "delivered", "{log}");
    assert_eq!(log["deliveries"][1]["status"], "failed", "{log}");

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

//! One rule for numbers: on every route that takes a
//! number, one DynamoDB cannot hold (`1e-131`, `1e126`) or one out of the field's bounds
//! (`-5`) is `422` with a message naming the field — never a `503` — and nothing changes.
//! The edge values themselves are kept by both stores (`conformance::numbers`).

use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_tests::{Stack, events};
use reqwest::Method;
use serde_json::{Value, json};

/// The bad values every number is tried with.
fn bad() -> [Value; 3] {
    [json!(1e-131), json!(1e126), json!(-5)]
}

/// A refusal as the contract says: 422, the field named in the message.
fn refused(status: u16, body: &Value, field: &str, what: &str) {
    assert_eq!(status, 422, "{what}: {body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        body["error"]["code"].as_str().is_some_and(|c| !c.is_empty()) && message.contains(field),
        "{what}: the message names {field}: {body}"
    );
}

/// A settings body with the value under test in place.
type Patch = fn(Value) -> Value;

#[tokio::test]
async fn every_number_in_the_settings_is_refused_by_name_and_changes_nothing() {
    let stack = Stack::start("numbers-settings").await;
    let gym = stack.create_account("manual").await;
    let (_, before) = stack.get("/api/v1/settings", &gym.token).await;
    let fields: [(&str, Patch); 7] = [
        ("avg_membership_price", |v| json!({"avg_membership_price": v})),
        ("plan_prices", |v| json!({"plan_prices": {"pln_1": v}})),
        ("member_weekly_limit", |v| json!({"member_weekly_limit": v})),
        ("daily_send_limit", |v| json!({"daily_send_limit": v})),
        ("send_window_start", |v| json!({"send_window_start": v})),
        ("send_window_end", |v| json!({"send_window_end": v})),
        (
            "avg_membership_price",
            |v| json!({"avg_membership_price": v, "daily_send_limit": 20}),
        ),
    ];
    for (field, body) in fields {
        for value in bad() {
            let (status, error) = stack
                .call(Method::PUT, "/api/v1/settings", Some(&gym.token), Some(body(value.clone())))
                .await;
            refused(status, &error, field, &format!("settings {field} = {value}"));
        }
    }
    let (_, after) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(before, after, "a refused update changes nothing");
    // The edges a price may take are kept.
    let (status, saved) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"avg_membership_price": 0, "plan_prices": {"pln_1": 100_000}})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    stack.running.stop();
}

#[tokio::test]
async fn every_number_of_a_member_event_is_refused_by_name_and_changes_nothing() {
    let stack = Stack::start("numbers-events").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await.to_string();
    for (i, value) in bad().into_iter().enumerate() {
        let mut created = events::member_created("m_n", "n@example.com", "Nora", &at);
        created["data"]["monthly_value"] = value.clone();
        let (status, error) = stack.webhook(&gym, &format!("evt_mv_{i}"), created).await;
        refused(status, &error, "monthly_value", &format!("member.created monthly_value {value}"));
        for kind in ["payment.failed", "payment.succeeded"] {
            let mut payment = events::payment_failed("m_n", &at);
            payment["type"] = json!(kind);
            if kind == "payment.succeeded" {
                payment["data"] = json!({"member_id": "m_n", "amount": value, "currency": "USD", "paid_at": at});
            } else {
                payment["data"]["amount"] = value.clone();
            }
            let (status, error) = stack.webhook(&gym, &format!("evt_{kind}_{i}"), payment).await;
            refused(status, &error, "amount", &format!("{kind} amount {value}"));
        }
    }
    let (status, members) = stack.get("/api/v1/members", &gym.token).await;
    assert_eq!(status, 200, "{members}");
    assert_eq!(members["members"].as_array().map(Vec::len), Some(0), "nothing was kept: {members}");
    let (_, tasks) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(tasks["tasks"].as_array().map(Vec::len), Some(0), "{tasks}");
    stack.running.stop();
}

#[tokio::test]
async fn every_number_an_owner_sends_with_a_task_or_a_schedule_is_refused_by_name_and_changes_nothing() {
    let stack = Stack::start("numbers-tasks").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await;
    stack.member(&gym, "m_t", "Tess", at).await;
    for value in bad() {
        let (status, error) = stack
            .post(
                "/api/v1/tasks",
                &gym.token,
                json!({"task_type": "churn_risk", "member_id": "m_t", "goal": "Bring them back", "confidence": value}),
            )
            .await;
        refused(status, &error, "confidence", &format!("task confidence {value}"));
        let (status, error) = stack
            .post(
                "/api/v1/tasks/batch",
                &gym.token,
                json!({"task_type": "churn_risk", "member_ids": ["m_t"], "goal": "Bring them back", "confidence": value}),
            )
            .await;
        refused(status, &error, "confidence", &format!("batch confidence {value}"));
        let (status, error) = stack
            .post(
                "/api/v1/recurring",
                &gym.token,
                json!({"task_type": "churn_risk", "member_id": "m_t", "cron": "0 9 * * 1", "max_instances": value}),
            )
            .await;
        refused(status, &error, "max_instances", &format!("recurring max_instances {value}"));
    }
    let (_, tasks) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(tasks["tasks"].as_array().map(Vec::len), Some(0), "{tasks}");
    let (_, templates) = stack.get("/api/v1/recurring", &gym.token).await;
    assert!(
        templates.as_array().or(templates["templates"].as_array()).is_none_or(Vec::is_empty),
        "{templates}"
    );
    stack.running.stop();
}

const SECRET: &str = "pp_whsec_numbers";

/// PushPress's deliveries: a `created` Openloop cannot keep is refused (422, nothing claimed:
/// the same delivery with a good time is then taken); a check-in whose time it cannot keep is
/// acknowledged as unreadable, never a 5xx.
#[tokio::test]
async fn a_pushpress_delivery_with_a_number_openloop_cannot_keep_is_refused_or_acknowledged_never_a_5xx() {
    let stack = Stack::start("numbers-pushpress").await;
    let gym = crate::pushpress_webhooks::subscribed(&stack, SECRET).await;
    let account: AccountId = gym.id.parse().expect("account id");
    // PushPress's `created` is taken only within minutes of now.
    let now = stack.now().await.as_second();
    let customer = json!({"id": "usr_1", "name": {"first": "Pia", "last": "P"}, "email": "pia@example.com", "role": "member"});
    let (status, body) = stack
        .pushpress_delivery(
            &gym,
            SECRET,
            &json!({"event": "customer.created", "created": now, "data": customer}),
            None,
        )
        .await;
    assert!(status < 300, "{body}");
    let checkin = |created: Value, timestamp: Value| json!({"event": "checkin.created", "created": created, "data": {"id": "chk_1", "customer": "usr_1", "timestamp": timestamp, "kind": "class"}});
    for value in bad() {
        let (status, error) = stack
            .pushpress_delivery(&gym, SECRET, &checkin(value.clone(), json!(1_793_620_800_000_i64)), None)
            .await;
        refused(status, &error, "created", &format!("created {value}"));
        let (status, body) = stack
            .pushpress_delivery(&gym, SECRET, &checkin(json!(now + 60), value.clone()), None)
            .await;
        assert!(status < 500, "timestamp {value}: never a 5xx: {body}");
        assert_eq!(
            (status, body["status"].as_str()),
            (202, Some("ignored")),
            "timestamp {value}: {body}"
        );
    }
    let member = MemberId::parse("usr_1").expect("member");
    let (facts, _) = stack
        .running
        .store
        .get_member(account, &member)
        .await
        .expect("read")
        .expect("the customer");
    assert!(facts.last_checkin_at.is_none(), "no check-in was kept from a bad number: {facts:?}");
    stack.running.stop();
}

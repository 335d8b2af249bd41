//! `make demo`: a scripted month for a demo gym, played through a running stack (`make run`)
//! over CONTRACT.md only — members join, payments fail, the owner reviews, the system sends
//! and follows up day by day on the test clock — then the numbers.
//!
//! Talks to `OPENLOOP_URL`, else `http://{OPENLOOP_HTTP_ADDR}` as `make run` serves it (default
//! `http://127.0.0.1:8787`), with `OPENLOOP_ADMIN_TOKEN`.

use std::collections::BTreeMap;

use jiff::SignedDuration;
use openloop_tests::{Client, events};
use serde_json::{Value, json};

#[tokio::main]
async fn main() {
    let client = Client {
        url: openloop_tests::stack_url(std::env::var("OPENLOOP_URL").ok(), std::env::var("OPENLOOP_HTTP_ADDR").ok()),
        http: reqwest::Client::new(),
        admin_token: std::env::var("OPENLOOP_ADMIN_TOKEN").unwrap_or_else(|_| "local-admin-token".into()),
        inbound_token: std::env::var("OPENLOOP_INBOUND_TOKEN").unwrap_or_else(|_| "local-inbound-token".into()),
    };
    if client.http.get(format!("{}/health", client.url)).send().await.is_err() {
        eprintln!("nothing answers at {}: start the stack with `make run` first", client.url);
        std::process::exit(1);
    }
    let gym = client.create_account("manual").await;
    println!("Demo gym {} (manual mode: the owner approves every first message)", gym.id);

    // Start at 09:00 New York on the day after the clock's today.
    let today = client.now().await.to_zoned(jiff::tz::TimeZone::UTC).date();
    let start = openloop_tests::nine_in_new_york(today.tomorrow().unwrap_or(today));
    client.set_clock(&start.to_string()).await;
    let tag = gym.id.to_ascii_lowercase();
    let members = ["Sarah", "Alex", "Jordan", "Priya", "Sam", "Lee"];
    for (i, name) in members.iter().enumerate() {
        let email = format!("{}+{tag}@example.com", name.to_ascii_lowercase());
        client
            .webhook(
                &gym,
                &format!("join-{i}"),
                events::member_created(&format!("m_{i}"), &email, name, &start.to_string()),
            )
            .await;
    }
    for i in [0, 2, 4] {
        client
            .webhook(
                &gym,
                &format!("pay-{i}"),
                events::payment_failed(&format!("m_{i}"), &start.to_string()),
            )
            .await;
    }
    client.run().await;

    let (_, review) = client.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let queue = review["tasks"].as_array().cloned().unwrap_or_default();
    println!("Day 0: {} tasks wait for review", queue.len());
    for (n, task) in queue.iter().enumerate() {
        let id = task["id"].as_str().unwrap_or_default();
        let who = task["member"]["name"].as_str().unwrap_or("?");
        if n == queue.len() - 1 {
            client.post(&format!("/api/v1/tasks/{id}/skip"), &gym.token, json!({})).await;
            println!("  owner skips {who}'s payment reminder (they already called)");
        } else {
            client.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
            println!("  owner approves {who}'s payment reminder");
        }
    }

    let mut sent_before = 0;
    for day in 0..30 {
        // Two runs a day in New York: the morning, when first touches go, and the afternoon,
        // when follow-ups do (spec §29.3).
        for hours in [0, 5] {
            let now = start + SignedDuration::from_hours(24 * day + hours);
            client.set_clock(&now.to_string()).await;
            client.run().await;
        }
        let sent = outbox_for(&client, &tag).await;
        for mail in sent.iter().skip(sent_before) {
            println!(
                "Day {day:>2}: sent {:<32} to {}",
                mail["subject"].as_str().unwrap_or(""),
                mail["to"].as_str().unwrap_or("")
            );
        }
        sent_before = sent.len();
    }

    let (_, all) = client.get("/api/v1/tasks?limit=200", &gym.token).await;
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    for task in all["tasks"].as_array().cloned().unwrap_or_default() {
        *by_status.entry(task["status"].as_str().unwrap_or("?").to_owned()).or_default() += 1;
    }
    println!();
    println!("After 30 days: {sent_before} messages sent; tasks by status: {by_status:?}");
    let (status, scorecard) = client.get("/api/v1/scorecard", &gym.token).await;
    match status {
        200 => println!("Scorecard: {scorecard}"),
        _ => println!("Scorecard: {}", scorecard["error"]["message"].as_str().unwrap_or("unavailable")),
    }
}

async fn outbox_for(client: &Client, tag: &str) -> Vec<Value> {
    let (_, body) = client.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
    body.as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["to"].as_str().is_some_and(|to| to.contains(tag)))
        .collect()
}

//! `make demo`: a scripted month for a demo gym, played through a running stack (`make run`)
//! over CONTRACT.md only — members join, payments fail, the owner reviews, the system sends
//! and follows up day by day on the test clock — then the numbers.
//!
//! Talks to `OPENLOOP_URL`, else `http://{OPENLOOP_HTTP_ADDR}` as `make run` serves it (default
//! `http://127.0.0.1:8787`), with `OPENLOOP_ADMIN_TOKEN`. `--days N` (or `OPENLOOP_DEMO_DAYS`)
//! plays N days instead of 30 (`make test` plays a short one).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use openloop_tests::{Client, events};
use serde_json::{Value, json};

#[tokio::main]
async fn main() {
    let days = match demo_days(std::env::args().skip(1).collect(), std::env::var("OPENLOOP_DEMO_DAYS").ok()) {
        Ok(days) => days,
        Err(e) => {
            eprintln!("demo: {e}");
            std::process::exit(2);
        }
    };
    let client = Client {
        url: openloop_tests::stack_url(std::env::var("OPENLOOP_URL").ok(), std::env::var("OPENLOOP_HTTP_ADDR").ok()),
        http: openloop_aws::tls::client(),
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
    advance_to(&client, start).await;
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
    for day in 0..days {
        // Two runs a day in New York: the morning, when first touches go, and the afternoon,
        // when follow-ups do (spec §29.3).
        for hours in [0, 5] {
            advance_to(&client, start + SignedDuration::from_hours(24 * day + hours)).await;
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
    println!("After {days} days: {sent_before} messages sent; tasks by status: {by_status:?}");
    let (status, scorecard) = client.get("/api/v1/scorecard", &gym.token).await;
    match status {
        200 => println!("Scorecard: {scorecard}"),
        _ => println!("Scorecard: {}", scorecard["error"]["message"].as_str().unwrap_or("unavailable")),
    }
    println!();
    println!("{}", sign_in_hint(&client.url, &gym.token));
}

/// How to see the demo gym on the dashboard: its sign-in page and the token it takes.
fn sign_in_hint(url: &str, token: &str) -> String {
    format!("See the demo gym on the dashboard: open {url}/app/login and sign in with its token {token}")
}

/// How many days to play: `--days N`, else `OPENLOOP_DEMO_DAYS`, else 30.
fn demo_days(args: Vec<String>, env: Option<String>) -> Result<i64, String> {
    let value = match args.as_slice() {
        [] => env,
        [flag, n] if flag == "--days" => Some(n.clone()),
        _ => return Err("usage: demo [--days N]".into()),
    };
    match value {
        None => Ok(30),
        Some(n) => match n.trim().parse::<i64>() {
            Ok(days) if (1..=365).contains(&days) => Ok(days),
            _ => Err(format!("the number of days must be 1 to 365, not {n:?}")),
        },
    }
}

/// Move the test clock to `at`. The clock flows with real time between the demo's calls, so
/// an instant it planned (the first day's morning, set a moment ago) may already be behind it:
/// that is where the clock should be anyway, and the demo goes on from its now.
async fn advance_to(client: &Client, at: Timestamp) {
    let (status, body) = client
        .call(reqwest::Method::POST, "/_local/clock", None, Some(json!({"now": at.to_string()})))
        .await;
    match (status, body["error"]["code"].as_str()) {
        (200, _) | (409, Some("clock_backwards")) => {}
        _ => {
            eprintln!("demo: the stack refused to move its clock to {at}: {status} {body}");
            std::process::exit(1);
        }
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

#[cfg(test)]
mod tests {
    use super::{demo_days, sign_in_hint};

    #[test]
    fn the_demo_says_how_to_sign_in_to_its_gym() {
        let hint = sign_in_hint("http://127.0.0.1:8787", "olk_abc");
        assert!(hint.contains("http://127.0.0.1:8787/app/login"), "{hint}");
        assert!(hint.ends_with("olk_abc"), "{hint}");
    }

    #[test]
    fn the_demo_plays_thirty_days_unless_told() {
        assert_eq!(demo_days(vec![], None), Ok(30));
        assert_eq!(demo_days(vec![], Some("3".into())), Ok(3));
        assert_eq!(demo_days(vec!["--days".into(), "2".into()], Some("3".into())), Ok(2));
        assert!(demo_days(vec!["--days".into(), "0".into()], None).is_err());
        assert!(demo_days(vec!["--days".into(), "x".into()], None).is_err());
        assert!(demo_days(vec!["--weeks".into(), "2".into()], None).is_err());
    }
}

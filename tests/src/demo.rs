//! `make demo`'s month, played through any running stack over CONTRACT.md (and the local
//! runtime's test clock, runs and outbox): members join, three payments fail, the owner
//! reviews, the system sends and follows up day by day — and the members do what members do:
//! one pays before the follow-up, one answers and pays the next day, one the owner handles
//! by phone. Then the numbers, month by month, since a month played from late November ends
//! in December and each month's scorecard counts only its own sends.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::{Account, Client, events};

/// The demo's members: (id, first name).
pub const MEMBERS: [(&str, &str); 6] = [
    ("m_0", "Sarah"),
    ("m_1", "Alex"),
    ("m_2", "Jordan"),
    ("m_3", "Priya"),
    ("m_4", "Sam"),
    ("m_5", "Lee"),
];

/// What Sam answers to his first payment note.
pub const SAMS_REPLY: &str = "Thanks for the heads-up! My card was replaced last week, I'll update it tonight.";

/// What a played month left: the gym, every mail sent to its members, the tasks by status
/// and outcome, and each month's scorecard (`YYYY-MM`, the API's body).
pub struct Played {
    pub gym: Account,
    pub sent: Vec<Value>,
    pub by_status: BTreeMap<String, usize>,
    pub by_outcome: BTreeMap<String, usize>,
    pub scorecards: Vec<(String, Value)>,
}

/// Play `days` days (from 09:00 New York on the day after the clock's today), telling what
/// happens through `say`. An error says what the stack refused.
pub async fn play(client: &Client, days: i64, say: &mut dyn FnMut(String)) -> Result<Played, String> {
    let gym = client.create_account("manual").await;
    say(format!("Demo gym {} (manual mode: the owner approves every first message)", gym.id));
    let today = client.now().await.to_zoned(jiff::tz::TimeZone::UTC).date();
    let start = crate::nine_in_new_york(today.tomorrow().unwrap_or(today));
    advance_to(client, start).await?;
    let tag = gym.id.to_ascii_lowercase();
    let email = |name: &str| format!("{}+{tag}@example.com", name.to_ascii_lowercase());
    for (id, name) in MEMBERS {
        accepted(
            client
                .webhook(
                    &gym,
                    &format!("join-{id}"),
                    events::member_created(id, &email(name), name, &start.to_string()),
                )
                .await,
        )?;
    }
    for (id, _) in [MEMBERS[0], MEMBERS[2], MEMBERS[4]] {
        accepted(
            client
                .webhook(&gym, &format!("pay-{id}"), events::payment_failed(id, &start.to_string()))
                .await,
        )?;
    }
    client.run().await;

    let (_, review) = client.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let queue = review["tasks"].as_array().cloned().unwrap_or_default();
    say(format!("Day  0: {} tasks wait for review", queue.len()));
    for task in &queue {
        let id = task["id"].as_str().unwrap_or_default();
        let who = task["member"]["name"].as_str().unwrap_or("?");
        if task["member"]["id"] == "m_0" {
            client
                .post(
                    &format!("/api/v1/tasks/{id}/skip"),
                    &gym.token,
                    json!({"reason": "she called the front desk"}),
                )
                .await;
            say(format!(
                "        owner skips {who}'s payment note (she already called the front desk)"
            ));
        } else {
            client.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
            say(format!("        owner approves {who}'s payment note"));
        }
    }

    let mut sent_before = 0;
    for day in 0..days {
        // Two runs a day in New York: the morning, when first touches go, and the afternoon,
        // when follow-ups do (spec §29.3). What members do happens between them.
        for hours in [0, 5] {
            let now = start + SignedDuration::from_hours(24 * day + hours);
            advance_to(client, now).await?;
            match (day, hours) {
                (1, 0) => {
                    accepted(
                        client
                            .webhook(&gym, "paid-m_2", events::payment_succeeded("m_2", &now.to_string()))
                            .await,
                    )?;
                    say(format!("Day {day:>2}: Jordan updates his card; the payment goes through"));
                }
                (1, 5) => {
                    let to_sam = outbox_for(client, &email("Sam")).await;
                    if let Some(first) = to_sam.first() {
                        let raw = Client::reply_to(first, &format!("sam-reply-{tag}@example.com"), SAMS_REPLY);
                        accepted(client.inbound(&raw).await)?;
                        say(format!("Day {day:>2}: Sam answers: {SAMS_REPLY:?}"));
                    }
                }
                (2, 0) => {
                    accepted(
                        client
                            .webhook(&gym, "paid-m_4", events::payment_succeeded("m_4", &now.to_string()))
                            .await,
                    )?;
                    say(format!("Day {day:>2}: Sam's payment goes through"));
                }
                _ => {}
            }
            client.run().await;
        }
        let sent = outbox_for(client, &tag).await;
        for mail in sent.iter().skip(sent_before) {
            say(format!(
                "Day {day:>2}: sent {:<48} to {}",
                mail["subject"].as_str().unwrap_or(""),
                mail["to"].as_str().unwrap_or("")
            ));
        }
        sent_before = sent.len();
    }

    let (_, all) = client.get("/api/v1/tasks?limit=200", &gym.token).await;
    let (mut by_status, mut by_outcome) = (BTreeMap::new(), BTreeMap::new());
    for task in all["tasks"].as_array().cloned().unwrap_or_default() {
        *by_status.entry(task["status"].as_str().unwrap_or("?").to_owned()).or_default() += 1;
        if let Some(outcome) = task["outcome"].as_str() {
            *by_outcome.entry(outcome.to_owned()).or_default() += 1;
        }
    }
    let end = start + SignedDuration::from_hours(24 * (days - 1) + 5);
    let mut scorecards = Vec::new();
    for month in months_between(start, end) {
        let (status, card) = client.get(&format!("/api/v1/scorecard?month={month}"), &gym.token).await;
        if status != 200 {
            return Err(format!("the scorecard of {month}: {status} {card}"));
        }
        scorecards.push((month, card));
    }
    Ok(Played {
        gym,
        sent: outbox_for(client, &tag).await,
        by_status,
        by_outcome,
        scorecards,
    })
}

/// Every month (`YYYY-MM`, New York) from `from`'s to `to`'s.
pub fn months_between(from: Timestamp, to: Timestamp) -> Vec<String> {
    let tz = crate::new_york();
    let (mut month, last) = (
        from.to_zoned(tz.clone()).date().first_of_month(),
        to.to_zoned(tz).date().first_of_month(),
    );
    let mut months = Vec::new();
    while month <= last {
        months.push(month.strftime("%Y-%m").to_string());
        match month.checked_add(jiff::ToSpan::month(1)) {
            Ok(next) => month = next,
            Err(_) => break,
        }
    }
    months
}

fn accepted((status, body): (u16, Value)) -> Result<(), String> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(format!("the stack refused a demo event: {status} {body}"))
    }
}

/// Move the test clock to `at`. The clock flows with real time between the demo's calls, so
/// an instant it planned (the first day's morning, set a moment ago) may already be behind it:
/// that is where the clock should be anyway, and the demo goes on from its now.
async fn advance_to(client: &Client, at: Timestamp) -> Result<(), String> {
    let (status, body) = client
        .call(reqwest::Method::POST, "/_local/clock", None, Some(json!({"now": at.to_string()})))
        .await;
    match (status, body["error"]["code"].as_str()) {
        (200, _) | (409, Some("clock_backwards")) => Ok(()),
        _ => Err(format!("the stack refused to move its clock to {at}: {status} {body}")),
    }
}

/// Every mail whose address holds `to`, oldest first.
async fn outbox_for(client: &Client, to: &str) -> Vec<Value> {
    let (_, body) = client.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
    body.as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["to"].as_str().is_some_and(|addr| addr.contains(to)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::months_between;

    #[test]
    fn a_month_from_late_november_spans_two_months() {
        let from: jiff::Timestamp = "2026-11-28T14:00:00Z".parse().expect("time");
        let to: jiff::Timestamp = "2026-12-27T19:00:00Z".parse().expect("time");
        assert_eq!(months_between(from, to), ["2026-11", "2026-12"]);
        assert_eq!(months_between(from, from), ["2026-11"]);
    }
}

//! The owner away, played for six weeks: a gym on autopilot (`limited_auto`) whose owner only
//! reads the mail — deciding from its links and answering in words for two weeks, then silent
//! for a week, then back — with regulars drifting away, failing payments and leads who ask
//! questions. Nobody the agent found may be dropped in silence, and every mail is read as the
//! person who gets it.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use openloop_tests::{Account, Client, Stack};
use serde_json::{Value, json};

use crate::morning;

const DAYS: i64 = 42;
/// The week (and a day) the owner reads nothing and answers nothing.
const AWAY: std::ops::RangeInclusive<i64> = 14..=21;

/// Members the gym first hears of on the day before the owner goes away (an import, late in
/// the morning): two regulars who stopped coming — on autopilot by then, their first mails go
/// without the owner — and one whose payment fails, which always waits for the owner.
const LATE: [(&str, &str); 2] = [("m_nia", "Nia"), ("m_oto", "Oto")];
const LATE_PAYMENT: (&str, &str) = ("m_pia", "Pia");
const LATE_DAY: i64 = 13;

/// The regulars who drift away: id, first name as typed, and days since their last visit on
/// day 0 (twice a week before that, since 2025).
const REGULARS: [(&str, &str, i64); 10] = [
    ("m_ava", "Ava", 16),
    ("m_ben", "BEN", 18),
    ("m_cal", "Cal", 20),
    ("m_dee", "Dee", 22),
    ("m_eli", "eli", 25),
    ("m_fay", "Fay", 28),
    ("m_gus", "Gus", 31),
    ("m_hal", "Hal", 35),
    ("m_ida", "Ida", 40),
    ("m_jon", "Jon", 45),
];

/// The leads of the month: id, first name, the day and hour (local) they sign up, and what they
/// ask after the first touch.
const LEADS: [(&str, &str, i64, i8, &str); 3] = [
    ("m_kim", "Kim", 2, 13, "Can I come Thursday at 6pm? Is the first class free?"),
    ("m_lou", "Lou", 9, 15, "how much is it per month?"),
    ("m_max", "Max", 17, 11, "Do you have a sauna?"),
];

/// The gym's own facts a question may be answered from.
const FACTS: [&str; 2] = [
    "Your first class is free, and you can come to any class on the timetable.",
    "Unlimited classes are $149 a month, with no joining fee.",
];

fn at_hour(day0: Timestamp, day: i64, hour: i8) -> Timestamp {
    let local = day0.to_zoned(openloop_tests::new_york());
    let date = local
        .date()
        .checked_add(jiff::Span::new().days(day))
        .unwrap_or_else(|e| panic!("{e}"));
    date.at(hour, 0, 0, 0)
        .to_zoned(openloop_tests::new_york())
        .unwrap_or_else(|e| panic!("{e}"))
        .timestamp()
}

fn sent_at(mail: &Value) -> Timestamp {
    mail["sent_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{mail}"))
}

fn text(mail: &Value) -> &str {
    mail["text"].as_str().unwrap_or_default()
}

/// Every action link of an owner mail: `(label, path)`.
fn links_in(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().split_once(": http"))
        .filter_map(|(label, url)| url.find("/a/").map(|i| (label.to_owned(), url[i..].to_owned())))
        .collect()
}

async fn post_link(stack: &Stack, path: &str) -> (u16, String) {
    let response = stack
        .http
        .post(format!("{}{path}", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// Twice a week since long ago, the last `last_visit` days before `now`.
async fn checkins(stack: &Stack, gym: &Account, id: &str, now: Timestamp, last_visit: i64) {
    for i in 0..16i64 {
        let at = now - SignedDuration::from_hours(24 * (last_visit + 3 * i));
        let event = json!({"type": "checkin.created", "timestamp": at.to_string(),
            "data": {"member_id": id, "checked_in_at": at.to_string()}});
        webhook(stack, gym, &format!("evt_{id}_{i}"), event).await;
    }
}

async fn webhook(stack: &Stack, gym: &Account, id: &str, body: Value) {
    let (status, answer) = stack.webhook(gym, id, body).await;
    assert_eq!(status, 202, "{id}: {answer}");
}

/// Every task of the account, whatever its status.
async fn all_tasks(stack: &Stack, gym: &Account) -> Vec<Value> {
    let mut tasks = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/tasks?limit=100&cursor={c}"),
            None => "/api/v1/tasks?limit=100".to_owned(),
        };
        let (status, page) = stack.get(&path, &gym.token).await;
        assert_eq!(status, 200, "{page}");
        tasks.extend(page["tasks"].as_array().cloned().unwrap_or_default());
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return tasks;
        }
    }
}

/// Every to-do of the account, whatever its status.
async fn all_todos(stack: &Stack, gym: &Account) -> Vec<Value> {
    let mut todos = Vec::new();
    for status in ["open", "snoozed", "done"] {
        let (_, page) = stack.get(&format!("/api/v1/todos?status={status}&limit=100"), &gym.token).await;
        todos.extend(page["todos"].as_array().cloned().unwrap_or_default());
    }
    todos
}

/// The owner at their mail: every "Send it as drafted" link of the mails since `seen` is
/// posted (the owner trusts the drafts), every call or note "I took care of it", and a
/// suggestion's "Yes, do that".
async fn owner_reads(stack: &Stack, owner: &str, seen: usize) -> usize {
    let mail = stack.outbox_to(owner).await;
    for m in &mail[seen..] {
        for (label, path) in links_in(text(m)) {
            if label == "Send it as drafted" || label == "I took care of it" || label == "Yes, do that" {
                let (status, page) = post_link(stack, &path).await;
                // A link of an item decided since (by an earlier mail's link) says so.
                assert!(matches!(status, 200 | 410), "{label} {path}: {status} {page}");
            }
        }
    }
    mail.len()
}

#[tokio::test]
async fn six_weeks_on_autopilot_with_an_owner_away_drop_nobody() {
    let stack = Stack::start("away-month").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("limited_auto").await;
    let owner = stack.give_owner_address(&gym).await;
    for fact in FACTS {
        let (status, body) = stack
            .post("/api/v1/memories", &gym.token, json!({"content": fact, "category": "faq"}))
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let mut emails: BTreeMap<&str, String> = BTreeMap::new();
    for (id, first, last_visit) in REGULARS {
        emails.insert(id, stack.member(&gym, id, first, day0).await);
        checkins(&stack, &gym, id, day0, last_visit).await;
    }
    // Two payments fail on day 0.
    for (id, first) in [("m_ray", "Ray"), ("m_sol", "Sol")] {
        emails.insert(id, stack.member(&gym, id, first, day0).await);
        webhook(
            &stack,
            &gym,
            &format!("evt_{id}_pay"),
            openloop_tests::events::payment_failed(id, &day0.to_string()),
        )
        .await;
    }
    stack.run().await;

    let mut seen = 0;
    let mut lead_created: BTreeMap<&str, Timestamp> = BTreeMap::new();
    let mut asked: BTreeMap<&str, Timestamp> = BTreeMap::new();
    for day in 0..DAYS {
        for hour in [7, 9, 11, 13, 15, 17, 19] {
            let now = at_hour(day0, day, hour);
            if now <= day0 {
                continue;
            }
            stack.set_clock(&now.to_string()).await;
            for (id, first, on, at, _) in LEADS {
                if (on, at) == (day, hour) {
                    let email = format!("{id}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-");
                    let event = json!({"type": "member.created", "timestamp": now.to_string(), "data": {"member_id": id,
                        "email": email, "first_name": first, "status": "lead", "joined_at": now.to_string()}});
                    webhook(&stack, &gym, &format!("evt_{id}"), event).await;
                    emails.insert(id, email);
                    lead_created.insert(id, now);
                }
            }
            if (day, hour) == (LATE_DAY, 11) {
                for (id, first) in LATE {
                    emails.insert(id, stack.member(&gym, id, first, now).await);
                    checkins(&stack, &gym, id, now, 21).await;
                }
                let (id, first) = LATE_PAYMENT;
                emails.insert(id, stack.member(&gym, id, first, now).await);
                let failed = openloop_tests::events::payment_failed(id, &now.to_string());
                webhook(&stack, &gym, &format!("evt_{id}_pay"), failed).await;
            }
            stack.run().await;
            // Five minutes on, the queues drained again (a lead's first touch leaves then).
            stack.set_clock(&(now + SignedDuration::from_mins(5)).to_string()).await;
            stack.run().await;
            // A lead asks their question two hours after the first touch.
            for (id, _, _, _, question) in LEADS {
                let Some(email) = emails.get(id) else { continue };
                if asked.contains_key(id) {
                    continue;
                }
                let mail = stack.outbox_to(email).await;
                if let Some(first) = mail.first().filter(|m| sent_at(m) + SignedDuration::from_hours(2) <= now) {
                    let (status, body) = stack
                        .inbound(&Client::reply_to(first, &format!("{id}-q@mail.example.net"), question))
                        .await;
                    assert_eq!(status, 202, "{body}");
                    asked.insert(id, now + SignedDuration::from_mins(5));
                    stack.run().await;
                }
            }
            if hour == 9 && !AWAY.contains(&day) {
                seen = owner_reads(&stack, &owner, seen).await;
                stack.run().await;
            }
        }
    }

    // Everything said, printed for a person to read (`-- --nocapture`).
    let mut mails: Vec<(Timestamp, String, Value)> = Vec::new();
    for (id, email) in &emails {
        for m in stack.outbox_to(email).await {
            mails.push((sent_at(&m), (*id).to_owned(), m));
        }
    }
    for m in stack.outbox_to(&owner).await {
        mails.push((sent_at(&m), "OWNER".to_owned(), m));
    }
    mails.sort_by_key(|(at, who, _)| (*at, who.clone()));
    for (at, who, m) in &mails {
        println!(
            "=== {} to {who}: {}\n{}\n",
            at.to_zoned(openloop_tests::new_york()).strftime("%a %b %d %H:%M"),
            m["subject"].as_str().unwrap_or_default(),
            text(m)
        );
    }

    let tasks = all_tasks(&stack, &gym).await;
    let todos = all_todos(&stack, &gym).await;
    let owner_mail = stack.outbox_to(&owner).await;
    let mut problems = Vec::new();
    let to_member = |id: &str| -> Vec<&Value> { mails.iter().filter(|(_, who, _)| who == id).map(|(_, _, m)| m).collect() };

    // Nobody the agent found is dropped in silence: each was written to, is on the call list,
    // or still has an open task; nothing closes unsent without a to-do.
    let on_list: BTreeSet<&str> = todos.iter().filter_map(|t| t["member"]["id"].as_str()).collect();
    let found: BTreeSet<&str> = tasks.iter().filter_map(|t| t["member"]["id"].as_str()).collect();
    for member in &found {
        let open = tasks
            .iter()
            .any(|t| t["member"]["id"] == *member && !matches!(t["status"].as_str(), Some("completed" | "cancelled" | "expired")));
        if to_member(member).is_empty() && !on_list.contains(member) && !open {
            problems.push(format!("{member} was found, then dropped: no mail, no to-do, no open task"));
        }
    }
    for t in &tasks {
        if t["outcome_reason"] == "review_expired" && t["todo_id"].is_null() {
            problems.push(format!("{}'s task expired unsent with no to-do: {t}", t["member"]["id"]));
        }
    }
    // Autopilot that is autopilot: the owner approved the at-risk drafts as written, was
    // offered autopilot in the mail and took it; the regulars found on the eve of the week away
    // heard from the gym without the owner.
    let offer = owner_mail
        .iter()
        .find(|m| text(m).contains("A suggestion: Send At-Risk Member messages without waiting for you?"));
    match offer {
        Some(m) if text(m).contains("Yes, do that: http") => {}
        other => problems.push(format!("autopilot was never offered in the mail with its links: {other:?}")),
    }
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    if !settings["autopilot_types"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t == "churn_risk"))
    {
        problems.push(format!(
            "the owner's yes from the mail did not put churn risk on autopilot: {settings}"
        ));
    }
    for (id, first) in LATE {
        let first_mail = to_member(id).first().map(|m| days_from(day0, sent_at(m)));
        if !first_mail.is_some_and(|d| AWAY.contains(&d) || d == LATE_DAY) {
            problems.push(format!(
                "{first}, found on the eve of the week away, waited for the owner: first mail on day {first_mail:?}"
            ));
        }
    }
    {
        let (id, first) = LATE_PAYMENT;
        if !found.contains(id) {
            problems.push(format!("{first} was never found"));
        }
        // Nobody decided their item while the owner was away: the last call went out with its
        // links, and at expiry they reached the call list.
        let last_call = owner_mail
            .iter()
            .find(|m| AWAY.contains(&days_from(day0, sent_at(m))) && text(m).contains(&format!("Last call: {first}")));
        match last_call {
            Some(m) if text(m).contains("Send it as drafted: http") && !text(m).contains("\"Last:") => {}
            other => problems.push(format!(
                "no last call with its links for {first} while the owner was away: {other:?}"
            )),
        }
        if !on_list.contains(id) {
            problems.push(format!(
                "{first}'s item expired in the owner's absence and {first} is not on the call list"
            ));
        }
    }

    // Leads hear back within five minutes; their questions are answered from the gym's facts,
    // or held with a short reply at once while the owner is told at once.
    for (id, first, _, _, question) in LEADS {
        let mail = to_member(id);
        let created = lead_created.get(id).copied().unwrap_or_else(|| panic!("{id} never signed up"));
        match mail.first() {
            Some(m) if sent_at(m).duration_since(created) <= SignedDuration::from_mins(5) => {}
            other => problems.push(format!("{first}'s first touch was not within 5 minutes: {other:?}")),
        }
        let Some(asked_at) = asked.get(id).copied() else {
            problems.push(format!("{first} never got to ask"));
            continue;
        };
        let answer = mail.iter().find(|m| sent_at(m) >= asked_at);
        let fact = FACTS.iter().find(|f| f.contains("$149")).filter(|_| question.contains("how much"));
        match (answer, fact) {
            (Some(a), Some(fact)) if text(a).contains(fact) && sent_at(a).duration_since(asked_at) <= SignedDuration::from_mins(5) => {}
            (Some(a), None)
                if text(a).contains("get back to you") && sent_at(a).duration_since(asked_at) <= SignedDuration::from_mins(5) =>
            {
                let told = owner_mail
                    .iter()
                    .any(|m| text(m).contains(question) && sent_at(m).duration_since(asked_at) <= SignedDuration::from_mins(5));
                if !told {
                    problems.push(format!("the owner was not told of {first}'s question at once"));
                }
            }
            (a, _) => problems.push(format!("{first} asked {question:?} and heard back: {a:?}")),
        }
    }
    match owner_mail.iter().find(|m| text(m).contains("Is the first class free?")) {
        Some(kim) if text(kim).contains("The last of the 2 messages sent to Kim:") => {}
        other => problems.push(format!(
            "the owner's mail about Kim's question misnames the holding reply: {other:?}"
        )),
    }

    // The brief never nags: a "do this now" is listed on at most three mornings; a brief that
    // counts review items carries the links of each (up to ten).
    let briefs: Vec<&Value> = owner_mail
        .iter()
        .filter(|m| text(m).starts_with("Your morning brief for"))
        .collect();
    let mut listed: BTreeMap<String, usize> = BTreeMap::new();
    for brief in &briefs {
        let body = text(brief);
        for line in body
            .lines()
            .filter(|l| l.len() > 3 && l.as_bytes()[0].is_ascii_digit() && &l[1..3] == ". ")
        {
            let item = line[3..].split(" (due").next().unwrap_or_default().to_owned();
            if !item.contains("wait for your approval") && !item.contains("waits for your approval") {
                *listed.entry(item).or_default() += 1;
            }
        }
        if let Some(n) = body.lines().find_map(|l| {
            l.split_once(". ")
                .and_then(|(_, rest)| rest.split_once(" task"))
                .and_then(|(n, rest)| rest.contains("for your approval").then(|| n.parse::<usize>().ok()).flatten())
        }) {
            let linked = body.matches("Send it as drafted: http").count();
            if linked < n.min(10) {
                problems.push(format!("{n} items wait for review and the brief links {linked}: {body}"));
            }
        }
    }
    for (item, mornings) in &listed {
        if *mornings > 3 {
            problems.push(format!("\"{item}\" was listed on {mornings} mornings"));
        }
    }

    // Read as the member: a greeting as a person writes the name, "Re:" only to someone who wrote.
    for (_, who, m) in &mails {
        if who == "OWNER" {
            continue;
        }
        let wrote = asked.contains_key(who.as_str());
        let subject = m["subject"].as_str().unwrap_or_default();
        if subject.starts_with("Re:") && !wrote {
            problems.push(format!("\"Re:\" to {who}, who never wrote: {subject}"));
        }
        for shouted in ["Hi BEN", "Hi eli"] {
            if text(m).contains(shouted) {
                problems.push(format!("{who} greeted as typed: {shouted}"));
            }
        }
    }
    assert!(mails.len() > 40, "the month wrote {} mails", mails.len());
    assert!(
        problems.is_empty(),
        "{} mails read, {} things wrong:\n{}",
        mails.len(),
        problems.len(),
        problems.join("\n")
    );
}

/// Whole local days from `day0`'s date to `at`'s.
fn days_from(day0: Timestamp, at: Timestamp) -> i64 {
    let (from, to) = (
        day0.to_zoned(openloop_tests::new_york()).date(),
        at.to_zoned(openloop_tests::new_york()).date(),
    );
    i64::from((to - from).get_days())
}

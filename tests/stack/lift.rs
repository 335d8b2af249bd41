//! Honest lift through CONTRACT.md ("Honest lift"), with many members and moved clocks: a 20%
//! holdout holds out about a fifth of the tasks the risk scan opens, sends them nothing, and
//! holds out the same members on every later task; a planted difference in outcomes shows in
//! `GET /api/v1/lift` with an interval above zero, and no difference gives an interval across
//! zero that says there are not enough members yet.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use openloop_core::kernel::limits;
use openloop_tests::{Account, Stack};
use serde_json::{Value, json};

fn days(n: i64) -> SignedDuration {
    SignedDuration::from_hours(24 * n)
}

fn email(gym: &Account, id: &str) -> String {
    format!("{id}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-")
}

/// A gym in manual mode holding out `percent` of its members.
async fn holdout_gym(stack: &Stack, percent: u8) -> Account {
    let gym = stack.create_account("manual").await;
    let (status, settings) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"holdout_percent": percent})),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    assert_eq!(settings["holdout_percent"], percent);
    gym
}

/// A gym in manual mode holding out `percent` of its members, with `count` members who came
/// regularly and stopped 20 days ago; the scan runs until it has opened a task for each.
/// Returns the gym and every task, by member.
async fn lapsed_gym(stack: &Stack, count: usize, percent: u8) -> (Account, Vec<Value>) {
    let gym = holdout_gym(stack, percent).await;
    let now = stack.now().await;
    let ago = |d: i64| (now - days(d)).to_string();
    for i in 0..count {
        let id = format!("m_lift_{i:03}");
        let created = json!({"type": "member.created", "timestamp": ago(300), "data": {"member_id": id, "email": email(&gym, &id),
            "first_name": "Alex", "last_name": "Tester", "status": "active", "joined_at": ago(300), "monthly_value": 150}});
        let checkin = json!({"type": "checkin.created", "timestamp": ago(20), "data": {"member_id": id, "checked_in_at": ago(20)}});
        for (n, event) in [created, checkin].into_iter().enumerate() {
            let (status, body) = stack.webhook(&gym, &format!("evt_{id}_{n}"), event).await;
            assert_eq!(status, 202, "{body}");
        }
    }
    // The scan opens at most 25 a run and 50 a day: run it every 6 hours until all are open.
    let mut at = now;
    for _ in 0..12 {
        at += limits::ANALYSIS_PERIOD + SignedDuration::from_mins(5);
        stack.set_clock(&at.to_string()).await;
        stack.run().await;
        if tasks(stack, &gym).await.len() >= count {
            break;
        }
    }
    let all = tasks(stack, &gym).await;
    assert_eq!(all.len(), count, "one task a member");
    assert!(all.iter().all(|t| t["task_type"] == "churn_risk"));
    (gym, all)
}

async fn tasks(stack: &Stack, gym: &Account) -> Vec<Value> {
    let (status, list) = stack.get("/api/v1/tasks?limit=200", &gym.token).await;
    assert_eq!(status, 200, "{list}");
    list["tasks"].as_array().cloned().unwrap_or_default()
}

fn member_of(task: &Value) -> String {
    task["member"]["id"].as_str().unwrap_or_default().to_owned()
}

fn id_of(task: &Value) -> String {
    task["id"].as_str().unwrap_or_default().to_owned()
}

fn held_out(tasks: &[Value]) -> BTreeSet<String> {
    tasks.iter().filter(|t| t["status"] == "held_out").map(member_of).collect()
}

async fn lift(stack: &Stack, gym: &Account) -> Value {
    let (status, lift) = stack.get("/api/v1/lift?task_type=churn_risk", &gym.token).await;
    assert_eq!(status, 200, "{lift}");
    let groups = lift["groups"].as_array().cloned().unwrap_or_default();
    assert_eq!(groups.len(), 1, "{lift}");
    groups[0].clone()
}

/// Move the clock to 09:30 in New York on each of the next `n` days and run the schedules.
async fn mornings(stack: &Stack, from: Timestamp, n: i64) -> Timestamp {
    let mut last = from;
    for day in 1..=n {
        let date = from.to_zoned(openloop_tests::new_york()).date() + jiff::Span::new().days(day);
        last = openloop_tests::nine_in_new_york(date) + SignedDuration::from_mins(30);
        stack.set_clock(&last.to_string()).await;
        stack.run().await;
    }
    last
}

/// Given 50 lapsed members and a 20% holdout, when the scan opens their tasks and the owner
/// approves every task it may, then about a fifth are held out, none of them is ever sent a
/// message while the others are, and when payments fail later the same members are held out.
#[tokio::test]
async fn a_fifth_is_held_out_sent_nothing_and_held_out_again_on_every_later_task() {
    let stack = Stack::start("lift-holdout").await;
    let (gym, all) = lapsed_gym(&stack, 50, 20).await;
    let held = held_out(&all);
    // Binomial(50, 0.2): 10 expected; outside 1–24 once in ten thousand runs.
    assert!((1..=24).contains(&held.len()), "{} of 50 held out", held.len());
    for task in &all {
        let id = id_of(task);
        if task["status"] == "held_out" {
            assert!(task["draft"].is_null(), "no draft for a held-out task: {task}");
            let (status, body) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
            assert_eq!(status, 409, "a held-out task is not the owner's to send: {body}");
        } else {
            assert_eq!(task["status"], "pending_review", "{task}");
            let (status, body) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
            assert_eq!(status, 200, "{body}");
        }
    }
    // Three weeks of mornings: the cadence runs, the held-out tasks' watch ends.
    let now = stack.now().await;
    let end = mornings(&stack, now, 21).await;
    let mut contacted_mail = 0;
    for task in &all {
        let member = member_of(task);
        let mail = stack.outbox_to(&email(&gym, &member)).await;
        if held.contains(&member) {
            assert!(mail.is_empty(), "{member} is held out, yet was sent {mail:?}");
        } else {
            contacted_mail += mail.len();
        }
    }
    assert!(contacted_mail > 0, "the contacted members were written to");
    let closed = tasks(&stack, &gym).await;
    for task in closed.iter().filter(|t| held.contains(&member_of(t))) {
        assert_eq!(
            (&task["status"], &task["outcome"]),
            (&json!("cancelled"), &json!("unresponsive")),
            "{task}"
        );
    }

    // Payments fail later (payment recovery held out by the owner's choice): the same members
    // are held out again.
    let mut types: Vec<String> = openloop_core::owner::holdout::default_task_types();
    types.push("payment_recovery".into());
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"holdout_task_types": types})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    stack.set_clock(&(end + days(1)).to_string()).await;
    for task in &all {
        let member = member_of(task);
        let (status, body) = stack
            .webhook(
                &gym,
                &format!("evt_pay_{member}"),
                openloop_tests::events::payment_failed(&member, &(end + days(1)).to_string()),
            )
            .await;
        assert_eq!(status, 202, "{body}");
    }
    let later: Vec<Value> = tasks(&stack, &gym)
        .await
        .into_iter()
        .filter(|t| t["task_type"] == "payment_recovery")
        .collect();
    assert_eq!(later.len(), 50, "a payment task for each member");
    assert_eq!(held_out(&later), held, "the same members are held out on every later task");

    // Held-out tasks count like any other: the day's 50 creations are used up.
    let member = held.iter().next().cloned().unwrap_or_default();
    let body = json!({"task_type": "win_back", "member_id": member, "goal": "Invite them back", "confidence": 80});
    let (status, refused) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 429, "{refused}");
    // A task the owner opens the next day is never held out, even for a held-out member.
    stack.set_clock(&(end + days(2)).to_string()).await;
    let member = held.iter().next().cloned().unwrap_or_default();
    let body = json!({"task_type": "win_back", "member_id": member, "goal": "Invite them back", "confidence": 80});
    let (status, manual) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{manual}");
    assert_eq!(manual["status"], "pending_review", "{manual}");
}

/// Given 50 lapsed members and a 20% holdout, when every contacted member comes back and no
/// held-out member does, then the lift shows the difference with an interval above zero.
#[tokio::test]
async fn a_planted_difference_shows_in_the_lift_with_an_interval_above_zero() {
    let stack = Stack::start("lift-planted").await;
    let (gym, all) = lapsed_gym(&stack, 50, 20).await;
    let held = held_out(&all);
    for task in all.iter().filter(|t| !held.contains(&member_of(t))) {
        let (status, body) = stack
            .post(
                &format!("/api/v1/tasks/{}/resolve", id_of(task)),
                &gym.token,
                json!({"outcome": "retained"}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
    let contacted = (50 - held.len()) as u64;
    // Before their 14 days have passed, nobody is counted, in either group: all wait.
    let early = lift(&stack, &gym).await;
    assert_eq!(
        early["still_in_window"],
        json!({"contacted": contacted, "held_out": held.len()}),
        "{early}"
    );
    assert_eq!(
        (&early["contacted"]["n"], &early["held_out"]["n"]),
        (&json!(0), &json!(0)),
        "{early}"
    );
    let now = stack.now().await;
    mornings(&stack, now, 15).await;
    let group = lift(&stack, &gym).await;
    assert_eq!(
        group["contacted"],
        json!({"n": contacted, "succeeded": contacted, "rate": 1.0}),
        "{group}"
    );
    assert_eq!(group["held_out"], json!({"n": held.len(), "succeeded": 0, "rate": 0.0}), "{group}");
    assert_eq!(group["difference"], 1.0);
    assert_eq!(group["window_days"], 14, "{group}");
    assert_eq!(group["still_in_window"], json!({"contacted": 0, "held_out": 0}), "{group}");
    assert!(group["cohort"]["from"].is_string() && group["cohort"]["to"].is_string(), "{group}");
    let low = group["ci95"][0].as_f64().unwrap_or(-1.0);
    assert!(low > 0.0 && group["ci95"][1].as_f64() == Some(1.0), "{group}");
    assert!(
        group["verdict"].as_str().is_some_and(|v| v.starts_with("outreach works")),
        "{group}"
    );

    // The dashboard's lift page says the same.
    let owner = crate::dashboard::sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/lift").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("data-task-type=\"churn_risk\""), "{page}");
    let verdict =
        format!("outreach works: about {contacted} more of the {contacted} members contacted came back than would have on their own");
    assert!(page.contains(&verdict), "{page}");
    assert!(page.contains("; 100.0 points more succeeded"), "{page}");
    assert!(page.contains(", each followed for 14 days"), "{page}");
    assert!(page.contains("aria-current=\"page\">Lift</a>"), "{page}");
}

/// Given the settings page, the holdout is shown with its recommendation and saved like any
/// setting; more than 20% is refused and changes nothing.
#[tokio::test]
async fn the_settings_page_recommends_a_ten_percent_holdout_and_saves_it() {
    let stack = Stack::start("lift-settings-page").await;
    let gym = stack.create_account("manual").await;
    let owner = crate::dashboard::sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/settings").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("data-holdout-percent=\"0\""), "{page}");
    assert!(page.contains("We recommend <strong>10%</strong>"), "{page}");
    let csrf = owner.csrf.clone();
    let (status, _) = owner
        .post("/app/settings", &[("csrf", csrf.as_str()), ("holdout_percent", "30")])
        .await;
    assert_eq!(status, 422, "above 20%");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["holdout_percent"], 0, "nothing changed: {settings}");
    let (status, to) = owner
        .post("/app/settings", &[("csrf", csrf.as_str()), ("holdout_percent", "10")])
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/settings?done=saved"));
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["holdout_percent"], 10, "{settings}");
    let (status, page) = owner.get("/app/lift").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("10% of members are held out."), "{page}");
    let (status, page) = owner.get("/app/lift?from=2026-99-01").await;
    assert_eq!(status, 422, "{page}");
}

/// Given 40 lapsed members and a 20% holdout, when half of each group comes back, then the
/// interval includes zero and the verdict says there are not enough members yet; the
/// scorecard counts the held-out members who came back apart.
#[tokio::test]
async fn no_difference_gives_an_interval_across_zero_that_says_not_enough() {
    let stack = Stack::start("lift-none").await;
    let (gym, all) = lapsed_gym(&stack, 40, 20).await;
    let held = held_out(&all);
    let now = stack.now().await;
    // Every other member of each group: half of the held-out members come back, half of the
    // contacted ones are retained, whichever members the draw held out.
    let (mut held_seen, mut contacted_seen, mut came_back) = (0, 0, 0);
    for task in &all {
        let member = member_of(task);
        if held.contains(&member) {
            held_seen += 1;
            if held_seen % 2 == 0 {
                came_back += 1;
                let checkin = json!({"type": "checkin.created", "timestamp": now.to_string(), "data": {"member_id": member, "checked_in_at": now.to_string()}});
                let (status, body) = stack.webhook(&gym, &format!("evt_back_{member}"), checkin).await;
                assert_eq!(status, 202, "{body}");
            }
        } else {
            contacted_seen += 1;
            let outcome = if contacted_seen % 2 == 0 { "retained" } else { "unresponsive" };
            let (status, body) = stack
                .post(
                    &format!("/api/v1/tasks/{}/resolve", id_of(task)),
                    &gym.token,
                    json!({"outcome": outcome}),
                )
                .await;
            assert_eq!(status, 200, "{body}");
        }
    }
    mornings(&stack, now, 15).await;
    let group = lift(&stack, &gym).await;
    assert_eq!(group["held_out"]["n"], held.len(), "{group}");
    assert_eq!(group["held_out"]["succeeded"], came_back, "{group}");
    let (low, high) = (group["ci95"][0].as_f64().unwrap_or(1.0), group["ci95"][1].as_f64().unwrap_or(-1.0));
    assert!(low < 0.0 && high > 0.0, "{group}");
    let verdict = group["verdict"].as_str().unwrap_or_default();
    assert!(verdict.starts_with("not enough members yet: about "), "{verdict}");
    assert!(verdict.ends_with(" more to tell a 10-point lift"), "{verdict}");

    let month = now.to_zoned(openloop_tests::new_york()).strftime("%Y-%m").to_string();
    let (status, card) = stack.get(&format!("/api/v1/scorecard?month={month}"), &gym.token).await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(card["members_retained_held_out"], came_back, "{card}");
}

/// The groups can be drawn again at most once every 30 days; the lift's window and type are
/// checked like any input.
#[tokio::test]
async fn the_holdout_is_reshuffled_at_most_monthly_and_bad_windows_are_refused() {
    let stack = Stack::start("lift-reshuffle").await;
    let gym = stack.create_account("manual").await;
    let (status, body) = stack.post("/api/v1/settings/holdout/reshuffle", &gym.token, json!({})).await;
    assert_eq!((status, &body["error"]["code"]), (422, &json!("reshuffle_too_soon")), "{body}");
    let now = stack.now().await;
    stack.set_clock(&(now + days(31)).to_string()).await;
    let (status, body) = stack.post("/api/v1/settings/holdout/reshuffle", &gym.token, json!({})).await;
    assert_eq!((status, &body["generation"]), (200, &json!(1)), "{body}");
    let (status, body) = stack.post("/api/v1/settings/holdout/reshuffle", &gym.token, json!({})).await;
    assert_eq!(status, 422, "again within the month: {body}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["holdout_draw"]["generation"], 1, "{settings}");
    assert_eq!(settings["holdout_percent"], 0, "off by default");
    assert!(
        settings["holdout_task_types"]
            .as_array()
            .is_some_and(|t| !t.contains(&json!("payment_recovery")))
    );

    for (query, status, code) in [
        ("from=2026-13-01", 422, "invalid_date"),
        ("from=2026-11-20&to=2026-11-01", 422, "invalid_range"),
        ("task_type=no_such", 422, "invalid_task_type"),
    ] {
        let (got, body) = stack.get(&format!("/api/v1/lift?{query}"), &gym.token).await;
        assert_eq!((got, &body["error"]["code"]), (status, &json!(code)), "{query}: {body}");
    }
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"holdout_percent": 21})),
        )
        .await;
    assert_eq!((status, &body["error"]["code"]), (422, &json!("invalid_holdout_percent")), "{body}");
    let (status, lift) = stack.get("/api/v1/lift", &gym.token).await;
    assert_eq!(status, 200, "{lift}");
    assert_eq!((lift["groups"].clone(), lift["revenue_caused"].clone()), (json!([]), json!(0.0)));
}

/// The gym, black-box: 60 new members, a 20% holdout, a third of each group checking
/// in three times. Read at once, nobody is counted yet — every member is still in their
/// window, in both groups alike (counting closed tasks said "all of the contacted and all of
/// the held-out succeeded"). Once the window has passed, both groups' counts are every task
/// assigned, and each rate is what happened.
#[tokio::test]
async fn new_members_are_all_counted_once_their_window_has_passed_and_the_rates_are_what_happened() {
    let stack = Stack::start("lift-cohort").await;
    let gym = holdout_gym(&stack, 20).await;
    let now = stack.now().await;
    let joined = (now - days(1)).to_string();
    let count = 60;
    for i in 0..count {
        let id = format!("m_new_{i:03}");
        let created = json!({"type": "member.created", "timestamp": joined, "data": {"member_id": id, "email": email(&gym, &id),
            "first_name": "Sam", "last_name": "Tester", "status": "active", "joined_at": joined, "monthly_value": 150}});
        let (status, body) = stack.webhook(&gym, &format!("evt_{id}"), created).await;
        assert_eq!(status, 202, "{body}");
    }
    let mut at = now;
    let mut all = Vec::new();
    for _ in 0..12 {
        at += limits::ANALYSIS_PERIOD + SignedDuration::from_mins(5);
        stack.set_clock(&at.to_string()).await;
        stack.run().await;
        all = tasks(&stack, &gym).await;
        if all.len() >= count {
            break;
        }
    }
    assert_eq!(all.len(), count, "one task a new member");
    assert!(all.iter().all(|t| t["task_type"] == "onboarding"), "{all:?}");
    let held = held_out(&all);

    // A third of each group checks in three times.
    let (mut seen, mut back) = ([0usize; 2], [0u64; 2]);
    for task in &all {
        let member = member_of(task);
        let group = usize::from(held.contains(&member));
        seen[group] += 1;
        if seen[group] % 3 != 0 {
            continue;
        }
        back[group] += 1;
        for visit in 1..=3 {
            let when = (at + SignedDuration::from_hours(visit)).to_string();
            let checkin = json!({"type": "checkin.created", "timestamp": when, "data": {"member_id": member, "checked_in_at": when}});
            let (status, body) = stack.webhook(&gym, &format!("evt_visit_{member}_{visit}"), checkin).await;
            assert_eq!(status, 202, "{body}");
        }
    }
    stack.set_clock(&(at + SignedDuration::from_hours(4)).to_string()).await;
    stack.run().await;
    let (status, early) = stack.get("/api/v1/lift?task_type=onboarding", &gym.token).await;
    assert_eq!(status, 200, "{early}");
    let early = &early["groups"][0];
    assert_eq!(
        (&early["contacted"]["n"], &early["held_out"]["n"]),
        (&json!(0), &json!(0)),
        "{early}"
    );
    let waiting = early["still_in_window"]["contacted"].as_u64().unwrap_or(0) + early["still_in_window"]["held_out"].as_u64().unwrap_or(0);
    assert_eq!(waiting, count as u64, "{early}");
    assert_eq!(early["window_days"], 120, "{early}");

    // The window passes (the reviews expire, the tasks end on their own clocks on the way).
    for d in [8, 31, 60, 122] {
        stack.set_clock(&(at + days(d)).to_string()).await;
        stack.run().await;
    }
    let (status, judged) = stack.get("/api/v1/lift?task_type=onboarding", &gym.token).await;
    assert_eq!(status, 200, "{judged}");
    let group = &judged["groups"][0];
    let contacted = (count - held.len()) as u64;
    assert_eq!(group["still_in_window"], json!({"contacted": 0, "held_out": 0}), "{group}");
    assert_eq!(group["contacted"]["n"], contacted, "every contacted member assigned: {group}");
    assert_eq!(group["held_out"]["n"], held.len(), "every held-out member assigned: {group}");
    assert_eq!(group["contacted"]["succeeded"], back[0], "{group}");
    assert_eq!(group["held_out"]["succeeded"], back[1], "{group}");
}

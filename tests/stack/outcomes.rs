//! Outcomes through CONTRACT.md with the test clock: a dormant win-back completed
//! by a check-in on day 60 with its revenue, a task closed unanswered won back late by a
//! check-in, and the scorecard equal to what the tasks say.

use jiff::{SignedDuration, Timestamp};
use openloop_tests::{Account, Stack, reasons};
use serde_json::{Value, json};

/// Day `n` after `day0`, ten minutes later each day (follow-ups are scheduled from the moment
/// the previous mail left; see walkthroughs.rs).
fn day(day0: Timestamp, n: i64) -> Timestamp {
    day0 + SignedDuration::from_hours(24 * n) + SignedDuration::from_mins(10 * n)
}

async fn event(stack: &Stack, gym: &Account, id: &str, body: Value) {
    let (status, reply) = stack.webhook(gym, id, body).await;
    assert_eq!(status, 202, "{reply}");
}

fn checkin(member: &str, at: Timestamp) -> Value {
    json!({"type": "checkin.created", "timestamp": at.to_string(), "data": {"member_id": member, "checked_in_at": at.to_string(), "class_name": "WOD"}})
}

async fn task(stack: &Stack, gym: &Account, task_type: &str, member: &str, approve: bool) -> String {
    let (status, created) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": task_type, "member_id": member, "goal": "Bring them back to the gym", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    if approve {
        let (status, approved) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{approved}");
    }
    id
}

async fn at_day(stack: &Stack, day0: Timestamp, n: i64) -> Timestamp {
    let t = day(day0, n);
    if n > 0 {
        stack.set_clock(&t.to_string()).await;
    }
    stack.run().await;
    t
}

/// Spec §19.1 (win-back, slow burn): mails on days 0, 3 and 13, dormant when the 30-day
/// budget ends, quiet dormant checks, then a check-in on day 60 completes it as recovered
/// with three months of membership attributed.
#[tokio::test]
async fn a_dormant_win_back_is_completed_by_a_checkin_on_day_60_with_its_revenue() {
    let stack = Stack::start("outcome-winback").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_trip", "Alex", day0).await;
    stack.run().await;
    let id = task(&stack, &gym, "win_back", "m_trip", true).await;
    at_day(&stack, day0, 0).await;
    for n in [3, 13] {
        let due = stack.run_when_due(&gym, &id).await;
        openloop_tests::assert_follow_up_on(due, day(day0, n));
    }
    // The 30-day budget ends it; the exhaustion check is not moved.
    let ended = stack.run_when_due(&gym, &id).await;
    let budget_end = day0 + SignedDuration::from_hours(24 * 30);
    assert!(ended.duration_since(budget_end).abs() < SignedDuration::from_mins(1), "{ended}");
    assert_eq!(stack.outbox_to(&email).await.len(), 3);
    let (_, dormant) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(dormant["status"], "dormant", "{dormant}");
    for n in [44, 58] {
        at_day(&stack, day0, n).await;
    }
    let back = at_day(&stack, day0, 60).await;
    event(&stack, &gym, "evt_trip_back", checkin("m_trip", back)).await;
    stack.run().await;
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str()),
        (Some("completed"), Some("recovered")),
        "{done}"
    );
    assert_eq!(done["attributed_value"], 450.0, "3 × 150");
    assert_eq!(done["outcome_reason"], "goal_signal_reactivation");
    let log = reasons(&done);
    assert!(log.contains(&"dormant_check_no_signal"), "{log:?}");
    assert_eq!(stack.outbox_to(&email).await.len(), 3, "nothing more was sent while dormant");
    stack.running.stop();
}

/// A churn task closes unanswered on day 14; a check-in on day 20 (inside its 14-day window)
/// is attributed to it as a late win, and the task stays cancelled.
#[tokio::test]
async fn a_late_checkin_re_attributes_a_task_closed_unanswered() {
    let stack = Stack::start("outcome-late").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_late", "Alex", day0).await;
    stack.run().await;
    let id = task(&stack, &gym, "churn_risk", "m_late", true).await;
    at_day(&stack, day0, 0).await;
    // The follow-ups on days 3 and 8 and the 14-day budget's close, each when scheduled.
    for n in [3, 8] {
        let due = stack.run_when_due(&gym, &id).await;
        openloop_tests::assert_follow_up_on(due, day(day0, n));
    }
    stack.run_when_due(&gym, &id).await;
    let (_, closed) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (closed["status"].as_str(), closed["outcome"].as_str()),
        (Some("cancelled"), Some("unresponsive"))
    );
    assert!(closed["attributed_value"].is_null());
    let back = at_day(&stack, day0, 20).await;
    event(&stack, &gym, "evt_late_back", checkin("m_late", back)).await;
    let run = stack.run().await;
    assert_eq!(run["attribution"]["late_wins"], 1, "{run}");
    let (_, won) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (won["status"].as_str(), won["outcome"].as_str(), won["outcome_reason"].as_str()),
        (Some("cancelled"), Some("engaged_late"), Some("goal_signal_after_close")),
        "{won}"
    );
    assert_eq!(won["attributed_value"], 150.0);
    assert!(reasons(&won).contains(&"goal_signal_after_close"));
    stack.running.stop();
}

/// 09:00 in New York on the first day of the month after the one `now` is in: a month all
/// of this test's days fit in.
fn first_morning_of_next_month() -> Timestamp {
    let today = Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let first = today
        .first_of_month()
        .checked_add(jiff::Span::new().months(1))
        .unwrap_or_else(|e| panic!("{e}"));
    openloop_tests::nine_in_new_york(first)
}

/// The scorecard of a month in which one member checked in after outreach, one paid after
/// a payment reminder, one task waits for review and one was cancelled by the owner: every
/// number equals what the tasks (and the outbox) say; the activity feed holds every decision
/// of those tasks, newest first.
#[tokio::test]
async fn the_scorecard_equals_what_the_tasks_say() {
    let stack = Stack::start("outcome-scorecard").await;
    let day0 = first_morning_of_next_month();
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let mut emails = Vec::new();
    for m in ["m_sc_a", "m_sc_b", "m_sc_c", "m_sc_d"] {
        emails.push(stack.member(&gym, m, "Alex", day0).await);
    }
    stack.run().await;
    task(&stack, &gym, "churn_risk", "m_sc_a", true).await;
    let payer = task(&stack, &gym, "payment_recovery", "m_sc_b", true).await;
    task(&stack, &gym, "churn_risk", "m_sc_c", false).await;
    let cancelled = task(&stack, &gym, "churn_risk", "m_sc_d", true).await;
    let (status, _) = stack
        .post(&format!("/api/v1/tasks/{cancelled}/cancel"), &gym.token, json!({}))
        .await;
    assert_eq!(status, 200);
    at_day(&stack, day0, 0).await;
    // The urgent cadence's follow-up on day 1 (in the afternoon hours), then the member pays.
    let next = stack.run_when_due(&gym, &payer).await;
    openloop_tests::assert_follow_up_on(next, day(day0, 1));
    event(&stack, &gym, "evt_sc_a_in", checkin("m_sc_a", next)).await;
    let paid = json!({"type": "payment.succeeded", "timestamp": next.to_string(), "data": {"member_id": "m_sc_b", "amount": 150, "currency": "USD", "paid_at": next.to_string()}});
    event(&stack, &gym, "evt_sc_b_paid", paid).await;
    stack.run().await;

    let month = day0
        .to_zoned(jiff::tz::TimeZone::get("America/New_York").unwrap_or_else(|e| panic!("{e}")))
        .strftime("%Y-%m")
        .to_string();
    let (status, card) = stack.get(&format!("/api/v1/scorecard?month={month}"), &gym.token).await;
    assert_eq!(status, 200, "{card}");
    let (_, list) = stack.get("/api/v1/tasks?limit=200", &gym.token).await;
    let tasks = list["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 4);
    let valued: Vec<&Value> = tasks
        .iter()
        .filter(|t| t["attributed_value"].as_f64().is_some_and(|v| v > 0.0))
        .collect();
    let mut members: Vec<&str> = valued.iter().filter_map(|t| t["member"]["id"].as_str()).collect();
    members.sort_unstable();
    members.dedup();
    let revenue: f64 = valued.iter().filter_map(|t| t["attributed_value"].as_f64()).sum();
    let mut outcomes = serde_json::Map::new();
    for t in tasks.iter().filter(|t| t["status"] == "completed" || t["status"] == "cancelled") {
        if let Some(code) = t["outcome"].as_str() {
            let n = outcomes.get(code).and_then(Value::as_u64).unwrap_or(0);
            outcomes.insert(code.to_owned(), json!(n + 1));
        }
    }
    let attention = tasks
        .iter()
        .filter(|t| t["status"] == "pending_review" || t["status"] == "escalated")
        .count();
    let conversations = tasks.iter().filter(|t| t["touch"].as_u64().is_some_and(|n| n > 0)).count();
    let used: u64 = tasks.iter().filter_map(|t| t["budget"]["messages_used"].as_u64()).sum();
    let mut mailed = 0;
    for email in &emails {
        mailed += stack.outbox_to(email).await.len();
    }

    assert_eq!(card["month"], month.as_str());
    assert_eq!(card["members_retained"], members.len());
    assert_eq!(card["revenue_retained"].as_f64(), Some(revenue));
    assert_eq!(card["outcomes"], Value::Object(outcomes));
    assert_eq!(card["needs_attention"], attention);
    assert_eq!(card["conversations_active"], conversations);
    assert_eq!(card["messages_sent"], used);
    assert_eq!(used as usize, mailed);
    // And what those numbers are, so a tally that agrees with a wrong list cannot pass.
    assert_eq!(
        (card["members_retained"].as_u64(), card["revenue_retained"].as_f64()),
        (Some(2), Some(300.0)),
        "{card}"
    );
    assert_eq!(card["outcomes"], json!({"retained": 1, "recovered": 1}), "{card}");
    // One mail to the member who checked in; two to the payer (the urgent cadence's day-1 follow-up).
    assert_eq!(
        (card["needs_attention"].as_u64(), card["messages_sent"].as_u64()),
        (Some(1), Some(3)),
        "{card}"
    );

    let (status, current) = stack.get("/api/v1/scorecard", &gym.token).await;
    assert_eq!((status, &current), (200, &card), "the default month is the current one");
    let (status, earlier) = stack.get("/api/v1/scorecard?month=2020-01", &gym.token).await;
    assert_eq!(status, 200);
    assert_eq!(
        (earlier["members_retained"].as_u64(), earlier["messages_sent"].as_u64()),
        (Some(0), Some(0))
    );
    let (status, bad) = stack.get("/api/v1/scorecard?month=2026-13", &gym.token).await;
    assert!(status == 422 || status == 400, "{status} {bad}");
    assert_eq!(bad["error"]["code"], "invalid_month", "{bad}");

    // The activity feed: every decision of every task, newest first, page by page.
    let mut logged = Vec::new();
    for t in &tasks {
        let (_, detail) = stack
            .get(&format!("/api/v1/tasks/{}", t["id"].as_str().unwrap_or_default()), &gym.token)
            .await;
        logged.extend(reasons(&detail).into_iter().map(str::to_owned));
    }
    let mut feed: Vec<Value> = Vec::new();
    let mut path = "/api/v1/activity?limit=3".to_owned();
    loop {
        let (status, page) = stack.get(&path, &gym.token).await;
        assert_eq!(status, 200, "{page}");
        let entries = page["activity"].as_array().cloned().unwrap_or_default();
        assert!(entries.len() <= 3);
        feed.extend(entries);
        match page["next_cursor"].as_str() {
            Some(c) => path = format!("/api/v1/activity?limit=3&cursor={c}"),
            None => break,
        }
    }
    let mut fed: Vec<String> = feed.iter().filter_map(|e| e["reason"].as_str().map(str::to_owned)).collect();
    assert_eq!(fed.len(), logged.len(), "{fed:?} vs {logged:?}");
    fed.sort();
    logged.sort();
    assert_eq!(fed, logged);
    let times: Vec<i64> = feed
        .iter()
        .filter_map(|e| e["at"].as_str()?.parse::<Timestamp>().ok())
        .map(|t| t.as_millisecond())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");
    assert!(
        feed.iter()
            .any(|e| e["reason"] == "goal_signal_checkin" && e["member_id"] == "m_sc_a"),
        "{feed:?}"
    );
    let (status, _) = stack.get("/api/v1/activity?limit=0", &gym.token).await;
    assert!(status == 422 || status == 400);
    stack.running.stop();
}

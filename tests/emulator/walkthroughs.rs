//! The spec's §19 walkthroughs through CONTRACT.md with the test clock (§19.3, the urgent
//! payment, has its own file).

use jiff::{SignedDuration, Timestamp};
use openloop_tests::{Stack, reasons};

use crate::morning;

/// §19.1, the standard cadence: three mails on days 0, 3 and 8, then the 14-day budget ends
/// the task as unresponsive on day 14 — before the day-15 follow-up it would otherwise get.
#[tokio::test]
async fn vacation_churn_risk_tries_three_times_then_closes_unresponsive_on_day_14() {
    let stack = Stack::on_emulator("walk-vacation").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_away", "Alex", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_away").await;

    // Each step when the engine scheduled it: the first touch at once (09:00 is morning), the
    // follow-ups on their cadence's days in the afternoon hours (spec §29.3).
    stack.run().await;
    let mut sent_on = vec![0];
    let first_day = day0.to_zoned(openloop_tests::new_york()).date();
    for _ in 0..3 {
        let due = stack.run_when_due(&gym, &id).await;
        let count = stack.outbox_to(&email).await.len();
        if count > sent_on.len() {
            let n = (due.to_zoned(openloop_tests::new_york()).date() - first_day).get_days();
            openloop_tests::assert_follow_up_on(due, day0 + SignedDuration::from_hours(24 * i64::from(n)));
            sent_on.push(n);
        }
    }
    assert_eq!(sent_on, [0, 3, 8], "touches on days 0, 3 and 8");
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str()),
        (Some("cancelled"), Some("unresponsive")),
        "{done}"
    );
    assert_eq!(done["outcome_reason"], "budget_time_expired");
    let closed_at: Timestamp = done["updated_at"].as_str().and_then(|s| s.parse().ok()).expect("updated_at");
    assert!(
        closed_at >= day0 + SignedDuration::from_hours(24 * 14) && closed_at < day0 + SignedDuration::from_hours(24 * 15),
        "closed on day 14, not {closed_at}"
    );
    let mail = stack.outbox_to(&email).await;
    assert!(
        mail[1..]
            .iter()
            .all(|m| m["references"].as_array().is_some_and(|r| r.contains(&mail[0]["message_id"]))),
        "follow-ups thread on the first mail: {mail:?}"
    );
    assert_eq!(reasons(&done).last(), Some(&"budget_time_expired"));
    stack.running.stop();
}

/// Issue 18: a task made before its member's event was processed sends once the event is in.
#[tokio::test]
async fn a_task_made_before_its_member_event_sends_once_the_event_is_in() {
    let stack = Stack::on_emulator("walk-late-member").await;
    openloop_tests::late_member_event_still_gets_the_first_touch(&stack).await;
    stack.running.stop();
}

/// The owner's numbers on DynamoDB, from the tallies the task writes keep: two members won
/// back (a check-in after a churn mail, a payment after a reminder), one task waiting for
/// review and one cancelled — the scorecard (and so the dashboard's overview, counted by the
/// same tally from the same reads) says what the tasks say.
#[tokio::test]
async fn the_scorecard_counts_what_the_tasks_say_on_dynamodb() {
    let stack = Stack::on_emulator("walk-scorecard").await;
    // The 1st of next month, so every day of the test is in one month.
    let first = Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .first_of_month()
        .checked_add(jiff::Span::new().months(1))
        .expect("month");
    // 09:00 at the gym: inside a first touch's morning hours.
    let day0 = first.at(9, 0, 0, 0).in_tz("America/New_York").expect("time").timestamp();
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    for m in ["m_sc_a", "m_sc_b", "m_sc_c", "m_sc_d"] {
        stack.member(&gym, m, "Alex", day0).await;
    }
    stack.run().await;
    stack.approved_task(&gym, "churn_risk", "m_sc_a").await;
    stack.approved_task(&gym, "payment_recovery", "m_sc_b").await;
    let (status, _) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            serde_json::json!({"task_type": "churn_risk", "member_id": "m_sc_c", "goal": "Bring them back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201);
    let cancelled = stack.approved_task(&gym, "win_back", "m_sc_d").await;
    let (status, _) = stack
        .post(&format!("/api/v1/tasks/{cancelled}/cancel"), &gym.token, serde_json::json!({}))
        .await;
    assert_eq!(status, 200);
    stack.run().await;
    let next = day0 + SignedDuration::from_hours(24);
    stack.set_clock(&next.to_string()).await;
    stack.run().await;
    let t = next.to_string();
    for (id, body) in [
        (
            "evt_sc_a",
            serde_json::json!({"type": "checkin.created", "timestamp": t, "data": {"member_id": "m_sc_a", "checked_in_at": t, "class_name": "WOD"}}),
        ),
        (
            "evt_sc_b",
            serde_json::json!({"type": "payment.succeeded", "timestamp": t, "data": {"member_id": "m_sc_b", "amount": 150, "currency": "USD", "paid_at": t}}),
        ),
    ] {
        let (status, reply) = stack.webhook(&gym, id, body).await;
        assert_eq!(status, 202, "{reply}");
    }
    stack.run().await;

    let (_, list) = stack.get("/api/v1/tasks?limit=200", &gym.token).await;
    let tasks = list["tasks"].as_array().cloned().unwrap_or_default();
    let revenue: f64 = tasks
        .iter()
        .filter_map(|t| t["attributed_value"].as_f64())
        .filter(|v| *v > 0.0)
        .sum();
    let attention = tasks
        .iter()
        .filter(|t| t["status"] == "pending_review" || t["status"] == "escalated")
        .count();
    let talking = tasks.iter().filter(|t| t["touch"].as_u64().is_some_and(|n| n > 0)).count();
    let (status, card) = stack.get("/api/v1/scorecard", &gym.token).await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(
        (
            card["members_retained"].as_u64(),
            card["revenue_retained"].as_f64(),
            card["needs_attention"].as_u64()
        ),
        (Some(2), Some(revenue), Some(attention as u64)),
        "{card}"
    );
    assert_eq!((revenue, attention), (300.0, 1));
    assert_eq!(card["conversations_active"].as_u64(), Some(talking as u64), "{card}");
    assert_eq!(card["outcomes"]["retained"], 1, "{card}");
    assert_eq!(card["outcomes"]["recovered"], 1, "{card}");
    stack.running.stop();
}

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

/// A task made before its member's event was processed sends once the event is in.
#[tokio::test]
async fn a_task_made_before_its_member_event_sends_once_the_event_is_in() {
    let stack = Stack::on_emulator("walk-late-member").await;
    openloop_tests::late_member_event_still_gets_the_first_touch(&stack).await;
    stack.running.stop();
}

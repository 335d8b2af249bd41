//! Smart timing on the in-memory store with the virtual clock: a first touch in
//! the morning hours, a follow-up in the afternoon of its cadence's day, a jitter fixed per
//! task, all in the account's time zone and never outside its send window.

use super::*;
use crate::kernel::ids::TaskId;
use crate::kernel::limits::{FIRST_TOUCH_HOURS, FOLLOW_UP_HOURS, SEND_JITTER_MINS};
use crate::owner::account::Account;
use crate::ports::Clock;
use crate::rails::window::{self, Touch};

/// An account that runs confident tasks without review (past the ramp and the warm-up), in
/// `timezone` and with the send window `window` when given.
async fn autonomous(w: &World, timezone: &str, window: Option<(u8, u8)>) -> Account {
    let patch = super::super::SettingsPatch {
        execution_mode: Some(ExecutionMode::LimitedAuto),
        onboarded_at: Some(at("2025-01-01T00:00:00Z")),
        timezone: Some(timezone.into()),
        send_window_start: window.map(|w| w.0),
        send_window_end: window.map(|w| w.1),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    w.engine.account(w.account.id).await.expect("account")
}

/// A confident task the account runs without review: ready when made.
async fn ready_task(w: &World, account: &Account, member: &str) -> Task {
    let mut input = w.new_task("churn_risk", member).await;
    input.confidence = Some(90);
    input.trigger_type = TriggerType::CronAnalysis;
    input.gate = GateContext {
        tenure_days: Some(100),
        monthly_value: Some(120.0),
        cancellation_reason: None,
    };
    let task = w.engine.create_task(account, input).await.expect("create").task().clone();
    assert_eq!(task.status, TaskStatus::Ready, "made ready without review");
    task
}

fn local(account: &Account, t: Timestamp) -> jiff::Zoned {
    t.to_zoned(account.settings.time_zone())
}

/// `t` is at the start of `hours` on `day` plus 5:00–20:59 of jitter.
fn at_start_with_jitter(account: &Account, t: Timestamp, day: jiff::civil::Date, hours: (i8, i8)) {
    let local = local(account, t);
    let (low, high) = SEND_JITTER_MINS;
    assert_eq!((local.date(), local.hour()), (day, hours.0), "{local}");
    assert!(
        (low..=high).contains(&(local.minute() as u64)),
        "{local}: not 5-20 minutes past the hour"
    );
}

async fn log_details(w: &World, task: &Task) -> Vec<(String, String)> {
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    history.log.into_iter().map(|l| (l.reason, l.detail.unwrap_or_default())).collect()
}

/// Given a task made at 02:00 local, then its first touch is planned at 08:05–08:20 that
/// morning (logged on its creation), nothing leaves before, and it goes then.
#[tokio::test]
async fn a_task_made_at_night_plans_its_first_touch_in_the_morning_hours() {
    let w = world().await;
    let account = autonomous(&w, "America/New_York", None).await;
    w.clock.set(at("2026-11-03T07:00:00Z")); // 02:00 in New York
    let task = ready_task(&w, &account, "m_night").await;
    let planned = task.next_action_at.expect("planned");
    at_start_with_jitter(&account, planned, local(&account, w.clock.now()).date(), FIRST_TOUCH_HOURS);
    let log = log_details(&w, &task).await;
    assert!(
        log[0].1.contains(&format!(
            "first touch planned for {}",
            window::local_words(planned, &account.settings.time_zone())
        )),
        "the plan is logged with its reason: {log:?}"
    );
    w.clock.set(planned - SignedDuration::from_mins(2));
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "not before it is due");
    assert_eq!(w.run_when_due(&task).await, planned);
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].date, planned, "sent at the planned minute");
}

/// Given a task made at 09:00 local (inside the morning hours), then it is due at once.
#[tokio::test]
async fn a_task_made_in_the_morning_hours_goes_at_once() {
    let w = world().await;
    let account = autonomous(&w, "America/New_York", None).await;
    let task = ready_task(&w, &account, "m_morning").await;
    assert_eq!(task.next_action_at, Some(day0()));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
    assert!(
        !log_details(&w, &task).await[0].1.contains("planned"),
        "nothing moved, nothing to explain"
    );
}

/// Given a task made at 18:00 local (inside the send window, past the morning), then its
/// first touch waits for the next morning's hours.
#[tokio::test]
async fn a_task_made_in_the_evening_waits_for_the_next_morning() {
    let w = world().await;
    let account = autonomous(&w, "America/New_York", None).await;
    w.clock.set(at("2026-11-02T23:00:00Z")); // 18:00 in New York
    let task = ready_task(&w, &account, "m_evening").await;
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "18:00 is inside the window but not the morning");
    let planned = w.run_when_due(&task).await;
    at_start_with_jitter(&account, planned, jiff::civil::date(2026, 11, 3), FIRST_TOUCH_HOURS);
    assert_eq!(w.mailer.sent().len(), 1);
}

/// Given an owner who approves a task in the afternoon, then the step holds its first touch
/// for the next morning's hours (logged), and sends it then.
#[tokio::test]
async fn a_first_touch_approved_in_the_afternoon_goes_the_next_morning() {
    let w = world().await;
    w.clock.set(at("2026-11-02T20:00:00Z")); // 15:00 in New York
    let task = w.approved("churn_risk", "m_afternoon").await;
    w.run().await;
    assert!(w.mailer.sent().is_empty());
    let log = log_details(&w, &task).await;
    assert!(log.iter().any(|(r, _)| r == "outside_preferred_hours"), "{log:?}");
    let due = w.run_when_due(&task).await;
    at_start_with_jitter(&w.account, due, jiff::civil::date(2026, 11, 3), FIRST_TOUCH_HOURS);
    assert_eq!(w.mailer.sent().len(), 1);
}

/// Given a first touch sent, then the follow-up is due on the cadence's day (3 for
/// `churn_risk`) at 13:05–13:20 local, not at the hour the first touch left; it goes then,
/// and the plan is logged on the send.
#[tokio::test]
async fn a_follow_up_goes_in_the_afternoon_of_its_cadence_day() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_follow").await;
    w.run().await;
    let due = w.due(&task).await;
    at_start_with_jitter(&w.account, due, jiff::civil::date(2026, 11, 5), FOLLOW_UP_HOURS);
    let log = log_details(&w, &task).await;
    assert!(
        log.iter().any(|(r, d)| r == "message_sent"
            && d.contains(&format!(
                "follow-up planned for {}",
                window::local_words(due, &w.account.settings.time_zone())
            ))),
        "{log:?}"
    );
    w.clock.set(day0() + days(3));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "09:00 on day 3 is not the afternoon");
    w.run_when_due(&task).await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2);
    assert!((FOLLOW_UP_HOURS.0..FOLLOW_UP_HOURS.1).contains(&w.local(sent[1].date).hour()));
}

/// Given a gym in Tokyo, then its hours are Tokyo's: made at 02:00 there, the first touch goes
/// at 08:05–08:20 Tokyo time and the follow-up on day 3 at 13:05–13:20 Tokyo time.
#[tokio::test]
async fn the_preferred_hours_are_the_accounts_own_time_zone() {
    let w = world().await;
    let account = autonomous(&w, "Asia/Tokyo", None).await;
    w.clock.set(at("2026-11-02T17:00:00Z")); // 02:00 on 3 November in Tokyo
    let task = ready_task(&w, &account, "m_tokyo").await;
    let first = w.run_when_due(&task).await;
    at_start_with_jitter(&account, first, jiff::civil::date(2026, 11, 3), FIRST_TOUCH_HOURS);
    assert_eq!(w.mailer.sent().len(), 1);
    let follow_up = w.run_when_due(&task).await;
    at_start_with_jitter(&account, follow_up, jiff::civil::date(2026, 11, 6), FOLLOW_UP_HOURS);
    assert_eq!(w.mailer.sent().len(), 2);
}

/// Given a send window of 09:00–12:00, then the morning hours shrink to 09:00–10:00 and a
/// follow-up, whose afternoon hours miss the window, keeps its cadence time: nothing is
/// planned outside the window.
#[tokio::test]
async fn the_preferred_hours_never_leave_the_send_window() {
    let w = world().await;
    let account = autonomous(&w, "America/New_York", Some((9, 12))).await;
    w.clock.set(at("2026-11-03T07:00:00Z")); // 02:00 in New York
    let task = ready_task(&w, &account, "m_narrow").await;
    let first = w.run_when_due(&task).await;
    at_start_with_jitter(&account, first, jiff::civil::date(2026, 11, 3), (9, 10));
    assert_eq!(w.mailer.sent().len(), 1);
    let follow_up = w.due(&task).await;
    assert_eq!(follow_up, first + days(3), "the cadence's time, inside the window");
    w.run_when_due(&task).await;
    assert_eq!(w.mailer.sent().len(), 2);
    for mail in w.mailer.sent() {
        let hour = local(&account, mail.date).hour();
        assert!((9..12).contains(&hour), "sent at {hour}:00, outside the window");
    }
}

/// The jitter is a hash of the task id and the touch: the same for one task every time it is
/// computed (in any process), different between tasks.
#[test]
fn the_jitter_is_fixed_per_task_and_differs_between_tasks() {
    let settings = sample_account(day0()).settings;
    let night = at("2026-11-03T07:00:00Z"); // 02:00 in New York
    let plan = |id: &str| {
        let id: TaskId = id.parse().expect("id");
        window::plan_touch(&settings, night, night, Touch::First, window::jitter_seed(id, 0)).0
    };
    let a = plan("01JBZ5V3Q7K2M8N4P6R0S2T4V6");
    let b = plan("01JBZ5V3Q7K2M8N4P6R0S2T4V7");
    assert_eq!(a, plan("01JBZ5V3Q7K2M8N4P6R0S2T4V6"), "the same task, the same minute");
    assert_ne!(a, b, "two tasks, two minutes");
    // Fixed across runs: the hash has no per-process seed.
    assert_eq!(
        window::jitter_seed("01JBZ5V3Q7K2M8N4P6R0S2T4V6".parse().expect("id"), 0),
        window::jitter_seed("01JBZ5V3Q7K2M8N4P6R0S2T4V6".parse().expect("id"), 0)
    );
    assert_eq!(a, at("2026-11-03T13:00:00Z") + SignedDuration::from_secs(JITTER_OF_A));
    // Over many tasks the jitter covers the 5–20 minutes, never on the hour, and spreads over
    // their seconds: no second holds more than a few of 2,000 touches.
    let offsets: Vec<i64> = (0..2_000u32)
        .map(|n| {
            // Seeded ids (a splitmix64 of n for the random part): the same 2,000 every run.
            let mut z = u128::from(n).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9) & u128::from(u64::MAX);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB) & u128::from(u64::MAX);
            let random = (z ^ (z >> 31)) << 16 | u128::from(n);
            let id = TaskId(ulid::Ulid::from_parts(night.as_millisecond() as u64, random));
            let seed = window::jitter_seed(id, n);
            let t = window::plan_touch(&settings, night, night, Touch::First, seed).0;
            t.duration_since(at("2026-11-03T13:00:00Z")).as_secs()
        })
        .collect();
    let minutes: std::collections::BTreeSet<i64> = offsets.iter().map(|s| s / 60).collect();
    assert_eq!(minutes, (5..=20).collect(), "every minute of 5-20, no other");
    let mut per_second = std::collections::BTreeMap::<i64, usize>::new();
    for s in &offsets {
        *per_second.entry(*s).or_default() += 1;
    }
    assert!(per_second.len() > 800, "{} distinct seconds of 960", per_second.len());
    assert!(
        per_second.values().all(|n| *n <= 10),
        "the busiest second: {:?}",
        per_second.values().max()
    );
}

/// The second past 08:00 task `01JBZ5V3Q7K2M8N4P6R0S2T4V6` gets (20:18): pinned, so a change
/// of the hash (which would move every planned task) is seen.
const JITTER_OF_A: i64 = 20 * 60 + 18;

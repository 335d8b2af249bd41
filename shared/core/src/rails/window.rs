//! The account's send window: whether a send may go now in the account's time zone,
//! and if not, when a deferred send goes; when a touch is planned: first touches in the morning,
//! follow-ups in the afternoon, with a jitter fixed per task (smart timing). The numbers are in
//! [`crate::kernel::limits`]; the send gate ([`crate::rails::send_gate`]) applies them.

use jiff::civil::{Date, Time};
use jiff::{SignedDuration, Timestamp, ToSpan, Zoned};

use crate::kernel::ids::TaskId;
use crate::kernel::limits::{FIRST_TOUCH_HOURS, FOLLOW_UP_HOURS, SEND_JITTER_MINS};
use crate::owner::account::Settings;
use crate::task::Task;
use crate::task::cadence::Cadence;
use crate::task::task_type::{self, Category};

/// The account's send window in local hours `[start, end)`.
fn window_hours(settings: &Settings) -> (i8, i8) {
    (
        i8::try_from(settings.send_window_start).unwrap_or(8),
        i8::try_from(settings.send_window_end).unwrap_or(20),
    )
}

/// Whether `now` is inside the account's send window; if not, when it next opens.
pub fn send_window(settings: &Settings, now: Timestamp) -> Result<(), Timestamp> {
    let tz = settings.time_zone();
    let local: Zoned = now.to_zoned(tz.clone());
    let hour = local.hour();
    let (start, end) = window_hours(settings);
    if hour >= start && hour < end {
        return Ok(());
    }
    let day = if hour < start {
        local.date()
    } else {
        local.date().checked_add(1.day()).unwrap_or(local.date())
    };
    Err(local_time(settings, day, start).unwrap_or(now + SignedDuration::from_hours(1)))
}

/// What a touch is, for the hours it prefers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// The task's first message: the morning.
    First,
    /// A cadence follow-up: the afternoon.
    FollowUp,
    /// The answer to the member's reply: no preference, as soon as allowed.
    Answer,
}

impl Touch {
    /// The touch's preferred local hours inside the account's send window; `None` when it
    /// prefers none or they do not meet the window.
    pub fn hours(self, settings: &Settings) -> Option<(i8, i8)> {
        let chosen = settings.learned_send_hours().and_then(|h| match self {
            Self::First => h.first_touch,
            Self::FollowUp => h.follow_up,
            Self::Answer => None,
        });
        let (from, to) = match (self, chosen) {
            (Self::Answer, _) => return None,
            (_, Some([from, to])) => (from, to),
            (Self::First, None) => FIRST_TOUCH_HOURS,
            (Self::FollowUp, None) => FOLLOW_UP_HOURS,
        };
        let (start, end) = window_hours(settings);
        let (from, to) = (from.max(start), to.min(end));
        (from < to).then_some((from, to))
    }

    /// The hours this touch (`seed`: its task's and touch's) goes in: the preferred ones, or —
    /// for the exploration share, once the account's own hours are chosen — one other hour of
    /// the send window, so every hour keeps being measured (`owner/send_hours.rs`).
    pub fn hours_for(self, settings: &Settings, seed: u64) -> Option<(i8, i8)> {
        let preferred = self.hours(settings)?;
        let chosen = settings
            .learned_send_hours()
            .is_some_and(|h| h.first_touch.is_some() || h.follow_up.is_some());
        let (start, end) = window_hours(settings);
        match crate::owner::send_hours::explores(seed, end - start) {
            Some(offset) if chosen => Some((start + offset, start + offset + 1)),
            _ => Some(preferred),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::First => "first touch",
            Self::FollowUp => "follow-up",
            Self::Answer => "answer",
        }
    }
}

/// The jitter's seed for a task's touch: a hash of the task id and the touch (FNV-1a), the same
/// on every run and every worker.
pub fn jitter_seed(task: TaskId, touch: u32) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in task.to_string().bytes().chain(touch.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// 5:00–20:59 from `seed`, in whole seconds, less than `room` minutes (the preferred hours'
/// length): the minute from the seed's low bits, the second from the next ones, so the touches
/// of a zone's hour spread over its 960 seconds rather than bunching at 16 whole minutes.
fn jitter(seed: u64, room_mins: i64) -> SignedDuration {
    let (low, high) = SEND_JITTER_MINS;
    let minutes = high - low + 1;
    let secs = (low + seed % minutes) * 60 + (seed / minutes) % 60;
    let secs = i64::try_from(secs).unwrap_or(0);
    SignedDuration::from_secs(secs.min(room_mins * 60 - 1).max(0))
}

/// `hour`:00 on the local `day` in the account's time zone.
fn local_time(settings: &Settings, day: Date, hour: i8) -> Option<Timestamp> {
    day.to_datetime(Time::constant(hour, 0, 0, 0))
        .to_zoned(settings.time_zone())
        .ok()
        .map(|z| z.timestamp())
}

/// `at` as the gym's owner reads a time in the log: "Thu, Dec 31 at 13:18", in `tz`.
pub fn local_words(at: Timestamp, tz: &jiff::tz::TimeZone) -> String {
    at.to_zoned(tz.clone()).strftime("%a, %b %-d at %H:%M").to_string()
}

/// When a touch planned for `at` goes, and why when that is not `at`: `at`
/// itself when it falls in the touch's preferred hours (or the touch prefers none that meet
/// the send window); otherwise the start of those hours on `at`'s local day plus the task's
/// jitter — the next day's when that is before `not_before`. A first touch is planned from
/// now (`not_before = at`); a follow-up from its cadence's day (`not_before` = when the
/// previous touch left), so it stays on that day.
pub fn plan_touch(settings: &Settings, at: Timestamp, not_before: Timestamp, touch: Touch, seed: u64) -> (Timestamp, Option<String>) {
    let Some((from, to)) = touch.hours_for(settings, seed) else {
        return (at, None);
    };
    let local = at.to_zoned(settings.time_zone());
    if (from..to).contains(&local.hour()) {
        return (at, None);
    }
    let jitter = jitter(seed, i64::from(to - from) * 60);
    let on = |day: Date| local_time(settings, day, from).map(|t| t + jitter);
    let planned = match on(local.date()) {
        Some(t) if t >= not_before => Some(t),
        _ => local.date().checked_add(1.day()).ok().and_then(on),
    };
    let Some(planned) = planned else {
        return (at, None);
    };
    let exploring = touch.hours(settings) != Some((from, to));
    let why = format!(
        "{} planned for {}, inside {} {from}:00-{to}:00",
        touch.name(),
        local_words(planned, &settings.time_zone()),
        if exploring {
            "another hour than its preferred ones, so the account keeps learning which hours work:"
        } else {
            "its preferred hours"
        },
    );
    (planned, Some(why))
}

/// A task that writes to a member itself: not a staff to-do, research, a batch or a planning
/// parent (their subtasks write).
fn mails_a_member(task: &Task) -> bool {
    task_type::definition(&task.task_type).category == Category::Communication && !task.batch && !task.controls.agent_planning
}

/// When a task made ready at `now` (created, or approved by the owner) sends its first touch:
/// now inside the morning hours, else their next start plus the task's jitter; why, when it
/// is not now. A task that already wrote, or never writes to a member, goes now.
pub fn first_touch_at(settings: &Settings, task: &Task, now: Timestamp) -> (Timestamp, Option<String>) {
    // A lead is answered when they come (inside the send window), not the next morning: the
    // odds of reaching a lead fall by the minute.
    if task.touch > 0 || !mails_a_member(task) || task.task_type == "lead_followup" {
        return (now, None);
    }
    plan_touch(settings, now, now, Touch::First, jitter_seed(task.id, 0))
}

/// When a task that sent touch `sent` at `now` is next due (`task` is the task after the send):
/// the cadence's day, in the afternoon hours when a follow-up will go then (the touches and
/// messages allow one, the time budget has not ended); never past the time budget. The grace
/// before an exhaustion check is not moved.
pub fn after_touch_at(settings: &Settings, task: &Task, cadence: &Cadence, sent: u32, now: Timestamp) -> (Timestamp, Option<String>) {
    let expires = task.budget.expires_at;
    let due = cadence.next_after_touch(sent, now, expires);
    let follows = due < expires && cadence.allows_touch(sent + 1) && task.budget.messages_used < task.budget.messages_max;
    if !follows {
        return (due, None);
    }
    match plan_touch(settings, due, now, Touch::FollowUp, jitter_seed(task.id, sent + 1)) {
        (planned, why) if planned < expires => (planned, why),
        _ => (due, None),
    }
}

/// When a send the window deferred should go: on the day the window next opens (`opens`), the
/// start of the touch's preferred hours (the opening itself for a first touch under the
/// default window, the afternoon for a follow-up) plus the task's jitter; the opening plus
/// the jitter for an answer or where the preferred hours miss the window.
pub fn smart_send_time(settings: &Settings, opens: Timestamp, touch: Touch, seed: u64) -> Timestamp {
    let day = opens.to_zoned(settings.time_zone()).date();
    let (start, end) = window_hours(settings);
    let (from, to) = touch.hours_for(settings, seed).unwrap_or((start, end));
    let jitter = jitter(seed, i64::from(to - from) * 60);
    local_time(settings, day, from).map_or(opens, |t| t.max(opens)) + jitter
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn the_send_window_is_read_in_the_accounts_time_zone() {
        let settings = Settings::defaults("America/New_York".into());
        // 14:00 UTC is 09:00 in New York (EST): inside.
        assert_eq!(send_window(&settings, at("2026-11-02T14:00:00Z")), Ok(()));
        // 02:00 UTC is 21:00 the day before in New York: opens at 08:00 local = 13:00 UTC.
        assert_eq!(send_window(&settings, at("2026-11-03T02:00:00Z")), Err(at("2026-11-03T13:00:00Z")));
        // 11:00 UTC is 06:00 local: opens the same day.
        assert_eq!(send_window(&settings, at("2026-11-03T11:00:00Z")), Err(at("2026-11-03T13:00:00Z")));
    }

    #[test]
    fn chosen_hours_place_touches_and_the_exploration_share_goes_at_the_hour_its_seed_names() {
        let mut settings = Settings::defaults("UTC".into());
        // 06:00: before the window (8-20) and every preferred hour.
        let six = at("2026-11-03T06:00:00Z");
        let seeds: Vec<u64> = (0..2_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let hour = |settings: &Settings, touch, seed| plan_touch(settings, six, six, touch, seed).0.to_zoned(settings.time_zone()).hour();
        // The usual hours until the account's own are chosen: no exploration.
        assert!(seeds.iter().all(|s| (8..10).contains(&hour(&settings, Touch::First, *s))));
        settings.send_hours = Some(crate::owner::send_hours::SendHours {
            checked_at: six,
            sends: 100,
            good: 40,
            first_touch: Some([17, 19]),
            follow_up: Some([16, 19]),
            hours: Vec::new(),
            why: String::new(),
        });
        // Learned, but not taken: at the default trust level the usual hours, no exploration.
        assert!(seeds.iter().all(|s| (8..10).contains(&hour(&settings, Touch::First, *s))));
        settings.use_learned_send_hours = Some(true);
        let mut explored = 0;
        for seed in &seeds {
            let (first, follow_up) = (hour(&settings, Touch::First, *seed), hour(&settings, Touch::FollowUp, *seed));
            match crate::owner::send_hours::explores(*seed, 12) {
                Some(offset) => {
                    explored += 1;
                    assert_eq!((first, follow_up), (8 + offset, 8 + offset), "seed {seed}");
                }
                None => assert!(
                    (17..19).contains(&first) && (16..19).contains(&follow_up),
                    "seed {seed}: {first}, {follow_up}"
                ),
            }
        }
        // About one in ten, spread over the window.
        assert!((140..260).contains(&explored), "{explored} of 2000");
        // An answer is never held for an hour.
        assert_eq!(plan_touch(&settings, six, six, Touch::Answer, 1).0, six);
    }
}

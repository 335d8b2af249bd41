//! Which hours an account's messages work best at (CONTRACT.md "Honest lift"; the numbers in
//! `owner/send_hours.rs`): its closed tasks' first messages, by the local hour they left, and
//! whether each was answered or reached its goal.
//!
//! Each hour of the send window gets a rate shrunk toward the account's overall rate
//! (`(good + K·overall) / (sends + K)`, K = [`SHRINK`]), so an hour with a handful of lucky
//! sends does not win. The block of hours (as long as the usual block: 2 hours for first
//! touches, 3 for follow-ups) with the best mean wins, among the blocks whose every hour has
//! [`MIN_HOUR_SENDS`] sends and the usual block itself — a tie keeps the usual one.

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::kernel::limits::{FIRST_TOUCH_HOURS, FOLLOW_UP_HOURS};
use crate::learning::interaction::SharedOutcome;
use crate::owner::account::Settings;
use crate::owner::send_hours::{EXPLORE_PERCENT, HourCount, MIN_HOUR_SENDS, MIN_SENDS_FOR_HOURS, SEND_HOURS_WINDOW_DAYS, SendHours};
use crate::task::holdout::succeeded;

/// The pseudo-count each hour's rate is shrunk with toward the overall rate.
pub const SHRINK: f64 = 5.0;

/// A first message that was answered or whose task reached its goal.
fn good(record: &SharedOutcome) -> bool {
    record.turns > 0 || (!record.provisional && succeeded(&record.task_type, record.outcome.as_deref()))
}

fn span([from, to]: [i8; 2]) -> String {
    format!("{from}:00-{to}:00")
}

fn percent(good: u32, sends: u32) -> String {
    if sends == 0 {
        return "no sends".to_owned();
    }
    format!("{:.0}% of {sends}", f64::from(good) * 100.0 / f64::from(sends))
}

/// The choice from `records` (the account's closed tasks of the window) for `settings` at `now`.
pub fn choose(records: &[SharedOutcome], settings: &Settings, now: Timestamp) -> SendHours {
    let (start, end) = (
        i8::try_from(settings.send_window_start).unwrap_or(8),
        i8::try_from(settings.send_window_end).unwrap_or(20),
    );
    let mut by_hour: BTreeMap<i8, (u32, u32)> = BTreeMap::new();
    for record in records {
        let Some(hour) = record.first_touch_hour.filter(|h| (start..end).contains(h)) else {
            continue;
        };
        let slot = by_hour.entry(hour).or_default();
        slot.0 += 1;
        slot.1 += u32::from(good(record));
    }
    let sends: u32 = by_hour.values().map(|(n, _)| n).sum();
    let goods: u32 = by_hour.values().map(|(_, g)| g).sum();
    let hours: Vec<HourCount> = by_hour
        .iter()
        .map(|(hour, (sends, good))| HourCount {
            hour: *hour,
            sends: *sends,
            good: *good,
        })
        .collect();
    let usual = |(from, to): (i8, i8)| [from.max(start), to.min(end)];
    let (usual_first, usual_follow) = (usual(FIRST_TOUCH_HOURS), usual(FOLLOW_UP_HOURS));
    if sends < MIN_SENDS_FOR_HOURS {
        return SendHours {
            checked_at: now,
            sends,
            good: goods,
            first_touch: None,
            follow_up: None,
            hours,
            why: format!(
                "Not enough sends yet: {sends} first messages in the last {SEND_HOURS_WINDOW_DAYS} days of the \
                 {MIN_SENDS_FOR_HOURS} needed, so first messages go {} and follow-ups {}, the usual hours.",
                span(usual_first),
                span(usual_follow)
            ),
        };
    }
    let overall = f64::from(goods) / f64::from(sends);
    let score = |h: i8| {
        let (n, g) = by_hour.get(&h).copied().unwrap_or_default();
        (f64::from(g) + SHRINK * overall) / (f64::from(n) + SHRINK)
    };
    let block_of = |[from, to]: [i8; 2]| {
        let len = (to - from).max(1);
        let best = (start..=end - len)
            .filter(|from| (*from..from + len).all(|h| by_hour.get(&h).is_some_and(|(n, _)| *n >= MIN_HOUR_SENDS)))
            .map(|from| ([from, from + len], (from..from + len).map(score).sum::<f64>() / f64::from(len)))
            .fold(None::<([i8; 2], f64)>, |best, (block, s)| match best {
                Some((_, b)) if b >= s => best,
                _ => Some((block, s)),
            });
        let usual_score = if from < to {
            (from..to).map(score).sum::<f64>() / f64::from(to - from)
        } else {
            f64::MIN
        };
        match best {
            // Better than the usual hours by more than rounding.
            Some((block, s)) if s > usual_score + 1e-9 => block,
            _ => [from, to],
        }
    };
    let (first, follow) = (block_of(usual_first), block_of(usual_follow));
    let counted = |[from, to]: [i8; 2]| {
        let (n, g) = (from..to).fold((0, 0), |(n, g), h| {
            let (hn, hg) = by_hour.get(&h).copied().unwrap_or_default();
            (n + hn, g + hg)
        });
        percent(g, n)
    };
    let said = |chosen: [i8; 2], usual: [i8; 2], what: &str| {
        if chosen == usual {
            format!("{what} stay at {} ({}), still the best", span(chosen), counted(chosen))
        } else {
            format!(
                "{what} go {} ({} answered or reached their goal; the usual {}: {})",
                span(chosen),
                counted(chosen),
                span(usual),
                counted(usual)
            )
        }
    };
    SendHours {
        checked_at: now,
        sends,
        good: goods,
        first_touch: Some(first),
        follow_up: Some(follow),
        hours,
        why: format!(
            "From {sends} first messages in the last {SEND_HOURS_WINDOW_DAYS} days ({}): {}; {}. \
             One in {} goes at another hour of the send window, to keep learning.",
            percent(goods, sends),
            said(first, usual_first, "first messages"),
            said(follow, usual_follow, "follow-ups"),
            100 / EXPLORE_PERCENT
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskStatus;
    use crate::testing::at;

    /// The record of a closed task whose first message left at `hour` UTC (the settings' zone).
    fn record(hour: i8, answered: bool) -> SharedOutcome {
        let mut task = crate::testing::sample_task(if answered { TaskStatus::Completed } else { TaskStatus::Cancelled });
        task.touch = 1;
        task.execution_started_at = Some(at("2026-11-02T00:00:00Z") + jiff::SignedDuration::from_hours(i64::from(hour)));
        task.budget.turns_used = u32::from(answered);
        task.outcome = Some(if answered { "retained" } else { "unresponsive" }.into());
        let settings = Settings::defaults("UTC".into());
        crate::learning::interaction::InteractionOutcome::of(&task, Some(&settings))
            .unwrap_or_else(|| panic!("closed"))
            .shared
    }

    fn sends(hour: i8, n: usize, answered: usize) -> Vec<SharedOutcome> {
        (0..n).map(|i| record(hour, i < answered)).collect()
    }

    #[test]
    fn below_the_threshold_the_usual_hours_stay_and_the_page_says_how_many_more() {
        let settings = Settings::defaults("UTC".into());
        let mut records = sends(8, 30, 5);
        records.extend(sends(9, 29, 5));
        let chosen = choose(&records, &settings, at("2026-11-02T14:00:00Z"));
        assert_eq!((chosen.first_touch, chosen.follow_up, chosen.sends), (None, None, 59));
        assert!(chosen.why.starts_with("Not enough sends yet: 59 first messages"), "{}", chosen.why);
    }

    #[test]
    fn the_evening_hours_that_were_answered_win_and_a_thin_hour_does_not() {
        let settings = Settings::defaults("UTC".into());
        // The usual mornings: 100 sends, 10% answered. Evenings 17-19: 20 each, 60% answered.
        let mut records = sends(8, 50, 5);
        records.extend(sends(9, 50, 5));
        records.extend(sends(17, 20, 12));
        records.extend(sends(18, 20, 12));
        records.extend(sends(19, 20, 12));
        // Noon: 4 sends all answered — below the per-hour minimum, never chosen.
        records.extend(sends(12, 4, 4));
        // Outside the send window (8-20): not read.
        records.extend(sends(21, 40, 40));
        let chosen = choose(&records, &settings, at("2026-11-02T14:00:00Z"));
        assert_eq!(chosen.sends, 164);
        assert_eq!(chosen.first_touch, Some([17, 19]));
        assert_eq!(chosen.follow_up, Some([17, 20]));
        assert!(chosen.why.contains("first messages go 17:00-19:00 (60% of 40"), "{}", chosen.why);
        assert!(chosen.why.contains("the usual 8:00-10:00: 10% of 100"), "{}", chosen.why);

        // When the mornings are as good as anything measured, they stay.
        let mut even = sends(8, 50, 25);
        even.extend(sends(9, 50, 25));
        even.extend(sends(17, 20, 10));
        let chosen = choose(&even, &settings, at("2026-11-02T14:00:00Z"));
        assert_eq!((chosen.first_touch, chosen.follow_up), (Some([8, 10]), Some([13, 16])));
        assert!(chosen.why.contains("first messages stay at 8:00-10:00"), "{}", chosen.why);
    }
}

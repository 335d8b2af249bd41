//! The account's send window (spec §29): whether a send may go now in the account's time zone,
//! and if not, when a deferred send goes (smart timing). The numbers are in
//! [`crate::kernel::limits`]; the send gate ([`crate::rails::send_gate`]) applies them.

use jiff::civil::Time;
use jiff::{SignedDuration, Timestamp, ToSpan, Zoned};

use crate::kernel::limits::{FOLLOW_UP_PREFERRED_HOUR, SEND_JITTER_MINS};
use crate::owner::account::Settings;

/// Whether `now` is inside the account's send window; if not, when it next opens.
pub fn send_window(settings: &Settings, now: Timestamp) -> Result<(), Timestamp> {
    let tz = settings.time_zone();
    let local: Zoned = now.to_zoned(tz.clone());
    let hour = local.hour();
    let (start, end) = (
        i8::try_from(settings.send_window_start).unwrap_or(8),
        i8::try_from(settings.send_window_end).unwrap_or(20),
    );
    if hour >= start && hour < end {
        return Ok(());
    }
    let day = if hour < start {
        local.date()
    } else {
        local.date().checked_add(1.day()).unwrap_or(local.date())
    };
    let opens = day
        .to_datetime(Time::constant(start, 0, 0, 0))
        .to_zoned(tz)
        .map(|z| z.timestamp())
        .unwrap_or(now + SignedDuration::from_hours(1));
    Err(opens)
}

/// When a send the window deferred should go: the next opening (or, for a follow-up, the
/// afternoon of that day) plus the task's jitter. `seed` varies per task and touch.
pub fn smart_send_time(settings: &Settings, opens: Timestamp, follow_up: bool, seed: u64) -> Timestamp {
    let (low, high) = SEND_JITTER_MINS;
    let jitter = SignedDuration::from_mins(i64::try_from(low + seed % (high - low + 1)).unwrap_or(0));
    let afternoon = FOLLOW_UP_PREFERRED_HOUR;
    let in_window =
        i64::from(afternoon) >= i64::from(settings.send_window_start) && i64::from(afternoon) < i64::from(settings.send_window_end);
    if !(follow_up && in_window) {
        return opens + jitter;
    }
    let tz = settings.time_zone();
    opens
        .to_zoned(tz.clone())
        .date()
        .to_datetime(Time::constant(afternoon, 0, 0, 0))
        .to_zoned(tz)
        .map_or(opens, |z| z.timestamp())
        + jitter
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
}

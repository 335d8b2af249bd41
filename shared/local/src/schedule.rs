//! Schedules slower than the minute tick (the 6-hourly analysis) under the test clock: a
//! schedule fires when the clock has reached its next time, as EventBridge would have fired
//! it somewhere in between, then waits a period from then. Moving the clock a day ahead and
//! calling `/_local/run` fires it once, not four times: a late EventBridge catches up by one.

use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

#[derive(Debug)]
pub struct Schedule {
    period: SignedDuration,
    next: Mutex<Timestamp>,
}

impl Schedule {
    /// First due a period after `now` (the runtime's start).
    pub fn new(period: SignedDuration, now: Timestamp) -> Self {
        Self {
            period,
            next: Mutex::new(now + period),
        }
    }

    /// Whether the schedule fires at `now`; if it does, its next time moves a period on.
    pub fn take_due(&self, now: Timestamp) -> bool {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if now < *next {
            return false;
        }
        *next = now + self.period;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_once_the_clock_passes_its_time_then_waits_a_period() {
        let start: Timestamp = "2026-11-02T14:00:00Z".parse().expect("ts");
        let six = SignedDuration::from_hours(6);
        let schedule = Schedule::new(six, start);
        assert!(!schedule.take_due(start));
        assert!(!schedule.take_due(start + SignedDuration::from_hours(5)));
        let day_later = start + SignedDuration::from_hours(24);
        assert!(schedule.take_due(day_later));
        assert!(!schedule.take_due(day_later), "once per slot");
        assert!(schedule.take_due(day_later + six));
    }
}

//! Follow-up cadences: when to follow up, in what tone, and what
//! happens when the touches run out.
//!
//! `intervals[i]` is the wait in days after touch `i` (touch 0 is the first message). A task
//! therefore sends at most `intervals.len()` touches (fewer if its message budget is smaller);
//! the wait after the last touch is the grace period before the exhaustion policy applies.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

/// What to do when a task has used all its touches (or its time budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnExhaustion {
    /// Close it as unresponsive.
    Cancel,
    /// Hand it to the owner.
    Escalate,
    /// Stop sending but keep watching for outcome signals.
    Dormant { check_days: u32, max_days: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cadence {
    pub name: &'static str,
    pub intervals: &'static [u32],
    pub tones: &'static [&'static str],
    pub on_exhaustion: OnExhaustion,
}

impl Cadence {
    /// The tone hint for touch `touch` (0 = first message).
    pub fn tone(&self, touch: u32) -> &'static str {
        self.tones.get(touch as usize).copied().unwrap_or("neutral")
    }

    /// Whether touch `touch` may still be sent under this cadence.
    pub fn allows_touch(&self, touch: u32) -> bool {
        (touch as usize) < self.intervals.len().max(1)
    }

    /// When the task is next due after touch `touch` was sent at `sent_at`: the next
    /// follow-up, or — when the cadence has no wait left — the exhaustion check. Never past
    /// the time budget.
    pub fn next_after_touch(&self, touch: u32, sent_at: Timestamp, expires_at: Timestamp) -> Timestamp {
        let next = match self.intervals.get(touch as usize) {
            Some(days) => sent_at + SignedDuration::from_hours(24 * i64::from(*days)),
            None => expires_at,
        };
        next.min(expires_at)
    }
}

pub const STANDARD: Cadence = Cadence {
    name: "standard",
    intervals: &[3, 5, 7],
    tones: &["friendly_checkin", "direct_offer_help", "final_open_door"],
    on_exhaustion: OnExhaustion::Cancel,
};

pub const URGENT: Cadence = Cadence {
    name: "urgent",
    intervals: &[1, 2, 3],
    tones: &["friendly_urgent", "direct_followup", "escalation_warning"],
    on_exhaustion: OnExhaustion::Escalate,
};

pub const PATIENT: Cadence = Cadence {
    name: "patient",
    intervals: &[5, 10, 14],
    tones: &["warm_checkin", "gentle_followup", "no_pressure_final"],
    on_exhaustion: OnExhaustion::Dormant {
        check_days: 7,
        max_days: 60,
    },
};

pub const SLOW_BURN: Cadence = Cadence {
    name: "slow_burn",
    intervals: &[3, 10, 21],
    tones: &["personal_note", "different_angle", "final_door_open"],
    on_exhaustion: OnExhaustion::Dormant {
        check_days: 14,
        max_days: 90,
    },
};

pub const SINGLE_SHOT: Cadence = Cadence {
    name: "single_shot",
    intervals: &[],
    tones: &[],
    on_exhaustion: OnExhaustion::Cancel,
};

/// Reminders to the owner for staff to-dos: nudge after a day, then two, then
/// raise it as an escalation. These reach the owner, never the member.
pub const OWNER_REMINDERS: Cadence = Cadence {
    name: "owner_reminders",
    intervals: &[1, 2],
    tones: &["reminder", "urgent_reminder"],
    on_exhaustion: OnExhaustion::Escalate,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn day(n: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_hours(24 * n)
    }

    #[test]
    fn urgent_cadence_matches_the_payment_walkthrough() {
        // §19.3: day 0 → next day 1; day 1 → next day 3; day 3 → next day 6.
        let expires = day(7);
        assert_eq!(URGENT.next_after_touch(0, day(0), expires), day(1));
        assert_eq!(URGENT.next_after_touch(1, day(1), expires), day(3));
        assert_eq!(URGENT.next_after_touch(2, day(3), expires), day(6));
        assert_eq!(URGENT.tone(1), "direct_followup");
    }

    #[test]
    fn the_time_budget_caps_every_schedule() {
        // §19.1: standard cadence, touch 2 on day 8 would wait until day 15 but the budget ends on day 14.
        assert_eq!(STANDARD.next_after_touch(2, day(8), day(14)), day(14));
        assert_eq!(SINGLE_SHOT.next_after_touch(0, day(0), day(1)), day(1));
        assert!(SINGLE_SHOT.allows_touch(0) && !SINGLE_SHOT.allows_touch(1));
    }
}

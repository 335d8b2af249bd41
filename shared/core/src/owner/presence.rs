//! The owner's presence (`002` activity tiers): active, away or dormant, from
//! when they last used the dashboard or the API. An away or dormant owner gets the morning
//! brief only (other notices wait in the feed; critical ones still go), the risk scan proposes
//! fewer tasks per run, and their return brings one "while you were away" summary. An owner
//! never seen yet counts as active: nothing changes until Openloop has seen them once.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

/// Seen within a day: active; within a week: away; longer: dormant.
pub const ACTIVE_FOR: SignedDuration = SignedDuration::from_hours(24);
pub const AWAY_FOR: SignedDuration = SignedDuration::from_hours(24 * 7);
/// How often a use of the dashboard or the API is written down (at most).
pub const SEEN_EVERY: SignedDuration = SignedDuration::from_hours(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Active,
    Away,
    Dormant,
}

impl Presence {
    /// The owner's presence at `now`.
    pub fn of(last_seen: Option<Timestamp>, now: Timestamp) -> Self {
        let Some(seen) = last_seen else {
            return Presence::Active;
        };
        let since = now.duration_since(seen);
        if since < ACTIVE_FOR {
            Presence::Active
        } else if since < AWAY_FOR {
            Presence::Away
        } else {
            Presence::Dormant
        }
    }

    /// The risk scan's new tasks per run out of `max`: all for an active owner, half for an
    /// away one, a quarter for a dormant one (at least one).
    pub fn scan_allowance(self, max: usize) -> usize {
        match self {
            Presence::Active => max,
            Presence::Away => (max / 2).max(1),
            Presence::Dormant => (max / 4).max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    #[test]
    fn presence_follows_the_owners_last_use_and_scales_the_scan() {
        let now = at("2026-11-10T12:00:00Z");
        assert_eq!(Presence::of(Some(now - SignedDuration::from_hours(3)), now), Presence::Active);
        assert_eq!(Presence::of(Some(now - SignedDuration::from_hours(50)), now), Presence::Away);
        assert_eq!(Presence::of(Some(now - SignedDuration::from_hours(24 * 9)), now), Presence::Dormant);
        assert_eq!(Presence::of(None, now), Presence::Active, "never seen: nothing changes");
        assert_eq!(
            [Presence::Active, Presence::Away, Presence::Dormant].map(|p| p.scan_allowance(10)),
            [10, 5, 2]
        );
    }
}

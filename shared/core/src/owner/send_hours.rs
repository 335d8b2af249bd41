//! The account's own send hours, chosen from what its sends led to (CONTRACT.md "Honest
//! lift"; `learning/send_hours.rs` chooses them): once an account has sent
//! [`MIN_SENDS_FOR_HOURS`] first messages in [`SEND_HOURS_WINDOW_DAYS`] days, the hours whose
//! messages were answered or reached their goal most often become its preferred hours for
//! first touches and follow-ups, inside its send window. Until then the usual hours stay (first
//! touches 8–10, follow-ups 13–16). A share of first touches and follow-ups
//! ([`EXPLORE_PERCENT`]) goes at another hour of the window, chosen from a hash of the task and
//! touch, so the other hours keep being measured.
//!
//! Kept in the settings (shown, never patched); written by the daily choice.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// First messages an account needs in the window before its own hours are chosen.
pub const MIN_SENDS_FOR_HOURS: u32 = 60;
/// The days of closed tasks the choice reads.
pub const SEND_HOURS_WINDOW_DAYS: i64 = 90;
/// Sends an hour needs before a block of hours containing it can be chosen.
pub const MIN_HOUR_SENDS: u32 = 5;
/// The share of first touches and follow-ups sent at another hour, once hours are chosen.
pub const EXPLORE_PERCENT: u64 = 10;
/// How often the choice is made again, in hours.
pub const CHOOSE_EVERY_HOURS: i64 = 24;

/// One local hour's first messages and how many were answered or reached their goal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HourCount {
    pub hour: i8,
    pub sends: u32,
    pub good: u32,
}

/// The choice as it stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SendHours {
    /// When the choice was last made.
    pub checked_at: Timestamp,
    /// First messages read (in the window, inside the send window).
    pub sends: u32,
    /// Of them, answered or reached their goal.
    pub good: u32,
    /// The chosen local hours `[from, to)` for first touches; `None`: the usual ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_touch: Option<[i8; 2]>,
    /// The chosen local hours `[from, to)` for follow-ups; `None`: the usual ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<[i8; 2]>,
    /// Each hour with sends, earliest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hours: Vec<HourCount>,
    /// Why, in plain words.
    pub why: String,
}

/// Whether a touch with this seed goes at another hour (the exploration share); which hour of
/// a window of `hours` hours (0-based).
pub fn explores(seed: u64, hours: i8) -> Option<i8> {
    if hours <= 0 || (seed >> 20) % 100 >= EXPLORE_PERCENT {
        return None;
    }
    i8::try_from((seed >> 40) % u64::from(hours.unsigned_abs())).ok()
}

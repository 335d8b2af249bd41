//! The owner's quiet hours and the brief's hour (`002` anti-spam): owner
//! notices other than critical ones wait while the owner's local clock is inside
//! `quiet_hours` (default 21–7), and the morning brief leaves at `brief_hour` (default 7).
//! Both are read in the account's time zone.

use jiff::civil::Time;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::owner::account::Settings;

pub const DEFAULT_BRIEF_HOUR: u8 = 7;
pub const DEFAULT_REVIEW_EXPIRY_DAYS: u32 = 7;
pub const MAX_REVIEW_EXPIRY_DAYS: u32 = 90;

/// From `start` to `end` (local hours, 0–23; wrapping midnight when `start > end`; none when
/// they are equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct QuietHours {
    #[cfg_attr(feature = "openapi", schema(maximum = 23))]
    pub start: u8,
    #[cfg_attr(feature = "openapi", schema(maximum = 23))]
    pub end: u8,
}

impl Default for QuietHours {
    fn default() -> Self {
        Self { start: 21, end: 7 }
    }
}

impl QuietHours {
    fn contains(self, hour: u8) -> bool {
        match self.start.cmp(&self.end) {
            std::cmp::Ordering::Equal => false,
            std::cmp::Ordering::Less => (self.start..self.end).contains(&hour),
            std::cmp::Ordering::Greater => hour >= self.start || hour < self.end,
        }
    }
}

/// What an undecided review item becomes at `review_expiry_days`: nothing found is dropped
/// in silence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnReviewExpiry {
    /// The member goes on the to-do list; the task closes as `review_expired` with its `todo_id`.
    #[default]
    CallList,
    /// The type's template draft is sent, as the owner would have approved it.
    SendDefault,
    /// Closed, nothing sent.
    Close,
}

pub fn default_brief_hour() -> Option<u8> {
    Some(DEFAULT_BRIEF_HOUR)
}

pub fn default_review_expiry_days() -> u32 {
    DEFAULT_REVIEW_EXPIRY_DAYS
}

/// The settings' hours and days, checked.
pub fn validate(settings: &Settings) -> Result<(), InvalidInput> {
    if settings.brief_hour.is_some_and(|h| h > 23) {
        return Err(InvalidInput::new("invalid_brief_hour", "brief_hour is a local hour, 0-23, or null"));
    }
    let q = settings.quiet_hours;
    if q.start > 23 || q.end > 23 {
        return Err(InvalidInput::new(
            "invalid_quiet_hours",
            "quiet_hours start and end are local hours, 0-23",
        ));
    }
    if !(1..=MAX_REVIEW_EXPIRY_DAYS).contains(&settings.review_expiry_days) {
        return Err(InvalidInput::new(
            "invalid_review_expiry_days",
            format!("review_expiry_days is 1-{MAX_REVIEW_EXPIRY_DAYS}"),
        ));
    }
    Ok(())
}

/// When the quiet hours around `now` end: `None` if `now` is not quiet.
pub fn quiet_until(settings: &Settings, now: Timestamp) -> Option<Timestamp> {
    let tz = settings.time_zone();
    let local = now.to_zoned(tz.clone());
    let hour = u8::try_from(local.hour()).unwrap_or(0);
    let quiet = settings.quiet_hours;
    if !quiet.contains(hour) {
        return None;
    }
    let end = Time::constant(i8::try_from(quiet.end).unwrap_or(7), 0, 0, 0);
    let today_end = local.date().to_datetime(end).to_zoned(tz.clone()).ok()?.timestamp();
    if today_end > now {
        return Some(today_end);
    }
    let tomorrow = local.date().tomorrow().ok()?;
    Some(
        tomorrow
            .to_datetime(end)
            .to_zoned(tz)
            .map_or(now + SignedDuration::from_hours(1), |z| z.timestamp()),
    )
}

/// Whether the morning brief is due at `now`: the owner wants one, and the local hour has
/// reached `brief_hour` (claimed once a day by the caller).
pub fn brief_due(settings: &Settings, now: Timestamp) -> bool {
    let hour = now.to_zoned(settings.time_zone()).hour();
    settings.brief_hour.is_some_and(|h| hour >= i8::try_from(h).unwrap_or(i8::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    fn settings() -> Settings {
        Settings::defaults("America/New_York".into())
    }

    #[test]
    fn quiet_hours_wrap_midnight_and_end_at_their_local_hour() {
        let s = settings();
        // 22:30 in New York: quiet until 07:00 the next morning.
        assert_eq!(quiet_until(&s, at("2026-11-03T03:30:00Z")), Some(at("2026-11-03T12:00:00Z")));
        // 06:00: quiet until 07:00 the same morning.
        assert_eq!(quiet_until(&s, at("2026-11-03T11:00:00Z")), Some(at("2026-11-03T12:00:00Z")));
        assert_eq!(quiet_until(&s, at("2026-11-03T12:00:00Z")), None, "07:00 is awake");
        let mut none = settings();
        none.quiet_hours = QuietHours { start: 0, end: 0 };
        assert_eq!(quiet_until(&none, at("2026-11-03T03:30:00Z")), None);
    }

    #[test]
    fn the_brief_is_due_from_its_hour_and_never_when_turned_off() {
        let mut s = settings();
        assert!(!brief_due(&s, at("2026-11-03T11:59:00Z")));
        assert!(brief_due(&s, at("2026-11-03T12:00:00Z")));
        s.brief_hour = None;
        assert!(!brief_due(&s, at("2026-11-03T15:00:00Z")));
        s.brief_hour = Some(24);
        assert_eq!(validate(&s).expect_err("24").code, "invalid_brief_hour");
    }
}

//! Recurring templates: a cron expression that spawns a fresh task of one type on
//! a schedule, up to a cap. The template itself never runs; every instance is an ordinary task
//! made through the one creation path, with its own budget and gates.
//!
//! Cron expressions have five fields (minute hour day-of-month month day-of-week) and are read
//! in the account's time zone, so "0 8 * * 1" is Monday 08:00 at the gym, summer and winter.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, MemberId};

/// The most instances one template may spawn, whatever it asks for.
pub const MAX_INSTANCES_CAP: u32 = 520;
/// Instances when neither the request nor the task type says (a year of weekly).
pub const DEFAULT_MAX_INSTANCES: u32 = 52;

/// The member id of tasks about the whole business rather than one member (research, staff
/// to-dos about the gym).
pub const ACCOUNT_WIDE_MEMBER: &str = "_account";

pub fn account_wide_member() -> MemberId {
    MemberId::parse(ACCOUNT_WIDE_MEMBER).unwrap_or_else(|_| unreachable!("a valid member id"))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecurringTemplate {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    pub task_type: String,
    pub member_id: MemberId,
    pub goal: String,
    pub cron: String,
    pub enabled: bool,
    pub max_instances: u32,
    pub instances_created: u32,
    /// When it next spawns; `None` once disabled.
    pub next_at: Option<Timestamp>,
    pub last_triggered_at: Option<Timestamp>,
    pub created_at: Timestamp,
    /// Optimistic-lock version: 1 when created, +1 per change.
    pub version: u64,
    /// The owner paused it: it spawns nothing until resumed.
    #[serde(default)]
    pub paused: bool,
    /// Its latest runs, newest last.
    #[serde(default)]
    pub runs: Vec<TemplateRun>,
    /// When the owner hears of a run: `always`, `on_change` (default), `on_win`, `never`.
    #[serde(default)]
    pub notify: crate::owner::trigger::Notify,
    /// Its back-off: runs that keep finding nothing make it run less often.
    #[serde(default)]
    pub backoff: Backoff,
}

/// Scheduled runs in a row that opened nothing before a schedule backs off.
pub const BACKOFF_AFTER_IDLE_RUNS: u32 = 3;
/// The most a schedule backs off: every 8th occurrence.
pub const BACKOFF_MAX_EVERY: u32 = 8;

/// A schedule's back-off: after [`BACKOFF_AFTER_IDLE_RUNS`] scheduled runs in a row that opened
/// nothing it runs on every 2nd occurrence of its schedule, then every 4th, up to every
/// [`BACKOFF_MAX_EVERY`]th; the first run that opens a task brings it back to its rhythm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Backoff {
    /// Scheduled runs in a row that opened nothing.
    pub idle_runs: u32,
    /// It runs on every `every`th occurrence of its schedule (1: its own rhythm).
    pub every: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self { idle_runs: 0, every: 1 }
    }
}

impl Backoff {
    /// After a run: one that opened a task resets it; a scheduled one that opened nothing
    /// counts, and doubles `every` from the [`BACKOFF_AFTER_IDLE_RUNS`]th on, up to the cap.
    /// An owner's run-now that opens nothing does not count.
    pub fn after(self, opened: u32, scheduled: bool) -> Self {
        if opened > 0 {
            return Self::default();
        }
        if !scheduled {
            return self;
        }
        let idle_runs = self.idle_runs.saturating_add(1);
        let every = match idle_runs.checked_sub(BACKOFF_AFTER_IDLE_RUNS) {
            None => 1,
            Some(past) => 2u32.saturating_pow(past.saturating_add(1)).min(BACKOFF_MAX_EVERY),
        };
        Self { idle_runs, every }
    }
}

/// The `n`th occurrence of `expression` after `after` (`n` ≥ 1; the first is [`next_occurrence`]).
pub fn nth_occurrence(expression: &str, after: Timestamp, tz: &TimeZone, n: u32) -> Result<Timestamp, CronError> {
    let mut at = next_occurrence(expression, after, tz)?;
    for _ in 1..n.max(1) {
        at = next_occurrence(expression, at, tz)?;
    }
    Ok(at)
}

/// One run of a recurring template: when, what it found, what it opened, whom it told.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateRun {
    pub at: jiff::Timestamp,
    /// Instances it was due to make (1), or 0 when the cap or a refusal stopped it.
    pub found: u32,
    /// Tasks it opened (0 when the member already had one open: that one got the context).
    pub opened: u32,
    /// Whom it told: `owner` when the instance went to the owner's review, else nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notified: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<crate::kernel::ids::TaskId>,
    /// Why nothing was opened though the run was due: `member_suppressed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// `schedule` or `run_now`.
    pub by: String,
    /// After this run, it runs on every `every`th occurrence of its schedule (its back-off).
    #[serde(default = "one")]
    pub every: u32,
}

fn one() -> u32 {
    1
}

/// `POST /api/v1/recurring`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewTemplate {
    pub task_type: crate::task::task_type::RegisteredTaskType,
    /// Defaults to the type's own schedule, if it has one.
    pub cron: Option<crate::kernel::texts::CronExpression>,
    pub goal: Option<crate::kernel::texts::Goal>,
    pub member_id: Option<MemberId>,
    pub max_instances: Option<u32>,
    /// `always` | `on_change` (default) | `on_win` | `never`.
    #[serde(default)]
    pub notify: Option<crate::owner::trigger::Notify>,
}

/// `PUT /api/v1/recurring/{id}`: what the owner may change of a template once made.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TemplateChange {
    /// `always` | `on_change` | `on_win` | `never`.
    pub notify: crate::owner::trigger::Notify,
}

#[derive(Debug, thiserror::Error)]
#[error("cron expression {expression:?}: {reason}")]
pub struct CronError {
    pub expression: String,
    pub reason: String,
}

impl From<CronError> for InvalidInput {
    fn from(e: CronError) -> Self {
        InvalidInput::new(
            "invalid_cron",
            format!("{e}; five fields: minute hour day-of-month month day-of-week"),
        )
    }
}

fn parse(expression: &str) -> Result<croner::Cron, CronError> {
    let error = |reason: String| CronError {
        expression: expression.to_owned(),
        reason,
    };
    let fields: Vec<&str> = expression.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(error("must have exactly five fields".into()));
    }
    // At most hourly: one minute of the hour, not a list, a range or a step.
    if !fields[0].parse::<u8>().is_ok_and(|minute| minute < 60) {
        return Err(error(
            "the minute field must be one minute (0-59): templates run at most hourly".into(),
        ));
    }
    expression.parse::<croner::Cron>().map_err(|e| error(e.to_string()))
}

/// Check an expression without computing anything.
pub fn validate(expression: &str) -> Result<(), CronError> {
    parse(expression).map(|_| ())
}

/// The first time strictly after `after` that `expression` names, read as wall-clock time in
/// `tz`. A wall-clock time skipped by a DST change moves to just after the change.
pub fn next_occurrence(expression: &str, after: Timestamp, tz: &TimeZone) -> Result<Timestamp, CronError> {
    let cron = parse(expression)?;
    let error = |reason: String| CronError {
        expression: expression.to_owned(),
        reason,
    };
    // The cron library works on chrono types: hand it the civil time, as if it were UTC, and
    // turn its answer back into an instant in the account's zone.
    let local = after.to_zoned(tz.clone()).datetime();
    let naive = chrono::NaiveDate::from_ymd_opt(i32::from(local.year()), local.month() as u32, local.day() as u32)
        .and_then(|d| d.and_hms_opt(local.hour() as u32, local.minute() as u32, local.second() as u32))
        .ok_or_else(|| error("time out of range".into()))?;
    let next = cron
        .find_next_occurrence(&naive.and_utc(), false)
        .map_err(|e| error(e.to_string()))?
        .naive_utc();
    use chrono::{Datelike, Timelike};
    let civil = DateTime::new(
        i16::try_from(next.year()).map_err(|e| error(e.to_string()))?,
        next.month() as i8,
        next.day() as i8,
        next.hour() as i8,
        next.minute() as i8,
        0,
        0,
    )
    .map_err(|e| error(e.to_string()))?;
    let at = civil.to_zoned(tz.clone()).map_err(|e| error(e.to_string()))?.timestamp();
    // Ambiguous wall-clock times (the hour repeated in autumn) resolve to the earlier instant,
    // which can fall at or before `after`; then the later one is the next.
    Ok(if at > after { at } else { at + jiff::SignedDuration::from_hours(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn templates_run_at_most_hourly() {
        for often in ["* * * * *", "*/5 * * * *", "0,30 * * * *", "0-59 * * * *", "60 * * * *"] {
            assert!(validate(often).is_err(), "{often}");
        }
        for fine in ["0 * * * *", "15 8 * * 1", "0 6 1 * *"] {
            assert!(validate(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn mondays_at_eight_are_local_time_summer_and_winter() {
        let ny = TimeZone::get("America/New_York").expect("tz");
        // Saturday 2026-10-31 (EDT, UTC-4) → Monday 2026-11-02 08:00 EST (UTC-5): the clocks
        // went back on Sunday in between.
        assert_eq!(
            next_occurrence("0 8 * * 1", ts("2026-10-31T12:00:00Z"), &ny).expect("next"),
            ts("2026-11-02T13:00:00Z")
        );
        // Summer: 08:00 EDT is 12:00 UTC.
        assert_eq!(
            next_occurrence("0 8 * * 1", ts("2026-07-01T00:00:00Z"), &ny).expect("next"),
            ts("2026-07-06T12:00:00Z")
        );
        // Strictly after: at the very minute, the next one is a week on.
        assert_eq!(
            next_occurrence("0 8 * * 1", ts("2026-11-02T13:00:00Z"), &ny).expect("next"),
            ts("2026-11-09T13:00:00Z")
        );
    }

    #[test]
    fn monthly_and_skipped_hours() {
        let ny = TimeZone::get("America/New_York").expect("tz");
        assert_eq!(
            next_occurrence("0 8 1 * *", ts("2026-11-21T00:00:00Z"), &ny).expect("next"),
            ts("2026-12-01T13:00:00Z")
        );
        // 02:30 does not exist on 2027-03-14 in New York: it runs just after the change.
        let spring = next_occurrence("30 2 14 3 *", ts("2027-03-01T00:00:00Z"), &ny).expect("next");
        assert_eq!(spring, ts("2027-03-14T07:30:00Z"));
    }

    #[test]
    fn bad_expressions_are_refused() {
        for bad in ["", "* * * *", "0 8 * * 1 2027", "61 * * * *", "0 25 * * *", "every monday"] {
            assert!(validate(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate("15 8-18 * * mon-fri").is_ok());
    }

    #[test]
    fn a_schedule_that_keeps_finding_nothing_backs_off_doubling_to_its_cap_and_work_resets_it() {
        let mut b = Backoff::default();
        let mut everies = Vec::new();
        for _ in 0..7 {
            b = b.after(0, true);
            everies.push(b.every);
        }
        assert_eq!(everies, [1, 1, 2, 4, 8, 8, 8]);
        assert_eq!(b.after(0, false), b, "an owner's run-now that finds nothing does not count");
        assert_eq!(b.after(1, true), Backoff::default(), "work found: back to its rhythm");
        assert_eq!(b.after(1, false), Backoff::default());
        let tz = TimeZone::UTC;
        let from: Timestamp = "2026-11-02T10:00:00Z".parse().expect("time");
        assert_eq!(
            nth_occurrence("0 9 * * *", from, &tz, 4).expect("cron"),
            "2026-11-06T09:00:00Z".parse::<Timestamp>().expect("time")
        );
    }
}

//! The owner's scorecard: a month of
//! outcomes, computed from the tasks themselves so the numbers always equal what the tasks say.
//!
//! A month is a calendar month in the account's time zone. A task counts towards the month it
//! closed in (`resolved_at`), with its outcome and value as they stand now (attribution may
//! have revised them since): `members_retained` are the distinct members of the month's
//! closed tasks with a positive `attributed_value`, `revenue_retained` the sum of those
//! values, `outcomes` the count per outcome code. `conversations_active` counts the tasks that
//! had written to their member and were open at some time in the month; `needs_attention` the
//! tasks made before the month's end that wait for the owner now (review or escalated);
//! `messages_sent` the account's daily send counters over the month's local days.

use std::collections::{BTreeMap, BTreeSet};

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde::Serialize;

use crate::kernel::error::InvalidInput;
use crate::task::TaskStatus;
use crate::task::tally::TaskTally;

/// A month's `YYYY-MM` label (the API's) as an owner reads it: "2026-12" → "December 2026";
/// anything else as it is.
pub fn month_in_words(label: &str) -> String {
    Month::parse(label, &TimeZone::UTC).map_or_else(|_| label.to_owned(), |m| m.in_words())
}

/// A calendar month in a time zone, as the half-open interval `[start, end)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Month {
    pub first_day: Date,
    pub start: Timestamp,
    pub end: Timestamp,
}

impl Month {
    fn of(first_day: Date, tz: &TimeZone) -> Result<Self, InvalidInput> {
        let bad = || InvalidInput::new("invalid_month", "month must be YYYY-MM");
        let next = first_day.checked_add(1.month()).map_err(|_| bad())?;
        Ok(Self {
            first_day,
            start: first_day.to_zoned(tz.clone()).map_err(|_| bad())?.timestamp(),
            end: next.to_zoned(tz.clone()).map_err(|_| bad())?.timestamp(),
        })
    }

    /// `YYYY-MM` in `tz`.
    pub fn parse(s: &str, tz: &TimeZone) -> Result<Self, InvalidInput> {
        let bad = || InvalidInput::new("invalid_month", format!("month {s:?} is not YYYY-MM (e.g. 2026-11)"));
        let (y, m) = s.split_once('-').ok_or_else(bad)?;
        if y.len() != 4 || m.len() != 2 || !y.chars().chain(m.chars()).all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let year: i16 = y.parse().map_err(|_| bad())?;
        let month: i8 = m.parse().map_err(|_| bad())?;
        let first = Date::new(year, month, 1).map_err(|_| bad())?;
        // The API's months are the API's days' (`kernel::calendar`): 2000-01 to 2099-12.
        if !crate::kernel::calendar::in_bounds(first) {
            return Err(InvalidInput::new(
                "invalid_month",
                format!(
                    "month {s:?} must be between {} and {}",
                    crate::kernel::calendar::FIRST_DAY.strftime("%Y-%m"),
                    crate::kernel::calendar::LAST_DAY.strftime("%Y-%m")
                ),
            ));
        }
        Self::of(first, tz)
    }

    /// The month `now` falls in, in `tz`.
    pub fn containing(now: Timestamp, tz: &TimeZone) -> Result<Self, InvalidInput> {
        let today = now.to_zoned(tz.clone()).date();
        Self::of(today.first_of_month(), tz)
    }

    pub fn label(&self) -> String {
        self.first_day.strftime("%Y-%m").to_string()
    }

    /// The month as an owner reads it: "December 2026".
    pub fn in_words(&self) -> String {
        self.first_day.strftime("%B %Y").to_string()
    }

    pub fn contains(&self, t: Timestamp) -> bool {
        t >= self.start && t < self.end
    }

    /// Every local day of the month.
    pub fn days(&self) -> Vec<Date> {
        let mut days = Vec::new();
        let mut day = self.first_day;
        while day.month() == self.first_day.month() {
            days.push(day);
            match day.tomorrow() {
                Ok(next) => day = next,
                Err(_) => break,
            }
        }
        days
    }
}

/// The month's scorecard, plus the month it is for.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Scorecard {
    pub month: String,
    pub members_retained: usize,
    pub revenue_retained: f64,
    pub conversations_active: usize,
    /// Conversations open now ([`crate::task::is_open_conversation`]): what the Conversations
    /// page lists and the overview counts.
    pub conversations_open: usize,
    pub needs_attention: usize,
    pub messages_sent: u32,
    pub outcomes: BTreeMap<String, usize>,
    /// Members of the holdout group whose goal was reached in the month with nothing sent
    ///: beside `members_retained`, which counts only members
    /// Openloop wrote to (a held-out task is worth nothing to it).
    pub members_retained_held_out: usize,
    /// Text messages sent in the month (`messages_sent` counts them too) and the segments
    /// they took: what carriers bill, per account and month.
    pub texts_sent: u32,
    pub text_segments: u32,
}

/// The scorecard of `month` from the tallies of the account's tasks (every task that can
/// count must be in `tasks`: the open ones and those closed since the month began) and the
/// messages sent in it.
pub fn tally(tasks: &[TaskTally], month: &Month, messages_sent: u32) -> Scorecard {
    let mut retained = BTreeSet::new();
    let mut retained_held_out = BTreeSet::new();
    let mut revenue = 0.0;
    let mut outcomes = BTreeMap::new();
    let mut conversations = 0;
    let mut open_now = 0;
    let mut needs_attention = 0;
    for task in tasks {
        let closed_in_month = task.resolved_at.is_some_and(|t| month.contains(t));
        if closed_in_month {
            if let Some(code) = &task.outcome {
                *outcomes.entry(code.clone()).or_insert(0) += 1;
            }
            if let Some(value) = task.attributed_value.filter(|v| *v > 0.0) {
                revenue += value;
                retained.insert(task.member_id.clone());
            }
            let held_out = task.arm == Some(crate::task::holdout::Arm::HeldOut);
            if held_out && crate::task::holdout::succeeded(&task.task_type, task.outcome.as_deref()) {
                retained_held_out.insert(task.member_id.clone());
            }
        }
        let open_in_month = task.created_at < month.end && task.resolved_at.is_none_or(|t| t >= month.start);
        if open_in_month && task.touch > 0 {
            conversations += 1;
        }
        if crate::task::is_open_conversation(task.status, task.touch, &task.task_type) {
            open_now += 1;
        }
        if task.created_at < month.end && matches!(task.status, TaskStatus::PendingReview | TaskStatus::Escalated) {
            needs_attention += 1;
        }
    }
    Scorecard {
        month: month.label(),
        members_retained: retained.len(),
        revenue_retained: (revenue * 100.0).round() / 100.0,
        conversations_active: conversations,
        conversations_open: open_now,
        needs_attention,
        messages_sent,
        outcomes,
        members_retained_held_out: retained_held_out.len(),
        texts_sent: 0,
        text_segments: 0,
    }
}

/// Revenue retained in each of `months` (oldest first): the positive attributed values of
/// the tasks closed in it, as the scorecard counts them. `tasks` must hold every task closed
/// since the first month began.
pub fn revenue_by_month(tasks: &[TaskTally], months: &[Month]) -> Vec<(String, f64)> {
    months
        .iter()
        .map(|month| {
            let revenue: f64 = tasks
                .iter()
                .filter(|t| t.resolved_at.is_some_and(|at| month.contains(at)))
                .filter_map(|t| t.attributed_value.filter(|v| *v > 0.0))
                .sum();
            (month.label(), (revenue * 100.0).round() / 100.0)
        })
        .collect()
}

impl Month {
    /// `count` months up to and including this one, oldest first.
    pub fn trailing(&self, count: usize, tz: &TimeZone) -> Result<Vec<Month>, InvalidInput> {
        let mut months = Vec::with_capacity(count);
        for back in (0..count).rev() {
            let first = self
                .first_day
                .checked_sub(i32::try_from(back).unwrap_or(0).months())
                .map_err(|_| InvalidInput::new("invalid_month", "month out of range"))?;
            months.push(Month::of(first, tz)?);
        }
        Ok(months)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::MemberId;
    use crate::task::Task;
    use crate::testing::{at, sample_task};

    fn closed(member: &str, outcome: &str, value: Option<f64>, when: &str) -> Task {
        let mut task = sample_task(TaskStatus::Completed);
        task.member.id = MemberId::parse(member).expect("member");
        task.created_at = at("2026-10-20T12:00:00Z");
        task.touch = 2;
        task.outcome = Some(outcome.into());
        task.attributed_value = value;
        task.resolved_at = Some(at(when));
        task
    }

    #[test]
    fn months_are_read_in_the_accounts_time_zone() {
        let ny = TimeZone::get("America/New_York").expect("tz");
        let nov = Month::parse("2026-11", &ny).expect("month");
        assert_eq!(nov.start, at("2026-11-01T04:00:00Z"));
        assert_eq!(nov.end, at("2026-12-01T05:00:00Z"));
        assert_eq!(nov.days().len(), 30);
        assert_eq!(
            Month::containing(at("2026-12-01T03:00:00Z"), &ny).expect("month").label(),
            "2026-11"
        );
        for bad in ["2026-13", "2026-1", "26-11", "2026/11", "", "2026-00", "abcd-ef"] {
            assert!(Month::parse(bad, &ny).is_err(), "{bad}");
        }
    }

    /// An owner reads a month by its name: "December 2026", never "2026-12".
    #[test]
    fn a_month_reads_by_its_name() {
        assert_eq!(month_in_words("2026-12"), "December 2026");
        assert_eq!(month_in_words("2027-01"), "January 2027");
        assert_eq!(Month::parse("2026-11", &TimeZone::UTC).expect("month").in_words(), "November 2026");
        assert_eq!(month_in_words("soon"), "soon", "anything else as it is");
    }

    #[test]
    fn the_month_counts_what_its_closed_tasks_say() {
        let utc = TimeZone::UTC;
        let nov = Month::parse("2026-11", &utc).expect("month");
        let mut open = sample_task(TaskStatus::Waiting);
        open.touch = 1;
        open.created_at = at("2026-11-10T00:00:00Z");
        let mut review = sample_task(TaskStatus::PendingReview);
        review.created_at = at("2026-11-11T00:00:00Z");
        let tasks = [
            closed("m_1", "retained", Some(150.0), "2026-11-05T00:00:00Z"),
            closed("m_1", "recovered", Some(450.0), "2026-11-06T00:00:00Z"),
            closed("m_2", "engaged_late", Some(150.0), "2026-11-07T00:00:00Z"),
            closed("m_3", "verbal_only", Some(0.0), "2026-11-08T00:00:00Z"),
            closed("m_4", "retained", Some(150.0), "2026-12-01T00:00:00Z"),
            open,
            review,
        ];
        let tasks: Vec<TaskTally> = tasks.iter().map(TaskTally::of).collect();
        let card = tally(&tasks, &nov, 7);
        assert_eq!(card.members_retained, 2);
        assert_eq!(card.revenue_retained, 750.0);
        assert_eq!(card.outcomes.get("retained"), Some(&1));
        assert_eq!(card.outcomes.get("verbal_only"), Some(&1));
        assert_eq!(card.outcomes.values().sum::<usize>(), 4);
        // The four closed in November, the one still open; the December one was open too.
        assert_eq!(card.conversations_active, 6);
        assert_eq!((card.needs_attention, card.messages_sent), (1, 7));
        let months = nov.trailing(3, &utc).expect("months");
        assert_eq!(
            revenue_by_month(&tasks, &months),
            vec![("2026-09".into(), 0.0), ("2026-10".into(), 0.0), ("2026-11".into(), 750.0)]
        );
        let dec = Month::parse("2026-12", &utc).expect("month").trailing(2, &utc).expect("months");
        assert_eq!(revenue_by_month(&tasks, &dec)[1], ("2026-12".into(), 150.0));
    }
}

//! The rails a send must pass that defer it rather than refuse it: the
//! send window, the member's weekly cap and one message a day, the account's daily cap. An
//! answer to the member's own message is not outreach: it skips the member's two limits (a
//! lead who asks the price an hour after the first touch hears back now, not tomorrow), and is
//! still counted in their ledger, held to the send window, the account's cap and the task's
//! message budget. Pure
//! functions over a snapshot the engine read; the reservation re-checks the member's ledger
//! and the account's counter in the store's transaction, so a send that raced past these
//! checks is refused there.

use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};

use crate::kernel::limits;
use crate::members::member::{MemberFacts, SendLedger};
use crate::owner::account::{Account, Settings, SystemConfig};
use crate::rails::window;
use crate::task::Task;
use crate::task::reason::Reason;
use crate::task::transition::Why;

/// The first rail a send of `task` at `now` does not pass: when to try again and why; `None`
/// when every rail passes. In order: the send window, the member's limits, the daily cap.
pub fn send_gate(settings: &Settings, task: &Task, snapshot: &SendSnapshot, now: Timestamp) -> Option<(Timestamp, Why)> {
    send_window(settings, task, now)
        .or_else(|| first_touch_hours(settings, task, now))
        .or_else(|| limits_of(task, &snapshot.ledger, settings, now))
        .or_else(|| daily_send_limit(settings, snapshot, now))
}

/// The member's limits that hold `task`'s next send: none for an answer to the member's own
/// message, else [`member_limits`].
pub fn limits_of(task: &Task, ledger: &SendLedger, settings: &Settings, now: Timestamp) -> Option<(Timestamp, Why)> {
    if task.answer.is_some() {
        return None;
    }
    member_limits(ledger, settings, now)
}

/// Outside the account's send window: the send goes a few minutes after it opens — a
/// follow-up in the afternoon of that day, an answer to the member at the opening (a fixed
/// offset per task and touch, so a retry lands on the same minute).
fn send_window(settings: &Settings, task: &Task, now: Timestamp) -> Option<(Timestamp, Why)> {
    let opens = window::send_window(settings, now).err()?;
    let touch = match (task.touch, &task.answer) {
        (_, Some(_)) => window::Touch::Answer,
        (0, None) => window::Touch::First,
        _ => window::Touch::FollowUp,
    };
    let opens = window::smart_send_time(settings, opens, touch, window::jitter_seed(task.id, task.touch));
    let detail = format!(
        "window {}:00-{}:00 {}; goes at {opens}",
        settings.send_window_start, settings.send_window_end, settings.timezone
    );
    Some((opens, Why::new(Reason::OutsideSendWindow).detail(detail)))
}

/// A first touch made ready outside the morning hours (approved in the evening, or held by a
/// limit until the afternoon) goes at their next start, with the task's jitter.
/// One due inside them goes even if the step runs a little after they end.
fn first_touch_hours(settings: &Settings, task: &Task, now: Timestamp) -> Option<(Timestamp, Why)> {
    let due = task.next_action_at.unwrap_or(now).min(now);
    let (planned, why) = window::first_touch_at(settings, task, due);
    if planned == due {
        return None;
    }
    let (planned, why) = if planned > now {
        (planned, why)
    } else {
        window::first_touch_at(settings, task, now)
    };
    why.map(|why| (planned, Why::new(Reason::OutsidePreferredHours).detail(why)))
}

/// The member's own limits, read from their send ledger across all tasks: the weekly cap,
/// then one message per local day.
pub fn member_limits(ledger: &SendLedger, settings: &Settings, now: Timestamp) -> Option<(Timestamp, Why)> {
    weekly_cap(ledger, settings, now).or_else(|| member_daily_limit(ledger, settings, now))
}

/// The member weekly cap: at most `member_weekly_limit` messages to one member in
/// any rolling 7 days, whichever task sends them; the next slot is when the oldest send in the
/// window drops out of it.
pub fn weekly_cap(ledger: &SendLedger, settings: &Settings, now: Timestamp) -> Option<(Timestamp, Why)> {
    let recent = limits::sends_in_window(&ledger.sends, now);
    if recent < settings.member_weekly_limit as usize {
        return None;
    }
    let frees = next_member_slot(ledger, now);
    let detail = format!(
        "member received {recent} messages in 7 days (limit {}); next slot {frees}",
        settings.member_weekly_limit
    );
    Some((frees, Why::new(Reason::MemberWeeklyLimit).detail(detail)))
}

/// One message to a member per local day, whichever task sends it.
fn member_daily_limit(ledger: &SendLedger, settings: &Settings, now: Timestamp) -> Option<(Timestamp, Why)> {
    let tz = settings.time_zone();
    let today = limits::local_date(now, &tz);
    let sent_today = ledger.sends.values().filter(|at| limits::local_date(**at, &tz) == today).count();
    if sent_today < limits::MEMBER_DAILY_LIMIT {
        return None;
    }
    let detail = format!(
        "the member already got {} today (at most {} a day); it goes tomorrow",
        crate::kernel::plural::count_of(sent_today, "message", "messages"),
        limits::MEMBER_DAILY_LIMIT
    );
    Some((next_local_day(now, &tz), Why::new(Reason::MemberDailyLimit).detail(detail)))
}

/// The account's daily send cap, counted on its local day.
fn daily_send_limit(settings: &Settings, snapshot: &SendSnapshot, now: Timestamp) -> Option<(Timestamp, Why)> {
    let tz = settings.time_zone();
    let sent = snapshot.daily_sends(limits::local_date(now, &tz));
    if sent < settings.daily_send_limit {
        return None;
    }
    let detail = format!("{sent} messages sent today (limit {})", settings.daily_send_limit);
    Some((next_local_day(now, &tz), Why::new(Reason::DailySendLimit).detail(detail)))
}

/// When the oldest send in the member's window drops out of it.
fn next_member_slot(ledger: &SendLedger, now: Timestamp) -> Timestamp {
    let oldest = ledger
        .sends
        .values()
        .filter(|at| now.duration_since(**at) < limits::MEMBER_WINDOW)
        .min();
    oldest
        .map_or(now + SignedDuration::from_hours(24), |at| *at + limits::MEMBER_WINDOW)
        .max(now + SignedDuration::from_mins(1))
}

/// Midnight starting the account's next local day.
pub fn next_local_day(now: Timestamp, tz: &jiff::tz::TimeZone) -> Timestamp {
    let today = limits::local_date(now, tz);
    today
        .tomorrow()
        .ok()
        .and_then(|d| d.to_zoned(tz.clone()).ok())
        .map_or(now + SignedDuration::from_hours(24), |z| z.timestamp())
}

/// What the send gates read before a step, fetched in one round trip.
#[derive(Clone, Debug, Default)]
pub struct SendSnapshot {
    pub system: SystemConfig,
    pub account: Option<Account>,
    pub suppressed: bool,
    pub ledger: SendLedger,
    /// What the connector has told us about the member, for the stale guard.
    pub facts: Option<MemberFacts>,
    /// The account's daily send counters on the days around the date asked for (the
    /// account's local date is one of them, whatever its time zone).
    pub daily: Vec<(Date, u32)>,
    /// Openloop's own tags and notes on the member, for the draft's prompt (read in the same
    /// batch, so a drafted touch costs no extra request).
    pub annotations: crate::members::annotation::MemberAnnotations,
    /// The account's business memories, for the draft's prompt (the same batch).
    pub memories: crate::owner::business_memory::MemoryBook,
    /// What a touch the agent drafts reads besides, when the step asked for it (the same batch).
    pub draft: Option<DraftReads>,
    /// The ids of the member's open tasks as the member item keeps them (the same batch): a
    /// superset of the tasks whose active guards are held, never fewer. `None` while the
    /// account's member items do not keep them (`Account::member_open_tasks_kept`): then the
    /// step reads the guards.
    pub member_open_tasks: Option<Vec<crate::kernel::ids::TaskId>>,
}

/// What drafting a touch reads, in the send snapshot's batch: the owner's template of the
/// touch, the PushPress connection (the member's plan's name) and the account's AI calls on
/// the days around the snapshot's date (the claim counts the draft's call over that reading).
#[derive(Clone, Debug, Default)]
pub struct DraftReads {
    /// The template key read: (task type, touch).
    pub key: (String, String),
    /// The owner's template under `key`, if they wrote one.
    pub template: Option<crate::conversation::messages::OwnerTemplate>,
    pub connection: Option<crate::owner::connection::Connection>,
    pub ai_calls: Vec<(Date, u32)>,
}

impl DraftReads {
    /// The AI calls counted on `date`, if it is one of the days read.
    pub fn ai_calls_on(&self, date: Date) -> Option<u32> {
        self.ai_calls.iter().find(|(d, _)| *d == date).map(|(_, n)| *n)
    }
}

impl SendSnapshot {
    pub fn daily_sends(&self, date: Date) -> u32 {
        self.daily.iter().find(|(d, _)| *d == date).map_or(0, |(_, n)| *n)
    }

    /// Fill [`Self::member_open_tasks`] from the ids the store found (`ids`, any order):
    /// sorted, while the snapshot's account keeps them on its member items
    /// (`Account::member_open_tasks_kept`), else `None`. Both stores call it once the
    /// snapshot's account is read.
    pub fn keep_member_open_tasks(&mut self, ids: impl IntoIterator<Item = crate::kernel::ids::TaskId>) {
        let kept = self.account.as_ref().is_some_and(|a| a.member_open_tasks_kept);
        self.member_open_tasks = kept.then(|| {
            let mut ids: Vec<_> = ids.into_iter().collect();
            ids.sort();
            ids
        });
    }
}

/// The three dates whose counters a snapshot around `date` holds.
pub fn dates_around(date: Date) -> [Date; 3] {
    [date.yesterday().unwrap_or(date), date, date.tomorrow().unwrap_or(date)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskStatus;
    use crate::testing::{at, sample_account, sample_task};

    /// 10:00 on a Monday in New York (inside the default 8–20 window).
    fn monday() -> Timestamp {
        at("2026-11-02T15:00:00Z")
    }

    fn snapshot(sends: &[Timestamp], sent_today: u32) -> SendSnapshot {
        let ledger = SendLedger {
            sends: sends.iter().enumerate().map(|(i, t)| (format!("send-{i}"), *t)).collect(),
            version: 1,
        };
        let today = limits::local_date(monday(), &jiff::tz::TimeZone::get("America/New_York").expect("tz"));
        SendSnapshot {
            system: Default::default(),
            account: None,
            suppressed: false,
            ledger,
            facts: None,
            daily: vec![(today, sent_today)],
            annotations: Default::default(),
            memories: Default::default(),
            draft: None,
            member_open_tasks: None,
        }
    }

    fn reason(gate: Option<(Timestamp, Why)>) -> Option<Reason> {
        gate.map(|(_, why)| why.reason)
    }

    #[test]
    fn every_rail_passes_on_a_quiet_day() {
        let settings = sample_account(monday()).settings;
        let task = sample_task(TaskStatus::Ready);
        assert!(send_gate(&settings, &task, &snapshot(&[], 0), monday()).is_none());
    }

    #[test]
    fn the_weekly_cap_holds_a_member_at_the_limit_until_the_oldest_send_leaves_the_window() {
        let settings = sample_account(monday()).settings;
        let days_ago = |d: i64| monday() - SignedDuration::from_hours(24 * d);
        let sends = [days_ago(6), days_ago(4), days_ago(2)];
        assert_eq!(settings.member_weekly_limit, 3);
        let (until, why) = weekly_cap(&snapshot(&sends, 0).ledger, &settings, monday()).expect("capped");
        assert_eq!(why.reason, Reason::MemberWeeklyLimit);
        assert_eq!(until, days_ago(6) + limits::MEMBER_WINDOW, "when the oldest send drops out");
        // Two in the window (one fell out): the cap passes.
        let older = [days_ago(8), days_ago(4), days_ago(2)];
        assert!(weekly_cap(&snapshot(&older, 0).ledger, &settings, monday()).is_none());
    }

    #[test]
    fn a_member_gets_one_message_a_local_day_and_the_account_its_daily_cap() {
        let settings = sample_account(monday()).settings;
        let task = sample_task(TaskStatus::Ready);
        let earlier_today = monday() - SignedDuration::from_hours(1);
        assert_eq!(
            reason(send_gate(&settings, &task, &snapshot(&[earlier_today], 0), monday())),
            Some(Reason::MemberDailyLimit)
        );
        let full = settings.daily_send_limit;
        assert_eq!(
            reason(send_gate(&settings, &task, &snapshot(&[], full), monday())),
            Some(Reason::DailySendLimit)
        );
        assert!(send_gate(&settings, &task, &snapshot(&[], full - 1), monday()).is_none());
    }

    #[test]
    fn an_answer_to_the_member_skips_their_limits_but_not_the_accounts_cap() {
        let settings = sample_account(monday()).settings;
        let mut task = sample_task(TaskStatus::Ready);
        task.touch = 1;
        task.answer = Some("Your first class is free.".into());
        let hours_ago = |h: i64| monday() - SignedDuration::from_hours(h);
        // Three this week, one of them an hour ago: outreach would wait; the answer goes.
        let sends = [hours_ago(1), hours_ago(50), hours_ago(100)];
        assert!(member_limits(&snapshot(&sends, 0).ledger, &settings, monday()).is_some());
        assert!(send_gate(&settings, &task, &snapshot(&sends, 0), monday()).is_none());
        assert_eq!(
            reason(send_gate(&settings, &task, &snapshot(&sends, settings.daily_send_limit), monday())),
            Some(Reason::DailySendLimit)
        );
        task.answer = None;
        assert_eq!(
            reason(send_gate(&settings, &task, &snapshot(&sends, 0), monday())),
            Some(Reason::MemberWeeklyLimit)
        );
    }

    #[test]
    fn outside_the_window_a_send_waits_for_it_to_open() {
        let settings = sample_account(monday()).settings;
        let task = sample_task(TaskStatus::Ready);
        let night = at("2026-11-03T03:00:00Z"); // 22:00 in New York
        let (until, why) = send_gate(&settings, &task, &snapshot(&[], 0), night).expect("deferred");
        assert_eq!(why.reason, Reason::OutsideSendWindow);
        assert!(until > night && window::send_window(&settings, until).is_ok(), "{until}");
    }
}

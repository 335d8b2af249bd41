//! A to-do: something a task asks a person at the gym to do — phone a member, meet them,
//! write to them by hand. A staff call, a plan's
//! call step and an escalation whose next step is a person each make one; the owner logs each
//! contact, snoozes it to a date or marks it done. It lives beside its task, not inside it:
//! its own aggregate, versioned, listed by status and due time.
//!
//! Pure: the moves here check and change a to-do; `engine/day/todos/` reads, decides when a to-do
//! is made or closed with its task, and writes.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, Email, MemberId, TaskId};

/// The longest note or outcome kept on a to-do.
pub const TODO_NOTE_MAX_CHARS: usize = 2_000;
pub const TODO_OUTCOME_MAX_CHARS: usize = 100;
crate::kernel::bounded::bounded_text! {
    /// A note on a to-do.
    pub TodoNote = crate::kernel::bounded::TextRule::text(TODO_NOTE_MAX_CHARS, "invalid_note");
    /// How a to-do ended, in a few words.
    pub TodoOutcome = crate::kernel::bounded::TextRule::line(TODO_OUTCOME_MAX_CHARS, "invalid_outcome");
    /// The day to snooze to (`YYYY-MM-DD`) or a time (RFC 3339).
    pub SnoozeUntil = crate::kernel::bounded::TextRule::line(crate::kernel::limits::MAX_TIME_CHARS, "invalid_until")
        .min(1)
        .pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9:]+)?)?$");
}
/// The most contacts one to-do keeps (the oldest make way).
pub const TODO_MAX_CONTACTS: usize = 50;
/// How far ahead a to-do may be snoozed.
pub const TODO_MAX_SNOOZE_DAYS: i64 = 90;
/// The outcome of a "get them back" to-do the member's own check-in completed.
pub const CHECKED_IN_OUTCOME: &str = "member_checked_in";
/// The outcome of a to-do whose task closed some other way.
pub const TASK_CLOSED_OUTCOME: &str = "task_closed";

/// What kind of act the to-do asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TodoKind {
    Call,
    Meet,
    Message,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Open,
    Done,
    Snoozed,
}

impl TodoStatus {
    pub const ALL: [TodoStatus; 3] = [TodoStatus::Open, TodoStatus::Done, TodoStatus::Snoozed];

    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Open => "open",
            TodoStatus::Done => "done",
            TodoStatus::Snoozed => "snoozed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// How the owner reached (or tried to reach) the member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ContactKind {
    Call,
    Meeting,
    Email,
    Text,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ContactResult {
    Reached,
    NoAnswer,
    LeftMessage,
}

/// One logged contact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Contact {
    pub at: Timestamp,
    pub kind: ContactKind,
    pub result: ContactResult,
    pub note: Option<String>,
}

/// Who the to-do is about, as known when it was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TodoMember {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: MemberId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub email: Option<Email>,
}

impl TodoMember {
    /// Who the member is in owner text: their name, else their address, else their id.
    pub fn label(&self) -> String {
        crate::task::member_label(self.name.as_deref(), self.email.as_ref(), &self.id)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    pub task_id: TaskId,
    pub member: TodoMember,
    /// Stored as `todo_kind`: the table's items already use `kind` for the entity type.
    #[serde(rename = "todo_kind")]
    pub kind: TodoKind,
    pub what: String,
    pub due_at: Timestamp,
    pub status: TodoStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snoozed_until: Option<Timestamp>,
    #[serde(default)]
    pub contacts: Vec<Contact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The owner's note when marking it done, or what closed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Its point is the member coming back: their check-in completes it by itself.
    pub get_them_back: bool,
    /// What made it (`task:{id}:created`, `task:{id}:escalated:{version}`): one to-do per source.
    pub source: String,
    pub created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_at: Option<Timestamp>,
    pub version: u64,
}

impl Todo {
    /// Open, or snoozed past its date: waiting on the owner now.
    pub fn is_due(&self, now: Timestamp) -> bool {
        match self.status {
            TodoStatus::Open => self.due_at <= now,
            TodoStatus::Snoozed => self.snoozed_until.is_some_and(|u| u <= now),
            TodoStatus::Done => false,
        }
    }

    /// Not done yet (open or snoozed).
    pub fn is_pending(&self) -> bool {
        self.status != TodoStatus::Done
    }

    /// A snooze that ran out: open again, due from the day it was snoozed to.
    pub fn woken(&self, now: Timestamp) -> Option<Todo> {
        let until = self.snoozed_until.filter(|u| self.status == TodoStatus::Snoozed && *u <= now)?;
        let mut next = self.clone();
        next.status = TodoStatus::Open;
        next.due_at = until;
        next.snoozed_until = None;
        next.version += 1;
        Some(next)
    }
}

/// When a to-do sorts in its status's list: open ones by due time, snoozed ones by their
/// snooze's end, done ones by when they were done.
pub fn index_time(todo: &Todo) -> Timestamp {
    match todo.status {
        TodoStatus::Open => todo.due_at,
        TodoStatus::Snoozed => todo.snoozed_until.unwrap_or(todo.due_at),
        TodoStatus::Done => todo.done_at.unwrap_or(todo.due_at),
    }
}

fn bounded(field: &str, text: Option<&str>, max: usize) -> Result<Option<String>, InvalidInput> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > max {
        return Err(InvalidInput::new(
            format!("invalid_{field}"),
            format!("{field} is at most {max} characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

fn still_pending(todo: &Todo) -> Result<(), InvalidInput> {
    if todo.status == TodoStatus::Done {
        return Err(InvalidInput::new("todo_done", "this to-do is already done"));
    }
    Ok(())
}

/// A contact logged on the to-do; it stays where it is (a call that did not reach them is
/// not the end of it).
pub fn log_contact(
    todo: &Todo,
    kind: ContactKind,
    result: ContactResult,
    note: Option<&str>,
    now: Timestamp,
) -> Result<Todo, InvalidInput> {
    still_pending(todo)?;
    let note = bounded("note", note, TODO_NOTE_MAX_CHARS)?;
    let mut next = todo.clone();
    next.contacts.push(Contact {
        at: now,
        kind,
        result,
        note,
    });
    if next.contacts.len() > TODO_MAX_CONTACTS {
        next.contacts.remove(0);
    }
    next.version += 1;
    Ok(next)
}

/// Out of sight until `until` (after now, within [`TODO_MAX_SNOOZE_DAYS`]).
pub fn snooze(todo: &Todo, until: Timestamp, now: Timestamp) -> Result<Todo, InvalidInput> {
    still_pending(todo)?;
    if until <= now || until > now + jiff::SignedDuration::from_hours(24 * TODO_MAX_SNOOZE_DAYS) {
        return Err(InvalidInput::new(
            "invalid_until",
            format!("until must be after now and within {TODO_MAX_SNOOZE_DAYS} days"),
        ));
    }
    let mut next = todo.clone();
    next.status = TodoStatus::Snoozed;
    next.snoozed_until = Some(until);
    next.version += 1;
    Ok(next)
}

/// Done, with the owner's outcome (a short code or words; `done` if none) and note.
pub fn complete(todo: &Todo, outcome: Option<&str>, note: Option<&str>, now: Timestamp) -> Result<Todo, InvalidInput> {
    still_pending(todo)?;
    let outcome = bounded("outcome", outcome, TODO_OUTCOME_MAX_CHARS)?.unwrap_or_else(|| "done".into());
    let note = bounded("note", note, TODO_NOTE_MAX_CHARS)?;
    Ok(closed(todo, outcome, note, now))
}

/// Done by something other than the owner's hand (the member's check-in, the task closing).
pub fn closed(todo: &Todo, outcome: String, note: Option<String>, now: Timestamp) -> Todo {
    let mut next = todo.clone();
    next.status = TodoStatus::Done;
    next.snoozed_until = None;
    next.outcome = Some(outcome);
    next.note = note;
    next.done_at = Some(now);
    next.version += 1;
    next
}

/// An until date as the API takes it: an RFC 3339 time, or a day (`YYYY-MM-DD`) read as its
/// start in `tz`.
pub fn parse_until(raw: &str, tz: &jiff::tz::TimeZone) -> Result<Timestamp, InvalidInput> {
    let bad = || InvalidInput::new("invalid_until", "until is a time (2026-11-03T09:00:00Z) or a day (2026-11-03)");
    if let Ok(at) = raw.trim().parse::<Timestamp>() {
        return Ok(at);
    }
    let day: jiff::civil::Date = raw.trim().parse().map_err(|_| bad())?;
    day.to_zoned(tz.clone()).map(|z| z.timestamp()).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    fn todo() -> Todo {
        let now = at("2026-11-02T14:00:00Z");
        Todo {
            id: crate::kernel::ids::new_ulid(now),
            account_id: AccountId::generate(now),
            task_id: TaskId::generate(now),
            member: TodoMember {
                id: MemberId::parse("m_1").unwrap_or_else(|e| panic!("{e}")),
                name: Some("Sarah".into()),
                phone: None,
                email: None,
            },
            kind: TodoKind::Call,
            what: "Call Sarah".into(),
            due_at: now,
            status: TodoStatus::Open,
            snoozed_until: None,
            contacts: Vec::new(),
            outcome: None,
            note: None,
            get_them_back: true,
            source: "test".into(),
            created_at: now,
            done_at: None,
            version: 1,
        }
    }

    #[test]
    fn a_todo_is_logged_snoozed_woken_and_done_each_under_a_new_version() {
        let now = at("2026-11-02T15:00:00Z");
        let logged = log_contact(&todo(), ContactKind::Call, ContactResult::NoAnswer, Some(" rang twice "), now).expect("log");
        assert_eq!((logged.version, logged.contacts[0].note.as_deref()), (2, Some("rang twice")));
        assert_eq!(logged.status, TodoStatus::Open, "a contact does not close it");
        let until = at("2026-11-04T09:00:00Z");
        let snoozed = snooze(&logged, until, now).expect("snooze");
        assert!(!snoozed.is_due(now) && snoozed.is_due(until));
        assert!(snoozed.woken(now).is_none());
        let woken = snoozed.woken(until).expect("woken");
        assert_eq!((woken.status, woken.due_at, woken.version), (TodoStatus::Open, until, 4));
        let done = complete(&woken, None, Some("she's back Monday"), until).expect("done");
        assert_eq!((done.status, done.outcome.as_deref()), (TodoStatus::Done, Some("done")));
        assert_eq!(
            complete(&done, None, None, until).expect_err("twice").code,
            "todo_done",
            "a done to-do stays done"
        );
    }

    #[test]
    fn a_snooze_is_to_a_later_day_within_ninety_days() {
        let now = at("2026-11-02T15:00:00Z");
        for until in ["2026-11-02T14:00:00Z", "2027-03-01T00:00:00Z"] {
            assert_eq!(snooze(&todo(), at(until), now).expect_err(until).code, "invalid_until");
        }
        let tz = jiff::tz::TimeZone::get("America/New_York").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parse_until("2026-11-03", &tz), Ok(at("2026-11-03T05:00:00Z")));
        assert!(parse_until("soon", &tz).is_err());
    }
}

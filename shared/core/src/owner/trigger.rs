//! Triggers: which
//! event opens which task, as rows of one table the owner reads and switches. The built-in
//! rows are data (`rules/triggers.toml`, embedded): the owner turns each on or off; the code
//! that carries a built-in out asks its row first. The owner's own rows are whole: an event,
//! a filter over the event's data and the member's facts, the task type, a delay, re-entry.
//!
//! Pure: the rows, their validation, and whether an event matches one. Firing, storing and
//! the dry run are the engine's (`engine/automation/triggers/`).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{MemberId, TaskId};
use crate::kernel::limits::CHECKIN_MILESTONES;
use crate::members::event::MemberEvent;
use crate::members::member::MemberFacts;
use crate::members::source::CheckinKind;

/// The built-in rows, as shipped.
pub const BUILTIN_TRIGGERS: &str = include_str!("../../../../rules/triggers.toml");

/// The events a trigger may name: the API's member events, PushPress's own, Openloop's.
pub const MEMBER_EVENTS: [&str; 6] = [
    "member.created",
    "member.status_changed",
    "checkin.created",
    "payment.failed",
    "payment.succeeded",
    "trial.booked",
];
pub const PUSHPRESS_EVENTS: [&str; 10] = [
    "customer.created",
    "customer.details.changed",
    "customer.status.changed",
    "enrollment.created",
    "enrollment.status.changed",
    "enrollment.deleted",
    "reservation.created",
    "appointment.scheduled",
    "reservation.noshowed",
    "appointment.noshowed",
];
pub const OPENLOOP_EVENTS: [&str; 3] = ["no_checkin_days", "todo_done", "task_closed"];

/// Every event a trigger may name.
pub fn trigger_events() -> Vec<&'static str> {
    [&MEMBER_EVENTS[..], &PUSHPRESS_EVENTS[..], &OPENLOOP_EVENTS[..]].concat()
}

crate::kernel::bounded::bounded_text! {
    /// The event a trigger row fires on: a member event, PushPress's, or Openloop's own.
    pub TriggerEvent = crate::kernel::bounded::TextRule::line(64, "invalid_event").min(1).one_of(trigger_events);
}

/// The most rows of the owner's own an account keeps, and the firings its log keeps.
pub const MAX_CUSTOM_TRIGGERS: usize = 50;
pub const FIRINGS_KEPT: usize = 100;
/// "once" re-entry is remembered this long.
const ONCE: SignedDuration = SignedDuration::from_hours(24 * 365 * 20);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reentry {
    /// Once per member, ever.
    #[default]
    Once,
    /// Again after `reentry_days`.
    AfterDays,
}

/// When the owner hears of what a trigger or a recurring template did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Notify {
    Always,
    #[default]
    OnChange,
    OnWin,
    Never,
}

/// One condition of a filter: a value the field equals, or bounds a number lies within.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum FilterValue {
    Range {
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    Bool(bool),
    Number(f64),
    Text(String),
}

impl FilterValue {
    fn accepts(&self, value: Option<&Value>) -> bool {
        let Some(value) = value else { return false };
        match self {
            FilterValue::Range { min, max } => value
                .as_f64()
                .is_some_and(|v| min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m)),
            FilterValue::Bool(b) => value.as_bool() == Some(*b),
            FilterValue::Number(n) => value.as_f64() == Some(*n),
            FilterValue::Text(t) => value.as_str().is_some_and(|v| v.eq_ignore_ascii_case(t)),
        }
    }
}

/// A row of the trigger table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Trigger {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub event: String,
    #[serde(default)]
    pub filter: BTreeMap<String, FilterValue>,
    pub task_type: String,
    /// The goal of the tasks it opens (the owner's rows; built-ins write their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(default)]
    pub delay_hours: u32,
    #[serde(default)]
    pub reentry: Reentry,
    #[serde(default)]
    pub reentry_days: Option<u32>,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub builtin: bool,
    #[serde(default)]
    pub notify: Notify,
    #[serde(default)]
    pub fired_count: u64,
}

fn yes() -> bool {
    true
}

impl Trigger {
    /// Until when a member who set it off is not taken again.
    pub fn reentry_until(&self, now: Timestamp) -> Timestamp {
        match (self.reentry, self.reentry_days) {
            (Reentry::AfterDays, Some(days)) => now + SignedDuration::from_hours(24 * i64::from(days)),
            _ => now + ONCE,
        }
    }

    /// Whether an event of `names` with these `fields` sets it off.
    pub fn matches(&self, names: &[&str], fields: &Map<String, Value>) -> bool {
        self.enabled && names.contains(&self.event.as_str()) && self.filter.iter().all(|(field, want)| want.accepts(fields.get(field)))
    }
}

/// One firing, logged with the event that caused it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Firing {
    pub at: Timestamp,
    pub trigger_id: String,
    pub member_id: MemberId,
    pub event_id: String,
    /// The task it opened (none yet while its delay runs).
    #[serde(default)]
    pub task_id: Option<TaskId>,
    #[serde(default)]
    pub opens_at: Option<Timestamp>,
}

/// An account's trigger table as stored: its own rows, its switches of the built-in ones,
/// how often each fired and the latest firings. One versioned record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriggerBook {
    #[serde(default)]
    pub custom: Vec<Trigger>,
    /// A built-in row's switch, where the owner turned it.
    #[serde(default)]
    pub builtin_enabled: BTreeMap<String, bool>,
    #[serde(default)]
    pub fired: BTreeMap<String, u64>,
    /// Newest last, at most [`FIRINGS_KEPT`].
    #[serde(default)]
    pub firings: Vec<Firing>,
    #[serde(default)]
    pub version: u64,
}

/// The built-in rows as shipped (the data file is checked by a test; a broken one ships none).
pub fn builtins() -> Vec<Trigger> {
    #[derive(Deserialize)]
    struct File {
        trigger: Vec<Trigger>,
    }
    match toml::from_str::<File>(BUILTIN_TRIGGERS) {
        Ok(file) => file.trigger.into_iter().map(|t| Trigger { builtin: true, ..t }).collect(),
        Err(e) => {
            tracing::error!(error = %e, "rules/triggers.toml does not parse");
            Vec::new()
        }
    }
}

impl TriggerBook {
    /// Every row, the built-in ones first, as the owner sees them.
    pub fn rows(&self) -> Vec<Trigger> {
        builtins()
            .into_iter()
            .map(|t| Trigger {
                enabled: self.builtin_enabled.get(&t.id).copied().unwrap_or(t.enabled),
                ..t
            })
            .chain(self.custom.iter().cloned())
            .map(|t| Trigger {
                fired_count: self.fired.get(&t.id).copied().unwrap_or(0),
                ..t
            })
            .collect()
    }

    pub fn row(&self, id: &str) -> Option<Trigger> {
        self.rows().into_iter().find(|t| t.id == id)
    }

    /// Whether a built-in row is on (an unknown id is: nothing switched it off).
    pub fn builtin_on(&self, id: &str) -> bool {
        self.row(id).is_none_or(|t| t.enabled)
    }

    /// Log a firing and count it.
    pub fn record(&mut self, firing: Firing) {
        *self.fired.entry(firing.trigger_id.clone()).or_insert(0) += 1;
        self.firings.push(firing);
        let over = self.firings.len().saturating_sub(FIRINGS_KEPT);
        self.firings.drain(..over);
    }
}

impl Notify {
    /// Whether a win (a member back, a payment recovered) of what it opened reaches the owner:
    /// `always` and `on_win` tell it; `on_change` speaks of runs that differ, `never` of nothing.
    pub fn tells_win(self) -> bool {
        matches!(self, Notify::Always | Notify::OnWin)
    }
}

/// Where a task came from, as far as a notify policy goes: the owner's recurring template or
/// trigger row it names in its context, else the built-in row that opened it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskSource {
    Template(ulid::Ulid),
    Row(String),
}

/// The source of a task of `task_type`, opened by `trigger` with `context`.
pub fn task_source(task_type: &str, trigger: crate::task::TriggerType, context: &Value) -> Option<TaskSource> {
    use crate::task::TriggerType;
    if let Some(id) = context
        .get("recurring_template")
        .and_then(Value::as_str)
        .and_then(|id| id.parse().ok())
    {
        return Some(TaskSource::Template(id));
    }
    if let Some(id) = context.get("trigger_id").and_then(Value::as_str) {
        return Some(TaskSource::Row(id.to_owned()));
    }
    let builtin = match (trigger, task_type) {
        (TriggerType::CronAnalysis, t) => scan_row(t)?,
        (TriggerType::Webhook, "payment_recovery") => "payment_failed",
        (TriggerType::Webhook, "milestone_review") => "checkin_milestone",
        (TriggerType::Webhook, "lead_followup") if context.get("no_show").is_some() => "trial_no_show",
        _ => return None,
    };
    Some(TaskSource::Row(builtin.to_owned()))
}

/// The built-in row that gates the risk scan's findings of a task type.
pub fn scan_row(task_type: &str) -> Option<&'static str> {
    Some(match task_type {
        "payment_recovery" => "enrollment_alert",
        "onboarding" => "new_member",
        "churn_risk" => "no_checkin_days",
        "win_back" => "cancellation",
        "lead_followup" => "new_lead",
        _ => return None,
    })
}

/// The names an event answers to (a trigger names one of them).
pub fn event_names(event: &MemberEvent) -> Vec<&'static str> {
    match event {
        MemberEvent::MemberCreated { .. } => vec!["member.created", "customer.created"],
        MemberEvent::StatusChanged { .. } => vec!["member.status_changed", "customer.status.changed"],
        MemberEvent::CheckinCreated { .. } => vec!["checkin.created"],
        MemberEvent::PaymentFailed { .. } => vec!["payment.failed"],
        MemberEvent::PaymentSucceeded { .. } => vec!["payment.succeeded"],
        MemberEvent::TrialBooked { .. } => vec!["trial.booked", "reservation.created", "appointment.scheduled"],
        MemberEvent::Customer { .. } => vec!["customer.details.changed"],
        MemberEvent::Enrollment { .. } => vec!["enrollment.status.changed", "enrollment.created"],
        MemberEvent::EnrollmentDeleted { .. } => vec!["enrollment.deleted"],
        MemberEvent::NoShow {
            kind: CheckinKind::Appointment,
            ..
        } => vec!["appointment.noshowed"],
        MemberEvent::NoShow { .. } => vec!["reservation.noshowed"],
    }
}

/// What a filter reads: the event's data, then the member's facts (`status`, `plan`, `role`,
/// `tenure_days`, `monthly_value`, `checkin_count`, `checkin_milestone`, `enrollment_status`).
pub fn event_fields(event: &MemberEvent, facts: &MemberFacts, now: Timestamp) -> Map<String, Value> {
    let mut fields = match serde_json::to_value(event) {
        Ok(Value::Object(mut tagged)) => match tagged.remove("data") {
            Some(Value::Object(data)) => data,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    if let MemberEvent::Enrollment { enrollment, .. } = event {
        if let Ok(status) = serde_json::to_value(enrollment.status) {
            fields.insert("enrollment_status".into(), status);
        }
        if let Some(plan) = &enrollment.plan_id {
            fields.insert("plan".into(), Value::String(plan.clone()));
        }
    }
    if let MemberEvent::NoShow { kind, .. } = event
        && let Ok(kind) = serde_json::to_value(kind)
    {
        fields.insert("kind".into(), kind);
    }
    member_fields(&mut fields, facts, now);
    fields.entry("checkin_milestone".to_owned()).or_insert(Value::Bool(
        matches!(event, MemberEvent::CheckinCreated { .. }) && CHECKIN_MILESTONES.contains(&facts.checkin_count),
    ));
    fields
}

/// The member's facts a filter reads beside an event's own data (the event's data wins).
fn member_fields(fields: &mut Map<String, Value>, facts: &MemberFacts, now: Timestamp) {
    let mut put = |name: &str, value: Option<Value>| {
        if let Some(value) = value {
            fields.entry(name.to_owned()).or_insert(value);
        }
    };
    put("status", facts.status.map(|s| Value::String(s.as_str().into())));
    put("plan", facts.membership.plan_id().map(|p| Value::String(p.into())));
    put("role", facts.membership.role.and_then(|r| serde_json::to_value(r).ok()));
    put("tenure_days", facts.tenure_days(now).map(Value::from));
    put("monthly_value", facts.monthly_value.map(Value::from));
    put("checkin_count", Some(Value::from(facts.checkin_count)));
}

/// The fewest days without a check-in at which the risk scan reports `no_checkin_days` for an
/// active member (a row's filter `days_since_checkin: {"min": N}` picks its own gap).
pub const NO_CHECKIN_EVENT_MIN_DAYS: i64 = 7;

/// One of Openloop's own events (`no_checkin_days`, `todo_done`, `task_closed`), as a row of
/// the owner's sees it: its name, the id that names this happening of it (the firing's
/// event), and the fields its filter reads.
#[derive(Clone, Debug, PartialEq)]
pub enum OpenloopEvent {
    /// The risk scan saw an active member go `days` without a check-in since `since` (their
    /// last one; `None`: never checked in).
    NoCheckinDays { days: i64, since: Option<Timestamp> },
    /// The owner marked a to-do done.
    TodoDone {
        todo_id: ulid::Ulid,
        kind: String,
        outcome: Option<String>,
    },
    /// A task closed.
    TaskClosed {
        task_id: TaskId,
        task_type: String,
        status: String,
        outcome: Option<String>,
    },
}

impl OpenloopEvent {
    pub fn name(&self) -> &'static str {
        match self {
            OpenloopEvent::NoCheckinDays { .. } => "no_checkin_days",
            OpenloopEvent::TodoDone { .. } => "todo_done",
            OpenloopEvent::TaskClosed { .. } => "task_closed",
        }
    }

    /// What names this happening: one gap per last check-in, one to-do, one closed task.
    pub fn event_id(&self, member: &MemberId) -> String {
        match self {
            OpenloopEvent::NoCheckinDays { since: Some(at), .. } => format!("no_checkin_days:{member}:{at}"),
            OpenloopEvent::NoCheckinDays { since: None, .. } => format!("no_checkin_days:{member}:never"),
            OpenloopEvent::TodoDone { todo_id, .. } => format!("todo_done:{todo_id}"),
            OpenloopEvent::TaskClosed { task_id, .. } => format!("task_closed:{task_id}"),
        }
    }

    /// What a filter reads: the event's own fields (`days_since_checkin`; a to-do's `kind`
    /// and `outcome`; a task's `task_type`, `status` and `outcome`), then the member's facts.
    pub fn fields(&self, facts: &MemberFacts, now: Timestamp) -> Map<String, Value> {
        let mut fields = Map::new();
        let text = |v: &str| Value::String(v.to_owned());
        match self {
            OpenloopEvent::NoCheckinDays { days, .. } => {
                fields.insert("days_since_checkin".into(), Value::from(*days));
            }
            OpenloopEvent::TodoDone { kind, outcome, .. } => {
                fields.insert("kind".into(), text(kind));
                if let Some(outcome) = outcome {
                    fields.insert("outcome".into(), text(outcome));
                }
            }
            OpenloopEvent::TaskClosed {
                task_type,
                status,
                outcome,
                ..
            } => {
                fields.insert("task_type".into(), text(task_type));
                fields.insert("task_status".into(), text(status));
                if let Some(outcome) = outcome {
                    fields.insert("outcome".into(), text(outcome));
                }
            }
        }
        member_fields(&mut fields, facts, now);
        fields
    }
}

/// The `no_checkin_days` event of an active member at `now`, once they have gone
/// [`NO_CHECKIN_EVENT_MIN_DAYS`] without a check-in (counted from joining when they never
/// checked in).
pub fn no_checkin_event(facts: &MemberFacts, now: Timestamp) -> Option<OpenloopEvent> {
    if facts.status != Some(crate::members::event::MemberStatus::Active) {
        return None;
    }
    // A member's first 14 days belong to onboarding: no gap of theirs is a churn signal yet.
    if facts
        .joined_at
        .is_some_and(|joined| now.duration_since(joined) < crate::kernel::limits::ONBOARDING_WINDOW)
    {
        return None;
    }
    let since = facts.last_checkin_at.or(facts.joined_at)?;
    let days = now.duration_since(since).as_hours() / 24;
    (days >= NO_CHECKIN_EVENT_MIN_DAYS).then_some(OpenloopEvent::NoCheckinDays {
        days,
        since: facts.last_checkin_at,
    })
}

/// `POST /api/v1/triggers` (and the fields `PUT` may change).
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TriggerInput {
    pub event: TriggerEvent,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub filter: Option<BTreeMap<String, FilterValue>>,
    pub task_type: crate::task::task_type::RegisteredTaskType,
    #[serde(default)]
    pub goal: Option<crate::kernel::texts::Goal>,
    #[serde(default)]
    pub delay_hours: Option<u32>,
    pub reentry: Reentry,
    #[serde(default)]
    pub reentry_days: Option<u32>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub notify: Option<Notify>,
}

fn invalid(code: &'static str, message: impl Into<String>) -> InvalidInput {
    InvalidInput::new(code, message)
}

impl TriggerInput {
    /// A checked row of the owner's, under `id`.
    pub fn into_trigger(self, id: String) -> Result<Trigger, InvalidInput> {
        let event = self.event.trim().to_owned();
        let known = [&MEMBER_EVENTS[..], &PUSHPRESS_EVENTS[..], &OPENLOOP_EVENTS[..]]
            .iter()
            .any(|names| names.contains(&event.as_str()));
        if !known {
            return Err(invalid(
                "invalid_event",
                format!(
                    "event must be a member event ({}), PushPress's ({}) or Openloop's ({})",
                    MEMBER_EVENTS.join(", "),
                    PUSHPRESS_EVENTS.join(", "),
                    OPENLOOP_EVENTS.join(", ")
                ),
            ));
        }
        let task_type = self.task_type.trim().to_owned();
        let known = crate::task::task_type::REGISTRY.iter().any(|d| d.key == task_type);
        if !known {
            return Err(invalid("invalid_task_type", format!("{task_type:?} is not a task type")));
        }
        let filter = self.filter.unwrap_or_default();
        if filter.len() > 10 {
            return Err(invalid("invalid_filter", "a filter has at most 10 fields"));
        }
        for (field, value) in &filter {
            let named =
                !field.is_empty() && field.len() <= 40 && field.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !named {
                return Err(invalid(
                    "invalid_filter",
                    format!("filter field {field:?} must be 1-40 characters of a-z, 0-9 and _"),
                ));
            }
            let numbers: Vec<f64> = match value {
                FilterValue::Range { min: None, max: None } => {
                    return Err(invalid("invalid_filter", format!("filter {field}: give \"min\", \"max\" or both")));
                }
                FilterValue::Range { min, max } => min.iter().chain(max.iter()).copied().collect(),
                FilterValue::Number(n) => vec![*n],
                FilterValue::Text(t) if t.chars().count() > 100 || t.contains(['\r', '\n']) => {
                    return Err(invalid(
                        "invalid_filter",
                        format!("filter {field}: a value is one line of at most 100 characters"),
                    ));
                }
                FilterValue::Text(_) | FilterValue::Bool(_) => Vec::new(),
            };
            for n in numbers {
                crate::kernel::number::money("invalid_filter", field, n.abs())?;
            }
        }
        let goal = match self.goal.map(|g| g.trim().to_owned()) {
            Some(g) if g.is_empty() || g.len() > 2_000 => return Err(invalid("invalid_goal", "goal must be 1-2000 characters")),
            other => other,
        };
        let delay_hours = self.delay_hours.unwrap_or(0);
        if delay_hours > 24 * 90 {
            return Err(invalid("invalid_delay", "delay_hours must be 0-2160 (90 days)"));
        }
        let reentry_days = match (self.reentry, self.reentry_days) {
            (Reentry::AfterDays, Some(days)) if (1..=365).contains(&days) => Some(days),
            (Reentry::AfterDays, _) => {
                return Err(invalid("invalid_reentry", "reentry \"after_days\" needs reentry_days 1-365"));
            }
            (Reentry::Once, Some(_)) => {
                return Err(invalid("invalid_reentry", "reentry_days goes with reentry \"after_days\""));
            }
            (Reentry::Once, None) => None,
        };
        Ok(Trigger {
            id,
            label: None,
            event,
            filter,
            task_type,
            goal,
            delay_hours,
            reentry: self.reentry,
            reentry_days,
            enabled: self.enabled.unwrap_or(true),
            builtin: false,
            notify: self.notify.unwrap_or_default(),
            fired_count: 0,
        })
    }
}

/// The goal a row of the owner's gives its tasks.
pub fn goal_of(trigger: &Trigger) -> String {
    trigger.goal.clone().unwrap_or_else(|| {
        let def = crate::task::task_type::definition(&trigger.task_type);
        format!("{} (opened by your trigger on {})", def.goal.summary, trigger.event)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    #[test]
    fn the_shipped_built_in_rows_parse_and_each_names_a_task_type() {
        let rows = builtins();
        assert!(rows.len() >= 8, "{rows:?}");
        for row in &rows {
            assert!(row.builtin && row.enabled, "{row:?}");
            assert!(crate::task::task_type::REGISTRY.iter().any(|d| d.key == row.task_type), "{row:?}");
        }
        for id in [
            "payment_failed",
            "enrollment_alert",
            "checkin_milestone",
            "new_member",
            "cancellation",
            "no_checkin_days",
            "trial_no_show",
        ] {
            assert!(rows.iter().any(|r| r.id == id), "{id}");
        }
    }

    #[test]
    fn a_filter_reads_the_event_and_the_facts() {
        let now = at("2026-11-02T14:00:00Z");
        let member = MemberId::parse("m_1").expect("id");
        let mut facts = MemberFacts::new(member.clone());
        facts.monthly_value = Some(180.0);
        facts.checkin_count = 10;
        let event = MemberEvent::CheckinCreated {
            member_id: member,
            checked_in_at: now,
            class_name: Some("Yoga".into()),
        };
        let fields = event_fields(&event, &facts, now);
        let input: TriggerInput = serde_json::from_value(serde_json::json!({
            "event": "checkin.created", "task_type": "milestone_review", "reentry": "once",
            "filter": {"class_name": "yoga", "monthly_value": {"min": 150}, "checkin_milestone": true}
        }))
        .expect("input");
        let trigger = input.into_trigger("t".into()).expect("valid");
        assert!(trigger.matches(&event_names(&event), &fields));
        let cheap = TriggerInput {
            filter: Some(BTreeMap::from([(
                "monthly_value".into(),
                FilterValue::Range {
                    min: Some(200.0),
                    max: None,
                },
            )])),
            ..serde_json::from_value(serde_json::json!({"event": "checkin.created", "task_type": "milestone_review", "reentry": "once"}))
                .expect("input")
        };
        assert!(
            !cheap
                .into_trigger("u".into())
                .expect("valid")
                .matches(&event_names(&event), &fields)
        );
        let off = Trigger { enabled: false, ..trigger };
        assert!(
            !off.matches(&event_names(&event), &fields),
            "a trigger switched off matches nothing"
        );
    }

    #[test]
    fn bad_rows_are_refused_with_what_to_fix() {
        // An unknown event or type is refused as the body is read (`kernel::bounded`), the rest
        // by the row's own checks: each with its code.
        let refuse = |v: serde_json::Value| match serde_json::from_value::<TriggerInput>(v) {
            Ok(input) => input.into_trigger("t".into()).expect_err("refused").code,
            Err(e) => crate::kernel::bounded::parse_refusal(&e.to_string())
                .map(|(code, _)| code.to_owned())
                .expect("a refusal with its code"),
        };
        assert_eq!(
            refuse(serde_json::json!({"event": "class.booked", "task_type": "ad_hoc", "reentry": "once"})),
            "invalid_event"
        );
        assert_eq!(
            refuse(serde_json::json!({"event": "payment.failed", "task_type": "nope", "reentry": "once"})),
            "invalid_task_type"
        );
        assert_eq!(
            refuse(serde_json::json!({"event": "payment.failed", "task_type": "ad_hoc", "reentry": "after_days"})),
            "invalid_reentry"
        );
        assert_eq!(
            refuse(
                serde_json::json!({"event": "payment.failed", "task_type": "ad_hoc", "reentry": "once", "filter": {"amount": {"min": 1e200}}})
            ),
            "invalid_filter"
        );
    }

    #[test]
    fn openloops_own_events_are_rows_of_the_owners_with_their_own_fields() {
        let now = at("2026-11-20T14:00:00Z");
        let member = MemberId::parse("m_1").expect("id");
        let mut facts = MemberFacts::new(member.clone());
        facts.status = Some(crate::members::event::MemberStatus::Active);
        facts.monthly_value = Some(120.0);
        facts.last_checkin_at = Some(at("2026-11-10T14:00:00Z"));
        let input: TriggerInput = serde_json::from_value(serde_json::json!({
            "event": "no_checkin_days", "task_type": "staff_call_member", "reentry": "once",
            "filter": {"days_since_checkin": {"min": 10}, "monthly_value": {"min": 100}}
        }))
        .expect("input");
        let trigger = input
            .into_trigger("t".into())
            .expect("Openloop's own events are rows of the owner's");
        let gap = no_checkin_event(&facts, now).expect("ten days without a check-in");
        assert_eq!(gap.event_id(&member), "no_checkin_days:m_1:2026-11-10T14:00:00Z");
        assert!(trigger.matches(&[gap.name()], &gap.fields(&facts, now)));
        let sooner = no_checkin_event(&facts, at("2026-11-18T14:00:00Z")).expect("eight days");
        assert!(
            !trigger.matches(&[sooner.name()], &sooner.fields(&facts, now)),
            "under the row's own gap"
        );
        assert_eq!(
            no_checkin_event(&facts, at("2026-11-15T14:00:00Z")),
            None,
            "under a week is no event"
        );
        let mut new_member = facts.clone();
        new_member.joined_at = Some(at("2026-11-08T14:00:00Z"));
        assert_eq!(
            no_checkin_event(&new_member, now),
            None,
            "a member's first 14 days are onboarding's"
        );

        let closed = OpenloopEvent::TaskClosed {
            task_id: TaskId(ulid::Ulid::nil()),
            task_type: "churn_risk".into(),
            status: "completed".into(),
            outcome: Some("member_returned".into()),
        };
        let on_close: TriggerInput = serde_json::from_value(serde_json::json!({
            "event": "task_closed", "task_type": "staff_call_member", "reentry": "once",
            "filter": {"task_type": "churn_risk", "outcome": "member_returned", "status": "active"}
        }))
        .expect("input");
        let on_close = on_close.into_trigger("c".into()).expect("valid");
        assert!(
            on_close.matches(&[closed.name()], &closed.fields(&facts, now)),
            "the task's fields and the member's status"
        );
        assert!(!on_close.matches(&["todo_done"], &closed.fields(&facts, now)), "another event");
    }
}

//! Triggers (spec 001, "Trigger"; issue "Open loops and triggers the owner controls"): which
//! event opens which task, as rows of one table the owner reads and switches. The built-in
//! rows are data (`rules/triggers.toml`, embedded): the owner turns each on or off; the code
//! that carries a built-in out asks its row first. The owner's own rows are whole: an event,
//! a filter over the event's data and the member's facts, the task type, a delay, re-entry.
//!
//! Pure: the rows, their validation, and whether an event matches one. Firing, storing and
//! the dry run are the engine's (`engine/triggers/`).

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

/// The events a trigger may name: CONTRACT.md's member events, PushPress's own, Openloop's.
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

/// A row of the trigger table (CONTRACT.md's `Trigger`, and what the engine needs of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    put(
        "checkin_milestone",
        Some(Value::Bool(
            matches!(event, MemberEvent::CheckinCreated { .. }) && CHECKIN_MILESTONES.contains(&facts.checkin_count),
        )),
    );
    fields
}

/// `POST /api/v1/triggers` (and the fields `PUT` may change).
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TriggerInput {
    pub event: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub filter: Option<BTreeMap<String, FilterValue>>,
    pub task_type: String,
    #[serde(default)]
    pub goal: Option<String>,
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
        if OPENLOOP_EVENTS.contains(&event.as_str()) {
            return Err(invalid(
                "unsupported_event",
                format!("{event} triggers of your own are not available yet; Openloop's built-in rows for it can be switched on or off"),
            ));
        }
        if !MEMBER_EVENTS.contains(&event.as_str()) && !PUSHPRESS_EVENTS.contains(&event.as_str()) {
            return Err(invalid(
                "invalid_event",
                format!(
                    "event must be a member event ({}) or PushPress's ({})",
                    MEMBER_EVENTS.join(", "),
                    PUSHPRESS_EVENTS.join(", ")
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
        let refuse = |v: serde_json::Value| {
            serde_json::from_value::<TriggerInput>(v)
                .expect("shape")
                .into_trigger("t".into())
                .expect_err("refused")
                .code
        };
        assert_eq!(
            refuse(serde_json::json!({"event": "class.booked", "task_type": "ad_hoc", "reentry": "once"})),
            "invalid_event"
        );
        assert_eq!(
            refuse(serde_json::json!({"event": "todo_done", "task_type": "ad_hoc", "reentry": "once"})),
            "unsupported_event"
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
}

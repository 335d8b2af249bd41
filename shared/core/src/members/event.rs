//! Member events from the connector, parsed once at
//! the edge into types the rest of the system trusts.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, Email, MemberId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MemberStatus {
    Lead,
    Active,
    Cancelled,
    Frozen,
}

impl MemberStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberStatus::Lead => "lead",
            MemberStatus::Active => "active",
            MemberStatus::Cancelled => "cancelled",
            MemberStatus::Frozen => "frozen",
        }
    }
}

/// One member event. Unknown `type`s are not an error at the edge: they are accepted and
/// logged (see [`parse_event`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data")]
pub enum MemberEvent {
    #[serde(rename = "member.created")]
    MemberCreated {
        member_id: MemberId,
        /// Absent for a member known by phone only (they are reached by text, with consent).
        #[serde(default)]
        email: Option<Email>,
        #[serde(default)]
        first_name: Option<String>,
        #[serde(default)]
        last_name: Option<String>,
        status: MemberStatus,
        #[serde(default)]
        joined_at: Option<Timestamp>,
        #[serde(default)]
        monthly_value: Option<f64>,
        /// E.164 (`+15555550100`): the dashboard's call list links it (`tel:`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phone: Option<String>,
    },
    #[serde(rename = "member.status_changed")]
    StatusChanged {
        member_id: MemberId,
        status: MemberStatus,
        #[serde(default)]
        previous_status: Option<MemberStatus>,
        #[serde(default)]
        cancellation_reason: Option<String>,
    },
    #[serde(rename = "checkin.created")]
    CheckinCreated {
        member_id: MemberId,
        checked_in_at: Timestamp,
        #[serde(default)]
        class_name: Option<String>,
    },
    #[serde(rename = "payment.failed")]
    PaymentFailed {
        member_id: MemberId,
        amount: f64,
        currency: String,
        failed_at: Timestamp,
        #[serde(default)]
        reason: Option<String>,
    },
    #[serde(rename = "payment.succeeded")]
    PaymentSucceeded {
        member_id: MemberId,
        amount: f64,
        currency: String,
        paid_at: Timestamp,
    },
    #[serde(rename = "trial.booked")]
    TrialBooked { member_id: MemberId, booked_for: Timestamp },
    // What PushPress's own webhooks and the import say (`crate::members::membership`). Never parsed
    // from CONTRACT.md's member-event format: they are not in [`KNOWN_EVENT_TYPES`].
    #[serde(rename = "pushpress.customer")]
    Customer {
        member_id: MemberId,
        customer: crate::members::membership::CustomerFacts,
    },
    #[serde(rename = "pushpress.enrollment")]
    Enrollment {
        member_id: MemberId,
        enrollment: crate::members::source::Enrollment,
    },
    #[serde(rename = "pushpress.enrollment_deleted")]
    EnrollmentDeleted { member_id: MemberId, enrollment_id: String },
    #[serde(rename = "pushpress.no_show")]
    NoShow {
        member_id: MemberId,
        at: Timestamp,
        kind: crate::members::source::CheckinKind,
    },
}

impl MemberEvent {
    /// Names reach the `To` header of member mail: one line each, at most 100 characters;
    /// amounts are money a gym can mean.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        use crate::kernel::limits::{MAX_EVENT_NAME_CHARS, MAX_EVENT_REASON_CHARS};
        use crate::kernel::number::money;
        use crate::kernel::text::{bounded_text, currency_code, single_line};
        self.member_id().refuse_reserved()?;
        match self {
            MemberEvent::MemberCreated {
                first_name,
                last_name,
                monthly_value,
                phone,
                email,
                ..
            } => {
                if email.is_none() && phone.is_none() {
                    return Err(InvalidInput::new("invalid_event", "member.created needs an email or a phone"));
                }
                if let Some(phone) = phone
                    && !crate::kernel::text::is_e164(phone)
                {
                    return Err(InvalidInput::new("invalid_event", "phone must be E.164, such as +15555550100"));
                }
                for (field, name) in [("first_name", first_name), ("last_name", last_name)] {
                    if let Some(name) = name {
                        single_line("invalid_event", field, name)?;
                        if name.chars().count() > 100 {
                            return Err(InvalidInput::new(
                                "invalid_event",
                                format!("{field} must be at most 100 characters"),
                            ));
                        }
                    }
                }
                if let Some(value) = monthly_value {
                    money("invalid_event", "monthly_value", *value)?;
                }
            }
            MemberEvent::Customer { customer, .. } => {
                for (field, name) in [("first_name", &customer.first_name), ("last_name", &customer.last_name)] {
                    if let Some(name) = name {
                        single_line("invalid_event", field, name)?;
                        if name.chars().count() > 100 {
                            return Err(InvalidInput::new(
                                "invalid_event",
                                format!("{field} must be at most 100 characters"),
                            ));
                        }
                    }
                }
            }
            MemberEvent::PaymentFailed {
                amount, currency, reason, ..
            } => {
                money("invalid_event", "amount", *amount)?;
                currency_code(currency)?;
                if let Some(reason) = reason {
                    bounded_text("invalid_event", "reason", reason, MAX_EVENT_REASON_CHARS)?;
                }
            }
            MemberEvent::PaymentSucceeded { amount, currency, .. } => {
                money("invalid_event", "amount", *amount)?;
                currency_code(currency)?;
            }
            MemberEvent::StatusChanged {
                cancellation_reason: Some(reason),
                ..
            } => bounded_text("invalid_event", "cancellation_reason", reason, MAX_EVENT_REASON_CHARS)?,
            MemberEvent::CheckinCreated {
                class_name: Some(name), ..
            } => {
                single_line("invalid_event", "class_name", name)?;
                bounded_text("invalid_event", "class_name", name, MAX_EVENT_NAME_CHARS)?;
            }
            MemberEvent::Enrollment { enrollment, .. } => {
                for (field, id) in [("enrollment id", Some(&enrollment.id)), ("plan id", enrollment.plan_id.as_ref())] {
                    if let Some(id) = id {
                        single_line("invalid_event", field, id)?;
                        bounded_text("invalid_event", field, id, MAX_EVENT_NAME_CHARS)?;
                    }
                }
            }
            MemberEvent::EnrollmentDeleted { enrollment_id, .. } => {
                single_line("invalid_event", "enrollment id", enrollment_id)?;
                bounded_text("invalid_event", "enrollment id", enrollment_id, MAX_EVENT_NAME_CHARS)?;
            }
            MemberEvent::StatusChanged { .. }
            | MemberEvent::CheckinCreated { .. }
            | MemberEvent::TrialBooked { .. }
            | MemberEvent::NoShow { .. } => {}
        }
        Ok(())
    }

    pub fn member_id(&self) -> &MemberId {
        match self {
            MemberEvent::MemberCreated { member_id, .. }
            | MemberEvent::StatusChanged { member_id, .. }
            | MemberEvent::CheckinCreated { member_id, .. }
            | MemberEvent::PaymentFailed { member_id, .. }
            | MemberEvent::PaymentSucceeded { member_id, .. }
            | MemberEvent::TrialBooked { member_id, .. }
            | MemberEvent::Customer { member_id, .. }
            | MemberEvent::Enrollment { member_id, .. }
            | MemberEvent::EnrollmentDeleted { member_id, .. }
            | MemberEvent::NoShow { member_id, .. } => member_id,
        }
    }
}

pub const KNOWN_EVENT_TYPES: [&str; 6] = [
    "member.created",
    "member.status_changed",
    "checkin.created",
    "payment.failed",
    "payment.succeeded",
    "trial.booked",
];

/// A webhook body: `{"type", "timestamp", "data"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookEvent {
    pub timestamp: Timestamp,
    #[serde(flatten)]
    pub event: MemberEvent,
}

/// What a webhook body turned out to be.
#[derive(Debug)]
pub enum Parsed {
    Known(WebhookEvent),
    /// Well-formed but of a type we do not handle: accepted (202) and logged, no task.
    UnknownType(String),
}

/// Parse a webhook body, telling malformed input (→ 400) from an unknown type (→ 202).
pub fn parse_event(body: &[u8]) -> Result<Parsed, InvalidInput> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| InvalidInput::new("malformed_json", format!("the body is not JSON: {e}")))?;
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .ok_or_else(|| InvalidInput::new("missing_type", "the body needs a string \"type\""))?;
    if !KNOWN_EVENT_TYPES.contains(&kind) {
        return Ok(Parsed::UnknownType(kind.to_owned()));
    }
    let event: WebhookEvent =
        serde_json::from_value(value.clone()).map_err(|e| InvalidInput::new("invalid_event", format!("{kind} event is invalid: {e}")))?;
    event.event.validate()?;
    Ok(Parsed::Known(event))
}

/// What travels on the signals queue: the event, whose account it is and which delivery.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignalEnvelope {
    pub account_id: AccountId,
    pub webhook_id: String,
    pub received_at: Timestamp,
    pub event: WebhookEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field that is stored or reaches a task is checked before the event is accepted:
    /// a currency that is not three letters, a reason or a class name beyond its bound.
    #[test]
    fn every_field_of_a_member_event_is_checked_before_it_is_accepted() {
        let long = "x".repeat(5_000);
        let bodies = [
            format!(r#"{{"type":"payment.failed","timestamp":"2026-11-02T14:00:00Z","data":{{"member_id":"m_1","amount":150,"currency":"{long}","failed_at":"2026-11-02T14:00:00Z"}}}}"#),
            r#"{"type":"payment.succeeded","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","amount":150,"currency":"US","paid_at":"2026-11-02T14:00:00Z"}}"#.to_owned(),
            format!(r#"{{"type":"payment.failed","timestamp":"2026-11-02T14:00:00Z","data":{{"member_id":"m_1","amount":150,"currency":"USD","failed_at":"2026-11-02T14:00:00Z","reason":"{long}"}}}}"#),
            format!(r#"{{"type":"member.status_changed","timestamp":"2026-11-02T14:00:00Z","data":{{"member_id":"m_1","status":"cancelled","cancellation_reason":"{long}"}}}}"#),
            format!(r#"{{"type":"checkin.created","timestamp":"2026-11-02T14:00:00Z","data":{{"member_id":"m_1","checked_in_at":"2026-11-02T14:00:00Z","class_name":"{}"}}}}"#, "y".repeat(101)),
            r#"{"type":"checkin.created","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","checked_in_at":"2026-11-02T14:00:00Z","class_name":"WOD\r\nBcc: x"}}"#.to_owned(),
        ];
        for body in bodies {
            let refused = parse_event(body.as_bytes()).map(|_| ()).expect_err("refused");
            assert_eq!(refused.code, "invalid_event", "{body:.120}: {refused:?}");
        }
        let fine = r#"{"type":"payment.failed","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","amount":150,"currency":"eur","failed_at":"2026-11-02T14:00:00Z","reason":"card declined\nby the bank"}}"#;
        assert!(matches!(parse_event(fine.as_bytes()), Ok(Parsed::Known(_))));
    }

    #[test]
    fn a_payment_failure_parses() {
        let body = br#"{"type":"payment.failed","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","amount":150,"currency":"USD","failed_at":"2026-11-02T14:00:00Z"}}"#;
        let Ok(Parsed::Known(event)) = parse_event(body) else {
            panic!("should parse")
        };
        assert!(matches!(event.event, MemberEvent::PaymentFailed { amount, .. } if amount == 150.0));
    }

    #[test]
    fn a_name_with_a_line_break_or_an_amount_beyond_money_is_refused() {
        let bodies: [&[u8]; 3] = [
            br#"{"type":"member.created","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","email":"a@example.com","first_name":"Ana\r\nBcc: x@evil.example","status":"active"}}"#,
            br#"{"type":"member.created","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","email":"a@example.com","status":"active","monthly_value":1e126}}"#,
            br#"{"type":"payment.failed","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1","amount":-5,"currency":"USD","failed_at":"2026-11-02T14:00:00Z"}}"#,
        ];
        for body in bodies {
            let error = parse_event(body).expect_err("refused");
            assert_eq!(error.code, "invalid_event", "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn unknown_types_are_not_errors_but_bad_bodies_are() {
        assert!(matches!(parse_event(br#"{"type":"class.created","data":{}}"#), Ok(Parsed::UnknownType(t)) if t == "class.created"));
        assert_eq!(parse_event(b"{not json").expect_err("should fail").code, "malformed_json");
        assert_eq!(
            parse_event(br#"{"type":"checkin.created","timestamp":"2026-11-02T14:00:00Z","data":{"member_id":"m_1"}}"#)
                .expect_err("should fail")
                .code,
            "invalid_event"
        );
        assert_eq!(parse_event(br#"{"data":{}}"#).expect_err("should fail").code, "missing_type");
    }
}

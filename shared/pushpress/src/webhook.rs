//! PushPress's own webhook deliveries (`../shared/PUSHPRESS.md` §6): `{event, created, data}`,
//! signed in a `webhook-signature` header with the lowercase hex HMAC-SHA256 of
//! `JSON.stringify(body.data)`, keyed with the subscription's signing secret as UTF-8 bytes
//! (the SDK's `src/hooks/webhook-security-custom.ts`). There is no timestamp and no event id.
//!
//! The signed message is the compact JSON of `data` exactly as the sender wrote it: its raw
//! text with the whitespace between tokens taken out — key order, number spelling and string
//! escapes untouched. For a body made by `JSON.stringify` (pretty or not) that is
//! `JSON.stringify(data)` byte for byte, without re-encoding anything (which could only change
//! what was signed). The vectors in `fixtures/webhook_vectors.jsonl` were computed by running
//! the SDK's signing code (`fixtures/sign_webhooks.mjs`). The comparison is constant-time.

use hmac::{Hmac, Mac};
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::Sha256;

use openloop_core::members::source::{CheckinKind, SourceChange, SourceDelivery};

use crate::wire::{CheckinWire, CustomerWire, EnrollmentWire, member_id, number_time};

/// Why a delivery was refused before anything was read from it.
#[derive(Debug, PartialEq, Eq)]
pub enum Rejection {
    MissingSignature,
    /// The body has no JSON `data` to have signed.
    Unsigned,
    NoMatch,
}

impl Rejection {
    pub fn message(&self) -> &'static str {
        match self {
            Rejection::MissingSignature => "a webhook-signature header is required",
            Rejection::Unsigned => "the body has no data field that could have been signed",
            Rejection::NoMatch => "the webhook-signature does not match the delivery",
        }
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    data: &'a RawValue,
}

/// The message PushPress signs for `body`: the compact JSON of its `data`.
pub fn signed_message(body: &[u8]) -> Result<Vec<u8>, Rejection> {
    let envelope: Envelope<'_> = serde_json::from_slice(body).map_err(|_| Rejection::Unsigned)?;
    Ok(compact(envelope.data.get().as_bytes()))
}

/// JSON text without the whitespace between its tokens (strings kept byte for byte).
fn compact(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in json {
        if in_string {
            out.push(b);
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            if b == b'"' {
                in_string = true;
            }
            out.push(b);
        }
    }
    out
}

fn mac(secret: &str) -> Hmac<Sha256> {
    // HMAC takes a key of any length; this cannot fail.
    <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!("HMAC accepts any key length"))
}

/// Check a delivery's `webhook-signature` against the subscription's `secret`, in constant time.
pub fn verify(secret: &str, signature: Option<&str>, body: &[u8]) -> Result<(), Rejection> {
    let signature = signature
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or(Rejection::MissingSignature)?;
    let message = signed_message(body)?;
    let expected = hex::decode(signature).map_err(|_| Rejection::NoMatch)?;
    let mut mac = mac(secret);
    mac.update(&message);
    mac.verify_slice(&expected).map_err(|_| Rejection::NoMatch)
}

/// Sign a delivery as PushPress does (for tests and the demo).
pub fn sign(secret: &str, body: &[u8]) -> Option<String> {
    let message = signed_message(body).ok()?;
    let mut mac = mac(secret);
    mac.update(&message);
    Some(hex::encode(mac.finalize().into_bytes()))
}

#[derive(Deserialize)]
struct Delivery {
    event: String,
    created: serde_json::Number,
    data: serde_json::Value,
}

/// A verified delivery, read: `Err` says what is wrong with its shape (`400`).
pub fn parse(body: &[u8]) -> Result<SourceDelivery, String> {
    let delivery: Delivery = serde_json::from_slice(body).map_err(|e| format!("not a PushPress delivery {{event, created, data}}: {e}"))?;
    let created = number_time(&delivery.created)
        .ok_or("created is not a unix time: seconds or milliseconds since 1970, a number Openloop can keep")?;
    let data_hash = signed_message(body)
        .map(|signed| hex::encode(<Sha256 as sha2::Digest>::digest(&signed)))
        .map_err(|r| r.message().to_owned())?;
    let data_id = delivery
        .data
        .get("id")
        .and_then(|v| v.as_str().map(str::to_owned).or_else(|| v.as_i64().map(|n| n.to_string())))
        .unwrap_or_default();
    let change = change(&delivery.event, delivery.data, created);
    Ok(SourceDelivery {
        event: delivery.event,
        created,
        data_id,
        data_hash,
        change,
    })
}

/// What an event means (PUSHPRESS.md §6's complete list): mapped, or acknowledged with why.
fn change(event: &str, data: serde_json::Value, created: Timestamp) -> SourceChange {
    let ack = |why: &str| SourceChange::Acknowledged(format!("{event}: {why}"));
    let customer_of = |data: &serde_json::Value| data.get("customerId").and_then(|v| v.as_str()).and_then(member_id);
    let time_of = |data: &serde_json::Value, field: &str| data.get(field).and_then(|v| v.as_number()).and_then(number_time);
    match event {
        "customer.created" | "customer.details.changed" | "customer.status.changed" => {
            match serde_json::from_value::<CustomerWire>(data)
                .ok()
                .and_then(CustomerWire::into_customer)
            {
                Some(customer) => SourceChange::Customer(customer),
                None => ack("a customer Openloop cannot read"),
            }
        }
        "customer.deleted" => match data.get("id").and_then(|v| v.as_str()).and_then(member_id) {
            Some(customer) => SourceChange::CustomerDeleted { customer },
            None => ack("a deleted customer that names no id Openloop keeps"),
        },
        "checkin.created" | "checkin.updated" => {
            let staff = data
                .get("role")
                .and_then(|r| r.as_str())
                .is_some_and(|r| matches!(r, "staff" | "coach" | "assistant"));
            match serde_json::from_value::<CheckinWire>(data).ok().and_then(|c| c.into_checkin(None)) {
                Some(_) if staff => ack("a check-in by staff, not attendance"),
                Some(checkin) => SourceChange::Checkin(checkin),
                None => ack("a check-in Openloop cannot read"),
            }
        }
        "checkin.failed" => ack("a failed check-in is not attendance"),
        "checkin.deleted" => ack("check-ins are kept as times seen; a deleted one is logged, not removed"),
        "enrollment.created" | "enrollment.status.changed" => {
            match serde_json::from_value::<EnrollmentWire>(data)
                .ok()
                .and_then(EnrollmentWire::into_enrollment)
            {
                Some(enrollment) => SourceChange::Enrollment(enrollment),
                None => ack("an enrollment Openloop cannot read"),
            }
        }
        "enrollment.deleted" => ack("the delivery names only the enrollment, not whose it was"),
        "appointment.noshowed" | "reservation.noshowed" => {
            let kind = if event.starts_with("appointment") {
                CheckinKind::Appointment
            } else {
                CheckinKind::Class
            };
            match customer_of(&data) {
                Some(customer) => SourceChange::NoShow {
                    customer,
                    at: time_of(&data, "startTimestamp").unwrap_or(created),
                    kind,
                },
                None => ack("a no-show that names no customer"),
            }
        }
        "appointment.scheduled" | "reservation.created" => match customer_of(&data) {
            Some(customer) => SourceChange::Booking {
                customer,
                booked_for: time_of(&data, "startTimestamp")
                    .or_else(|| time_of(&data, "registrationTimestamp"))
                    .unwrap_or(created),
            },
            None => ack("a booking that names no customer"),
        },
        "appointment.rescheduled" | "appointment.canceled" | "reservation.waitlisted" | "reservation.canceled" | "class.canceled" => {
            ack("nothing Openloop tracks changes")
        }
        "memberapp.updated" | "app.installed" | "app.uninstalled" => ack("not about a member"),
        _ => ack("an event type PushPress did not document"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Vector {
        secret: String,
        body: String,
        pretty: String,
        signature: String,
    }

    fn vectors() -> Vec<Vector> {
        include_str!("../fixtures/webhook_vectors.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("vector"))
            .collect()
    }

    #[test]
    fn deliveries_signed_by_the_sdks_code_verify_compact_or_pretty() {
        for v in vectors() {
            assert_eq!(verify(&v.secret, Some(&v.signature), v.body.as_bytes()), Ok(()), "{}", v.body);
            assert_eq!(verify(&v.secret, Some(&v.signature), v.pretty.as_bytes()), Ok(()), "pretty-printed");
            assert_eq!(sign(&v.secret, v.body.as_bytes()).as_deref(), Some(v.signature.as_str()));
        }
    }

    #[test]
    fn tampered_or_forged_deliveries_are_refused() {
        let v = &vectors()[0];
        let tampered = v.body.replace("lead", "member");
        assert_eq!(verify(&v.secret, Some(&v.signature), tampered.as_bytes()), Err(Rejection::NoMatch));
        assert_eq!(verify("other", Some(&v.signature), v.body.as_bytes()), Err(Rejection::NoMatch));
        assert_eq!(
            verify(&v.secret, Some(&v.signature.to_uppercase()[..10]), v.body.as_bytes()),
            Err(Rejection::NoMatch)
        );
        assert_eq!(verify(&v.secret, None, v.body.as_bytes()), Err(Rejection::MissingSignature));
        assert_eq!(
            verify(&v.secret, Some(&v.signature), b"{\"event\":\"x\"}"),
            Err(Rejection::Unsigned)
        );
        let renamed = v.body.replace("\"event\":\"customer.created\"", "\"event\":\"customer.deleted\"");
        assert_eq!(
            verify(&v.secret, Some(&v.signature), renamed.as_bytes()),
            Ok(()),
            "only data is signed (PushPress's scheme): the envelope is not"
        );
    }

    #[test]
    fn every_documented_event_is_mapped_or_acknowledged() {
        let at = 1_793_620_800;
        let customer = serde_json::json!({"id": "usr_1", "name": {"first": "A", "last": "B"}, "email": "a@example.com", "role": "lead"});
        let checkin = serde_json::json!({"id": "chk_1", "customer": "usr_1", "timestamp": 1_793_620_800_000_i64, "kind": "open"});
        let enrollment = serde_json::json!({"id": "sub_1", "customerId": "usr_1", "status": "alert", "planId": "pln_1"});
        let appointment = serde_json::json!({"id": "apt_1", "customerId": "usr_1", "staffId": "usr_9", "startTimestamp": at + 3600});
        let cases = [
            ("customer.created", customer.clone(), "customer"),
            ("customer.details.changed", customer.clone(), "customer"),
            ("customer.status.changed", customer, "customer"),
            ("customer.deleted", serde_json::json!({"id": "usr_1", "companyId": "c"}), "deleted"),
            ("checkin.created", checkin.clone(), "checkin"),
            ("checkin.updated", checkin.clone(), "checkin"),
            ("checkin.failed", checkin, "ack"),
            ("checkin.deleted", serde_json::json!({"id": "chk_1", "customerId": "usr_1"}), "ack"),
            ("enrollment.created", enrollment.clone(), "enrollment"),
            ("enrollment.status.changed", enrollment, "enrollment"),
            ("enrollment.deleted", serde_json::json!({"id": "sub_1"}), "ack"),
            ("appointment.scheduled", appointment.clone(), "booking"),
            ("appointment.rescheduled", appointment.clone(), "ack"),
            ("appointment.noshowed", appointment.clone(), "noshow"),
            ("appointment.canceled", appointment, "ack"),
            (
                "reservation.created",
                serde_json::json!({"id": "res_1", "customerId": "usr_1", "registrationTimestamp": at}),
                "booking",
            ),
            (
                "reservation.waitlisted",
                serde_json::json!({"id": "res_1", "customerId": "usr_1"}),
                "ack",
            ),
            (
                "reservation.canceled",
                serde_json::json!({"id": "res_1", "customerId": "usr_1"}),
                "ack",
            ),
            (
                "reservation.noshowed",
                serde_json::json!({"id": "res_1", "customerId": "usr_1"}),
                "noshow",
            ),
            ("class.canceled", serde_json::json!({"id": "cls_1"}), "ack"),
            ("memberapp.updated", serde_json::json!({}), "ack"),
            (
                "app.installed",
                serde_json::json!({"clientUuid": "c", "appId": "a", "installationId": "i"}),
                "ack",
            ),
            (
                "app.uninstalled",
                serde_json::json!({"clientUuid": "c", "appId": "a", "installationId": "i"}),
                "ack",
            ),
        ];
        for (event, data, expected) in cases {
            let body = serde_json::json!({"event": event, "created": at, "data": data});
            let delivery = parse(body.to_string().as_bytes()).expect(event);
            let got = match &delivery.change {
                SourceChange::Customer(_) => "customer",
                SourceChange::Checkin(_) => "checkin",
                SourceChange::Enrollment(_) => "enrollment",
                SourceChange::NoShow { .. } => "noshow",
                SourceChange::Booking { .. } => "booking",
                SourceChange::CustomerDeleted { .. } => "deleted",
                SourceChange::Acknowledged(_) => "ack",
            };
            assert_eq!(got, expected, "{event}: {:?}", delivery.change);
        }
    }

    #[test]
    fn created_in_seconds_or_milliseconds_reads_alike() {
        let body = |created: i64| serde_json::json!({"event": "checkin.created", "created": created, "data": {"id": "chk_1", "customer": "usr_1", "timestamp": 1, "kind": "open"}});
        let s = parse(body(1_793_620_800).to_string().as_bytes()).expect("s");
        let ms = parse(body(1_793_620_800_000).to_string().as_bytes()).expect("ms");
        assert_eq!(s.created, ms.created);
    }

    /// `_account` is Openloop's name for the whole business: a customer of that id is left out.
    #[test]
    fn a_customer_named_as_the_whole_business_is_left_out() {
        let body = serde_json::json!({"event": "customer.created", "created": 1_793_620_800,
            "data": {"id": "_account", "companyId": "c", "name": {"first": "A", "last": "B"}, "email": "a@example.com", "role": "member"}});
        let delivery = parse(body.to_string().as_bytes()).expect("parses");
        assert!(matches!(delivery.change, SourceChange::Acknowledged(_)), "{:?}", delivery.change);
    }

    /// The dedupe id is the event and a hash of what PushPress signed: a replay with another
    /// `created` (unsigned) is the same delivery; other signed data, or another event over the
    /// same data (a no-show after its booking), is another.
    #[test]
    fn a_delivery_is_known_by_what_was_signed_not_by_created() {
        let body = |created: i64, kind: &str| serde_json::json!({"event": "checkin.created", "created": created, "data": {"id": "chk_1", "customer": "usr_1", "timestamp": 1, "kind": kind}});
        let first = parse(body(1_793_620_800, "open").to_string().as_bytes()).expect("first");
        let replayed = parse(body(4_102_444_800, "open").to_string().as_bytes()).expect("replayed");
        assert_eq!(first.dedupe_id(), replayed.dedupe_id());
        let pretty = serde_json::to_string_pretty(&body(1_793_620_800, "open")).expect("pretty");
        assert_eq!(
            parse(pretty.as_bytes()).expect("pretty").dedupe_id(),
            first.dedupe_id(),
            "whitespace is not signed"
        );
        let other = parse(body(1_793_620_800, "class").to_string().as_bytes()).expect("other");
        assert_ne!(first.dedupe_id(), other.dedupe_id());
        // Issue 47: the event name is in the key: another event over the same data is another
        // delivery, never taken for a redelivery.
        let mut renamed = body(1_793_620_800, "open");
        renamed["event"] = serde_json::json!("checkin.updated");
        let renamed = parse(renamed.to_string().as_bytes()).expect("renamed");
        assert_eq!(renamed.event, "checkin.updated");
        assert_ne!(
            first.dedupe_id(),
            renamed.dedupe_id(),
            "another event name over the same signed data"
        );
        assert!(first.dedupe_id().starts_with("v3:"));
    }

    /// The one rule for numbers on PushPress's data: a delivery whose `created` is not a time
    /// Openloop can keep is refused (the handler's 422); an unkeepable number inside the data
    /// leaves that value out — a check-in without a time is acknowledged as unreadable, an
    /// enrollment keeps everything but its billing interval.
    #[test]
    fn numbers_openloop_cannot_keep_are_refused_or_left_out_visibly() {
        for created in [serde_json::json!(1e-131), serde_json::json!(1e126), serde_json::json!(-5)] {
            let body = serde_json::json!({"event": "checkin.created", "created": created, "data": {"id": "chk_1", "customer": "usr_1", "timestamp": 1, "kind": "open"}});
            let refused = parse(body.to_string().as_bytes()).expect_err("refused");
            assert!(refused.starts_with("created is not a unix time"), "{created}: {refused}");
        }
        for timestamp in [serde_json::json!(1e-131), serde_json::json!(1e126), serde_json::json!(-5)] {
            let body = serde_json::json!({"event": "checkin.created", "created": 1_793_620_800, "data": {"id": "chk_1", "customer": "usr_1", "timestamp": timestamp, "kind": "open"}});
            let delivery = parse(body.to_string().as_bytes()).expect("read");
            assert!(
                matches!(&delivery.change, SourceChange::Acknowledged(why) if why.contains("cannot read")),
                "{timestamp}: {:?}",
                delivery.change
            );
        }
        for interval in [
            serde_json::json!(1e-131),
            serde_json::json!(1e126),
            serde_json::json!(-5),
            serde_json::json!(2.5),
        ] {
            let body = serde_json::json!({"event": "enrollment.created", "created": 1_793_620_800, "data": {"id": "sub_1", "customerId": "usr_1", "status": "active", "billingSchedule": {"period": "month", "interval": interval}}});
            let delivery = parse(body.to_string().as_bytes()).expect("read");
            match &delivery.change {
                SourceChange::Enrollment(e) => assert_eq!(
                    (e.billing_period.as_deref(), e.billing_interval),
                    (Some("month"), None),
                    "{interval}"
                ),
                other => panic!("{interval}: the enrollment is kept: {other:?}"),
            }
        }
    }
}

//! SES's notifications read into the domain's [`MailEvent`]. SES
//! receiving publishes every member reply to the mail-events SNS topic (the raw message,
//! base64, or — over 150 KB — the bucket and key an S3 action stored it under), and SES's
//! bounce and complaint notifications go to the same topic; SNS delivers both to the signals
//! queue. This is the one place that knows SES's field names; the core gets a typed event.
//! The SNS envelope's signature is checked before any of this ([`crate::sns`]).

use base64::Engine as _;
use serde_json::Value;

use openloop_core::engine::{InboundMail, MailEvent, MailFeedback};
use openloop_core::kernel::error::InvalidInput;
use openloop_core::kernel::ids::Email;

/// The SES notification in an SQS body — bare (raw delivery) or inside an SNS envelope — or
/// `None` when the body is something else (a member event).
pub fn ses_notification(body: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(body).ok()?;
    let inner = if value.get("Type").and_then(Value::as_str) == Some("Notification") {
        serde_json::from_str(value.get("Message")?.as_str()?).ok()?
    } else {
        value
    };
    (inner.get("notificationType").is_some() || inner.get("eventType").is_some()).then_some(inner)
}

/// What an SES notification says, as a [`MailEvent`]. A `Received` notification with neither
/// its content nor a stored object, or content that is not the base64 it claims, is invalid.
pub fn mail_event(notification: &Value) -> Result<MailEvent, InvalidInput> {
    let kind = notification
        .get("notificationType")
        .or_else(|| notification.get("eventType"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(match kind {
        "Received" => MailEvent::Received(received_message(notification)?),
        "Bounce" => MailEvent::Bounced {
            permanent: notification.pointer("/bounce/bounceType").and_then(Value::as_str) == Some("Permanent"),
            mail: feedback(notification, "/bounce/bouncedRecipients"),
        },
        "Complaint" => MailEvent::Complained(feedback(notification, "/complaint/complainedRecipients")),
        other => MailEvent::Other(other.to_owned()),
    })
}

/// The raw message of a `Received` notification: its content, or where the S3 action stored it.
fn received_message(notification: &Value) -> Result<InboundMail, InvalidInput> {
    let action = notification.pointer("/receipt/action");
    let field = |name: &str| action.and_then(|a| a.get(name)).and_then(Value::as_str);
    if let Some(content) = notification.get("content").and_then(Value::as_str) {
        return if field("encoding") == Some("BASE64") {
            base64::engine::general_purpose::STANDARD
                .decode(content)
                .map(InboundMail::Raw)
                .map_err(|e| InvalidInput::new("invalid_notification", format!("content is not base64: {e}")))
        } else {
            Ok(InboundMail::Raw(content.as_bytes().to_vec()))
        };
    }
    match (field("type"), field("bucketName"), field("objectKey")) {
        (Some("S3"), Some(bucket), Some(key)) => Ok(InboundMail::Stored {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        }),
        _ => Err(InvalidInput::new(
            "invalid_notification",
            "a Received notification with neither content nor an S3 object",
        )),
    }
}

/// The mail a bounce or complaint is about (its Message-IDs: the common header, then every
/// `Message-ID` header) and the listed recipients that are addresses.
fn feedback(notification: &Value, recipients: &str) -> MailFeedback {
    let mut message_ids: Vec<&str> = Vec::new();
    if let Some(id) = notification.pointer("/mail/commonHeaders/messageId").and_then(Value::as_str) {
        message_ids.push(id);
    }
    for header in notification
        .pointer("/mail/headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if header
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n.eq_ignore_ascii_case("message-id"))
            && let Some(value) = header.get("value").and_then(Value::as_str)
        {
            message_ids.push(value);
        }
    }
    MailFeedback {
        message_ids: message_ids
            .into_iter()
            .map(|id| id.trim().trim_matches(['<', '>']).to_owned())
            .collect(),
        recipients: notification
            .pointer(recipients)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("emailAddress").and_then(Value::as_str))
            .filter_map(|address| Email::parse(address.trim_matches(['<', '>'])).ok())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(notification: Value) -> Result<MailEvent, InvalidInput> {
        mail_event(&notification)
    }

    fn email(address: &str) -> Email {
        Email::parse(address).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn notifications_are_found_bare_or_in_their_sns_envelope_and_member_events_are_not() {
        let bare = r#"{"notificationType": "Bounce", "bounce": {}}"#;
        assert!(ses_notification(bare).is_some());
        let envelope = serde_json::json!({"Type": "Notification", "Message": bare}).to_string();
        assert_eq!(ses_notification(&envelope), ses_notification(bare));
        assert!(ses_notification(r#"{"account_id": "x", "webhook_id": "y", "event": {}}"#).is_none());
        assert!(ses_notification("not json").is_none());
    }

    #[test]
    fn a_received_mail_is_its_decoded_content_or_its_stored_object() {
        let inline = event(json!({"notificationType": "Received", "content": "SGk=",
            "receipt": {"action": {"type": "SNS", "encoding": "BASE64"}}}));
        assert_eq!(inline.ok(), Some(MailEvent::Received(InboundMail::Raw(b"Hi".to_vec()))));
        let utf8 = event(json!({"notificationType": "Received", "content": "Hi",
            "receipt": {"action": {"type": "SNS", "encoding": "UTF-8"}}}));
        assert_eq!(utf8.ok(), Some(MailEvent::Received(InboundMail::Raw(b"Hi".to_vec()))));
        let stored = event(json!({"notificationType": "Received",
            "receipt": {"action": {"type": "S3", "bucketName": "inbound", "objectKey": "k1"}}}));
        let expected = InboundMail::Stored {
            bucket: "inbound".into(),
            key: "k1".into(),
        };
        assert_eq!(stored.ok(), Some(MailEvent::Received(expected)));
    }

    #[test]
    fn a_received_notification_without_a_message_or_with_bad_base64_is_invalid() {
        let neither = event(json!({"notificationType": "Received", "receipt": {"action": {"type": "SNS"}}}));
        assert_eq!(neither.err().map(|e| e.code), Some("invalid_notification".to_owned()));
        let bad = event(json!({"notificationType": "Received", "content": "not base64!",
            "receipt": {"action": {"encoding": "BASE64"}}}));
        assert_eq!(bad.err().map(|e| e.code), Some("invalid_notification".to_owned()));
    }

    #[test]
    fn a_bounce_names_our_message_ids_and_its_addressable_recipients() {
        let bounce = event(json!({"notificationType": "Bounce",
            "bounce": {"bounceType": "Permanent", "bouncedRecipients": [
                {"emailAddress": "<jane@example.com>"}, {"emailAddress": "not an address"}, {"status": "5.1.1"}]},
            "mail": {"commonHeaders": {"messageId": " <ses-1@amazonses.com> "},
                     "headers": [{"name": "Message-ID", "value": "<ours@openloop>"}, {"name": "Subject", "value": "x"}]}}));
        let mail = MailFeedback {
            message_ids: vec!["ses-1@amazonses.com".into(), "ours@openloop".into()],
            recipients: vec![email("jane@example.com")],
        };
        assert_eq!(bounce.ok(), Some(MailEvent::Bounced { permanent: true, mail }));
    }

    #[test]
    fn transient_bounces_complaints_and_other_kinds_are_told_apart() {
        let transient = event(json!({"eventType": "Bounce", "bounce": {"bounceType": "Transient"}}));
        assert!(matches!(transient, Ok(MailEvent::Bounced { permanent: false, .. })));
        let complaint = event(json!({"notificationType": "Complaint",
            "complaint": {"complainedRecipients": [{"emailAddress": "jane@example.com"}]}}));
        let mail = MailFeedback {
            message_ids: vec![],
            recipients: vec![email("jane@example.com")],
        };
        assert_eq!(complaint.ok(), Some(MailEvent::Complained(mail)));
        assert_eq!(
            event(json!({"notificationType": "Delivery"})).ok(),
            Some(MailEvent::Other("Delivery".into()))
        );
    }
}

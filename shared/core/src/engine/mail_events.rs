//! What SES tells us about mail, in AWS (spec §22.3, §24.3): SES receiving publishes every
//! member reply to the mail-events SNS topic (the raw message, base64), and SES's bounce and
//! complaint notifications go to the same topic; SNS delivers both to the signals queue, so
//! the signals function reads them here. A reply takes the same path as
//! `POST /webhooks/inbound-email`; a hard bounce or a complaint is a member-level stop.
//!
//! A reply either comes inside its notification (an SNS action: base64, up to 150 KB) or was
//! stored by an S3 action, whose notification names the bucket and key instead; the
//! [`StoredMail`] port reads it then. The SNS envelope's signature is checked before any of
//! this, by the signals function (`openloop_aws::sns`).

use base64::Engine as _;
use serde_json::Value;

use super::Engine;
use super::replies::InboundOutcome;
use crate::error::{EngineError, InvalidInput};
use crate::ids::Email;
use crate::ports::{StoredMail, StoredMailError};

/// What a notification came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MailEventOutcome {
    Reply(InboundOutcome),
    /// A hard bounce or a complaint: the address is suppressed and its tasks cancelled.
    Suppressed {
        reason: &'static str,
        tasks_cancelled: usize,
    },
    /// Nothing to do (a soft bounce, a delivery report, a mail we did not send…).
    Ignored(String),
}

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

/// The raw message of a `Received` notification: its content, or what the S3 action stored.
async fn received_message(notification: &Value, stored: &dyn StoredMail) -> Result<Vec<u8>, EngineError> {
    let action = notification.pointer("/receipt/action");
    let field = |name: &str| action.and_then(|a| a.get(name)).and_then(Value::as_str);
    if let Some(content) = notification.get("content").and_then(Value::as_str) {
        return if field("encoding") == Some("BASE64") {
            base64::engine::general_purpose::STANDARD
                .decode(content)
                .map_err(|e| InvalidInput::new("invalid_notification", format!("content is not base64: {e}")).into())
        } else {
            Ok(content.as_bytes().to_vec())
        };
    }
    match (field("type"), field("bucketName"), field("objectKey")) {
        (Some("S3"), Some(bucket), Some(key)) => stored.fetch(bucket, key).await.map_err(|e| match e {
            StoredMailError::NotFound(what) => InvalidInput::new("stored_mail_not_found", what).into(),
            StoredMailError::Unavailable(why) => EngineError::Dependency(why),
        }),
        _ => Err(InvalidInput::new(
            "invalid_notification",
            "a Received notification with neither content nor an S3 object",
        )
        .into()),
    }
}

impl Engine {
    /// Act on one SES notification; `stored` reads messages an S3 action kept.
    pub async fn handle_mail_event(&self, notification: &Value, stored: &dyn StoredMail) -> Result<MailEventOutcome, EngineError> {
        let kind = notification
            .get("notificationType")
            .or_else(|| notification.get("eventType"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "Received" => {
                let raw = received_message(notification, stored).await?;
                Ok(MailEventOutcome::Reply(self.receive_reply(&raw).await?))
            }
            "Bounce" => {
                let permanent = notification.pointer("/bounce/bounceType").and_then(Value::as_str) == Some("Permanent");
                if !permanent {
                    return Ok(MailEventOutcome::Ignored("a transient bounce: SES retries, nothing to stop".into()));
                }
                self.stop_recipients(notification, "/bounce/bouncedRecipients", "bounce").await
            }
            "Complaint" => {
                self.stop_recipients(notification, "/complaint/complainedRecipients", "complaint")
                    .await
            }
            other => Ok(MailEventOutcome::Ignored(format!("{other:?} notifications need nothing"))),
        }
    }

    /// Suppress every listed recipient of a mail we sent, in the account that sent it.
    async fn stop_recipients(&self, notification: &Value, recipients: &str, reason: &'static str) -> Result<MailEventOutcome, EngineError> {
        let Some((account, _task)) = self.sent_mail(notification).await? else {
            tracing::warn!(reason, "a bounce or complaint about a mail we have no record of");
            return Ok(MailEventOutcome::Ignored("not a mail of ours".into()));
        };
        let mut tasks_cancelled = 0;
        for recipient in notification.pointer(recipients).and_then(Value::as_array).into_iter().flatten() {
            let Some(address) = recipient.get("emailAddress").and_then(Value::as_str) else {
                continue;
            };
            let Ok(email) = Email::parse(address.trim_matches(['<', '>'])) else {
                continue;
            };
            tasks_cancelled += self.suppress(account, &email, reason).await?;
        }
        Ok(MailEventOutcome::Suppressed { reason, tasks_cancelled })
    }

    /// The task a notification's mail was sent for, by our Message-ID in its headers.
    async fn sent_mail(&self, notification: &Value) -> Result<Option<(crate::ids::AccountId, crate::ids::TaskId)>, EngineError> {
        let mut ids: Vec<String> = Vec::new();
        if let Some(id) = notification.pointer("/mail/commonHeaders/messageId").and_then(Value::as_str) {
            ids.push(id.to_owned());
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
                ids.push(value.to_owned());
            }
        }
        for id in ids {
            if let Some(route) = self.store.message_route(id.trim().trim_matches(['<', '>'])).await? {
                return Ok(Some(route));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_found_bare_or_in_their_sns_envelope_and_member_events_are_not() {
        let bare = r#"{"notificationType": "Bounce", "bounce": {}}"#;
        assert!(ses_notification(bare).is_some());
        let envelope = serde_json::json!({"Type": "Notification", "Message": bare}).to_string();
        assert_eq!(ses_notification(&envelope), ses_notification(bare));
        assert!(ses_notification(r#"{"account_id": "x", "webhook_id": "y", "event": {}}"#).is_none());
        assert!(ses_notification("not json").is_none());
    }
}

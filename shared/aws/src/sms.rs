//! The AWS End User Messaging SMS [`SmsSender`] (`SendTextMessage` of the
//! `PinpointSMSVoiceV2` API, awsJson 1.0, one signed request of our own: [`crate::aws_json`]),
//! and a member's text as its two-way SMS publishes it to SNS.
//!
//! At-most-once, as the mailer: a text is sent once and never retried here; an error after the
//! request may have reached the service is [`SendError::Ambiguous`] and escalated by the engine,
//! never retried blind. Only refusals the service states before accepting (validation, access,
//! an opted-out number, throttling) and connections never made are `Rejected`.

use async_trait::async_trait;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use serde::Deserialize;
use serde_json::{Value, json};

use openloop_core::engine::SmsInbound;
use openloop_core::ports::{Delivered, OutboundText, SendError, SmsSender};

use crate::aws_json::{JsonService, sent};

/// The refusals `SendTextMessage` states before it accepts a text: nothing was sent.
const REFUSED_BEFORE_SENDING: &[&str] = &[
    "ValidationException",
    "AccessDeniedException",
    "ConflictException",
    "ResourceNotFoundException",
    "ServiceQuotaExceededException",
    "ThrottlingException",
];

#[derive(Clone)]
pub struct EndUserMessagingSms {
    sms: JsonService,
}

impl EndUserMessagingSms {
    /// The service in the clients' region (or at their emulator's endpoint).
    pub fn new(shared: SdkConfig) -> Self {
        Self {
            sms: JsonService::json_1_0(shared, "sms-voice", "PinpointSMSVoiceV2"),
        }
    }

    /// The service at `endpoint`, each request signed with the access key `key` names then:
    /// the local runtime's fake server of its protocol (the emulator has no such API), with
    /// the key of the function at work.
    pub fn at(endpoint: &str, region: &str, key: std::sync::Arc<dyn Fn() -> String + Send + Sync>) -> Self {
        let shared = SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region.to_owned()))
            .endpoint_url(endpoint)
            .credentials_provider(aws_sdk_dynamodb::config::SharedCredentialsProvider::new(crate::clients::NamedKey(
                key,
            )))
            .build();
        Self::new(shared)
    }
}

/// `SendTextMessage`'s request: a member's conversation with their gym, not a campaign.
fn send_text_message(text: &OutboundText) -> Value {
    json!({
        "DestinationPhoneNumber": text.to,
        "OriginationIdentity": text.from,
        "MessageBody": text.body,
        "MessageType": "TRANSACTIONAL",
    })
}

#[async_trait]
impl SmsSender for EndUserMessagingSms {
    async fn send_text(&self, text: &OutboundText) -> Result<Delivered, SendError> {
        let answer = sent(
            self.sms.call("SendTextMessage", &send_text_message(text)).await,
            REFUSED_BEFORE_SENDING,
        )?;
        let id = answer
            .get("MessageId")
            .and_then(Value::as_str)
            .ok_or_else(|| SendError::Ambiguous("the SMS service accepted the text without a message id".into()))?;
        Ok(Delivered {
            provider_id: id.to_owned(),
            provider_message_id: None,
        })
    }
}

/// What two-way SMS publishes for a member's text (the SNS notification's `Message`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InboundSms {
    origination_number: String,
    destination_number: String,
    #[serde(default)]
    message_body: String,
    inbound_message_id: String,
}

/// A member's text from the `Message` of an SNS notification; `None` when it is not one.
pub fn inbound_text(message: &str) -> Option<SmsInbound> {
    let sms: InboundSms = serde_json::from_str(message).ok()?;
    Some(SmsInbound {
        from: sms.origination_number,
        to: sms.destination_number,
        body: sms.message_body,
        message_id: sms.inbound_message_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws_json::{AwsRefusal, refused_send};

    /// A refusal the service states before accepting is a text not sent; a failure on its side
    /// or an answer lost after sending may have reached the member, and is never sent again.
    #[test]
    fn only_what_never_reached_the_member_is_a_refusal() {
        let refusal = |code: &str, status| AwsRefusal {
            status,
            code: code.into(),
            message: Some("why".into()),
        };
        assert!(
            matches!(refused_send(refusal("ValidationException", 400), REFUSED_BEFORE_SENDING), SendError::Rejected(t) if t == "ValidationException: why")
        );
        assert!(matches!(
            refused_send(refusal("ThrottlingException", 400), REFUSED_BEFORE_SENDING),
            SendError::Rejected(_)
        ));
        assert!(matches!(
            refused_send(refusal("InternalServerException", 500), REFUSED_BEFORE_SENDING),
            SendError::Ambiguous(_)
        ));
        let body = send_text_message(&OutboundText {
            to: "+14255550182".into(),
            from: "+12125550101".into(),
            body: "Hi".into(),
            segments: 1,
            sent_at: jiff::Timestamp::UNIX_EPOCH,
        });
        assert_eq!(body["MessageType"], "TRANSACTIONAL");
        assert_eq!(body["DestinationPhoneNumber"], "+14255550182");
    }

    #[test]
    fn a_two_way_sms_payload_is_a_members_text() {
        let text = inbound_text(
            r#"{"originationNumber":"+14255550182","destinationNumber":"+12125550101","messageKeyword":"JOIN",
                "messageBody":"STOP","inboundMessageId":"cae173d2-66b9-564c-8309-21f858e9fb84","previousPublishedMessageId":"x"}"#,
        )
        .expect("parsed");
        assert_eq!(
            (text.from.as_str(), text.to.as_str(), text.body.as_str()),
            ("+14255550182", "+12125550101", "STOP")
        );
        assert_eq!(text.message_id, "cae173d2-66b9-564c-8309-21f858e9fb84");
        assert!(inbound_text(r#"{"notificationType":"Bounce"}"#).is_none());
    }
}

//! The AWS End User Messaging SMS [`SmsSender`] (`SendTextMessage` of the
//! `PinpointSMSVoiceV2` API), and a member's text as its two-way SMS publishes it to SNS.
//!
//! At-most-once, as the mailer: the client is built with retries off (see
//! [`crate::clients`]); an error after the request may have reached the service is
//! [`SendError::Ambiguous`] and escalated by the engine, never retried blind. Only refusals
//! the service states before accepting (validation, access, an opted-out number, throttling)
//! are `Rejected`.

use async_trait::async_trait;
use aws_sdk_pinpointsmsvoicev2::Client;
use aws_sdk_pinpointsmsvoicev2::error::SdkError;
use aws_sdk_pinpointsmsvoicev2::operation::send_text_message::SendTextMessageError;
use aws_sdk_pinpointsmsvoicev2::types::MessageType;
use serde::Deserialize;

use openloop_core::engine::SmsInbound;
use openloop_core::ports::{Delivered, OutboundText, SendError, SmsSender};

#[derive(Clone)]
pub struct EndUserMessagingSms {
    client: Client,
}

impl EndUserMessagingSms {
    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

#[async_trait]
impl SmsSender for EndUserMessagingSms {
    async fn send_text(&self, text: &OutboundText) -> Result<Delivered, SendError> {
        let out = self
            .client
            .send_text_message()
            .destination_phone_number(&text.to)
            .origination_identity(&text.from)
            .message_body(&text.body)
            // A member's conversation with their gym, not a campaign.
            .message_type(MessageType::Transactional)
            .send()
            .await
            .map_err(classify)?;
        let id = out
            .message_id
            .ok_or_else(|| SendError::Ambiguous("the SMS service accepted the text without a message id".into()))?;
        Ok(Delivered {
            provider_id: id,
            provider_message_id: None,
        })
    }
}

fn classify(e: SdkError<SendTextMessageError>) -> SendError {
    match &e {
        SdkError::ConstructionFailure(_) => SendError::Rejected(format!("request not built: {e:?}")),
        // Never connected: nothing reached the service.
        SdkError::DispatchFailure(d) if d.is_io() && !d.is_timeout() => SendError::Rejected(format!("not sent: {e:?}")),
        SdkError::ServiceError(service) => {
            let err = service.err();
            let text = format!(
                "{}: {}",
                err.meta().code().unwrap_or("error"),
                err.meta().message().unwrap_or_default()
            );
            if matches!(
                err,
                SendTextMessageError::ValidationException(_)
                    | SendTextMessageError::AccessDeniedException(_)
                    | SendTextMessageError::ConflictException(_)
                    | SendTextMessageError::ResourceNotFoundException(_)
                    | SendTextMessageError::ServiceQuotaExceededException(_)
                    | SendTextMessageError::ThrottlingException(_)
            ) {
                SendError::Rejected(text)
            } else {
                SendError::Ambiguous(text)
            }
        }
        _ => SendError::Ambiguous(format!("{e:?}")),
    }
}

/// A client of the service at `endpoint` with fixed credentials: the local runtime's fake
/// server of its protocol (the emulator has no such API).
pub fn client_at(endpoint: &str, region: &str) -> Client {
    let config = aws_sdk_pinpointsmsvoicev2::config::Builder::new()
        .behavior_version(aws_sdk_pinpointsmsvoicev2::config::BehaviorVersion::latest())
        .region(aws_sdk_pinpointsmsvoicev2::config::Region::new(region.to_owned()))
        .endpoint_url(endpoint)
        .http_client(crate::sdk_http::client())
        .stalled_stream_protection(crate::sdk_http::stalled_stream_protection())
        .credentials_provider(aws_sdk_pinpointsmsvoicev2::config::Credentials::new(
            "local",
            "local",
            None,
            None,
            "openloop-local",
        ))
        .retry_config(aws_sdk_pinpointsmsvoicev2::config::retry::RetryConfig::disabled())
        .build();
    Client::from_conf(config)
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

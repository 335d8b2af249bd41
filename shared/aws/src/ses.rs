//! The SES v2 [`Mailer`]: raw MIME built with mail-builder, so we control every header —
//! our own `Message-ID`, thread headers, the signed `Reply-To`, and RFC 8058 one-click
//! unsubscribe.
//!
//! `SendEmail` (`POST /v2/email/outbound-emails`, REST-JSON) is one signed request of our own
//! ([`crate::aws_json`]): SES's SDK crate was some 0.15 MB of every binary for five calls.
//!
//! At-most-once: a send is never retried here; an error after the request may have reached
//! SES is [`SendError::Ambiguous`] and is escalated by the engine, never retried blind. Only
//! refusals SES states before accepting, and connections never made, are `Rejected`.

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use mail_builder::MessageBuilder;
use mail_builder::headers::raw::Raw;

use openloop_core::conversation::mail::{OutboundMail, UNSUBSCRIBE_FOOTER};
use openloop_core::kernel::text::breaks_a_line;
use openloop_core::ports::{Delivered, Mailer, SendError};
use serde_json::{Value, json};

use crate::aws_json::{JsonService, sent};

/// SES v2's API: signed as `ses`, at `email.{region}.amazonaws.com`.
pub(crate) fn ses_v2(shared: aws_config::SdkConfig) -> JsonService {
    JsonService::rest_json(shared, "ses", "email")
}

#[derive(Clone)]
pub struct SesMailer {
    ses: JsonService,
    region: String,
    /// Named on every send so SES reports bounces and complaints (to the mail-events topic).
    configuration_set: Option<String>,
}

impl SesMailer {
    pub fn new(shared: aws_config::SdkConfig, region: impl Into<String>, configuration_set: Option<String>) -> Self {
        Self {
            ses: ses_v2(shared),
            region: region.into(),
            configuration_set,
        }
    }
}

/// `SendEmail`'s request: the raw message, its envelope sender and recipient.
fn send_email(mail: &OutboundMail, raw: &[u8], configuration_set: Option<&str>) -> Value {
    let mut body = json!({
        "FromEmailAddress": mail.from.to_string(),
        "Destination": {"ToAddresses": [mail.to.to_string()]},
        "Content": {"Raw": {"Data": B64.encode(raw)}},
    });
    if let Some(set) = configuration_set {
        body["ConfigurationSetName"] = json!(set);
    }
    body
}

/// A header's free text (a display name, a subject) on one line: every control character —
/// CR and LF above all — and Unicode line separator becomes a space. The second line of
/// defence: input checks refuse line breaks in names and drafts first (issue: header
/// injection through a display name).
fn one_line(text: &str) -> String {
    let spaced: String = text.chars().map(|c| if breaks_a_line(c) { ' ' } else { c }).collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A message id or an address we put between angle brackets: visible ASCII only, no brackets
/// (an id from a member's mail is theirs to choose).
fn token(text: &str) -> String {
    text.chars().filter(|c| c.is_ascii_graphic() && !matches!(c, '<' | '>')).collect()
}

/// The RFC 5322 bytes of `mail`. Every header value passes [`one_line`] or [`token`], so no
/// value can end its header and start another.
pub fn mime(mail: &OutboundMail) -> Result<Vec<u8>, std::io::Error> {
    let mut builder = MessageBuilder::new()
        .from((one_line(&mail.from_name), mail.from.to_string()))
        .reply_to(token(&mail.reply_to))
        .subject(one_line(&mail.subject))
        .message_id(token(&mail.message_id))
        .date(mail.date.as_second());
    // Mail to members is a mailing: one-click unsubscribe (RFC 8058). Mail to the owner
    // (notifications) names no unsubscribe URL; their settings are the switch.
    let unsubscribe = token(&mail.unsubscribe_url);
    builder = if unsubscribe.is_empty() {
        builder.text_body(format!("{}\n", mail.text.trim_end()))
    } else {
        builder
            .header("List-Unsubscribe", Raw::new(format!("<{unsubscribe}>")))
            .header("List-Unsubscribe-Post", Raw::new("List-Unsubscribe=One-Click"))
            .text_body(format!("{}\n\n--\n{UNSUBSCRIBE_FOOTER} {}\n", mail.text.trim_end(), unsubscribe))
    };
    builder = match &mail.to_name {
        Some(name) => builder.to((one_line(name), mail.to.to_string())),
        None => builder.to(mail.to.to_string()),
    };
    if let Some(parent) = &mail.in_reply_to {
        builder = builder.in_reply_to(token(parent));
    }
    if !mail.references.is_empty() {
        builder = builder.references(mail.references.iter().map(|r| token(r)).collect::<Vec<_>>());
    }
    builder.write_to_vec()
}

#[async_trait]
impl Mailer for SesMailer {
    async fn send(&self, mail: &OutboundMail) -> Result<Delivered, SendError> {
        let raw = mime(mail).map_err(|e| SendError::Rejected(format!("could not build the message: {e}")))?;
        let request = send_email(mail, &raw, self.configuration_set.as_deref());
        let answer = sent(
            self.ses.rest("POST", "/v2/email/outbound-emails", Some(&request)).await,
            REFUSED_BEFORE_SENDING,
        )?;
        let id = answer
            .get("MessageId")
            .and_then(Value::as_str)
            .ok_or_else(|| SendError::Ambiguous("SES accepted the mail without a message id".into()))?;
        Ok(Delivered {
            provider_id: id.to_owned(),
            provider_message_id: Some(format!("{id}@{}.amazonses.com", self.region)),
        })
    }
}

/// The refusals SES states before it accepts a message: nothing was sent.
const REFUSED_BEFORE_SENDING: &[&str] = &[
    "MessageRejected",
    "MailFromDomainNotVerifiedException",
    "AccountSuspendedException",
    "SendingPausedException",
    "TooManyRequestsException",
    "LimitExceededException",
    "BadRequestException",
    "NotFoundException",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws_json::{AwsRefusal, refused_send};
    use openloop_core::kernel::ids::Email;

    fn mail() -> OutboundMail {
        OutboundMail {
            from_name: "CrossFit Renegade".into(),
            from: Email::parse("outreach@mail.example.com").expect("email"),
            to: Email::parse("sarah@example.com").expect("email"),
            to_name: Some("Sarah Johnson".into()),
            subject: "Re: Quick note".into(),
            text: "Hi Sarah".into(),
            message_id: "b@mail.example.com".into(),
            in_reply_to: Some("a@mail.example.com".into()),
            references: vec!["a@mail.example.com".into(), "x@us-east-1.amazonses.com".into()],
            reply_to: "reply+token@replies.example.com".into(),
            unsubscribe_url: "https://app.example.com/unsubscribe?token=t".into(),
            date: "2026-11-02T14:00:00Z".parse().expect("ts"),
        }
    }

    /// `SendEmail`'s request is the raw message as SES takes it, and only SES's refusals
    /// before accepting (or no connection at all) are a mail not sent.
    #[test]
    fn a_send_is_the_raw_message_and_only_refusals_before_accepting_are_not_sent() {
        let body = send_email(&mail(), b"raw mime", Some("openloop"));
        assert_eq!(body["Content"]["Raw"]["Data"], B64.encode(b"raw mime"));
        assert_eq!(body["Destination"]["ToAddresses"][0], "sarah@example.com");
        assert_eq!(body["FromEmailAddress"], "outreach@mail.example.com");
        assert_eq!(body["ConfigurationSetName"], "openloop");
        assert!(send_email(&mail(), b"x", None).get("ConfigurationSetName").is_none());
        let refusal = |code: &str, status| AwsRefusal {
            status,
            code: code.into(),
            message: None,
        };
        assert!(matches!(
            refused_send(refusal("MessageRejected", 400), REFUSED_BEFORE_SENDING),
            SendError::Rejected(_)
        ));
        assert!(matches!(
            refused_send(refusal("InternalFailure", 500), REFUSED_BEFORE_SENDING),
            SendError::Ambiguous(_)
        ));
    }

    #[test]
    fn the_mime_carries_threading_reply_to_and_one_click_unsubscribe() {
        let raw = String::from_utf8(mime(&mail()).expect("mime")).expect("utf8");
        for expected in [
            "Message-ID: <b@mail.example.com>",
            "In-Reply-To: <a@mail.example.com>",
            "References: <a@mail.example.com> <x@us-east-1.amazonses.com>",
            "Reply-To: <reply+token@replies.example.com>",
            "List-Unsubscribe: <https://app.example.com/unsubscribe?token=t>",
            "List-Unsubscribe-Post: List-Unsubscribe=One-Click",
            "Subject: Re: Quick note",
        ] {
            assert!(raw.contains(expected), "missing {expected:?} in\n{raw}");
        }
    }

    /// The headers a member's mail carries, each once.
    const HEADERS: [&str; 13] = [
        "content-transfer-encoding",
        "content-type",
        "date",
        "from",
        "in-reply-to",
        "list-unsubscribe",
        "list-unsubscribe-post",
        "message-id",
        "mime-version",
        "references",
        "reply-to",
        "subject",
        "to",
    ];

    fn header_names(raw: &[u8]) -> Vec<String> {
        let message = mail_parser::MessageParser::default().parse(raw).expect("the mail parses");
        let mut names: Vec<String> = message.headers().iter().map(|h| h.name().to_ascii_lowercase()).collect();
        names.sort();
        names
    }

    #[test]
    fn an_injected_line_break_in_any_header_field_writes_no_header() {
        let evil = "G\r\nReply-To: a@evil.example\r\nBcc: all@evil.example\r\n\r\nbody";
        for field in [
            "from_name",
            "to_name",
            "subject",
            "message_id",
            "in_reply_to",
            "references",
            "reply_to",
            "unsubscribe_url",
        ] {
            let mut m = mail();
            match field {
                "from_name" => m.from_name = evil.into(),
                "to_name" => m.to_name = Some(evil.into()),
                "subject" => m.subject = evil.into(),
                "message_id" => m.message_id = evil.into(),
                "in_reply_to" => m.in_reply_to = Some(evil.into()),
                "references" => m.references = vec![evil.into()],
                "reply_to" => m.reply_to = evil.into(),
                _ => m.unsubscribe_url = evil.into(),
            }
            let raw = mime(&m).expect("mime");
            assert_eq!(header_names(&raw), HEADERS, "{field}:\n{}", String::from_utf8_lossy(&raw));
            let text = String::from_utf8_lossy(&raw);
            assert!(
                !text.contains("\r\nBcc:") && !text.contains("\r\nReply-To: a@evil"),
                "{field}:\n{text}"
            );
        }
    }

    proptest::proptest! {
        /// Whatever text reaches a header field, the parsed mail holds exactly the headers we
        /// meant to write, and names and the subject come back as one line.
        #[test]
        fn arbitrary_header_text_never_adds_a_header(
            from_name in ".{0,60}",
            to_name in ".{0,60}",
            subject in ".{0,120}",
            id in ".{0,60}",
        ) {
            let mut m = mail();
            m.from_name = from_name.clone();
            m.to_name = Some(to_name);
            m.subject = subject.clone();
            m.message_id = format!("{id}@x");
            m.in_reply_to = Some(id.clone());
            m.references = vec![id];
            let raw = mime(&m).expect("mime");
            proptest::prop_assert_eq!(header_names(&raw), HEADERS);
            let message = mail_parser::MessageParser::default().parse(&raw[..]).expect("parses");
            proptest::prop_assert_eq!(message.subject().unwrap_or(""), one_line(&subject));
            let from = message.from().and_then(|a| a.first()).expect("a From address");
            proptest::prop_assert_eq!(from.address(), Some("outreach@mail.example.com"));
        }
    }
}

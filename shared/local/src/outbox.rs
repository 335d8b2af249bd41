//! `GET /_local/outbox`: every e-mail the mail provider accepted, oldest first, parsed from
//! the very MIME bytes the SES adapter sends.
//!
//! The runtime's mailer is wrapped in an [`Outbox`]: each send the provider (the emulator's
//! SES, or nothing in memory mode) accepted is kept here as it left, so reading it costs what
//! is read — never what the emulator holds (its `/moto-api/data.json` serialises its whole
//! state). Kept per recipient as well, so one member's mail is found without a scan.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mail_parser::{HeaderValue, MessageParser};
use serde::Serialize;

use openloop_core::conversation::mail::OutboundMail;
use openloop_core::ports::{Delivered, Mailer, SendError};

#[derive(Clone, Debug, Serialize)]
pub struct OutboxMail {
    /// The recipients, comma-separated (one, for our mail).
    pub to: String,
    pub from: Option<String>,
    /// The sender's display name (`"Coach Mike at Iron Temple"`), as the member's mail
    /// client shows it.
    pub from_name: Option<String>,
    pub subject: Option<String>,
    pub text: Option<String>,
    pub message_id: Option<String>,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub reply_to: Option<String>,
    pub list_unsubscribe: Option<String>,
    pub list_unsubscribe_post: Option<String>,
    pub sent_at: Option<String>,
    pub ses_message_id: Option<String>,
    /// The RFC 5322 bytes as they left (what SES was given), for tests that read the message
    /// itself — its headers, its parts, a spam filter's score. Not in the JSON.
    #[serde(skip)]
    pub raw: Arc<[u8]>,
}

fn ids(value: &HeaderValue) -> Vec<String> {
    match value {
        HeaderValue::Text(t) => vec![t.to_string()],
        HeaderValue::TextList(list) => list.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Parse one raw message.
pub fn parse(raw: &[u8], ses_id: Option<String>) -> Option<OutboxMail> {
    let message = MessageParser::default().parse(raw)?;
    let first = |a: Option<&mail_parser::Address>| a.and_then(|a| a.first()).and_then(|a| a.address()).map(str::to_owned);
    Some(OutboxMail {
        to: message
            .to()
            .map(|a| a.iter().filter_map(|a| a.address().map(str::to_owned)).collect())
            .unwrap_or_default(),
        from: first(message.from()),
        from_name: message.from().and_then(|a| a.first()).and_then(|a| a.name()).map(str::to_owned),
        subject: message.subject().map(str::to_owned),
        text: message.body_text(0).map(|t| t.replace("\r\n", "\n")),
        message_id: message.message_id().map(str::to_owned),
        in_reply_to: ids(message.in_reply_to()).into_iter().next(),
        references: ids(message.references()),
        reply_to: first(message.reply_to()),
        list_unsubscribe: message.header_raw("List-Unsubscribe").map(|v| v.trim().to_owned()),
        list_unsubscribe_post: message.header_raw("List-Unsubscribe-Post").map(|v| v.trim().to_owned()),
        sent_at: message
            .date()
            .and_then(|d| jiff::Timestamp::from_second(d.to_timestamp()).ok())
            .map(|t| t.to_string()),
        ses_message_id: ses_id,
        raw: raw.into(),
    })
}

#[derive(Default)]
struct Kept {
    mail: Vec<OutboxMail>,
    /// Positions in `mail` per recipient, oldest first.
    by_recipient: HashMap<String, Vec<usize>>,
}

/// The mail provider of memory mode: accepts every send, as the emulator's SES accepts every
/// send from a verified identity, and names the delivered copy as SES does.
pub struct AcceptingProvider {
    pub region: String,
}

#[async_trait]
impl Mailer for AcceptingProvider {
    async fn send(&self, _: &OutboundMail) -> Result<Delivered, SendError> {
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        Ok(Delivered {
            provider_message_id: Some(format!("{id}@{}.amazonses.com", self.region)),
            provider_id: id,
        })
    }
}

/// The runtime's [`Mailer`]: the provider's, keeping what it accepted.
pub struct Outbox {
    provider: Arc<dyn Mailer>,
    kept: Mutex<Kept>,
    /// Where each mail is kept too, on the emulator ([`crate::kept`]).
    durable: Option<Arc<crate::kept::Kept>>,
}

impl Outbox {
    pub fn new(provider: Arc<dyn Mailer>) -> Self {
        Self {
            provider,
            kept: Mutex::new(Kept::default()),
            durable: None,
        }
    }

    /// [`Self::new`], keeping each mail in `durable` as well, and holding the mail a runtime
    /// before this one kept.
    pub(crate) async fn kept_in(provider: Arc<dyn Mailer>, durable: Arc<crate::kept::Kept>) -> Result<Self, String> {
        let before = durable.mails().await?;
        let outbox = Self {
            provider,
            kept: Mutex::new(Kept::default()),
            durable: Some(durable),
        };
        for (id, raw) in before {
            if let Some(parsed) = parse(&raw, Some(id)) {
                outbox.keep(parsed);
            }
        }
        Ok(outbox)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The accepted mail, oldest first: all of it, or only one recipient's; from position
    /// `after` on (the count a reader has already seen).
    pub fn read(&self, to: Option<&str>, after: usize) -> Vec<OutboxMail> {
        let kept = self.lock();
        match to {
            None => kept.mail.iter().skip(after).cloned().collect(),
            Some(to) => kept
                .by_recipient
                .get(to)
                .map(|at| at.iter().skip(after).map(|&i| kept.mail[i].clone()).collect())
                .unwrap_or_default(),
        }
    }

    pub fn len(&self) -> usize {
        self.lock().mail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn keep(&self, mail: OutboxMail) {
        let mut kept = self.lock();
        let at = kept.mail.len();
        kept.by_recipient.entry(mail.to.clone()).or_default().push(at);
        kept.mail.push(mail);
    }
}

#[async_trait]
impl Mailer for Outbox {
    async fn send(&self, mail: &OutboundMail) -> Result<Delivered, SendError> {
        let raw = openloop_aws::ses::mime(mail).map_err(|e| SendError::Rejected(format!("could not build the message: {e}")))?;
        let delivered = self.provider.send(mail).await?;
        if let Some(durable) = &self.durable
            && let Err(e) = durable.keep_mail(&raw, &delivered.provider_id).await
        {
            tracing::error!(error = %e, "a mail accepted was not kept for a restart");
        }
        if let Some(parsed) = parse(&raw, Some(delivered.provider_id.clone())) {
            self.keep(parsed);
        }
        Ok(delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(to: &str, subject: &str) -> OutboundMail {
        let email = |a: &str| openloop_core::kernel::ids::Email::parse(a).expect("address");
        OutboundMail {
            from: email("outreach@mail.openloop.local"),
            from_name: "Gym".into(),
            to: email(to),
            to_name: None,
            reply_to: "reply+t@replies.openloop.local".into(),
            subject: subject.into(),
            text: "Hi".into(),
            message_id: format!("{subject}@openloop.local"),
            in_reply_to: None,
            references: Vec::new(),
            unsubscribe_url: String::new(),
            date: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    #[tokio::test]
    async fn accepted_mail_is_read_back_per_recipient_and_from_a_position() {
        let outbox = Outbox::new(Arc::new(AcceptingProvider {
            region: "us-east-1".into(),
        }));
        for (to, subject) in [("a@example.com", "one"), ("b@example.com", "two"), ("a@example.com", "three")] {
            outbox.send(&mail(to, subject)).await.expect("accepted");
        }
        let subjects = |m: Vec<OutboxMail>| m.into_iter().filter_map(|m| m.subject).collect::<Vec<_>>();
        assert_eq!(subjects(outbox.read(None, 0)), ["one", "two", "three"]);
        assert_eq!(subjects(outbox.read(Some("a@example.com"), 0)), ["one", "three"]);
        assert_eq!(subjects(outbox.read(Some("a@example.com"), 1)), ["three"]);
        assert_eq!(subjects(outbox.read(None, 2)), ["three"]);
        assert!(outbox.read(Some("c@example.com"), 0).is_empty());
    }

    #[tokio::test]
    async fn the_sender_s_name_is_read_back() {
        let outbox = Outbox::new(Arc::new(AcceptingProvider {
            region: "us-east-1".into(),
        }));
        outbox.send(&mail("a@example.com", "one")).await.expect("accepted");
        let kept = outbox.read(None, 0);
        assert_eq!(kept[0].from_name.as_deref(), Some("Gym"));
        assert_eq!(kept[0].from.as_deref(), Some("outreach@mail.openloop.local"));
    }

    struct Refusing;

    #[async_trait]
    impl Mailer for Refusing {
        async fn send(&self, _: &OutboundMail) -> Result<Delivered, SendError> {
            Err(SendError::Rejected("MessageRejected".into()))
        }
    }

    #[tokio::test]
    async fn refused_mail_is_not_kept() {
        let outbox = Outbox::new(Arc::new(Refusing));
        assert!(outbox.send(&mail("a@example.com", "one")).await.is_err());
        assert!(outbox.is_empty());
    }
}

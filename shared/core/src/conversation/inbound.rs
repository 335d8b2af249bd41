//! A member's reply as it arrives: one raw RFC 5322 message, parsed with
//! mail-parser into what routing and the conversation loop need — who wrote, which of our
//! addresses and messages it answers, and the new text with quoted history and signature cut
//! off (`reply_text`). Pure: no store, no clock.
//!
//! Routing prefers the signed `reply+{token}@…` address (in `To`, `Cc` or `Delivered-To`);
//! clients that drop it still send `In-Reply-To`/`References`, which name our Message-ID or
//! the one SES put on the delivered copy, so every id there is kept for the fallback.

use mail_parser::{Address, HeaderValue, MessageParser, MimeHeaders};

use crate::conversation::reply_text;
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::Email;

/// How many attachments a reply's text names; the rest are counted.
const ATTACHMENTS_NAMED: usize = 20;

/// The parts of an inbound message that matter to us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboundMail {
    pub from: Email,
    pub from_name: Option<String>,
    pub subject: Option<String>,
    /// The sender's Message-ID (without angle brackets), our next mail's `In-Reply-To`.
    pub message_id: Option<String>,
    /// The tokens of every `reply+{token}@…` recipient, in header order.
    pub reply_tokens: Vec<String>,
    /// `In-Reply-To` first, then `References` newest first: the ids to try in order.
    pub thread_ids: Vec<String>,
    /// What the member wrote this time: quoted history and signature removed.
    pub text: String,
    /// The whole body, when `text` kept less than a sentence of more the member wrote
    /// (`reply_text::Extracted::original`).
    pub original: Option<String>,
    /// Auto-replies (out of office, RFC 3834 `Auto-Submitted`) are not the member speaking.
    pub automatic: bool,
    /// The plain-text body as it came, and the attachments' names: what [`Self::answering`]
    /// reads again once the conversation it answers is known.
    pub body: String,
    pub attached: Vec<String>,
}

impl InboundMail {
    /// The reply read again against `ours`, the gym's messages in the conversation it answers
    /// (routing is known only after parsing): their words, however quoted, are taken out of
    /// `text` and `original` (`reply_text::extract_answering`).
    pub fn answering(mut self, ours: &[&str]) -> Self {
        let extracted = reply_text::extract_answering(&self.body, ours);
        self.text = with_attachments(extracted.text, &self.attached);
        self.original = extracted.original.map(|o| reply_text::cap(&o));
        self
    }
}

/// The member's words and, on a line of its own, the names of what they attached (not kept),
/// all within the reply's cap: the member's words give way to the list, so a mail of a
/// thousand attachments is still stored.
fn with_attachments(text: String, attached: &[String]) -> String {
    if attached.is_empty() {
        return reply_text::cap(&text);
    }
    let line = format!("[attached, not kept: {}]", attached.join(", "));
    if text.is_empty() {
        return reply_text::cap(&line);
    }
    let room = reply_text::MAX_REPLY_CHARS.saturating_sub(line.chars().count() + 2);
    let words: String = text.chars().take(room).collect();
    reply_text::cap(&format!("{words}\n\n{line}"))
}

/// Parse a raw message; an unreadable one, or one without a sender, is refused.
pub fn parse(raw: &[u8]) -> Result<InboundMail, InvalidInput> {
    let message = MessageParser::default()
        .parse(raw)
        .ok_or_else(|| InvalidInput::new("invalid_message", "the body is not an RFC 5322 message"))?;
    let sender = message
        .from()
        .and_then(Address::first)
        .ok_or_else(|| InvalidInput::new("invalid_message", "the message has no From address"))?;
    let from = Email::parse(sender.address().unwrap_or_default())?;
    let mut recipients: Vec<String> = [message.to(), message.cc()]
        .into_iter()
        .flatten()
        .flat_map(|a| a.iter().filter_map(|a| a.address().map(str::to_owned)))
        .collect();
    for header in ["Delivered-To", "X-Original-To"] {
        if let Some(raw) = message.header_raw(header) {
            recipients.push(raw.trim().trim_matches(['<', '>']).to_owned());
        }
    }
    let reply_tokens = recipients.iter().filter_map(|a| reply_token(a)).map(str::to_owned).collect();
    let mut thread_ids = ids(message.in_reply_to());
    let mut references = ids(message.references());
    references.reverse();
    for id in references {
        if !thread_ids.contains(&id) {
            thread_ids.push(id);
        }
    }
    let body = message.body_text(0).map(|t| t.replace("\r\n", "\n")).unwrap_or_default();
    let auto_submitted = message
        .header_raw("Auto-Submitted")
        .is_some_and(|v| !v.trim().eq_ignore_ascii_case("no"));
    let extracted = reply_text::extract(&body);
    // Attachments are not kept in the conversation, only named (the first few, the rest
    // counted), so the owner and the agent know they were sent; the stored raw mail keeps them.
    let mut names = message.attachments().map(|a| {
        a.attachment_name()
            .unwrap_or("unnamed")
            .chars()
            .filter(|c| !c.is_control())
            .take(100)
            .collect::<String>()
    });
    let mut attached: Vec<String> = names.by_ref().take(ATTACHMENTS_NAMED).collect();
    let more = names.count();
    if more > 0 {
        attached.push(format!("and {more} more"));
    }
    let subject = message.subject().map(str::to_owned);
    let out_of_office = subject.as_deref().is_some_and(|s| {
        let s = s.to_ascii_lowercase();
        s.starts_with("automatic reply") || s.starts_with("auto:") || s.contains("out of office") || s.starts_with("autoreply")
    });
    Ok(InboundMail {
        from,
        from_name: sender.name().map(str::to_owned),
        subject,
        message_id: message.message_id().map(str::to_owned),
        reply_tokens,
        thread_ids,
        text: with_attachments(extracted.text, &attached),
        original: extracted.original.map(|o| reply_text::cap(&o)),
        automatic: auto_submitted || out_of_office,
        body,
        attached,
    })
}

/// The token of a `reply+{token}@domain` address.
pub fn reply_token(address: &str) -> Option<&str> {
    let (local, _) = address.split_once('@')?;
    let token = local.strip_prefix("reply+").or_else(|| local.strip_prefix("REPLY+"))?;
    (!token.is_empty()).then_some(token)
}

fn ids(value: &HeaderValue) -> Vec<String> {
    match value {
        HeaderValue::Text(t) => vec![t.trim().trim_matches(['<', '>']).to_owned()],
        HeaderValue::TextList(list) => list.iter().map(|t| t.trim().trim_matches(['<', '>']).to_owned()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(headers: &str, body: &str) -> Vec<u8> {
        format!("{headers}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}").into_bytes()
    }

    /// A reply with thousands of attachments (and long words) is still a text within the cap:
    /// the first names listed, the rest counted; the member's words give way, not the list.
    #[test]
    fn attachments_count_toward_the_replys_cap() {
        let mut raw = String::from(
            "From: Sam <sam@example.com>\r\nTo: <reply+t@replies.example.com>\r\nSubject: Re: hi\r\n\
             MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n\
             Content-Type: text/plain\r\n\r\n",
        );
        raw.push_str(&"words ".repeat(3_000));
        raw.push_str("\r\n");
        for i in 0..3_000 {
            raw.push_str(&format!(
                "--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"{}{i}.bin\"\r\n\r\nx\r\n",
                "n".repeat(90)
            ));
        }
        raw.push_str("--b--\r\n");
        let mail = parse(raw.as_bytes()).expect("parses");
        assert!(mail.text.chars().count() <= reply_text::MAX_REPLY_CHARS, "{}", mail.text.len());
        assert!(mail.text.starts_with("words words"), "the member's words first");
        assert!(mail.text.ends_with("and 2980 more]"), "{}", &mail.text[mail.text.len() - 80..]);
    }

    #[test]
    fn a_reply_gives_its_sender_token_thread_and_new_words_only() {
        let mail = parse(&raw(
            "From: Sarah Lee <Sarah@Example.com>\r\nTo: \"CrossFit Renegade\" <reply+01abc-xyz@replies.openloop.local>\r\n\
             Subject: Re: Checking in\r\nMessage-ID: <m1@mail.example.com>\r\nIn-Reply-To: <ours-2@mail.openloop.local>\r\n\
             References: <ours-1@mail.openloop.local> <0100abc@us-east-1.amazonses.com> <ours-2@mail.openloop.local>",
            "See you Monday at 6!\r\n\r\nSent from my iPhone\r\n\r\nOn Tue, Nov 3, 2026 at 9:00 AM Coach Mike <x@y.z> wrote:\r\n> We miss you\r\n",
        ))
        .expect("parses");
        assert_eq!(mail.from.as_str(), "sarah@example.com");
        assert_eq!(mail.reply_tokens, ["01abc-xyz"]);
        assert_eq!(mail.message_id.as_deref(), Some("m1@mail.example.com"));
        assert_eq!(
            mail.thread_ids,
            [
                "ours-2@mail.openloop.local",
                "0100abc@us-east-1.amazonses.com",
                "ours-1@mail.openloop.local"
            ]
        );
        assert_eq!(mail.text, "See you Monday at 6!");
        assert!(!mail.automatic);
    }

    #[test]
    fn auto_replies_are_marked_and_junk_is_refused() {
        let ooo = parse(&raw(
            "From: a@example.com\r\nTo: reply+t-x@r.example\r\nSubject: Automatic reply: Checking in\r\nAuto-Submitted: auto-replied",
            "I am away",
        ))
        .expect("parses");
        assert!(ooo.automatic);
        assert!(parse(b"").is_err());
        assert!(parse(&raw("To: reply+t-x@r.example\r\nSubject: hi", "no sender")).is_err());
    }

    #[test]
    fn only_reply_plus_addresses_carry_tokens() {
        assert_eq!(reply_token("reply+abc-def@r.example"), Some("abc-def"));
        assert_eq!(reply_token("reply+@r.example"), None);
        assert_eq!(reply_token("hello@r.example"), None);
    }
}

//! Outbound mail as the domain sees it: who, what, and the thread it belongs to. The mailer
//! adapter turns this into MIME.

use jiff::Timestamp;
use serde::Serialize;

use crate::kernel::ids::Email;
use crate::task::ThreadMessage;

/// The product's own words at the foot of every member mail, before its unsubscribe link (the
/// mailer writes them). A reply that quotes them is not the member asking to stop: the reply
/// reader takes them out (`reply_text`) and the stop rule never reads them (`opt_out`).
pub const UNSUBSCRIBE_FOOTER: &str = "To stop receiving these emails:";

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutboundMail {
    pub from_name: String,
    pub from: Email,
    pub to: Email,
    pub to_name: Option<String>,
    pub subject: String,
    pub text: String,
    /// Our Message-ID, without angle brackets.
    pub message_id: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    /// `reply+{token}@{reply domain}`.
    pub reply_to: String,
    /// The one-click unsubscribe URL (RFC 8058).
    pub unsubscribe_url: String,
    pub date: Timestamp,
}

/// Thread headers for the next message of a task: `In-Reply-To` names our id of
/// the newest message; `References` lists every earlier message under both ids — ours and the
/// one the provider put on the delivered copy — since clients keep one or the other.
pub fn thread_headers(thread: &[ThreadMessage]) -> (Option<String>, Vec<String>) {
    // Texts in the same conversation are not mail: no header names them.
    let mail: Vec<&ThreadMessage> = thread
        .iter()
        .filter(|m| !crate::conversation::sms::is_text_id(&m.message_id))
        .collect();
    let references = mail.iter().flat_map(|m| m.ids().map(str::to_owned)).collect();
    (mail.last().map(|m| m.message_id.clone()), references)
}

/// `Re: {subject}` once, however many times it is applied.
pub fn reply_subject(subject: &str) -> String {
    if subject.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("re:")) {
        subject.to_owned()
    } else {
        format!("Re: {subject}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_get_one_re() {
        assert_eq!(reply_subject("Quick note"), "Re: Quick note");
        assert_eq!(reply_subject("Re: Quick note"), "Re: Quick note");
        assert_eq!(reply_subject("RE: Quick note"), "RE: Quick note");
    }
}

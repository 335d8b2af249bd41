//! What SES tells us about mail (spec §22.3, §24.3), as the domain sees it: a member's reply
//! arrived, or a mail we sent bounced or drew a complaint. A reply takes the same path as
//! `POST /webhooks/inbound-email`; a hard bounce or a complaint is a member-level stop.
//!
//! SES's notification JSON is read into a [`MailEvent`] by the AWS adapter
//! (`openloop_aws::mail_events`), after the signals function has checked the SNS envelope's
//! signature (`openloop_aws::sns`); nothing here knows SES's field names. A reply either came
//! inside its notification or was stored (by an S3 action) and is read through the
//! [`StoredMail`] port.

use super::Engine;
use super::replies::InboundOutcome;
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, Email, TaskId};
use crate::ports::{StoredMail, StoredMailError};
use crate::task::error::EngineError;

/// One thing SES said about mail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MailEvent {
    /// A member's mail arrived.
    Received(InboundMail),
    /// A mail we sent bounced; only a permanent bounce stops anything (SES retries the rest).
    Bounced { permanent: bool, mail: MailFeedback },
    /// A recipient of a mail we sent marked it as spam.
    Complained(MailFeedback),
    /// Anything else (a delivery report…), by its kind; it needs nothing.
    Other(String),
}

/// The raw message of a received mail, or where it was stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboundMail {
    Raw(Vec<u8>),
    Stored { bucket: String, key: String },
}

/// Which mail of ours a bounce or complaint is about, and who it names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MailFeedback {
    /// The Message-IDs the mail carried (without angle brackets), ours among them.
    pub message_ids: Vec<String>,
    pub recipients: Vec<Email>,
}

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

impl Engine {
    /// Act on one mail event; `stored` reads messages that were stored rather than sent along.
    pub async fn handle_mail_event(&self, event: MailEvent, stored: &dyn StoredMail) -> Result<MailEventOutcome, EngineError> {
        match event {
            MailEvent::Received(mail) => {
                let raw = match mail {
                    InboundMail::Raw(raw) => raw,
                    InboundMail::Stored { bucket, key } => stored.fetch(&bucket, &key).await.map_err(|e| match e {
                        StoredMailError::NotFound(what) => EngineError::from(InvalidInput::new("stored_mail_not_found", what)),
                        StoredMailError::Unavailable(why) => EngineError::Dependency(why),
                    })?,
                };
                Ok(MailEventOutcome::Reply(self.receive_reply(&raw).await?))
            }
            MailEvent::Bounced { permanent: false, .. } => {
                Ok(MailEventOutcome::Ignored("a transient bounce: SES retries, nothing to stop".into()))
            }
            MailEvent::Bounced { permanent: true, mail } => self.stop_recipients(&mail, "bounce").await,
            MailEvent::Complained(mail) => self.stop_recipients(&mail, "complaint").await,
            MailEvent::Other(kind) => Ok(MailEventOutcome::Ignored(format!("{kind:?} notifications need nothing"))),
        }
    }

    /// Suppress every listed recipient of a mail we sent, in the account that sent it.
    async fn stop_recipients(&self, mail: &MailFeedback, reason: &'static str) -> Result<MailEventOutcome, EngineError> {
        let Some((account, _task)) = self.sent_mail(mail).await? else {
            tracing::warn!(reason, "a bounce or complaint about a mail we have no record of");
            return Ok(MailEventOutcome::Ignored("not a mail of ours".into()));
        };
        let mut tasks_cancelled = 0;
        for email in &mail.recipients {
            tasks_cancelled += self.suppress(account, email, reason).await?;
        }
        Ok(MailEventOutcome::Suppressed { reason, tasks_cancelled })
    }

    /// The task a mail was sent for, by our Message-ID among its ids.
    async fn sent_mail(&self, mail: &MailFeedback) -> Result<Option<(AccountId, TaskId)>, EngineError> {
        for id in &mail.message_ids {
            if let Some(route) = self.store.message_route(id).await? {
                return Ok(Some(route));
            }
        }
        Ok(None)
    }
}

//! What SES tells us about mail, as the domain sees it: a member's reply
//! arrived, or a mail we sent bounced or drew a complaint. A reply takes the same path as
//! `POST /webhooks/inbound-email`; a hard bounce or a complaint is a member-level stop.
//! Deliverability (§33.3): three soft bounces of an address count as a hard one, more than
//! 10% of the account's last 50 sends bouncing pauses its member mail at once (owner and
//! operator told), and a complaint alerts the operator at once.
//!
//! SES's notification JSON is read into a [`MailEvent`] by the AWS adapter
//! (`openloop_aws::mail_events`), after the signals function has checked the SNS envelope's
//! signature (`openloop_aws::sns`); nothing here knows SES's field names. A reply either came
//! inside its notification or was stored (by an S3 action) and is read through the
//! [`StoredMail`] port, then removed from it once read (what a member wrote is kept in one
//! place, their task's conversation, which an erasure removes).

use super::Engine;
use super::replies::InboundOutcome;
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, Email};
use crate::kernel::limits::{BOUNCE_PAUSE_RATE, BOUNCE_WINDOW_SENDS, SOFT_BOUNCES_AS_HARD};
use crate::owner::alert::Alert;
use crate::owner::deliverability::BounceWindow;
use crate::owner::owner_notice::NoticeKind;
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
            MailEvent::Received(InboundMail::Raw(raw)) => Ok(MailEventOutcome::Reply(self.receive_reply(&raw).await?)),
            MailEvent::Received(InboundMail::Stored { bucket, key }) => {
                let raw = stored.fetch(&bucket, &key).await.map_err(|e| match e {
                    StoredMailError::NotFound(what) => EngineError::from(InvalidInput::new("stored_mail_not_found", what)),
                    StoredMailError::Unavailable(why) => EngineError::Dependency(why),
                })?;
                let outcome = self.receive_reply(&raw).await?;
                // The reply is in its conversation (or was not one of ours): the raw copy goes.
                // Left behind, the bucket's lifecycle rule removes it.
                if let Err(e) = stored.remove(&bucket, &key).await {
                    tracing::warn!(error = %e, "a stored message read could not be removed");
                }
                Ok(MailEventOutcome::Reply(outcome))
            }
            MailEvent::Bounced { permanent, mail } => self.bounced(&mail, permanent).await,
            MailEvent::Complained(mail) => self.complained(&mail).await,
            MailEvent::Other(kind) => Ok(MailEventOutcome::Ignored(format!("{kind:?} notifications need nothing"))),
        }
    }

    /// A bounce: a permanent one suppresses its recipients; a transient one is
    /// counted per address, and the third mail to soft-bounce makes it a hard bounce. Each hard
    /// bounce is counted against the account's last sends, and more than 10% of them bouncing
    /// pauses the account's member mail at once.
    async fn bounced(&self, mail: &MailFeedback, permanent: bool) -> Result<MailEventOutcome, EngineError> {
        let Some((account, message_id)) = self.sent_mail(mail).await? else {
            tracing::warn!(permanent, "a bounce about a mail we have no record of");
            return Ok(MailEventOutcome::Ignored("not a mail of ours".into()));
        };
        let mut hard = Vec::new();
        let mut soft = Vec::new();
        for email in &mail.recipients {
            if permanent {
                hard.push(email);
                continue;
            }
            let count = self.store.record_soft_bounce(account, email, &message_id).await?;
            tracing::info!(%account, count, "a soft bounce counted for the address");
            if count >= SOFT_BOUNCES_AS_HARD {
                hard.push(email);
            } else {
                soft.push(count);
            }
        }
        if hard.is_empty() {
            return Ok(MailEventOutcome::Ignored(format!(
                "a transient bounce ({} of {SOFT_BOUNCES_AS_HARD} for the address): SES retries, nothing to stop yet",
                soft.iter().max().copied().unwrap_or(0)
            )));
        }
        let mut tasks_cancelled = 0;
        for email in hard {
            tasks_cancelled += self.suppress(account, email, "bounce").await?;
        }
        let window = self.store.record_bounce(account, &message_id).await?;
        if window.must_pause() {
            self.pause_for_bounces(account, &window).await?;
        }
        Ok(MailEventOutcome::Suppressed {
            reason: "bounce",
            tasks_cancelled,
        })
    }

    /// A complaint: its recipients are suppressed and the operator is alerted at
    /// once.
    async fn complained(&self, mail: &MailFeedback) -> Result<MailEventOutcome, EngineError> {
        let Some((account, _)) = self.sent_mail(mail).await? else {
            tracing::warn!("a complaint about a mail we have no record of");
            return Ok(MailEventOutcome::Ignored("not a mail of ours".into()));
        };
        let mut tasks_cancelled = 0;
        for email in &mail.recipients {
            tasks_cancelled += self.suppress(account, email, "complaint").await?;
        }
        self.raise(Alert::spam_complaint(account, mail.recipients.len(), self.clock.now()))
            .await;
        Ok(MailEventOutcome::Suppressed {
            reason: "complaint",
            tasks_cancelled,
        })
    }

    /// Pause the account's member mail for its bounce rate (the kill switch the owner lifts
    /// with `POST /api/v1/resume`); the owner and the operator hear of it once, when it pauses.
    async fn pause_for_bounces(&self, account: AccountId, window: &BounceWindow) -> Result<(), EngineError> {
        let (_, changed) = self.pause_account(account, "bounce_rate").await?;
        if !changed {
            return Ok(());
        }
        let bounced = window.recent_bounces();
        let now = self.clock.now();
        tracing::warn!(%account, bounced, sends = window.sends, "member mail paused for the bounce rate");
        self.raise(Alert::bounce_pause(account, bounced, now)).await;
        let draft = super::owner_notices::NoticeDraft {
            kind: NoticeKind::SystemAlert,
            task_id: None,
            member_id: None,
            title: "Member mail is paused: too many bounces".into(),
            detail: format!(
                "{bounced} of your last {BOUNCE_WINDOW_SENDS} messages bounced (more than {:.0}%), so Openloop paused all member mail \
                 to protect your sending reputation. The bounced addresses are suppressed. Check your members' addresses, then press \
                 Resume under Sending on your settings page: {}",
                BOUNCE_PAUSE_RATE * 100.0,
                self.dashboard_url("/settings#kill-heading")
            ),
        };
        self.notify_owner_after(account, draft, false).await;
        Ok(())
    }

    /// The account and our Message-ID of a mail we sent, by the ids it carried.
    async fn sent_mail(&self, mail: &MailFeedback) -> Result<Option<(AccountId, String)>, EngineError> {
        for id in &mail.message_ids {
            if let Some((account, _task)) = self.store.message_route(id).await? {
                return Ok(Some((account, id.to_ascii_lowercase())));
            }
        }
        Ok(None)
    }
}

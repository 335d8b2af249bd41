//! Alerts to us, the company running Openloop: conditions that a person should
//! look at, raised as `OpenloopAlert` events on the bus and as error-level log lines.

use jiff::Timestamp;
use serde::Serialize;

use crate::kernel::ids::AccountId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

/// One tripped condition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Alert {
    /// `connector_degraded`, `escalation_rate`, `send_failures`…
    pub code: &'static str,
    pub severity: Severity,
    pub account_id: Option<AccountId>,
    /// What was seen, in numbers (never member data).
    pub detail: String,
    /// What to check.
    pub action: &'static str,
    pub at: Timestamp,
}

impl Alert {
    /// One account's scheduled work failed and was skipped so the others' went on (the
    /// hourly attribution, the metrics fold): its data needs a look.
    pub fn account_run_failed(account: AccountId, run: &str, error: &str, at: Timestamp) -> Self {
        Self {
            code: "account_run_failed",
            severity: Severity::Critical,
            account_id: Some(account),
            detail: format!("the {run} run failed for this account and skipped it: {error}"),
            action: "read the account's settings and recent tasks for a value the store refuses; the other accounts went on",
            at,
        }
    }

    /// A member marked one of the account's mails as spam: told at once.
    pub fn spam_complaint(account: AccountId, recipients: usize, at: Timestamp) -> Self {
        Self {
            code: "spam_complaint",
            severity: Severity::Critical,
            account_id: Some(account),
            detail: format!("a spam complaint about a mail to {recipients} recipient(s); they are suppressed"),
            action: "read the account's recent mail and its audience; complaints hurt the shared sending reputation",
            at,
        }
    }

    /// The account's bounce rate paused its member mail.
    pub fn bounce_pause(account: AccountId, bounced: usize, at: Timestamp) -> Self {
        Self {
            code: "bounce_pause",
            severity: Severity::Critical,
            account_id: Some(account),
            detail: format!(
                "{bounced} of the account's last {} sends bounced; its member mail is paused until the owner resumes it",
                crate::kernel::limits::BOUNCE_WINDOW_SENDS
            ),
            action: "check the account's member addresses (an old import?) before it resumes",
            at,
        }
    }
}

/// The bus detail type alerts are published under.
pub const ALERT_EVENT: &str = "OpenloopAlert";

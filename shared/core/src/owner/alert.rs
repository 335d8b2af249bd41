//! Alerts to us, the company running Openloop (spec §28.4): conditions that a person should
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
}

/// The bus detail type alerts are published under.
pub const ALERT_EVENT: &str = "OpenloopAlert";

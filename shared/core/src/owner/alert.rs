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

/// The bus detail type alerts are published under.
pub const ALERT_EVENT: &str = "OpenloopAlert";

//! What every dashboard page shares: its frame ([`Layout`]) and how values read to the
//! owner (times in the gym's zone, codes as words, money).

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;

/// What every page's frame needs: the title, the stylesheet, where the owner is, and the
/// CSRF token of the session (absent on the sign-in page).
pub struct Layout {
    pub title: String,
    pub css: String,
    /// `overview`, `today`, `todos`, `conversations`, `churn`, `review`, `escalations`, `notifications`,
    /// `suggestions`, `memories`, `lift`, `templates`, `settings`, `task` or `` (none).
    pub nav: &'static str,
    pub csrf: Option<String>,
    pub account_name: String,
}

/// A time as the owner reads it: in the account's time zone.
pub fn when(at: Timestamp, tz: &TimeZone) -> String {
    openloop_core::task::reason_words::when(at, tz)
}

/// A log entry's detail as the dashboard shows it: the agent's reading in words, times local.
pub fn detail_words(detail: &str, tz: &TimeZone) -> String {
    openloop_core::task::reason_words::detail(detail, tz)
}

/// A log entry's reason as the owner reads it ("Your account is in manual mode, so …").
pub fn reason_words(code: &str) -> String {
    openloop_core::task::reason_words::sentence(code)
}

/// The snake_case code serde gives an enum value.
pub fn code<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// A reason code as words: `owner_approved` → `owner approved`.
pub fn words(code: &str) -> String {
    code.replace('_', " ")
}

pub fn money(amount: f64) -> String {
    let whole = amount.round() as i64;
    let digits = whole.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{}${grouped}", if whole < 0 { "-" } else { "" })
}

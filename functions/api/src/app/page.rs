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
    at.to_zoned(tz.clone()).strftime("%b %-d, %H:%M").to_string()
}

/// Every instant written in `text` (RFC 3339, as the log keeps them) as the owner reads a
/// time: in the gym's time zone, "Dec 31, 08:00".
pub fn local_times(text: &str, tz: &TimeZone) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let end = from
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '.' | '+')))
            .unwrap_or(from.len());
        // A sentence's full stop after the instant is not part of it.
        let token = from[..end].trim_end_matches('.');
        match token.parse::<Timestamp>() {
            Ok(at) if token.contains('T') => {
                out.push_str(&when(at, tz));
                rest = &from[token.len()..];
            }
            _ => {
                let digit = from.chars().next().map_or(1, char::len_utf8);
                out.push_str(&from[..digit]);
                rest = &from[digit..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A log entry's detail as the dashboard shows it: the agent's reading in words, times local.
pub fn detail_words(detail: &str, tz: &TimeZone) -> String {
    local_times(&openloop_core::task::escalation::detail_in_words(detail), tz)
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

//! What every dashboard page shares: its frame ([`Layout`], made by [`layout`]) and how values
//! read to the owner (times in the gym's zone, codes as words, money, and a task's type,
//! status, trigger and touch as several pages show them). How a handler answers is
//! `respond.rs`.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;

use openloop_core::members::cancellation::{Cancellation, CancellationClass};
use openloop_core::task::Task;

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

/// The frame of a page titled `title`, with `nav` marked where the owner is.
pub fn layout(title: &str, nav: &'static str, csrf: Option<String>, account_name: &str) -> Layout {
    Layout {
        title: title.to_owned(),
        css: crate::assets::stylesheet_href(),
        nav,
        csrf,
        account_name: account_name.to_owned(),
    }
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

/// What a cancellation reason's class means, as the owner says it; none for `other`, where
/// the member's own words say more than a class would.
pub fn cancellation_class_words(class: CancellationClass) -> Option<&'static str> {
    match class {
        CancellationClass::Moving => Some("moving away"),
        CancellationClass::Medical => Some("health or injury"),
        CancellationClass::Financial => Some("money"),
        CancellationClass::Schedule => Some("schedule"),
        CancellationClass::Dissatisfied => Some("unhappy with the gym"),
        CancellationClass::Other => None,
    }
}

/// A cancelled member's cancellation in one line: when, what their reason reads as, and the
/// reason in their words ("Cancelled on Nov 3: moving away — “Moving to Portland for a new
/// job”"). The reason is the member's or PushPress's text: the template escapes it like any.
pub fn cancellation_line(cancellation: &Cancellation, tz: &TimeZone) -> String {
    let on = cancellation.at.to_zoned(tz.clone()).strftime("%b %-d").to_string();
    let reason = cancellation.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
    match (cancellation_class_words(cancellation.class), reason) {
        (Some(class), Some(reason)) => format!("Cancelled on {on}: {class} — \u{201c}{reason}\u{201d}"),
        (None, Some(reason)) => format!("Cancelled on {on} — \u{201c}{reason}\u{201d}"),
        (Some(class), None) => format!("Cancelled on {on}: {class}"),
        (None, None) => format!("Cancelled on {on}, no reason given"),
    }
}

/// A task type's label (`Win back a lapsed member`), or its code in words if it is unknown.
pub fn type_label(task_type: &str) -> String {
    openloop_core::task::task_type::lookup(task_type).map_or_else(|| words(task_type), |def| def.label.to_owned())
}

/// A status and the badge colour it wears.
pub fn status_badge(status: &str) -> (&'static str, &'static str) {
    match status {
        "pending_review" => ("pending review", "warn"),
        "ready" => ("ready", ""),
        "executing" => ("executing", ""),
        "waiting" => ("waiting", ""),
        "dormant" => ("dormant", ""),
        "completed" => ("completed", "good"),
        "escalated" => ("needs you", "bad"),
        "cancelled" => ("cancelled", ""),
        _ => ("unknown", ""),
    }
}

/// What opened a task, as "Opened by …" finishes.
pub fn trigger_label(trigger: &str) -> &'static str {
    match trigger {
        "webhook" => "a PushPress event",
        "cron_analysis" => "the risk scan",
        "manual" => "you",
        "gm_chat" => "the GM chat",
        "recurring" => "a recurring schedule",
        "agent_spawned" => "the agent",
        _ => "the system",
    }
}

/// How many of its messages a task has sent: `1 of 3 messages sent` (a task's page; its
/// draft waiting for review is [`touch_label`]).
pub fn sent_label(task: &Task) -> String {
    let max = task.budget.messages_max;
    match task.budget.messages_used {
        0 => format!("no message sent yet (up to {max})"),
        used => format!("{used} of {max} {} sent", if max == 1 { "message" } else { "messages" }),
    }
}

/// Which of its messages a draft waiting for review is: `message 2 of 3`.
pub fn touch_label(task: &Task) -> String {
    format!(
        "message {} of {}",
        (task.touch + 1).min(task.budget.messages_max.max(1)),
        task.budget.messages_max
    )
}

/// The execution mode in a word or two, as the overview's facts say it.
pub fn mode_in_words(mode: &str) -> String {
    match mode {
        "manual" => "You approve each message".into(),
        "limited_auto" => "Confident ones go on their own".into(),
        other => words(other),
    }
}

/// Where the account's ramp stands, in a few words.
pub fn phase_in_words(phase: &str) -> String {
    match phase {
        "shadow" => "Drafts only (days 1–3)".into(),
        "guided" => "A few a day (days 4–7)".into(),
        "limited" => "A lower daily limit (days 8–14)".into(),
        "full" => "Done".into(),
        other => words(other),
    }
}

/// A time zone as a person names it: its place ("New York" for `America/New_York`,
/// "Buenos Aires" for `America/Argentina/Buenos_Aires`); `UTC` as it is.
pub fn zone_in_words(zone: &str) -> String {
    zone.rsplit('/').next().unwrap_or(zone).replace('_', " ")
}

/// What a phase of the account's ramp means, as the overview and the settings page say it.
pub fn phase_explained(phase: &str) -> &'static str {
    match phase {
        "shadow" => "Days 1–3: the agent drafts and nothing is sent; everything comes to you first.",
        "guided" => "Days 4–7: everything still comes to you first, and a few messages a day go out.",
        "limited" => "Days 8–14: confident tasks may go out on their own, within a lower daily limit.",
        "full" => "The ramp is done: your execution mode and limits apply in full.",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accounts_facts_read_as_a_person_says_them() {
        assert_eq!(zone_in_words("America/New_York"), "New York");
        assert_eq!(zone_in_words("America/Argentina/Buenos_Aires"), "Buenos Aires");
        assert_eq!(zone_in_words("UTC"), "UTC");
        assert_eq!(mode_in_words("manual"), "You approve each message");
        assert_eq!(phase_in_words("full"), "Done");
    }

    #[test]
    fn money_groups_thousands() {
        assert_eq!(money(0.0), "$0");
        assert_eq!(money(1234.4), "$1,234");
        assert_eq!(money(1_000_000.0), "$1,000,000");
        assert_eq!(money(-150.0), "-$150");
    }

    /// A cancellation reads as the owner would say it, in the gym's zone, with the member's
    /// words quoted and no class named where none was read.
    #[test]
    fn a_cancellation_reads_in_the_owners_words() {
        let tz = TimeZone::get("America/New_York").expect("tz");
        let at: Timestamp = "2026-11-03T15:00:00Z".parse().expect("instant");
        let of = |reason: Option<&str>| Cancellation {
            reason: reason.map(str::to_owned),
            class: CancellationClass::of(reason),
            at,
        };
        assert_eq!(
            cancellation_line(&of(Some("Moving to Portland for a new job")), &tz),
            "Cancelled on Nov 3: moving away — \u{201c}Moving to Portland for a new job\u{201d}"
        );
        assert_eq!(
            cancellation_line(&of(Some("just because")), &tz),
            "Cancelled on Nov 3 — \u{201c}just because\u{201d}"
        );
        assert_eq!(cancellation_line(&of(None), &tz), "Cancelled on Nov 3, no reason given");
    }

    /// The log's details on the dashboard: the agent's reading without its codes, and every
    /// instant in the gym's time zone.
    #[test]
    fn a_log_detail_reads_in_words_and_local_time() {
        let tz = TimeZone::get("America/Los_Angeles").expect("tz");
        let judged = "action Wait, confidence 55, outcome none: The reply is polite but commits to nothing; \
                      next step 2026-12-31T16:00:55.562111491Z";
        let shown = detail_words(judged, &tz);
        assert_eq!(
            shown,
            "The agent's reading: The reply is polite but commits to nothing; next step Dec 31, 08:00."
        );
        let sent = "message 1 sent to a@example.com; follow-up planned for 2027-01-02T21:13:00Z.";
        assert_eq!(
            openloop_core::task::reason_words::local_times(sent, &tz),
            "message 1 sent to a@example.com; follow-up planned for Jan 2, 13:13."
        );
        assert_eq!(
            openloop_core::task::reason_words::local_times("13:00-16:00 on 2026-11-02", &tz),
            "13:00-16:00 on 2026-11-02"
        );
    }
}

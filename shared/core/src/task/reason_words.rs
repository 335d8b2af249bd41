//! What a decision of a task's log means to a gym owner: one sentence per reason code, from the
//! data file `words/reasons.toml` (compiled in; a test checks it against [`Reason::ALL`]), and
//! a log entry's detail with its instants in the gym's time zone. The activity feed, a task's
//! page and the API's `reason_text` / `detail_text` all read the log through here.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Deserialize;

pub const REASON_WORDS: &str = include_str!("../../../../words/reasons.toml");

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Patterns {
    below_threshold: String,
    auto_approved: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    patterns: Patterns,
    reasons: BTreeMap<String, String>,
    #[serde(default)]
    events: BTreeMap<String, String>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str(REASON_WORDS).unwrap_or_else(|e| {
            tracing::error!(error = %e, "words/reasons.toml does not parse; reasons read as their codes");
            Table::default()
        })
    })
}

/// A trigger's event as the owner reads it ("a member's status changes"): the words file's
/// `[events]`, or for an event it does not know the name with its dots and underscores as spaces.
pub fn event_words(event: &str) -> String {
    table().events.get(event).cloned().unwrap_or_else(|| event.replace(['.', '_'], " "))
}

/// The confidence gate's codes built from numbers: `confidence_74_below_threshold_75`,
/// `auto_approved_confidence_90`.
fn gate_pattern(code: &str) -> Option<&'static str> {
    let numbers = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some(rest) = code.strip_prefix("confidence_")
        && let Some((confidence, threshold)) = rest.split_once("_below_threshold_")
        && numbers(confidence)
        && numbers(threshold)
    {
        return Some(&table().patterns.below_threshold)
            .filter(|s| !s.is_empty())
            .map(String::as_str);
    }
    code.strip_prefix("auto_approved_confidence_")
        .filter(|n| numbers(n))
        .and_then(|_| Some(table().patterns.auto_approved.as_str()).filter(|s| !s.is_empty()))
}

/// A reason code as the owner reads it: "Your account is in manual mode, so every first
/// message waits for your approval". A step on its way to a move (`<code>_handling`) reads
/// as its code; a code the table does not know reads as its words, capitalised.
pub fn sentence(code: &str) -> String {
    let code = code.trim();
    if let Some(words) = table().reasons.get(code) {
        return words.clone();
    }
    if let Some(words) = gate_pattern(code) {
        return words.to_owned();
    }
    if let Some(base) = code.strip_suffix("_handling")
        && let Some(words) = table().reasons.get(base)
    {
        return words.clone();
    }
    let plain = code.replace(['_', ':'], " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = plain.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A time as the owner reads it: "Dec 31, 08:00" in the gym's time zone.
pub fn when(at: Timestamp, tz: &TimeZone) -> String {
    at.to_zoned(tz.clone()).strftime("%b %-d, %H:%M").to_string()
}

/// Every instant written in `text` (RFC 3339, as the log keeps them) as [`when`] writes it.
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

/// A log entry's detail as the owner reads it: the agent's reading in words (without the codes
/// the log keeps), a member-level stop by its cause, a text's recipient by their number, every
/// instant in the gym's time zone.
pub fn detail(detail: &str, tz: &TimeZone) -> String {
    let stopped = detail
        .strip_prefix("member-level stop (")
        .and_then(|rest| rest.strip_suffix(')'))
        .map(|cause| format!("They get no more messages: {}", stop_in_words(cause)));
    let detail = stopped.unwrap_or_else(|| crate::task::escalation::detail_in_words(detail));
    local_times(&numbers_for_texts(&detail), tz)
}

/// A text's recipient as the log keeps it (`15555550131@sms.invalid`, the conversation's
/// stand-in address) written as the number it is: "+15555550131".
pub fn numbers_for_texts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("@sms.invalid") {
        let head = &rest[..at];
        let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(&head[..head.len() - digits]);
        if digits > 0 {
            out.push('+');
            out.push_str(&head[head.len() - digits..]);
        } else {
            out.push_str("a text number");
        }
        rest = &rest[at + "@sms.invalid".len()..];
    }
    out.push_str(rest);
    out
}

/// Why a member gets no more mail, as the owner reads it (the suppression's reason).
pub fn stop_in_words(reason: &str) -> String {
    match reason {
        "member_request" | "agent_suggested" | "opt_out_keywords" => "they asked to stop".to_owned(),
        "unsubscribe" | "unsubscribed" | "list_unsubscribe" => "they unsubscribed".to_owned(),
        "text_stop" => "they texted STOP".to_owned(),
        "bounce" | "hard_bounce" => "their address bounced".to_owned(),
        "complaint" => "they marked a message as spam".to_owned(),
        "legal_threat" => "they threatened legal action".to_owned(),
        "abusive_reply" => "their reply was abusive".to_owned(),
        "owner" | "manual" => "you stopped their mail".to_owned(),
        other => other.replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::reason::Reason;

    /// Every reason has its sentence, and the table names no code there is not: a new reason
    /// without words, or words for a renamed one, fails here.
    #[test]
    fn a_stop_and_a_texts_recipient_read_in_words() {
        let tz = TimeZone::UTC;
        assert_eq!(
            detail("member-level stop (text_stop)", &tz),
            "They get no more messages: they texted STOP"
        );
        assert_eq!(
            detail("message 1 sent to 15555550131@sms.invalid", &tz),
            "Message 1 sent to +15555550131."
        );
        assert_eq!(numbers_for_texts("to ana@example.com"), "to ana@example.com");
    }

    #[test]
    fn every_trigger_event_has_its_words() {
        let table: Table = toml::from_str(REASON_WORDS).expect("words/reasons.toml parses");
        for event in crate::owner::trigger::trigger_events() {
            let words = table.events.get(event).unwrap_or_else(|| panic!("{event} has no words"));
            assert!(!words.contains(['_', '.']), "{words:?}");
        }
        assert_eq!(
            table.events.len(),
            crate::owner::trigger::trigger_events().len(),
            "words for an event no trigger names"
        );
    }

    #[test]
    fn every_reason_has_one_sentence_and_every_sentence_a_reason() {
        let table: Table = toml::from_str(REASON_WORDS).expect("words/reasons.toml parses");
        for reason in Reason::ALL {
            assert!(table.reasons.contains_key(reason.as_str()), "{} has no sentence", reason.as_str());
        }
        for code in table.reasons.keys() {
            assert!(Reason::parse(code).is_some(), "{code} is not a reason code");
        }
        for words in table
            .reasons
            .values()
            .chain([&table.patterns.below_threshold, &table.patterns.auto_approved])
        {
            assert!(!words.contains('_') && !words.ends_with('.'), "{words:?}");
            assert!(words.chars().next().is_some_and(char::is_uppercase), "{words:?}");
            let lower = words.to_lowercase();
            for internal in [
                "snapshot",
                "executing",
                "dormant",
                "budget",
                "touch",
                "cadence",
                "escalat",
                "threshold",
            ] {
                assert!(!lower.contains(internal), "an internal word in {words:?}");
            }
        }
    }

    #[test]
    fn a_code_reads_as_a_sentence_an_owner_understands() {
        assert_eq!(
            sentence("manual_mode_requires_review"),
            "Your account is in manual mode, so every first message waits for your approval"
        );
        assert_eq!(sentence("missing_member_email_handling"), "The member has no email address on file");
        assert_eq!(
            sentence("confidence_74_below_threshold_75"),
            "The agent was not sure enough of its message to send it alone, so it waits for your approval"
        );
        assert_eq!(
            sentence("auto_approved_confidence_90"),
            "The agent was confident enough to go ahead on its own"
        );
        assert_eq!(
            sentence("escalation_trigger:always"),
            "This kind of task always waits for your approval"
        );
        assert_eq!(sentence("something_new"), "Something new", "an unknown code as its words");
    }

    #[test]
    fn a_detail_reads_in_the_gyms_time() {
        let ny = TimeZone::get("America/New_York").expect("tz");
        assert_eq!(detail("resuming 2026-12-01T14:00:00Z.", &ny), "Resuming Dec 1, 09:00.");
    }
}

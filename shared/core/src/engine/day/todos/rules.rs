//! Which escalations make a to-do (`rules/todos.toml`): data, so the list of reasons a
//! person should pick up the phone for can change without code. A staff to-do task always
//! makes one; this file covers the tasks that escalate.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::task::todo::TodoKind;

/// The rules that ship with Openloop.
pub const DEFAULT_RULES: &str = include_str!("../../../../../../rules/todos.toml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EscalationRule {
    pub reasons: Vec<String>,
    /// The task types it is for; none: every type.
    #[serde(default)]
    pub task_types: Vec<String>,
    pub kind: TodoKind,
    /// May say `{name}` and `{reason}`.
    pub what: String,
    /// What it says instead when the member's own words are known: may say `{asked}` too.
    #[serde(default)]
    pub what_asked: Option<String>,
    #[serde(default)]
    pub get_them_back: bool,
}

/// The to-do of a draft that waited too long for the owner's review (`[review_expired]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpiryRule {
    /// May say `{name}` and `{waited}`.
    pub what: String,
    /// The same, of a later message held for review (the earlier ones were sent).
    pub what_follow_up: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    #[serde(default)]
    escalation: Vec<EscalationRule>,
    review_expired: Option<ExpiryRule>,
    #[serde(default = "default_escalate_after_hours")]
    escalate_after_hours: u32,
}

/// When the shipped file says nothing of it.
fn default_escalate_after_hours() -> u32 {
    48
}

fn parse(text: &str) -> Result<Vec<EscalationRule>, String> {
    toml::from_str::<Rules>(text).map(|r| r.escalation).map_err(|e| e.to_string())
}

/// How long after it is due an open to-do is escalated to the owner (its loop's deadline).
pub(crate) fn escalate_after() -> jiff::SignedDuration {
    static HOURS: OnceLock<u32> = OnceLock::new();
    let hours = *HOURS.get_or_init(|| {
        toml::from_str::<Rules>(DEFAULT_RULES).map_or_else(|_| default_escalate_after_hours(), |r| r.escalate_after_hours.clamp(1, 24 * 30))
    });
    jiff::SignedDuration::from_hours(i64::from(hours))
}

/// What the call-list to-do of a draft that waited `waited` ("7 days") for review and was not
/// sent says of `name`, from `[review_expired]` (the same words if the file lost them): of the
/// first message, that nothing was sent; of a later one (`follow_up`), that it was not.
pub(crate) fn review_expired(name: &str, waited: &str, follow_up: bool) -> String {
    static RULE: OnceLock<ExpiryRule> = OnceLock::new();
    let rule = RULE.get_or_init(|| {
        toml::from_str::<Rules>(DEFAULT_RULES)
            .ok()
            .and_then(|r| r.review_expired)
            .unwrap_or_else(|| ExpiryRule {
                what: "Call {name}: a drafted message waited {waited} for your review and nothing was sent".into(),
                what_follow_up: "Call {name}: the next message to them waited {waited} for your review and was not sent".into(),
            })
    });
    let what = if follow_up { &rule.what_follow_up } else { &rule.what };
    what.replace("{name}", name).replace("{waited}", waited)
}

/// The first rule naming `reason` (an escalation's log reason code) for a task of
/// `task_type`, if any.
pub(crate) fn for_escalation(reason: &str, task_type: &str) -> Option<&'static EscalationRule> {
    static RULES: OnceLock<Vec<EscalationRule>> = OnceLock::new();
    RULES
        .get_or_init(|| {
            parse(DEFAULT_RULES).unwrap_or_else(|e| {
                tracing::error!(error = %e, "rules/todos.toml does not parse; escalations make no to-dos");
                Vec::new()
            })
        })
        .iter()
        .find(|r| r.reasons.iter().any(|r| r == reason) && (r.task_types.is_empty() || r.task_types.iter().any(|t| t == task_type)))
}

/// The most of the member's words a to-do quotes.
const ASKED_CHARS: usize = 160;

/// `what` with the member's name and the escalation's words in place; with the member's own
/// words (`asked`), `what_asked` quoting them on one line, shortened at a word.
pub(crate) fn what(rule: &EscalationRule, name: &str, reason: &str, asked: Option<&str>) -> String {
    let asked = asked
        .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|a| !a.is_empty());
    let (template, asked) = match (&rule.what_asked, asked) {
        (Some(template), Some(asked)) => (template.as_str(), shortened(&asked)),
        _ => (rule.what.as_str(), String::new()),
    };
    template
        .replace("{name}", name)
        .replace("{reason}", reason)
        .replace("{asked}", &asked)
}

fn shortened(words: &str) -> String {
    if words.chars().count() <= ASKED_CHARS {
        return words.to_owned();
    }
    let cut: String = words.chars().take(ASKED_CHARS).collect();
    let at_word = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", at_word.trim_end_matches([',', '.', ';', ':']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::reason::Reason;

    #[test]
    fn the_shipped_rules_parse_and_name_only_real_reasons() {
        let rules = parse(DEFAULT_RULES).expect("rules/todos.toml");
        assert!(!rules.is_empty());
        for rule in &rules {
            for reason in &rule.reasons {
                assert!(Reason::ALL.iter().any(|r| r.as_str() == reason), "{reason} is not a reason code");
            }
        }
        for rule in &rules {
            for task_type in &rule.task_types {
                assert!(
                    crate::task::task_type::lookup(task_type).is_some(),
                    "{task_type} is not a task type"
                );
            }
        }
        let call = for_escalation("member_question_needs_owner", "churn_risk").expect("a question the owner must answer");
        assert_eq!(call.kind, TodoKind::Call);
        assert_eq!(what(call, "Sarah", "x", None), "Call Sarah: they asked what only you can answer");
        assert_eq!(
            what(call, "Sarah", "x", Some("Can I bring\n my son (he's 12)?")),
            "Call Sarah, who asked: \u{201c}Can I bring my son (he's 12)?\u{201d}"
        );
        let long = "word ".repeat(60);
        let quoted = what(call, "Sarah", "x", Some(&long));
        assert!(quoted.ends_with("word…\u{201d}") && quoted.chars().count() < 200, "{quoted}");
        assert!(for_escalation("owner_cancelled", "churn_risk").is_none());
        // Spent notes about a payment ask for a call about the payment, which a check-in does
        // not settle; an at-risk member's, one that brings them back.
        let payment = for_escalation("budget_messages_exhausted", "payment_recovery").expect("a payment call");
        assert_eq!(
            what(payment, "Sam", "x", None),
            "Call Sam about their payment: the notes did not get it sorted"
        );
        assert!(!payment.get_them_back);
        let lead = for_escalation("budget_messages_exhausted", "lead_followup").expect("a lead's call");
        assert_eq!(
            what(lead, "Cy", "x", None),
            "Call Cy: they have not booked a first visit yet",
            "a lead never left"
        );
        // A draft that waited too long says what happened to the member, not the type's label.
        assert!(
            toml::from_str::<Rules>(DEFAULT_RULES).expect("rules").review_expired.is_some(),
            "the shipped file says it"
        );
        assert_eq!(
            review_expired("Olivia Brooks", "7 days", false),
            "Call Olivia Brooks: a drafted message waited 7 days for your review and nothing was sent"
        );
        assert_eq!(
            review_expired("Olivia Brooks", "7 days", true),
            "Call Olivia Brooks: the next message to them waited 7 days for your review and was not sent"
        );
        let churn = for_escalation("budget_messages_exhausted", "churn_risk").expect("a call");
        assert_eq!(
            what(churn, "Sam", "x", None),
            "Call Sam: the agent's messages did not bring them back"
        );
    }
}

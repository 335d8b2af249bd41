//! Learning from outcomes: which way of writing brought members back — the goal reached
//! (retained, recovered, reactivated, booked…), not only a reply. Five patterns are compared:
//! the touch that brought them back (the first message against the follow-ups), the part of
//! the day the first message left, its length, its subject line's style and the template it
//! was written from (within one task type).
//!
//! A pattern is suggested only when the data supports it: at least `MIN_OUTCOME_GROUP` (`compare.rs`)
//! members in each group compared, and the 95% interval of the difference in success rates
//! (Newcombe's hybrid score interval, as the lift uses) above zero. Its evidence names the
//! pattern, the two groups with their counts, the difference and the interval.
//!
//! The touch count is compared touch by touch, because a task that succeeds stops writing:
//! of the members a first message went to, the share who came back after it alone; of those
//! a follow-up went to, the share who came back after one.

use serde_json::json;

use super::compare::{Groups, Measure, Tally, contrast, group, grouped, round4};
use super::{ClosedTask, WINDOW_DAYS, day_part};
use crate::learning::interaction::{SharedOutcome, template_of};
use crate::learning::suggestion::{ProposedChange, SuggestionDraft, SuggestionKind};

/// A first message longer than this many characters is "long".
const LONG: usize = super::LONG_MESSAGE_CHARS;

/// What the evaluator compares outcomes along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    TouchCount,
    SendHour,
    MessageLength,
    SubjectStyle,
    TemplateVersion,
}

impl Pattern {
    pub const ALL: [Pattern; 5] = [
        Pattern::TouchCount,
        Pattern::SendHour,
        Pattern::MessageLength,
        Pattern::SubjectStyle,
        Pattern::TemplateVersion,
    ];

    /// The pattern's name in a suggestion's evidence.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::TouchCount => "touch_count",
            Pattern::SendHour => "send_hour",
            Pattern::MessageLength => "message_length",
            Pattern::SubjectStyle => "subject_style",
            Pattern::TemplateVersion => "template_version",
        }
    }
}

/// A group's success rate in whole percent, as a sentence says it.
fn pct(t: &Tally) -> String {
    format!("{:.0}", t.rate() * 100.0)
}

fn points(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

/// The goal reached: the outcome its signal gives, a late win or a return before outreach;
/// a commitment still awaiting its signal is not one yet.
fn reached(s: &SharedOutcome) -> bool {
    !s.provisional && crate::task::holdout::succeeded(&s.task_type, s.outcome.as_deref())
}

/// The comparisons a pattern makes: each a scope (a task type, for templates) and its groups.
fn comparisons(tasks: &[ClosedTask], pattern: Pattern) -> Vec<(Option<String>, Groups)> {
    let sent = || tasks.iter().filter(|t| t.shared.touches > 0);
    let by = |key: &dyn Fn(&ClosedTask) -> Option<String>| vec![(None, grouped(tasks, key, |t| reached(&t.shared)))];
    match pattern {
        Pattern::TouchCount => {
            let mut groups = Groups::new();
            for t in sent() {
                let success = reached(&t.shared);
                group(&mut groups, "first_message").add(t, success && t.shared.touches == 1);
                if t.shared.touches >= 2 {
                    group(&mut groups, "follow_up").add(t, success);
                }
            }
            vec![(None, groups)]
        }
        Pattern::SendHour => by(&|t| t.shared.first_touch_hour.and_then(day_part).map(str::to_owned)),
        Pattern::MessageLength => by(&|t| t.shared.message_length.map(|n| if n > LONG { "long" } else { "short" }.to_owned())),
        Pattern::SubjectStyle => by(&|t| t.shared.subject_style.clone()),
        Pattern::TemplateVersion => {
            let mut types: Vec<(String, Groups)> = Vec::new();
            for t in sent() {
                let Some(version) = t.template_version.clone().or_else(|| t.shared.template.clone()) else {
                    continue;
                };
                let at = match types.iter().position(|(k, _)| *k == t.shared.task_type) {
                    Some(at) => at,
                    None => {
                        types.push((t.shared.task_type.clone(), Groups::new()));
                        types.len() - 1
                    }
                };
                group(&mut types[at].1, &version).add(t, reached(&t.shared));
            }
            types.into_iter().map(|(k, g)| (Some(k), g)).collect()
        }
    }
}

/// How a group is named in a sentence.
fn describe(pattern: Pattern, name: &str) -> String {
    match (pattern, name) {
        (Pattern::TouchCount, "first_message") => "members sent a first message (who came back after it alone)".into(),
        (Pattern::TouchCount, _) => "members sent a follow-up (who came back after one)".into(),
        (Pattern::SendHour, part) => format!("members first written to in the {part}"),
        (Pattern::MessageLength, "short") => format!("members sent a first message under {LONG} characters"),
        (Pattern::MessageLength, _) => format!("members sent a first message over {LONG} characters"),
        (Pattern::SubjectStyle, "question") => "members whose subject line asked a question".into(),
        (Pattern::SubjectStyle, "personal") => "members whose subject line named them".into(),
        (Pattern::SubjectStyle, _) => "members whose subject line was a plain statement".into(),
        (Pattern::TemplateVersion, version) => format!("members written to from {}", template_label(version)),
    }
}

/// `default` → "the shipped template"; `owner@{time}` → "your own template (as of {day})".
fn template_label(version: &str) -> String {
    match (template_of(version), version.split_once('@')) {
        ("owner", Some((_, at))) => format!("your own template (as of {})", at.get(..10).unwrap_or(at)),
        ("owner", None) => "your own template".into(),
        _ => "the shipped template".into(),
    }
}

/// What accepting the finding changes, its title and its fingerprint; `None` when there is
/// nothing safe to change (longer first messages doing better).
fn change(pattern: Pattern, scope: Option<&str>, best: &str, worst: &str) -> Option<(SuggestionKind, String, ProposedChange, String)> {
    let memory = |content: String| ProposedChange::Memory {
        content,
        category: Some("pattern".into()),
    };
    let prompt = |instruction: &str| ProposedChange::Prompt {
        agent: "*".into(),
        task_type: None,
        instruction: instruction.to_owned(),
    };
    Some(match pattern {
        Pattern::TouchCount if best == "follow_up" => (
            SuggestionKind::Memory,
            "Follow-ups bring members back here: keep writing through the cadence".into(),
            memory("Members here often come back after a follow-up, not only the first message: keep following up through the cadence.".into()),
            format!("memory:touch_count_outcome:{best}>{worst}"),
        ),
        Pattern::TouchCount => (
            SuggestionKind::Memory,
            "Members here come back after the first message, rarely after a follow-up".into(),
            memory("Members here who come back mostly do so after the first message; follow-ups rarely bring anyone back, so make the first message count.".into()),
            format!("memory:touch_count_outcome:{best}>{worst}"),
        ),
        Pattern::SendHour => (
            SuggestionKind::Memory,
            format!("Members written to in the {best} come back more often than in the {worst}"),
            memory(format!(
                "Members here more often come back when first written to in the {best} than in the {worst}: prefer the {best} when choosing when to write."
            )),
            format!("memory:send_time_outcome:{best}>{worst}"),
        ),
        Pattern::MessageLength if best == "short" => (
            SuggestionKind::Prompt,
            format!("Short first messages bring more members back (under {LONG} characters)"),
            prompt(&format!("Keep first messages under {LONG} characters: short ones bring members back more often.")),
            format!("prompt:message_length_outcome:under_{LONG}"),
        ),
        Pattern::MessageLength => return None,
        Pattern::SubjectStyle => {
            let (what, instruction) = match best {
                "question" => ("ask a question", "Write the first message's subject line as a short question."),
                "personal" => ("name the member", "Put the member's first name in the first message's subject line."),
                _ => (
                    "are a plain statement",
                    "Keep the first message's subject line a plain statement: no question, no name.",
                ),
            };
            (
                SuggestionKind::Prompt,
                format!("Subject lines that {what} bring more members back"),
                prompt(instruction),
                format!("prompt:subject_style_outcome:{best}>{worst}"),
            )
        }
        Pattern::TemplateVersion => {
            let task_type = scope.unwrap_or("any").replace('_', " ");
            (
                SuggestionKind::Memory,
                format!(
                    "{} brings more {task_type} members back than {}",
                    capitalise(&template_label(best)),
                    template_label(worst)
                ),
                memory(format!(
                    "For {task_type}, messages written from {} brought members back more often than those from {}.",
                    template_label(best),
                    template_label(worst)
                )),
                format!("memory:template_outcome:{}:{best}>{worst}", scope.unwrap_or("any")),
            )
        }
    })
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Every outcome pattern the account's recent closed tasks support, each a suggestion whose
/// evidence names it.
pub fn outcome_patterns(tasks: &[ClosedTask]) -> Vec<SuggestionDraft> {
    let mut found = Vec::new();
    for pattern in Pattern::ALL {
        for (scope, groups) in comparisons(tasks, pattern) {
            let Some(contrasted) = contrast(&groups, Measure::Outcomes) else {
                continue;
            };
            let ((best, b), (worst, w)) = (contrasted.best, contrasted.worst);
            let Some((difference, low, high)) = contrasted.interval else {
                continue;
            };
            let Some((kind, title, change, fingerprint)) = change(pattern, scope.as_deref(), best, worst) else {
                continue;
            };
            let mut evidence = json!({
                "window_days": WINDOW_DAYS,
                "measure": "outcome",
                "pattern": pattern.name(),
                "groups": [best, worst],
                "difference": round4(difference),
                "ci95": [round4(low), round4(high)],
                "task_ids": b.tasks.iter().chain(&w.tasks).collect::<Vec<_>>(),
            });
            evidence[best.as_str()] = b.evidence(Measure::Outcomes);
            evidence[worst.as_str()] = w.evidence(Measure::Outcomes);
            if let Some(t) = &scope {
                evidence["task_type"] = json!(t);
            }
            let body = format!(
                "Outcomes by {}: over the last {WINDOW_DAYS} days, {} of {} {} reached the goal (came back, paid, \
                 booked) ({}%), against {} of {} {} ({}%) — {} points more, 95% interval {} to {} points.",
                pattern.name().replace('_', " "),
                b.hits,
                b.n,
                describe(pattern, best),
                pct(b),
                w.hits,
                w.n,
                describe(pattern, worst),
                pct(w),
                points(difference),
                points(low),
                points(high),
            );
            found.push(SuggestionDraft {
                kind,
                title,
                body,
                evidence,
                strength: contrasted.strength,
                confidence: contrasted.confidence,
                fingerprint,
                change,
            });
        }
    }
    found
}

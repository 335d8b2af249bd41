//! The view models and page types of what the owner teaches the agent (`learning.rs`, above):
//! the task page's "owner's word" part, the memories page and the suggestions page. Every
//! value is escaped by the templates, as on every page of the dashboard.

use askama::Template;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use openloop_core::learning::suggestion::{AppliedChange, Strength, Suggestion, SuggestionKind};
use openloop_core::owner::business_memory::{BusinessMemory, MemorySource};
use openloop_core::owner::calibration::Threshold;
use openloop_core::task::Task;
use openloop_core::task::feedback::{self, COMMENT_MAX_CHARS, Rating};

use crate::page::{Layout, code, when, words};

/// The categories offered for a memory (the model's soft labels; none is fine).
pub const CATEGORIES: [(&str, &str); 5] = [
    (
        openloop_core::owner::business_memory::FAQ_CATEGORY,
        "A fact members ask about (price, first class, hours, parking): questions are answered with it",
    ),
    ("preference", "A preference"),
    ("context", "Context"),
    ("pattern", "A pattern"),
    ("business_profile", "About the business"),
];

/// The task page's part of the owner's word.
pub struct OwnerWord {
    /// The task is closed or escalated: "Good" and "Bad" are offered.
    pub may_rate: bool,
    /// The task is closed: "Correct outcome" is offered.
    pub may_correct: bool,
    pub feedback: Option<FeedbackView>,
    /// `(code, label)` of each of the type's outcomes.
    pub outcomes: Vec<(&'static str, &'static str)>,
    /// The task's outcome code now (selected in the correction's list).
    pub outcome: String,
    pub comment_max: usize,
    pub progress: Option<ProgressView>,
    /// Where the attributed value's price came from.
    pub value_source: Option<&'static str>,
    pub memories_used: Vec<UsedMemory>,
}

pub struct FeedbackView {
    /// `Good` or `Bad`.
    pub rating: &'static str,
    pub rating_class: &'static str,
    pub comment: Option<String>,
    /// The thumbs-down's reason, as the owner reads it.
    pub reason: Option<&'static str>,
    pub at: String,
}

pub struct ProgressView {
    pub pct: u8,
    pub outcome: String,
    /// What the evaluator's reading rests on, and what it would do next, in words.
    pub evidence_type: &'static str,
    pub evidence: String,
    pub recommended: &'static str,
    /// `(name, hit)`.
    pub milestones: Vec<(String, bool)>,
    pub risks: Vec<String>,
}

/// A memory the task's last AI call read; `content` is `None` once it was deleted.
pub struct UsedMemory {
    pub id: String,
    pub content: Option<String>,
}

pub fn owner_word(task: &Task, book: &[BusinessMemory], tz: &TimeZone) -> OwnerWord {
    let def = openloop_core::task::task_type::definition(&task.task_type);
    OwnerWord {
        may_rate: feedback::may_rate(task.status),
        may_correct: task.status.is_terminal(),
        feedback: task.feedback.as_ref().map(|f| FeedbackView {
            rating: match f.rating {
                Rating::Up => "Good",
                Rating::Down => "Bad",
            },
            rating_class: match f.rating {
                Rating::Up => "good",
                Rating::Down => "bad",
            },
            comment: f.comment.clone(),
            reason: f.reason.map(|r| r.label()),
            at: when(f.at, tz),
        }),
        outcomes: def.goal.outcomes.iter().map(|o| (o.code, o.label)).collect(),
        outcome: task.outcome.clone().unwrap_or_default(),
        comment_max: COMMENT_MAX_CHARS,
        // How far an open task is; a closed one says its outcome instead (a completed task is
        // not "30% towards the goal"), and the task's one confidence is in its header.
        progress: task.goal_progress.as_ref().filter(|_| task.is_active()).map(|p| ProgressView {
            pct: p.progress_pct.min(100),
            outcome: words(&p.current_outcome),
            evidence_type: match code(&p.evidence_type).as_str() {
                "concrete_signal" => "seen in the gym's data",
                "verbal_commitment" => "the member said so",
                "partial_signal" => "partly seen in the gym's data",
                "inferred" => "read between the lines",
                _ => "nothing seen yet",
            },
            evidence: p.evidence.clone(),
            recommended: match code(&p.recommended_action).as_str() {
                "complete" => "close it as reached",
                "wait_and_verify" => "wait to see it in the gym's data",
                "escalate" => "ask you",
                "close_as_neutral" => "close it",
                _ => "keep going",
            },
            milestones: p.milestones.iter().map(|m| (m.name.clone(), m.hit)).collect(),
            risks: p.risks.clone(),
        }),
        value_source: task.attributed_value.and(task.value_source).map(|s| s.describe()),
        memories_used: task
            .memories_used
            .iter()
            .map(|id| UsedMemory {
                id: id.to_string(),
                content: book.iter().find(|m| m.id == *id).map(|m| m.content.clone()),
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "app/memories.html")]
pub struct MemoriesPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    /// Why the owner's memory was not saved.
    pub error: Option<String>,
    pub memories: Vec<MemoryRow>,
    pub count: usize,
    /// The "Add" form's values (as the owner filled it, after an error).
    pub form: MemoryForm,
    pub categories: Vec<(&'static str, &'static str)>,
    pub max_chars: usize,
    pub cap: usize,
}

/// The "Add" form's fields.
#[derive(Clone, Debug, Default)]
pub struct MemoryForm {
    pub content: String,
    pub member_id: String,
    pub category: String,
    /// `YYYY-MM-DD`: the last day the memory is read.
    pub expires_on: String,
}

pub struct MemoryRow {
    pub id: String,
    pub content: String,
    pub member: Option<String>,
    pub category: Option<String>,
    pub source: &'static str,
    pub confidence: u8,
    pub created: String,
    pub expires: Option<String>,
    pub expired: bool,
}

pub fn memory_row(m: &BusinessMemory, tz: &TimeZone, now: Timestamp) -> MemoryRow {
    MemoryRow {
        id: m.id.to_string(),
        content: m.content.clone(),
        member: m.member_id.as_ref().map(|id| id.as_str().to_owned()),
        category: m.category.as_deref().map(|c| {
            CATEGORIES
                .iter()
                .find(|(code, _)| *code == c)
                .map_or_else(|| words(c), |(_, label)| label.split(" (").next().unwrap_or(label).to_owned())
        }),
        source: match m.source {
            MemorySource::Owner => "you",
            MemorySource::OwnerEdit => "your edits",
            MemorySource::Evaluator => "a suggestion",
            MemorySource::Agent => "the agent",
        },
        confidence: m.confidence,
        created: when(m.created_at, tz),
        expires: m.expires_at.map(|at| when(at, tz)),
        expired: !m.is_active(now),
    }
}

#[derive(Template)]
#[template(path = "app/suggestions.html")]
pub struct SuggestionsPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub pending: Vec<SuggestionCard>,
    pub applied: Vec<SuggestionCard>,
    /// The trust gradient is on (strong memory suggestions are saved without review).
    pub auto_save_memories: bool,
}

pub struct SuggestionCard {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub body: String,
    pub strength: &'static str,
    pub strength_class: &'static str,
    pub confidence: u8,
    pub created: String,
    pub evidence: EvidenceTable,
    /// What accepting changed (applied ones).
    pub change: Option<String>,
    pub decided: Option<String>,
    pub auto_applied: bool,
    /// A skill or prompt change: it can run as an experiment on half the new tasks.
    pub experimentable: bool,
}

/// A suggestion's evidence as the owner reads it: single figures as facts, groups of
/// figures (`{"evening": {"sent", "replied", "reply_rate"}, …}`) as a table's rows.
#[derive(Debug, Default, PartialEq)]
pub struct EvidenceTable {
    /// `(label, value)`.
    pub facts: Vec<(String, String)>,
    pub columns: Vec<String>,
    /// `(group, one value per column)`.
    pub rows: Vec<(String, Vec<String>)>,
}

pub fn suggestion_card(s: &Suggestion, tz: &TimeZone) -> SuggestionCard {
    let (strength, strength_class) = match s.strength {
        Strength::Weak => ("weak", ""),
        Strength::Moderate => ("moderate", "warn"),
        Strength::Strong => ("strong", "good"),
    };
    SuggestionCard {
        id: s.id.to_string(),
        kind: words(&code(&s.kind)),
        title: s.title.clone(),
        body: s.body.clone(),
        strength,
        strength_class,
        confidence: s.confidence,
        created: when(s.created_at, tz),
        evidence: evidence_table(&s.evidence),
        change: s.applied.as_ref().map(|a| applied_change(&s.kind, a)),
        decided: s.decided_at.map(|at| when(at, tz)),
        auto_applied: s.auto_applied,
        experimentable: matches!(s.kind, SuggestionKind::Skill | SuggestionKind::Prompt),
    }
}

/// What an applied suggestion changed, in the owner's words.
fn applied_change(kind: &SuggestionKind, a: &AppliedChange) -> String {
    match a {
        AppliedChange::Memory { .. } => "saved as a memory".to_owned(),
        AppliedChange::Prompt { agent, task_type, .. } => format!(
            "added to the instructions for {}{}",
            if agent == "*" {
                "every agent".to_owned()
            } else {
                format!("the {} agent", words(agent))
            },
            task_type.as_deref().map(|t| format!(" ({})", words(t))).unwrap_or_default()
        ),
        AppliedChange::Learned { .. } => format!("kept as a {} for its task type", words(&code(kind))),
        AppliedChange::Autopilot { task_type } => format!("{} messages now go out without your review", words(task_type)),
        AppliedChange::Calibration { threshold, before, after } => match threshold {
            Threshold::RiskGapDays => format!("members are flagged after {after} days without a check-in (was {before})"),
            Threshold::ConfidenceRaise => {
                format!("the confidence needed to send without review is raised by {after} points (was {before})")
            }
        },
    }
}

/// One figure as the owner reads it: a rate as a percentage, a list as how many.
fn figure(key: &str, value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Number(n) if key.ends_with("rate") => n.as_f64().map_or_else(|| n.to_string(), |r| format!("{:.0}%", r * 100.0)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => format!("{f:.2}"),
            _ => n.to_string(),
        },
        Value::String(s) => words(s),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_owned(),
        Value::Array(items) => items.len().to_string(),
        Value::Null => "—".to_owned(),
        Value::Object(o) => o.len().to_string(),
    }
}

fn label(key: &str) -> String {
    match key {
        "task_ids" => "tasks".to_owned(),
        _ => words(key),
    }
}

pub fn evidence_table(evidence: &serde_json::Value) -> EvidenceTable {
    let mut table = EvidenceTable::default();
    let Some(object) = evidence.as_object() else {
        if !evidence.is_null() {
            table.facts.push(("evidence".to_owned(), figure("", evidence)));
        }
        return table;
    };
    let is_group = |v: &serde_json::Value| {
        v.as_object()
            .is_some_and(|o| !o.is_empty() && o.values().all(|v| !v.is_object() && !v.is_array()))
    };
    for (key, value) in object {
        if is_group(value) {
            for column in value.as_object().into_iter().flat_map(|o| o.keys()) {
                if !table.columns.contains(column) {
                    table.columns.push(column.clone());
                }
            }
        } else {
            table.facts.push((label(key), figure(key, value)));
        }
    }
    for (key, value) in object.iter().filter(|(_, v)| is_group(v)) {
        let cells = table
            .columns
            .iter()
            .map(|c| value.get(c).map_or_else(String::new, |v| figure(c, v)))
            .collect();
        table.rows.push((words(key), cells));
    }
    table.columns = table.columns.iter().map(|c| label(c)).collect();
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_applied_calibration_says_the_threshold_before_and_after() {
        let change = AppliedChange::Calibration {
            threshold: Threshold::RiskGapDays,
            before: 14,
            after: 22,
        };
        assert_eq!(
            applied_change(&SuggestionKind::Calibration, &change),
            "members are flagged after 22 days without a check-in (was 14)"
        );
    }

    #[test]
    fn evidence_reads_as_facts_and_a_table_of_groups() {
        let evidence = json!({
            "window_days": 30,
            "evening": {"sent": 12, "replied": 12, "reply_rate": 1.0},
            "morning": {"sent": 12, "replied": 0, "reply_rate": 0.0},
            "task_ids": ["a", "b", "c"],
            "edit": "shortened",
        });
        let table = evidence_table(&evidence);
        assert_eq!(
            table.facts,
            vec![
                ("edit".to_owned(), "shortened".to_owned()),
                ("tasks".to_owned(), "3".to_owned()),
                ("window days".to_owned(), "30".to_owned()),
            ]
        );
        assert_eq!(table.columns, ["replied", "reply rate", "sent"]);
        assert_eq!(
            table.rows,
            vec![
                ("evening".to_owned(), vec!["12".to_owned(), "100%".to_owned(), "12".to_owned()]),
                ("morning".to_owned(), vec!["0".to_owned(), "0%".to_owned(), "12".to_owned()]),
            ]
        );
        assert_eq!(evidence_table(&json!(null)), EvidenceTable::default());
    }
}

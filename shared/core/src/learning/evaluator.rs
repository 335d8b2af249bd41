//! The offline evaluator: deterministic statistics over an account's recent
//! closed tasks, with explicit thresholds, that find what a model would be asked to find —
//! here, when members answer (the local hour of the first message against whether they
//! replied) and how long a first message should be. Each finding is a [`SuggestionDraft`] with
//! its counts; nothing is suggested from fewer than [`MIN_SENDS_PER_GROUP`] messages in each
//! group compared, or a gap under [`MIN_RATE_GAP_PCT`] points.
//!
//! Only the shared part of the record is read (hours, lengths, counts): the same code can run
//! across businesses without touching text.

use serde_json::json;

use super::edit::EditKind;
use super::interaction::SharedOutcome;
use super::suggestion::{ProposedChange, Strength, SuggestionDraft, SuggestionKind};
use crate::kernel::ids::TaskId;

/// How far back an evaluation looks.
pub const WINDOW_DAYS: i64 = 30;
/// Messages each compared group needs before a difference between them means anything.
pub const MIN_SENDS_PER_GROUP: u32 = 8;
/// The smallest difference in reply rates (percentage points) worth suggesting.
pub const MIN_RATE_GAP_PCT: u32 = 30;
/// Sample sizes (both groups together) for a moderate and a strong finding.
pub const MODERATE_SENDS: u32 = 16;
pub const STRONG_SENDS: u32 = 24;
/// A first message longer than this many characters is "long".
pub const LONG_MESSAGE_CHARS: usize = 600;
/// At most this many suggestions from one evaluation.
pub const MAX_SUGGESTIONS: usize = 3;

/// One closed task, as the evaluator reads it.
#[derive(Clone, Debug)]
pub struct ClosedTask {
    pub task_id: TaskId,
    pub shared: SharedOutcome,
    /// The owner's edits of its draft, by kind (the account's own: read only for this account).
    pub edits: Vec<EditKind>,
    /// The template its first message was written from, with its version (the account's own).
    pub template_version: Option<String>,
}

/// Consistent edits of one kind needed for a weak, moderate and strong suggestion.
pub const EDITS_WEAK: usize = 3;
pub const EDITS_MODERATE: usize = 5;
pub const EDITS_STRONG: usize = 8;

/// Part of the day of a local hour.
pub(super) fn day_part(hour: i8) -> Option<&'static str> {
    match hour {
        5..=11 => Some("morning"),
        12..=16 => Some("afternoon"),
        17..=22 => Some("evening"),
        _ => None,
    }
}

/// Answered: the member replied at least once.
fn replied(t: &ClosedTask) -> bool {
    t.shared.turns > 0
}

/// When members answer: the part of the day with the best reply rate against the worst.
pub(super) fn send_time(tasks: &[ClosedTask]) -> Option<SuggestionDraft> {
    let groups = grouped(tasks, |t| t.shared.first_touch_hour.and_then(day_part).map(str::to_owned), replied);
    let found = contrast(&groups, Measure::Replies)?;
    let ((best, b), (worst, w)) = (found.best, found.worst);
    let (best, worst) = (best.as_str(), worst.as_str());
    let hours = match best {
        "morning" => "before noon",
        "afternoon" => "between noon and 5pm",
        _ => "after 5pm",
    };
    Some(SuggestionDraft {
        kind: SuggestionKind::Memory,
        title: format!("Send messages in the {best} — {worst} sends go unanswered"),
        body: format!(
            "Over the last {WINDOW_DAYS} days, {} of {} first messages sent in the {best} were answered ({}%), \
             against {} of {} sent in the {worst} ({}%). Saving this tells the agent that members here answer \
             messages sent {hours}.",
            b.hits,
            b.n,
            b.rate_pct(),
            w.hits,
            w.n,
            w.rate_pct()
        ),
        evidence: json!({
            "window_days": WINDOW_DAYS,
            best: b.evidence(Measure::Replies),
            worst: w.evidence(Measure::Replies),
            "task_ids": b.tasks.iter().chain(&w.tasks).collect::<Vec<_>>(),
        }),
        strength: found.strength,
        confidence: found.confidence,
        fingerprint: format!("memory:send_time:{best}>{worst}"),
        change: ProposedChange::Memory {
            content: format!(
                "Members here answer messages sent {hours} ({best}) far more often than {worst} ones: \
                 prefer the {best} when choosing when to write."
            ),
            category: Some("pattern".into()),
        },
    })
}

/// How long a first message should be: short ones against long ones.
pub(super) fn message_length(tasks: &[ClosedTask]) -> Option<SuggestionDraft> {
    let groups = grouped(
        tasks,
        |t| {
            t.shared
                .message_length
                .map(|n| if n > LONG_MESSAGE_CHARS { "long" } else { "short" }.to_owned())
        },
        replied,
    );
    let found = contrast(&groups, Measure::Replies)?;
    let ((best, b), (_, w)) = (found.best, found.worst);
    if best != "short" {
        // Longer messages doing better is no instruction the agent can follow safely.
        return None;
    }
    let instruction = format!("Keep first messages under {LONG_MESSAGE_CHARS} characters.");
    Some(SuggestionDraft {
        kind: SuggestionKind::Prompt,
        title: format!("Keep first messages under {LONG_MESSAGE_CHARS} characters"),
        body: format!(
            "Over the last {WINDOW_DAYS} days, {} of {} short first messages were answered ({}%), against {} of {} \
             longer than {LONG_MESSAGE_CHARS} characters ({}%). Applying this adds the instruction \"{instruction}\" \
             for every agent.",
            b.hits,
            b.n,
            b.rate_pct(),
            w.hits,
            w.n,
            w.rate_pct()
        ),
        evidence: json!({"window_days": WINDOW_DAYS, "short": b.evidence(Measure::Replies), "long": w.evidence(Measure::Replies)}),
        strength: found.strength,
        confidence: found.confidence,
        fingerprint: format!("prompt:message_length:under_{LONG_MESSAGE_CHARS}"),
        change: ProposedChange::Prompt {
            agent: "*".into(),
            task_type: None,
            instruction,
        },
    })
}

/// The owner's edits: each kind made on at least [`EDITS_WEAK`] drafts is a memory
/// suggestion, as strong as the count (a stronger one is a new finding).
pub(super) fn owner_edits(tasks: &[ClosedTask]) -> Vec<SuggestionDraft> {
    let edited: Vec<&ClosedTask> = tasks.iter().filter(|t| !t.edits.is_empty()).collect();
    let mut kinds: Vec<EditKind> = edited.iter().flat_map(|t| t.edits.iter().copied()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
        .into_iter()
        .filter_map(|kind| {
            let with: Vec<String> = edited
                .iter()
                .filter(|t| t.edits.contains(&kind))
                .map(|t| t.task_id.to_string())
                .collect();
            let n = with.len();
            let (strength, confidence) = match n {
                n if n >= EDITS_STRONG => (Strength::Strong, 85),
                n if n >= EDITS_MODERATE => (Strength::Moderate, 65),
                n if n >= EDITS_WEAK => (Strength::Weak, 40),
                _ => return None,
            };
            let strength_name = match strength {
                Strength::Weak => "weak",
                Strength::Moderate => "moderate",
                Strength::Strong => "strong",
            };
            Some(SuggestionDraft {
                kind: SuggestionKind::Memory,
                title: format!("You keep making the same edit: {}", kind.as_str().replace('_', " ")),
                body: format!(
                    "In the last {WINDOW_DAYS} days you made this change to {n} of the {} drafts you edited before \
                     approving them. Saving it tells the agent: \"{}\"",
                    edited.len(),
                    kind.lesson()
                ),
                evidence: json!({"window_days": WINDOW_DAYS, "edit": kind.as_str(), "edits_of_kind": n, "edited_drafts": edited.len(), "task_ids": with}),
                strength,
                confidence,
                fingerprint: format!("memory:owner_edit:{}:{strength_name}", kind.as_str()),
                change: ProposedChange::Memory {
                    content: kind.lesson().to_owned(),
                    category: Some("preference".into()),
                },
            })
        })
        .collect()
}

mod compare;
pub(super) mod outcomes;

use compare::{Measure, contrast, grouped};

#[cfg(test)]
mod tests;

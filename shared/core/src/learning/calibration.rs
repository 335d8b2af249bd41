//! Calibration: what the risk scan and the agent's
//! confidence said against what happened, per account. Two findings, each a calibration
//! suggestion with its counts; accepting one moves the account's threshold within the safe
//! bounds of [`crate::owner::calibration`]:
//!
//! - **Longer natural gaps.** Of the members the scan flagged as dropping off, at least
//!   [`MIN_RATE_PCT`]% came back on their own — a check-in before any outreach or without ever
//!   replying — so the gap the scan flags after is this gym's normal rhythm. The suggested gap
//!   is the median gap at which they were flagged plus [`GAP_MARGIN_DAYS`], within bounds.
//! - **Confidence systematically off.** Of the tasks made with at least [`HIGH_CONFIDENCE`]
//!   confidence, at least [`MIN_RATE_PCT`]% the owner edited or skipped, or closed with an
//!   outcome that was later contradicted (a verbal commitment downgraded, the owner's
//!   correction), so the auto-send threshold is raised by one step.
//!
//! - **Shorter gaps.** Calibration goes both ways: members who cancel without ever being
//!   flagged count too. Of the cancelled members the scan then opened a win-back for, at least
//!   [`MIN_MISSED_PCT`]% (and [`MIN_MISSED`]) had been away between the shortest gap allowed
//!   and the gap in force when they cancelled: a shorter gap would have flagged them while
//!   they were still members. The suggested gap is the lower quartile of their absences,
//!   within bounds. When the flags say "longer" and the cancellations "shorter", the evidence
//!   disagrees and neither is suggested.
//!
//! Nothing is suggested from fewer than [`MIN_TASKS`] tasks, or when the threshold is at its
//! bound already. Only the shared part of the record is read.

use serde_json::json;

use super::evaluator::{ClosedTask, MODERATE_SENDS, STRONG_SENDS, WINDOW_DAYS};
use super::suggestion::{ProposedChange, Strength, SuggestionDraft, SuggestionKind};
use crate::kernel::limits::{CONFIDENCE_RAISE_MAX, CONFIDENCE_RAISE_STEP, RISK_GAP_DAYS_MAX, RISK_GAP_DAYS_MIN};
use crate::owner::calibration::{Calibration, Threshold};
use crate::task::reason::Reason;

/// Tasks a calibration needs before it means anything.
pub const MIN_TASKS: usize = 8;
/// The share (percent) of flags the outcome contradicted that makes a threshold suspect.
pub const MIN_RATE_PCT: usize = 50;
/// Days added to the median flagged gap of those who came back on their own.
pub const GAP_MARGIN_DAYS: i64 = 7;
/// Confidence at creation that counts as "high" (the record keeps it rounded down to tens).
pub const HIGH_CONFIDENCE: u8 = 80;
/// Outcomes that say a flagged member came back by themselves (when they never replied).
const CAME_BACK: [&str; 2] = ["retained", "self_resolved"];

fn strength(n: usize) -> Strength {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    match n {
        n if n >= STRONG_SENDS => Strength::Strong,
        n if n >= MODERATE_SENDS => Strength::Moderate,
        _ => Strength::Weak,
    }
}

/// The rate, discounted while the sample is small; never certain.
fn confidence(rate_pct: usize, n: usize) -> u8 {
    u8::try_from((rate_pct * n.min(30) / 30).min(95)).unwrap_or(95)
}

fn ids(tasks: &[&ClosedTask]) -> Vec<String> {
    tasks.iter().map(|t| t.task_id.to_string()).collect()
}

/// The scan's flags against what happened: a longer gap when most came back on their own.
fn risk_gap(tasks: &[ClosedTask], current: &Calibration) -> Option<SuggestionDraft> {
    let flagged: Vec<&ClosedTask> = tasks
        .iter()
        .filter(|t| t.shared.task_type == "churn_risk" && t.shared.trigger == "cron_analysis")
        .filter(|t| t.shared.flagged_gap_days.is_some())
        .collect();
    let came_back: Vec<&ClosedTask> = flagged
        .iter()
        .copied()
        .filter(|t| t.shared.turns == 0 && t.shared.outcome.as_deref().is_some_and(|o| CAME_BACK.contains(&o)))
        .collect();
    let n = flagged.len();
    if n < MIN_TASKS {
        return None;
    }
    let rate_pct = came_back.len() * 100 / n;
    if rate_pct < MIN_RATE_PCT {
        return None;
    }
    let mut gaps: Vec<i64> = came_back.iter().filter_map(|t| t.shared.flagged_gap_days).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    let suggested = u16::try_from((median + GAP_MARGIN_DAYS).max(0))
        .unwrap_or(RISK_GAP_DAYS_MAX)
        .clamp(RISK_GAP_DAYS_MIN, RISK_GAP_DAYS_MAX);
    let now = current.risk_gap_days;
    if suggested <= now {
        return None;
    }
    Some(SuggestionDraft {
        kind: SuggestionKind::Calibration,
        title: format!("Members here take longer breaks: flag them after {suggested} days, not {now}"),
        body: format!(
            "Over the last {WINDOW_DAYS} days the scan flagged {n} members as dropping off; {} of them ({rate_pct}%) \
             came back on their own, without answering a message. They had been away a median of {median} days when \
             flagged. Accepting this flags members after {suggested} days without a check-in instead of {now} \
             (never more than {RISK_GAP_DAYS_MAX}); undo puts {now} back.",
            came_back.len()
        ),
        evidence: json!({
            "window_days": WINDOW_DAYS,
            "flagged": n,
            "came_back_unprompted": came_back.len(),
            "rate": came_back.len() as f64 / n as f64,
            "median_gap_days": median,
            "current_gap_days": now,
            "suggested_gap_days": suggested,
            "task_ids": ids(&flagged),
        }),
        strength: strength(n),
        confidence: confidence(rate_pct, n),
        fingerprint: format!("calibration:risk_gap_days:{now}>{suggested}"),
        change: ProposedChange::Calibration {
            threshold: Threshold::RiskGapDays,
            value: suggested,
        },
    })
}

/// The share (percent) of cancellations a shorter gap would have flagged in time that makes
/// the gap in force too long.
pub const MIN_MISSED_PCT: usize = 30;
/// Such cancellations needed before the gap is shortened.
pub const MIN_MISSED: usize = 4;

/// Members who cancelled without ever being flagged: a shorter gap when enough of them had
/// been away long enough for a gap within bounds to catch them.
fn risk_gap_shorter(tasks: &[ClosedTask], current: &Calibration) -> Option<SuggestionDraft> {
    let cancelled: Vec<&ClosedTask> = tasks
        .iter()
        .filter(|t| t.shared.task_type == "win_back" && t.shared.absent_days_at_cancel.is_some())
        .collect();
    let n = cancelled.len();
    if n < MIN_TASKS {
        return None;
    }
    let now = current.risk_gap_days;
    let (shortest, gap) = (i64::from(RISK_GAP_DAYS_MIN), i64::from(now));
    // Away less than the gap in force: never flagged before they cancelled; away at least
    // the shortest gap: a gap within bounds would have flagged them.
    let missed: Vec<&ClosedTask> = cancelled
        .iter()
        .copied()
        .filter(|t| t.shared.absent_days_at_cancel.is_some_and(|d| d >= shortest && d < gap))
        .collect();
    let rate_pct = missed.len() * 100 / n;
    if missed.len() < MIN_MISSED || rate_pct < MIN_MISSED_PCT {
        return None;
    }
    let mut away: Vec<i64> = missed.iter().filter_map(|t| t.shared.absent_days_at_cancel).collect();
    away.sort_unstable();
    let quartile = away[(away.len() - 1) / 4];
    let median = away[away.len() / 2];
    let suggested = u16::try_from(quartile)
        .unwrap_or(RISK_GAP_DAYS_MIN)
        .clamp(RISK_GAP_DAYS_MIN, RISK_GAP_DAYS_MAX);
    if suggested >= now {
        return None;
    }
    Some(SuggestionDraft {
        kind: SuggestionKind::Calibration,
        title: format!("Members here cancel before the scan flags them: flag them after {suggested} days, not {now}"),
        body: format!(
            "Over the last {WINDOW_DAYS} days {n} members cancelled; {} of them ({rate_pct}%) had been away between \
             {RISK_GAP_DAYS_MIN} and {} days when they did — never flagged, because the scan waits {now} days without a \
             check-in. They had been away a median of {median} days. Accepting this flags members after {suggested} days \
             instead of {now} (never fewer than {RISK_GAP_DAYS_MIN}); undo puts {now} back.",
            missed.len(),
            now - 1
        ),
        evidence: json!({
            "window_days": WINDOW_DAYS,
            "cancelled": n,
            "cancelled_unflagged": missed.len(),
            "rate": missed.len() as f64 / n as f64,
            "median_absent_days": median,
            "lower_quartile_absent_days": quartile,
            "current_gap_days": now,
            "suggested_gap_days": suggested,
            "task_ids": ids(&missed),
        }),
        strength: strength(n),
        confidence: confidence(rate_pct, n),
        fingerprint: format!("calibration:risk_gap_days:{now}>{suggested}"),
        change: ProposedChange::Calibration {
            threshold: Threshold::RiskGapDays,
            value: suggested,
        },
    })
}

/// High-confidence work the owner corrected: a higher auto-send threshold.
fn confidence_threshold(tasks: &[ClosedTask], current: &Calibration) -> Option<SuggestionDraft> {
    let sure: Vec<&ClosedTask> = tasks.iter().filter(|t| t.shared.confidence_bucket >= HIGH_CONFIDENCE).collect();
    let n = sure.len();
    if n < MIN_TASKS || current.confidence_raise >= CONFIDENCE_RAISE_MAX {
        return None;
    }
    let reason = |t: &&ClosedTask, r: Reason| t.shared.outcome_reason.as_deref() == Some(r.as_str());
    let edited = sure.iter().filter(|t| t.shared.owner_edited).count();
    let skipped = sure.iter().filter(|t| reason(t, Reason::OwnerSkipped)).count();
    let contradicted = sure
        .iter()
        .filter(|t| reason(t, Reason::NoSignalAfterVerbalCommitment) || reason(t, Reason::OwnerCorrectedOutcome))
        .count();
    let off: Vec<&ClosedTask> = sure
        .iter()
        .copied()
        .filter(|t| {
            t.shared.owner_edited
                || reason(t, Reason::OwnerSkipped)
                || reason(t, Reason::NoSignalAfterVerbalCommitment)
                || reason(t, Reason::OwnerCorrectedOutcome)
        })
        .collect();
    let rate_pct = off.len() * 100 / n;
    if rate_pct < MIN_RATE_PCT {
        return None;
    }
    let now = current.confidence_raise;
    let suggested = now.saturating_add(CONFIDENCE_RAISE_STEP).min(CONFIDENCE_RAISE_MAX);
    Some(SuggestionDraft {
        kind: SuggestionKind::Calibration,
        title: format!("The agent is too sure of itself here: ask for {suggested} more points before sending alone"),
        body: format!(
            "Over the last {WINDOW_DAYS} days, of {n} tasks the agent was at least {HIGH_CONFIDENCE}% sure of, you edited \
             {edited}, skipped {skipped}, and {contradicted} closed on an outcome that was later contradicted: {} in all \
             ({rate_pct}%). Accepting this raises every task type's confidence threshold for sending without your review \
             by {suggested} points instead of {now} (never more than {CONFIDENCE_RAISE_MAX}); undo puts {now} back.",
            off.len()
        ),
        evidence: json!({
            "window_days": WINDOW_DAYS,
            "high_confidence": n,
            "edited": edited,
            "skipped": skipped,
            "contradicted": contradicted,
            "off": off.len(),
            "rate": off.len() as f64 / n as f64,
            "current_raise": now,
            "suggested_raise": suggested,
            "task_ids": ids(&off),
        }),
        strength: strength(n),
        confidence: confidence(rate_pct, n),
        fingerprint: format!("calibration:confidence_raise:{now}>{suggested}"),
        change: ProposedChange::Calibration {
            threshold: Threshold::ConfidenceRaise,
            value: u16::from(suggested),
        },
    })
}

/// Every calibration the account's recent closed tasks call for, given where its thresholds are.
pub fn calibrations(tasks: &[ClosedTask], current: &Calibration) -> Vec<SuggestionDraft> {
    // The gap moves one way or the other, or not at all when the evidence disagrees.
    let gap = match (risk_gap(tasks, current), risk_gap_shorter(tasks, current)) {
        (Some(longer), None) => Some(longer),
        (None, Some(shorter)) => Some(shorter),
        _ => None,
    };
    [gap, confidence_threshold(tasks, current)].into_iter().flatten().collect()
}

//! The offline evaluator as the [`crate::ports::Evaluator`] port runs it:
//! the statistics of [`super::evaluator`] — reply rates, and the outcome patterns of
//! [`super::evaluator::outcomes`] — and the calibrations of [`super::calibration`] over one
//! account's recent closed tasks.

use super::evaluator::outcomes::outcome_patterns;
use super::evaluator::{ClosedTask, MAX_SUGGESTIONS, message_length, owner_edits, send_time};
use super::suggestion::SuggestionDraft;
use crate::owner::calibration::Calibration;

/// Every finding in an account's recent closed tasks (with its thresholds as they stand, for
/// calibration), strongest first, at most [`MAX_SUGGESTIONS`].
pub fn evaluate(tasks: &[ClosedTask], calibration: &Calibration) -> Vec<SuggestionDraft> {
    let replies: Vec<SuggestionDraft> = [send_time(tasks), message_length(tasks)].into_iter().flatten().collect();
    // An outcome finding that says what a reply finding says adds nothing.
    let said = |fingerprint: &str| {
        let what = fingerprint.rsplit(':').next();
        replies.iter().any(|r| r.fingerprint.rsplit(':').next() == what)
    };
    let outcomes: Vec<SuggestionDraft> = outcome_patterns(tasks).into_iter().filter(|o| !said(&o.fingerprint)).collect();
    let mut found = replies;
    found.extend(outcomes);
    found.extend(owner_edits(tasks));
    found.extend(super::calibration::calibrations(tasks, calibration));
    found.sort_by_key(|d| std::cmp::Reverse((d.strength, d.confidence)));
    found.truncate(MAX_SUGGESTIONS);
    found
}

//! The offline evaluator (issue 16 item 3) as the [`crate::ports::Evaluator`] port runs it:
//! the statistics of [`super::evaluator`] and the calibrations of [`super::calibration`]
//! over one account's recent closed tasks.

use super::evaluator::{ClosedTask, MAX_SUGGESTIONS, message_length, owner_edits, send_time};
use super::suggestion::SuggestionDraft;
use crate::owner::calibration::Calibration;

/// Every finding in an account's recent closed tasks (with its thresholds as they stand, for
/// calibration), strongest first, at most [`MAX_SUGGESTIONS`].
pub fn evaluate(tasks: &[ClosedTask], calibration: &Calibration) -> Vec<SuggestionDraft> {
    let mut found: Vec<SuggestionDraft> = [send_time(tasks), message_length(tasks)].into_iter().flatten().collect();
    found.extend(owner_edits(tasks));
    found.extend(super::calibration::calibrations(tasks, calibration));
    found.sort_by_key(|d| std::cmp::Reverse((d.strength, d.confidence)));
    found.truncate(MAX_SUGGESTIONS);
    found
}

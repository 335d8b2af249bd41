//! The offline evaluator (issue 16 item 3) as the [`crate::ports::Evaluator`] port runs it:
//! the statistics of [`super::evaluator`] and the calibrations of [`super::calibration`]
//! over one account's recent closed tasks.

use super::evaluator::{
    ClosedTask, MAX_SUGGESTIONS, message_length, message_length_by_outcome, owner_edits, send_time, send_time_by_outcome,
};
use super::suggestion::SuggestionDraft;
use crate::owner::calibration::Calibration;

/// Every finding in an account's recent closed tasks (with its thresholds as they stand, for
/// calibration), strongest first, at most [`MAX_SUGGESTIONS`].
pub fn evaluate(tasks: &[ClosedTask], calibration: &Calibration) -> Vec<SuggestionDraft> {
    let (timing, length) = (send_time(tasks), message_length(tasks));
    // An outcome finding that says what the reply finding of its kind says adds nothing.
    let new = |reply: &Option<SuggestionDraft>, outcome: Option<SuggestionDraft>| {
        outcome.filter(|o| {
            reply
                .as_ref()
                .is_none_or(|r| r.fingerprint.rsplit(':').next() != o.fingerprint.rsplit(':').next())
        })
    };
    let by_outcome = [
        new(&timing, send_time_by_outcome(tasks)),
        new(&length, message_length_by_outcome(tasks)),
    ];
    let mut found: Vec<SuggestionDraft> = [timing, length].into_iter().chain(by_outcome).flatten().collect();
    found.extend(owner_edits(tasks));
    found.extend(super::calibration::calibrations(tasks, calibration));
    found.sort_by_key(|d| std::cmp::Reverse((d.strength, d.confidence)));
    found.truncate(MAX_SUGGESTIONS);
    found
}

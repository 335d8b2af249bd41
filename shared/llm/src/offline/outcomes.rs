//! Which of the request's outcome codes a judgment names.
//!
//! Reading a reply ([`super::reply`]) and judging a goal's progress ([`super::completion`])
//! both end by naming an outcome, and both may name only the codes the request offers. The
//! choice of a verbal-commitment, a neutral or a negative code is made here, once, from the
//! task type's registry entry, so the two judgments cannot drift apart on what a code means.

use openloop_core::task::task_type::{self, OutcomeKind, TaskTypeDef};

/// The registry's definition of the request's type (unknown types read as `ad_hoc`).
pub(super) fn definition(task_type: &str) -> &'static TaskTypeDef {
    task_type::definition(task_type)
}

pub(super) fn offered<'a>(codes: &'a [String], wanted: &str) -> Option<&'a String> {
    codes.iter().find(|c| c.as_str() == wanted)
}

fn kind_of(def: &TaskTypeDef, code: &str) -> Option<OutcomeKind> {
    def.outcome(code).map(|o| o.kind)
}

/// Outcomes only the system or the owner sets, never a reading of a reply.
const SYSTEM_OUTCOMES: &[&str] = &[
    "owner_handled",
    "self_resolved",
    "escalated_unresolved",
    "unresponsive",
    "engaged_late",
    "verbal_only",
];

/// The outcome a provisional close names: the type's verbal-commitment outcome, if the type
/// has one and the request offers it. `None` means words do not close this task.
pub fn verbal_commitment_code(codes: &[String], task_type: &str) -> Option<String> {
    definition(task_type)
        .verbal_commitment_outcome()
        .and_then(|code| offered(codes, code).cloned())
}

/// A neutral "still talking" code (engaged_conversation, engaged, acknowledged…).
pub(super) fn neutral_code(codes: &[String], task_type: &str) -> Option<String> {
    let def = definition(task_type);
    for wanted in ["engaged_conversation", "engaged", "interested", "acknowledged", "some_engagement"] {
        if let Some(c) = offered(codes, wanted) {
            return Some(c.clone());
        }
    }
    codes
        .iter()
        .find(|c| !SYSTEM_OUTCOMES.contains(&c.as_str()) && kind_of(def, c) == Some(OutcomeKind::Neutral))
        .cloned()
}

/// A clear "no": declined or not_interested — or, for a cancellation, churned or cancelled —
/// whichever is offered. Nothing else stands for a refusal.
pub(super) fn negative_code(codes: &[String], cancelling: bool) -> Option<String> {
    let preferred: &[&str] = if cancelling {
        &["churned", "cancelled", "declined", "not_interested"]
    } else {
        &["declined", "not_interested"]
    };
    preferred.iter().find_map(|w| offered(codes, w).cloned())
}

/// Every outcome code the registry gives `task_type`: what the tests' requests offer.
#[cfg(test)]
pub(super) fn codes(task_type: &str) -> Vec<String> {
    task_type::definition(task_type)
        .goal
        .outcomes
        .iter()
        .map(|o| o.code.to_owned())
        .collect()
}

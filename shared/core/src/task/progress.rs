//! Goal progress (spec §37): how far a task is towards its goal and how sure the evaluator
//! is, kept on the task, shown to the owner and given to the agent in later prompts. The
//! agent's completion evaluation (`Agent::evaluate_completion`) answers with a
//! [`GoalProgress`]; what the pipeline does with it is [`judge`] (spec §37.3).

use serde::{Deserialize, Serialize};

use crate::kernel::limits::{CLOSE_MIN_CONFIDENCE, PROGRESS_DONE_CONFIDENCE, PROGRESS_SIGNAL_CONFIDENCE};
use crate::task::outcome::Milestone;
use crate::task::task_type::{OutcomeKind, TaskTypeDef};

/// How the evidence for a goal was obtained (spec §37.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceType {
    ConcreteSignal,
    VerbalCommitment,
    Inferred,
    PartialSignal,
    None,
}

/// What the evaluator recommends (spec §37.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecommendedAction {
    Complete,
    WaitAndVerify,
    Continue,
    Escalate,
    CloseAsNeutral,
}

/// The goal-progress model (spec §37.2): not a yes/no, but how far and how sure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalProgress {
    pub progress_pct: u8,
    pub current_outcome: String,
    pub confidence: u8,
    pub evidence_type: EvidenceType,
    pub evidence: String,
    pub recommended_action: RecommendedAction,
    pub milestones: Vec<Milestone>,
    pub risks: Vec<String>,
}

impl GoalProgress {
    /// The progress in a few words, for the log and the prompt: `40% (verbal_commitment,
    /// confidence 65): said they would come Monday`.
    pub fn summary(&self) -> String {
        format!(
            "{}% ({}, confidence {}): {}",
            self.progress_pct,
            self.current_outcome,
            self.confidence,
            self.evidence.trim()
        )
    }
}

/// What the evaluator's progress lets the task do now (spec §37.3). Only a concrete signal
/// or a finished progressive goal closes it here, and only with an outcome of its type that
/// is not negative: closing on words is the reply decision's (provisional), and below
/// [`CLOSE_MIN_CONFIDENCE`] nothing closes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The goal is reached: close with this outcome.
    Complete { outcome: String },
    /// Keep going as decided.
    Continue,
}

pub fn judge(progress: &GoalProgress, def: &TaskTypeDef) -> Judged {
    let usable = def
        .outcome(&progress.current_outcome)
        .is_some_and(|o| o.kind != OutcomeKind::Negative);
    let confident = progress.confidence >= CLOSE_MIN_CONFIDENCE;
    let signal = progress.evidence_type == EvidenceType::ConcreteSignal && progress.confidence >= PROGRESS_SIGNAL_CONFIDENCE;
    let done = progress.progress_pct >= 100 && progress.confidence >= PROGRESS_DONE_CONFIDENCE;
    if usable && confident && (signal || done) {
        Judged::Complete {
            outcome: progress.current_outcome.clone(),
        }
    } else {
        Judged::Continue
    }
}

/// The budget ran out (spec §16.1, "budget exhausted with positive signal", low confidence
/// 40–60): the outcome a task with `progress` closes with instead of its cadence's exhaustion
/// policy — the evaluator's current outcome when it is one of the type's and not negative —
/// or `None` when there was no progress.
pub fn exhausted_with_progress<'a>(progress: Option<&'a GoalProgress>, def: &TaskTypeDef) -> Option<&'a str> {
    let progress = progress.filter(|p| p.progress_pct > 0)?;
    def.outcome(&progress.current_outcome)
        .filter(|o| o.kind != OutcomeKind::Negative)
        .map(|_| progress.current_outcome.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task_type::definition;

    fn progress(pct: u8, outcome: &str, confidence: u8, evidence_type: EvidenceType) -> GoalProgress {
        GoalProgress {
            progress_pct: pct,
            current_outcome: outcome.into(),
            confidence,
            evidence_type,
            evidence: "seen".into(),
            recommended_action: RecommendedAction::Continue,
            milestones: Vec::new(),
            risks: Vec::new(),
        }
    }

    #[test]
    fn only_a_concrete_signal_or_a_finished_goal_closes_and_never_under_the_floor() {
        let churn = definition("churn_risk");
        let signal = |c| progress(90, "retained", c, EvidenceType::ConcreteSignal);
        assert_eq!(judge(&signal(79), churn), Judged::Continue);
        assert_eq!(
            judge(&signal(80), churn),
            Judged::Complete {
                outcome: "retained".into()
            }
        );
        let done = |c| progress(100, "retained", c, EvidenceType::Inferred);
        assert_eq!(judge(&done(69), churn), Judged::Continue);
        assert!(matches!(judge(&done(70), churn), Judged::Complete { .. }));
        assert_eq!(
            judge(&progress(60, "retained", 75, EvidenceType::VerbalCommitment), churn),
            Judged::Continue
        );
        assert_eq!(
            judge(&progress(100, "churned", 95, EvidenceType::ConcreteSignal), churn),
            Judged::Continue,
            "negative"
        );
        assert_eq!(
            judge(&progress(100, "no_such", 95, EvidenceType::ConcreteSignal), churn),
            Judged::Continue
        );
    }

    #[test]
    fn a_spent_budget_with_progress_closes_on_the_current_outcome() {
        let churn = definition("churn_risk");
        let some = progress(40, "verbal_commitment", 55, EvidenceType::VerbalCommitment);
        assert_eq!(exhausted_with_progress(Some(&some), churn), Some("verbal_commitment"));
        assert_eq!(
            exhausted_with_progress(Some(&progress(0, "verbal_commitment", 55, EvidenceType::None)), churn),
            None
        );
        assert_eq!(
            exhausted_with_progress(Some(&progress(40, "churned", 55, EvidenceType::Inferred)), churn),
            None
        );
        assert_eq!(exhausted_with_progress(None, churn), None);
    }
}

//! Goal progress: how far a task is towards its goal and how sure the evaluator
//! is, kept on the task, shown to the owner and given to the agent in later prompts. The
//! agent's completion evaluation (`Agent::evaluate_completion`) answers with a
//! [`GoalProgress`]; what the pipeline does with it is [`judge`].

use serde::{Deserialize, Serialize};

use crate::kernel::limits::{CLOSE_MIN_CONFIDENCE, PROGRESS_DONE_CONFIDENCE, PROGRESS_SIGNAL_CONFIDENCE};
use crate::members::member::MemberFacts;
use crate::task::Task;
use crate::task::outcome::{self, Milestone};
use crate::task::task_type::{OutcomeKind, TaskTypeDef};

/// How the evidence for a goal was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EvidenceType {
    ConcreteSignal,
    VerbalCommitment,
    Inferred,
    PartialSignal,
    None,
}

/// What the evaluator recommends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RecommendedAction {
    Complete,
    WaitAndVerify,
    Continue,
    Escalate,
    CloseAsNeutral,
}

/// The goal-progress model: not a yes/no, but how far and how sure.
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

/// What the evaluator's progress lets the task do now. Only a concrete signal
/// or a finished progressive goal closes it as reached, and only with an outcome of its type
/// that is not negative: closing on words is the reply decision's (provisional), and below
/// [`CLOSE_MIN_CONFIDENCE`] nothing closes. The evaluator's own advice is heard too: its
/// "escalate" hands the task to the owner, and its "close as neutral" closes it with a
/// neutral or negative outcome of the type (from the close floor up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The goal is reached: close with this outcome.
    Complete { outcome: String },
    /// The evaluator recommends the owner takes it.
    Escalate,
    /// The evaluator recommends closing with this neutral or negative outcome.
    CloseAsNeutral { outcome: String },
    /// Keep going as decided.
    Continue,
}

pub fn judge(progress: &GoalProgress, def: &TaskTypeDef) -> Judged {
    let outcome = def.outcome(&progress.current_outcome);
    let usable = outcome.is_some_and(|o| o.kind != OutcomeKind::Negative);
    let confident = progress.confidence >= CLOSE_MIN_CONFIDENCE;
    let signal = progress.evidence_type == EvidenceType::ConcreteSignal && progress.confidence >= PROGRESS_SIGNAL_CONFIDENCE;
    let done = progress.progress_pct >= 100 && progress.confidence >= PROGRESS_DONE_CONFIDENCE;
    if usable && confident && (signal || done) {
        return Judged::Complete {
            outcome: progress.current_outcome.clone(),
        };
    }
    match progress.recommended_action {
        RecommendedAction::Escalate => Judged::Escalate,
        RecommendedAction::CloseAsNeutral if confident && outcome.is_some_and(|o| o.kind != OutcomeKind::Positive) => {
            Judged::CloseAsNeutral {
                outcome: progress.current_outcome.clone(),
            }
        }
        _ => Judged::Continue,
    }
}

/// The most signals the evaluator is shown.
const EVIDENCE_SIGNALS: usize = 20;

/// What the completion evaluator is shown of the member (`CompletionRequest::evidence`): the
/// check-ins since the task began, oldest first, as signals — a progressive goal counts them
/// — and `facts: null` (the conversation is its other evidence).
pub fn evidence(task: &Task, facts: Option<&MemberFacts>) -> serde_json::Value {
    let from = outcome::watch_from(task);
    let signals: Vec<serde_json::Value> = facts
        .map(|f| {
            f.checkins
                .range(from..)
                .take(EVIDENCE_SIGNALS)
                .map(|at| serde_json::json!({"signal": "checkin", "at": at.to_string()}))
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({"signals": signals, "facts": null})
}

/// What a spent budget does with the evaluator's progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpentWithProgress<'a> {
    /// A commitment or a signal short of the goal ("budget exhausted with positive signal"):
    /// completed with this outcome, provisional until the goal's signal confirms it.
    CloseProvisionally { outcome: &'a str },
    /// A warm conversation with no concrete commitment: the owner sees it stalling rather
    /// than it timing out or closing on its own.
    Stalled,
}

/// The budget ran out: with progress towards the goal (a positive or neutral outcome of the
/// type, above 0%), a commitment or a signal from the close floor up closes provisionally and
/// anything warmer-but-vaguer goes to the owner; `None` when there was no progress (the
/// cadence's exhaustion policy decides).
pub fn spent_with_progress<'a>(progress: Option<&'a GoalProgress>, def: &TaskTypeDef) -> Option<SpentWithProgress<'a>> {
    let progress = progress.filter(|p| p.progress_pct > 0)?;
    def.outcome(&progress.current_outcome).filter(|o| o.kind != OutcomeKind::Negative)?;
    let committed = matches!(
        progress.evidence_type,
        EvidenceType::VerbalCommitment | EvidenceType::ConcreteSignal | EvidenceType::PartialSignal
    ) && progress.confidence >= CLOSE_MIN_CONFIDENCE;
    Some(if committed {
        SpentWithProgress::CloseProvisionally {
            outcome: progress.current_outcome.as_str(),
        }
    } else {
        SpentWithProgress::Stalled
    })
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
    fn the_evidence_is_the_checkins_since_the_task_began() {
        use crate::testing::{at, sample_task};
        let mut task = sample_task(crate::task::TaskStatus::Waiting);
        task.execution_started_at = Some(at("2026-11-02T14:00:00Z"));
        let mut facts = MemberFacts::new(task.member.id.clone());
        facts.checkins.insert(at("2026-11-01T14:00:00Z"));
        facts.checkins.insert(at("2026-11-03T14:00:00Z"));
        assert_eq!(
            evidence(&task, Some(&facts)),
            serde_json::json!({"signals": [{"signal": "checkin", "at": "2026-11-03T14:00:00Z"}], "facts": null})
        );
        assert_eq!(evidence(&task, None), serde_json::json!({"signals": [], "facts": null}));
    }

    #[test]
    fn a_spent_budget_closes_on_a_commitment_and_hands_a_stalled_conversation_to_the_owner() {
        let churn = definition("churn_risk");
        let said = progress(60, "verbal_commitment", 65, EvidenceType::VerbalCommitment);
        assert_eq!(
            spent_with_progress(Some(&said), churn),
            Some(SpentWithProgress::CloseProvisionally {
                outcome: "verbal_commitment"
            })
        );
        let warm = progress(40, "engaged_conversation", 55, EvidenceType::Inferred);
        assert_eq!(spent_with_progress(Some(&warm), churn), Some(SpentWithProgress::Stalled));
        let unsure = progress(40, "verbal_commitment", 55, EvidenceType::VerbalCommitment);
        assert_eq!(
            spent_with_progress(Some(&unsure), churn),
            Some(SpentWithProgress::Stalled),
            "under the floor"
        );
        assert_eq!(
            spent_with_progress(Some(&progress(0, "verbal_commitment", 55, EvidenceType::None)), churn),
            None
        );
        assert_eq!(
            spent_with_progress(Some(&progress(40, "churned", 55, EvidenceType::Inferred)), churn),
            None
        );
        assert_eq!(spent_with_progress(None, churn), None);
    }

    #[test]
    fn the_evaluators_escalate_and_close_as_neutral_are_carried_out() {
        let churn = definition("churn_risk");
        let advice = |outcome: &str, confidence, action| GoalProgress {
            recommended_action: action,
            ..progress(0, outcome, confidence, EvidenceType::Inferred)
        };
        assert_eq!(
            judge(&advice("engaged_conversation", 40, RecommendedAction::Escalate), churn),
            Judged::Escalate
        );
        assert_eq!(
            judge(&advice("churned", 70, RecommendedAction::CloseAsNeutral), churn),
            Judged::CloseAsNeutral { outcome: "churned".into() }
        );
        assert_eq!(
            judge(&advice("churned", 59, RecommendedAction::CloseAsNeutral), churn),
            Judged::Continue,
            "under the close floor"
        );
        assert_eq!(
            judge(&advice("retained", 70, RecommendedAction::CloseAsNeutral), churn),
            Judged::Continue,
            "not a neutral outcome"
        );
        assert_eq!(
            judge(&advice("no_such", 90, RecommendedAction::CloseAsNeutral), churn),
            Judged::Continue
        );
    }
}

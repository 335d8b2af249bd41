//! Task types as data (spec §5): what each kind of work promises — its goal and possible
//! outcomes, budget, cadence, how sure the agent must be to act alone, and what always needs
//! the owner. Adding a type is one entry in [`REGISTRY`] plus one skill file in `skills/`.
//! Unknown types fall back to `ad_hoc`, which is always reviewed.

use serde::{Deserialize, Serialize};

use crate::cadence::{self, Cadence};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Critical,
    High,
    Medium,
    Low,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Communication,
    StaffTodo,
    Research,
    Automation,
    Recurring,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionType {
    Signal,
    Judgment,
    Deliverable,
    HumanConfirms,
    Composite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Positive,
    Neutral,
    Negative,
}

/// An external event that shows progress towards the goal.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GoalSignal {
    pub signal: &'static str,
    pub weight: u8,
    pub completes_goal: bool,
    pub verification_window_days: u32,
}

/// One possible ending of a task of this type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GoalOutcome {
    pub code: &'static str,
    pub label: &'static str,
    pub kind: OutcomeKind,
    pub description: &'static str,
    /// Months of membership credited when this outcome is reached; `None` credits nothing.
    pub revenue_multiplier: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Goal {
    pub summary: &'static str,
    pub completion: CompletionType,
    pub signals: &'static [GoalSignal],
    pub judgment_criteria: Option<&'static str>,
    pub outcomes: &'static [GoalOutcome],
}

/// The hard budget a task of this type starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BudgetDef {
    pub max_messages: u32,
    pub max_days: u32,
    pub max_turns: u32,
}

/// Conditions that always send a new task of this type to the owner first (spec §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EscalationTrigger {
    Always,
    MemberTenureOver1Year,
    MemberTenureOver2Years,
    MonthlyValueOver200,
    CancellationReasonComplaint,
    CancellationReasonBilling,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TaskTypeDef {
    pub key: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub category: Category,
    pub agent: &'static str,
    pub goal: Goal,
    pub priority: Priority,
    pub budget: BudgetDef,
    pub cadence: Cadence,
    /// Confidence at or above which the agent may act without review (limited_auto only).
    pub auto_threshold: u8,
    pub escalation_triggers: &'static [EscalationTrigger],
    /// File name under `skills/`.
    pub skill_file: &'static str,
    pub outcome_signals: &'static [&'static str],
}

impl TaskTypeDef {
    pub fn outcome(&self, code: &str) -> Option<&GoalOutcome> {
        self.goal.outcomes.iter().find(|o| o.code == code)
    }
}

const fn outcome(
    code: &'static str,
    label: &'static str,
    kind: OutcomeKind,
    description: &'static str,
    revenue_multiplier: Option<f64>,
) -> GoalOutcome {
    GoalOutcome {
        code,
        label,
        kind,
        description,
        revenue_multiplier,
    }
}

use OutcomeKind::{Negative, Neutral, Positive};

pub const PAYMENT_RECOVERY: TaskTypeDef = TaskTypeDef {
    key: "payment_recovery",
    label: "Payment Recovery",
    description: "Let a member know a payment failed, kindly, and help them fix it",
    category: Category::Communication,
    agent: "retention",
    goal: Goal {
        summary: "Recover a failed payment without embarrassing the member",
        completion: CompletionType::Composite,
        signals: &[GoalSignal {
            signal: "payment_succeeded",
            weight: 100,
            completes_goal: true,
            verification_window_days: 7,
        }],
        judgment_criteria: Some(
            "The member acknowledged the problem and said they will update their payment; the task still completes only when a payment succeeds.",
        ),
        outcomes: &[
            outcome(
                "recovered",
                "Payment Recovered",
                Positive,
                "A payment succeeded after outreach",
                Some(1.0),
            ),
            outcome(
                "self_resolved",
                "Self-Resolved",
                Positive,
                "The payment succeeded before any outreach",
                None,
            ),
            outcome(
                "acknowledged",
                "Acknowledged",
                Neutral,
                "The member acknowledged it but the payment still fails",
                None,
            ),
            outcome("unresponsive", "No Response", Neutral, "No reply and the payment still fails", None),
            outcome(
                "cancelled",
                "Member Cancelled",
                Negative,
                "The member cancelled instead of fixing the payment",
                None,
            ),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::Critical,
    budget: BudgetDef {
        max_messages: 2,
        max_days: 7,
        max_turns: 4,
    },
    cadence: cadence::URGENT,
    auto_threshold: 90,
    escalation_triggers: &[EscalationTrigger::Always],
    skill_file: "payment_recovery.md",
    outcome_signals: &["payment_succeeded"],
};

pub const CHURN_RISK: TaskTypeDef = TaskTypeDef {
    key: "churn_risk",
    label: "At-Risk Member",
    description: "Reach out to a member who is showing signs of drifting away",
    category: Category::Communication,
    agent: "retention",
    goal: Goal {
        summary: "Re-engage a member who has not visited recently",
        completion: CompletionType::Composite,
        signals: &[
            GoalSignal {
                signal: "checkin",
                weight: 100,
                completes_goal: true,
                verification_window_days: 14,
            },
            GoalSignal {
                signal: "reply_positive",
                weight: 60,
                completes_goal: false,
                verification_window_days: 14,
            },
        ],
        judgment_criteria: Some("The member stated a specific intent to come back (a day, a class). Vague friendliness does not count."),
        outcomes: &[
            outcome(
                "retained",
                "Member Retained",
                Positive,
                "Checked in within 14 days of outreach",
                Some(1.0),
            ),
            outcome(
                "verbal_commitment",
                "Verbal Commitment",
                Positive,
                "Said they would return; provisional until a check-in, downgraded after 14 days",
                Some(0.5),
            ),
            outcome(
                "engaged_conversation",
                "Engaged Conversation",
                Neutral,
                "Replied warmly without committing",
                None,
            ),
            outcome(
                "self_resolved",
                "Self-Resolved",
                Positive,
                "Came back before outreach was sent",
                None,
            ),
            outcome(
                "unresponsive",
                "No Response",
                Neutral,
                "All touches used, no reply, no check-in",
                None,
            ),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
            outcome("churned", "Confirmed Churn", Negative, "Cancelled during or after outreach", None),
            outcome(
                "escalated_unresolved",
                "Escalated (Unresolved)",
                Neutral,
                "Escalated and never resolved",
                None,
            ),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::High,
    budget: BudgetDef {
        max_messages: 3,
        max_days: 14,
        max_turns: 6,
    },
    cadence: cadence::STANDARD,
    auto_threshold: 75,
    escalation_triggers: &[EscalationTrigger::MemberTenureOver1Year, EscalationTrigger::MonthlyValueOver200],
    skill_file: "churn_risk.md",
    outcome_signals: &["checkin", "reply_positive"],
};

pub const AD_HOC: TaskTypeDef = TaskTypeDef {
    key: "ad_hoc",
    label: "Custom Task",
    description: "A task the owner or an agent created for one specific purpose",
    category: Category::Communication,
    agent: "gm",
    goal: Goal {
        summary: "Accomplish the specific goal the owner described",
        completion: CompletionType::Judgment,
        signals: &[],
        judgment_criteria: Some("The owner's stated goal is achieved, or the member's answer settles the matter."),
        outcomes: &[
            outcome("resolved", "Resolved", Positive, "Goal achieved", None),
            outcome("unresponsive", "No Response", Neutral, "No reply", None),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::Medium,
    budget: BudgetDef {
        max_messages: 3,
        max_days: 14,
        max_turns: 6,
    },
    cadence: cadence::STANDARD,
    auto_threshold: 0,
    escalation_triggers: &[EscalationTrigger::Always],
    skill_file: "ad_hoc.md",
    outcome_signals: &[],
};

/// Every task type the system knows.
pub const REGISTRY: &[TaskTypeDef] = &[PAYMENT_RECOVERY, CHURN_RISK, AD_HOC];

/// Is `key` a registered type?
pub fn lookup(key: &str) -> Option<&'static TaskTypeDef> {
    REGISTRY.iter().find(|t| t.key == key)
}

/// The definition for `key`, falling back to `ad_hoc` (always reviewed) for unknown types.
pub fn definition(key: &str) -> &'static TaskTypeDef {
    lookup(key).unwrap_or(&AD_HOC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_types_fall_back_to_ad_hoc() {
        assert_eq!(definition("fill_underbooked_class").key, "ad_hoc");
        assert!(AD_HOC.escalation_triggers.contains(&EscalationTrigger::Always));
    }

    #[test]
    fn every_entry_is_complete_and_has_its_skill_file() {
        let skills = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
        for def in REGISTRY {
            assert!(!def.goal.outcomes.is_empty(), "{} has no outcomes", def.key);
            assert!(
                def.goal.outcomes.iter().any(|o| o.code == "owner_handled"),
                "{} cannot be resolved by the owner",
                def.key
            );
            assert!(def.budget.max_days > 0, "{} has no time budget", def.key);
            assert!(
                def.cadence.intervals.len() >= def.budget.max_messages as usize || def.budget.max_messages <= 1,
                "{}: budget larger than its cadence",
                def.key
            );
            for signal in def.goal.signals {
                assert!(
                    def.outcome_signals.contains(&signal.signal),
                    "{}: goal signal {} is not an outcome signal",
                    def.key,
                    signal.signal
                );
            }
            assert!(
                skills.join(def.skill_file).is_file(),
                "{}: skills/{} is missing",
                def.key,
                def.skill_file
            );
        }
        assert!(skills.join("_base.md").is_file());
    }
}

//! Task types as data: what each kind of work promises — its goal and possible
//! outcomes, budget, cadence, how sure the agent must be to act alone, and what always needs
//! the owner. Adding a type is one entry in [`REGISTRY`] plus one skill file in `skills/`.
//! Unknown types fall back to `ad_hoc`, which is always reviewed.

use serde::{Deserialize, Serialize};

use crate::task::cadence::{self, Cadence};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Critical,
    High,
    Medium,
    Low,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Critical => "critical",
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// Who carries the work out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Assignment {
    Agent,
    Owner,
    Coach,
    Staff,
    System,
}

/// What a research task produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliverableType {
    Report,
    Plan,
    MemberProfile,
    DataExport,
}

/// A recurring type's default schedule: a cron expression (5 fields, in the account's time
/// zone) and the most instances one template may ever spawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Recurrence {
    pub cron: &'static str,
    pub max_instances: u32,
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
    /// The outcome a task of this type closes with when this signal completes its goal.
    pub outcome: Option<&'static str>,
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
    /// For deliverable goals: what must be produced.
    pub deliverable_spec: Option<&'static str>,
    pub outcomes: &'static [GoalOutcome],
}

/// The hard budget a task of this type starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BudgetDef {
    pub max_messages: u32,
    pub max_days: u32,
    pub max_turns: u32,
}

/// Conditions that always send a new task of this type to the owner first.
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
    pub assignment: Assignment,
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
    pub deliverable: Option<DeliverableType>,
    pub recurrence: Option<Recurrence>,
}

impl TaskTypeDef {
    pub fn outcome(&self, code: &str) -> Option<&GoalOutcome> {
        self.goal.outcomes.iter().find(|o| o.code == code)
    }

    /// The outcome a member's clear commitment ("I'll be in Monday", "I'll leave a review")
    /// closes the task with, provisionally until the signal confirms it. `None`
    /// where words never close the task: payments and check-in counts are judged only from
    /// their signals, and staff or research work has no member conversation.
    pub fn verbal_commitment_outcome(&self) -> Option<&'static str> {
        match self.key {
            "churn_risk" => Some("verbal_commitment"),
            "win_back" => Some("interested"),
            "lead_followup" => Some("engaged"),
            "milestone_review" => Some("review_posted"),
            "ad_hoc" => Some("resolved"),
            _ => None,
        }
    }

    /// What a conversation of this type is about, in a few words: the agent of another task
    /// for the same member must leave it alone, and a reply about it on another
    /// task is "another subject".
    pub fn subject(&self) -> &'static str {
        match self.key {
            "payment_recovery" => "payment or billing",
            "churn_risk" | "win_back" | "onboarding" => "attendance and coming in to train",
            "lead_followup" => "booking a first visit or trial",
            "milestone_review" => "a review of the gym",
            "staff_call_member" => "a phone call from the team",
            "monthly_churn_analysis" => "the monthly churn report",
            _ => self.description,
        }
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
    assignment: Assignment::Agent,
    agent: "retention",
    goal: Goal {
        summary: "Recover a failed payment without embarrassing the member",
        completion: CompletionType::Composite,
        signals: &[GoalSignal {
            signal: "payment_succeeded",
            weight: 100,
            completes_goal: true,
            verification_window_days: 7,
            outcome: Some("recovered"),
        }],
        judgment_criteria: Some(
            "The member acknowledged the problem and said they will update their payment; the task still completes only when a payment succeeds.",
        ),
        deliverable_spec: None,
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
            outcome(
                "engaged_late",
                "Late Win",
                Positive,
                "The goal's signal arrived after the task closed unanswered, within its window",
                Some(1.0),
            ),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
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
    deliverable: None,
    recurrence: None,
};

pub const CHURN_RISK: TaskTypeDef = TaskTypeDef {
    key: "churn_risk",
    label: "At-Risk Member",
    description: "Reach out to a member who is showing signs of drifting away",
    category: Category::Communication,
    assignment: Assignment::Agent,
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
                outcome: Some("retained"),
            },
            GoalSignal {
                signal: "reply_positive",
                weight: 60,
                completes_goal: false,
                verification_window_days: 14,
                outcome: None,
            },
        ],
        judgment_criteria: Some("The member stated a specific intent to come back (a day, a class). Vague friendliness does not count."),
        deliverable_spec: None,
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
            outcome(
                "engaged_late",
                "Late Win",
                Positive,
                "The goal's signal arrived after the task closed unanswered, within its window",
                Some(1.0),
            ),
            outcome(
                "verbal_only",
                "Verbal Only",
                Neutral,
                "Said they would return but no check-in came within 14 days (a downgraded verbal commitment)",
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
    deliverable: None,
    recurrence: None,
};

pub const WIN_BACK: TaskTypeDef = TaskTypeDef {
    key: "win_back",
    label: "Win-Back",
    description: "Invite a member who cancelled to come back",
    category: Category::Communication,
    assignment: Assignment::Agent,
    agent: "retention",
    goal: Goal {
        summary: "Bring a cancelled member back",
        completion: CompletionType::Composite,
        signals: &[
            GoalSignal {
                signal: "reactivation",
                weight: 100,
                completes_goal: true,
                verification_window_days: 30,
                outcome: Some("recovered"),
            },
            GoalSignal {
                signal: "reply_positive",
                weight: 50,
                completes_goal: false,
                verification_window_days: 30,
                outcome: None,
            },
        ],
        judgment_criteria: Some("The member shows real interest in coming back, beyond being polite."),
        deliverable_spec: None,
        outcomes: &[
            outcome(
                "recovered",
                "Member Recovered",
                Positive,
                "The membership was reactivated",
                Some(3.0),
            ),
            outcome(
                "interested",
                "Interested",
                Positive,
                "Said they are interested but has not reactivated yet",
                None,
            ),
            outcome("unresponsive", "No Response", Neutral, "No reply after every touch", None),
            outcome("declined", "Declined", Negative, "Said no, clearly", None),
            outcome(
                "engaged_late",
                "Late Win",
                Positive,
                "The goal's signal arrived after the task closed unanswered, within its window",
                Some(1.0),
            ),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::High,
    budget: BudgetDef {
        max_messages: 3,
        max_days: 30,
        max_turns: 4,
    },
    cadence: cadence::SLOW_BURN,
    auto_threshold: 80,
    escalation_triggers: &[
        EscalationTrigger::CancellationReasonComplaint,
        EscalationTrigger::CancellationReasonBilling,
        EscalationTrigger::MemberTenureOver2Years,
    ],
    skill_file: "win_back.md",
    outcome_signals: &["reactivation", "reply_positive"],
    deliverable: None,
    recurrence: None,
};

pub const LEAD_FOLLOWUP: TaskTypeDef = TaskTypeDef {
    key: "lead_followup",
    label: "Lead Follow-up",
    description: "Help a new lead book a trial or a first visit",
    category: Category::Communication,
    assignment: Assignment::Agent,
    agent: "sales",
    goal: Goal {
        summary: "Get the lead to book a trial or visit the gym",
        completion: CompletionType::Composite,
        signals: &[
            GoalSignal {
                signal: "trial_booked",
                weight: 100,
                completes_goal: true,
                verification_window_days: 21,
                outcome: Some("converted"),
            },
            GoalSignal {
                signal: "checkin",
                weight: 100,
                completes_goal: true,
                verification_window_days: 21,
                outcome: Some("converted"),
            },
        ],
        judgment_criteria: Some("The lead committed to a specific day or time to come in."),
        deliverable_spec: None,
        outcomes: &[
            outcome("converted", "Lead Converted", Positive, "Booked a trial or checked in", Some(1.0)),
            outcome(
                "engaged",
                "Engaged",
                Positive,
                "Replies and asks questions but has not committed",
                None,
            ),
            outcome("unresponsive", "No Response", Neutral, "No reply", None),
            outcome("not_interested", "Not Interested", Negative, "Declined, clearly", None),
            outcome(
                "engaged_late",
                "Late Win",
                Positive,
                "The goal's signal arrived after the task closed unanswered, within its window",
                Some(1.0),
            ),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::Medium,
    budget: BudgetDef {
        max_messages: 5,
        max_days: 21,
        max_turns: 8,
    },
    cadence: cadence::PATIENT,
    auto_threshold: 70,
    escalation_triggers: &[],
    skill_file: "lead_followup.md",
    outcome_signals: &["trial_booked", "reply_positive", "checkin"],
    deliverable: None,
    recurrence: None,
};

pub const ONBOARDING: TaskTypeDef = TaskTypeDef {
    key: "onboarding",
    label: "New Member Onboarding",
    description: "Welcome a new member and help them build a habit in their first 30 days",
    category: Category::Communication,
    assignment: Assignment::Agent,
    agent: "retention",
    goal: Goal {
        summary: "Help a new member check in at least 3 times in their first 30 days",
        completion: CompletionType::Composite,
        signals: &[
            GoalSignal {
                signal: "checkin_count_3",
                weight: 100,
                completes_goal: true,
                verification_window_days: 30,
                outcome: Some("habit_formed"),
            },
            GoalSignal {
                signal: "checkin",
                weight: 33,
                completes_goal: false,
                verification_window_days: 30,
                outcome: None,
            },
        ],
        judgment_criteria: Some(
            "Three or more check-ins means the habit is forming; one or two is progress; none after 14 days is a concern.",
        ),
        deliverable_spec: None,
        outcomes: &[
            outcome(
                "habit_formed",
                "Habit Forming",
                Positive,
                "Three or more check-ins in the first 30 days",
                Some(1.0),
            ),
            outcome("some_engagement", "Some Engagement", Neutral, "One or two check-ins so far", None),
            outcome("no_show", "No-Show", Negative, "No check-in after 14 days or more", None),
            outcome("unresponsive", "No Response", Neutral, "No reply to the welcome messages", None),
            outcome(
                "engaged_late",
                "Late Win",
                Positive,
                "The goal's signal arrived after the task closed unanswered, within its window",
                Some(1.0),
            ),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::Medium,
    budget: BudgetDef {
        max_messages: 4,
        max_days: 30,
        max_turns: 6,
    },
    cadence: cadence::SLOW_BURN,
    auto_threshold: 85,
    escalation_triggers: &[],
    skill_file: "onboarding.md",
    outcome_signals: &["checkin_count_3", "checkin", "reply_positive"],
    deliverable: None,
    recurrence: None,
};

pub const STAFF_CALL_MEMBER: TaskTypeDef = TaskTypeDef {
    key: "staff_call_member",
    label: "Call Member",
    description: "Someone at the gym should phone this member",
    category: Category::StaffTodo,
    assignment: Assignment::Owner,
    agent: "gm",
    goal: Goal {
        summary: "Have a personal phone conversation with this member",
        completion: CompletionType::HumanConfirms,
        signals: &[],
        judgment_criteria: None,
        deliverable_spec: None,
        outcomes: &[
            outcome("completed", "Call Made", Positive, "Someone called the member", None),
            outcome("member_unreachable", "Unreachable", Neutral, "Called, nobody answered", None),
            outcome("skipped", "Skipped", Neutral, "The owner decided not to call", None),
            outcome(
                "member_returned",
                "Member Came Back",
                Positive,
                "The member checked in before anyone called",
                None,
            ),
            outcome(
                "owner_handled",
                "Owner Handled",
                Positive,
                "The owner took care of it another way",
                None,
            ),
        ],
    },
    priority: Priority::High,
    budget: BudgetDef {
        max_messages: 0,
        max_days: 3,
        max_turns: 0,
    },
    cadence: cadence::OWNER_REMINDERS,
    auto_threshold: 0,
    escalation_triggers: &[EscalationTrigger::Always],
    skill_file: "staff_call_member.md",
    outcome_signals: &["checkin", "reply_positive"],
    deliverable: None,
    recurrence: None,
};

pub const MONTHLY_CHURN_ANALYSIS: TaskTypeDef = TaskTypeDef {
    key: "monthly_churn_analysis",
    label: "Monthly Churn Analysis",
    description: "Study the member data and write a churn risk report",
    category: Category::Research,
    assignment: Assignment::Agent,
    agent: "gm",
    goal: Goal {
        summary: "Produce a structured churn analysis report for the gym",
        completion: CompletionType::Deliverable,
        signals: &[],
        judgment_criteria: None,
        deliverable_spec: Some(
            "A markdown report: members in total, how many are at risk, the churn trend, the main risk factors and the recommended actions, with a data summary.",
        ),
        outcomes: &[
            outcome(
                "report_produced",
                "Report Produced",
                Positive,
                "The report was written and delivered",
                None,
            ),
            outcome(
                "insufficient_data",
                "Insufficient Data",
                Neutral,
                "Too little data for a meaningful analysis",
                None,
            ),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::Low,
    budget: BudgetDef {
        max_messages: 0,
        max_days: 1,
        max_turns: 5,
    },
    cadence: cadence::SINGLE_SHOT,
    auto_threshold: 95,
    escalation_triggers: &[],
    skill_file: "monthly_churn_analysis.md",
    outcome_signals: &[],
    deliverable: Some(DeliverableType::Report),
    recurrence: Some(Recurrence {
        cron: "0 8 1 * *",
        max_instances: 24,
    }),
};

pub const MILESTONE_REVIEW: TaskTypeDef = TaskTypeDef {
    key: "milestone_review",
    label: "Milestone Review Request",
    description: "Congratulate a member on a milestone and ask for a review",
    category: Category::Communication,
    assignment: Assignment::Agent,
    agent: "reputation",
    goal: Goal {
        summary: "Celebrate the member's milestone and invite a review without pressure",
        completion: CompletionType::Composite,
        signals: &[GoalSignal {
            signal: "review_posted",
            weight: 100,
            completes_goal: true,
            verification_window_days: 7,
            outcome: Some("review_posted"),
        }],
        judgment_criteria: Some("The member says they left, or will leave, a review."),
        deliverable_spec: None,
        outcomes: &[
            outcome("review_posted", "Review Posted", Positive, "The member posted a review", None),
            outcome("thanked", "Thanked", Positive, "The member replied warmly without a review", None),
            outcome("unresponsive", "No Response", Neutral, "No reply", None),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
            outcome("owner_handled", "Owner Handled", Positive, "The owner took it over", None),
        ],
    },
    priority: Priority::Low,
    budget: BudgetDef {
        max_messages: 1,
        max_days: 7,
        max_turns: 2,
    },
    cadence: cadence::SINGLE_SHOT,
    auto_threshold: 90,
    escalation_triggers: &[],
    skill_file: "milestone_review.md",
    outcome_signals: &["review_posted"],
    deliverable: None,
    recurrence: None,
};

pub const AD_HOC: TaskTypeDef = TaskTypeDef {
    key: "ad_hoc",
    label: "Custom Task",
    description: "A task the owner or an agent created for one specific purpose",
    category: Category::Communication,
    assignment: Assignment::Agent,
    agent: "gm",
    goal: Goal {
        summary: "Accomplish the specific goal the owner described",
        completion: CompletionType::Judgment,
        signals: &[],
        judgment_criteria: Some("The owner's stated goal is achieved, or the member's answer settles the matter."),
        deliverable_spec: None,
        outcomes: &[
            outcome("resolved", "Resolved", Positive, "Goal achieved", None),
            outcome("unresponsive", "No Response", Neutral, "No reply", None),
            outcome("opted_out", "Opted Out", Negative, "Asked not to be contacted", None),
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
    deliverable: None,
    recurrence: None,
};

/// Every task type the system knows.
/// What an automation run comes to, for every automation type.
const AUTOMATION_OUTCOMES: &[GoalOutcome] = &[
    outcome(
        "executed",
        "Executed",
        Positive,
        "Every action ran and the other side accepted it",
        None,
    ),
    outcome(
        "recorded",
        "Recorded",
        Neutral,
        "A dry run: what would have changed was recorded",
        None,
    ),
    outcome("owner_handled", "Owner Handled", Positive, "The owner took care of it", None),
];

pub const MEMBER_UPDATE: TaskTypeDef = TaskTypeDef {
    key: "member_update",
    label: "Member Update",
    description: "Make the listed changes to one member in PushPress: tags, notes, status, staff to-dos",
    category: Category::Automation,
    assignment: Assignment::System,
    agent: "gm",
    goal: Goal {
        summary: "Carry out each listed action for the member exactly once",
        completion: CompletionType::Signal,
        signals: &[],
        judgment_criteria: None,
        deliverable_spec: None,
        outcomes: AUTOMATION_OUTCOMES,
    },
    priority: Priority::Low,
    budget: BudgetDef {
        max_messages: 0,
        max_days: 1,
        max_turns: 0,
    },
    cadence: cadence::SINGLE_SHOT,
    auto_threshold: 95,
    escalation_triggers: &[],
    skill_file: "member_update.md",
    outcome_signals: &[],
    deliverable: None,
    recurrence: None,
};

pub const BULK_TAG_AT_RISK: TaskTypeDef = TaskTypeDef {
    key: "bulk_tag_at_risk",
    label: "Tag At-Risk Members",
    description: "Tag every member the risk scan finds at risk, in PushPress",
    category: Category::Automation,
    assignment: Assignment::System,
    agent: "gm",
    goal: Goal {
        summary: "Every member at risk of churning carries the at-risk tag in PushPress",
        completion: CompletionType::Signal,
        signals: &[],
        judgment_criteria: None,
        deliverable_spec: None,
        outcomes: AUTOMATION_OUTCOMES,
    },
    priority: Priority::Low,
    budget: BudgetDef {
        max_messages: 0,
        max_days: 1,
        max_turns: 0,
    },
    cadence: cadence::SINGLE_SHOT,
    auto_threshold: 95,
    escalation_triggers: &[],
    skill_file: "bulk_tag_at_risk.md",
    outcome_signals: &[],
    deliverable: None,
    recurrence: None,
};

pub const REGISTRY: &[TaskTypeDef] = &[
    CHURN_RISK,
    WIN_BACK,
    LEAD_FOLLOWUP,
    PAYMENT_RECOVERY,
    ONBOARDING,
    STAFF_CALL_MEMBER,
    MONTHLY_CHURN_ANALYSIS,
    AD_HOC,
    MILESTONE_REVIEW,
    MEMBER_UPDATE,
    BULK_TAG_AT_RISK,
];

crate::kernel::bounded::bounded_text! {
    /// A registered task type.
    pub RegisteredTaskType = crate::kernel::bounded::TextRule::line(crate::kernel::limits::MAX_TASK_TYPE_CHARS, "invalid_task_type")
        .min(1)
        .one_of(registered_keys);
}

/// The registered types' keys, in the registry's order.
pub fn registered_keys() -> Vec<&'static str> {
    REGISTRY.iter().map(|t| t.key).collect()
}

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
            assert!(!def.label.is_empty() && !def.description.is_empty() && !def.goal.summary.is_empty());
            let codes: Vec<&str> = def.goal.outcomes.iter().map(|o| o.code).collect();
            let mut unique = codes.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), codes.len(), "{}: outcome codes repeat", def.key);
            match def.category {
                // The system itself closes conversations as unresponsive or opted out.
                Category::Communication => {
                    assert!(def.budget.max_messages >= 1, "{} cannot send", def.key);
                    assert!(codes.contains(&"unresponsive") && codes.contains(&"opted_out"), "{}", def.key);
                }
                Category::StaffTodo | Category::Research | Category::Automation | Category::Recurring => {
                    assert_eq!(def.budget.max_messages, 0, "{} must not message members", def.key);
                }
            }
            assert_eq!(
                def.category == Category::Research,
                def.deliverable.is_some() && def.goal.deliverable_spec.is_some(),
                "{}: research types, and only they, produce a deliverable",
                def.key
            );
            if let Some(recurrence) = def.recurrence {
                assert!(recurrence.max_instances > 0, "{}", def.key);
                assert!(
                    recurrence.cron.parse::<croner::Cron>().is_ok(),
                    "{}: bad cron {}",
                    def.key,
                    recurrence.cron
                );
            }
            if def.goal.completion == CompletionType::Judgment || def.goal.completion == CompletionType::Composite {
                assert!(def.goal.judgment_criteria.is_some(), "{} has nothing to judge by", def.key);
            }
            for signal in def.goal.signals {
                if let Some(code) = signal.outcome {
                    assert!(
                        codes.contains(&code),
                        "{}: signal {} closes with unknown outcome {code}",
                        def.key,
                        signal.signal
                    );
                }
                assert_eq!(
                    signal.completes_goal,
                    signal.outcome.is_some(),
                    "{}: a signal that completes the goal names its outcome, and only such a signal",
                    def.key
                );
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
        for def in REGISTRY {
            if let Some(code) = def.verbal_commitment_outcome() {
                let outcome = def.outcome(code).unwrap_or_else(|| panic!("{}: {code} is not an outcome", def.key));
                assert_eq!(outcome.kind, OutcomeKind::Positive, "{}: {code}", def.key);
            }
        }
        assert_eq!(REGISTRY.len(), 11);
    }
}

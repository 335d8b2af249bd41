//! A task's controls beside its core fields: how it runs (live, dry run, shadow, plan
//! mode), the plan the owner approves first, and whether the agent plans it. The ramp and the
//! review gate that use them are in [`crate::rails::autonomy`].

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// How one task runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskMode {
    #[default]
    Live,
    DryRun,
    Plan,
}

impl TaskMode {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskMode::Live => "live",
            TaskMode::DryRun => "dry_run",
            TaskMode::Plan => "plan",
        }
    }
}

/// Per-task controls beside the task's core fields (all default to "nothing
/// special", so stored tasks from before read unchanged).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskControls {
    #[serde(default)]
    pub mode: TaskMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<TaskPlan>,
    /// The agent decomposes the goal into subtasks, one step at a time; the task
    /// itself never sends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent_planning: bool,
    /// The owner paused it (`POST /api/v1/tasks/{id}/pause`): it takes no step until resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<jiff::Timestamp>,
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    pub step_number: u32,
    pub action_type: String,
    pub description: String,
    pub draft_content: Option<String>,
    pub reasoning: String,
    /// "immediately", "day 3 if no reply", …
    pub timing: String,
    pub requires_approval: bool,
    pub confidence: u8,
}

/// What a task in plan mode would do, for the owner to approve before it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskPlan {
    pub goal: String,
    pub member_context: String,
    pub steps: Vec<PlanStep>,
    pub alternative_approach: Option<String>,
    pub estimated_budget: PlanBudget,
    pub created_at: Timestamp,
    /// Set when the owner approves it (the task then runs live).
    #[serde(default)]
    pub approved_at: Option<Timestamp>,
    /// The owner's edits and instructions on it, oldest first (`task/plan_edit.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feedback: Vec<crate::task::plan_edit::PlanFeedback>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanBudget {
    pub messages: u32,
    pub days: u32,
    pub ai_calls: u32,
}

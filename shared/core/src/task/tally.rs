//! What a task counts for in the owner's numbers (the scorecard and the dashboard's
//! overview): a few fields of the task, kept by the store beside it in the task's own write,
//! so the month's numbers are read from the open tasks and the month's closed ones rather
//! than from every task the account ever had.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{MemberId, TaskId};
use crate::task::{Task, TaskStatus};

/// The part of a task the owner's numbers count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskTally {
    pub task_id: TaskId,
    pub member_id: MemberId,
    pub status: TaskStatus,
    /// Messages written to the member so far (0: the conversation has not started).
    pub touch: u32,
    pub created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributed_value: Option<f64>,
    /// The task's type (empty in a tally written before it was kept), for the lift by type.
    #[serde(default)]
    pub task_type: String,
    /// The group the holdout draw put the member in, if the task went through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<crate::task::holdout::Arm>,
    /// The message experiment's version the task used, if it was in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<crate::task::experiment::ExperimentArm>,
    /// The outcome is a commitment still awaiting its signal: not yet a success or a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub provisional: bool,
    /// When its goal showed, if it did ([`Task::goal_at`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_at: Option<Timestamp>,
    /// The task's next step while open: the morning brief counts what the agent plans today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_action_at: Option<Timestamp>,
}

impl TaskTally {
    pub fn of(task: &Task) -> Self {
        Self {
            task_id: task.id,
            member_id: task.member.id.clone(),
            status: task.status,
            touch: task.touch,
            created_at: task.created_at,
            resolved_at: task.resolved_at,
            outcome: task.outcome.clone(),
            attributed_value: task.attributed_value,
            task_type: task.task_type.clone(),
            arm: task.holdout.map(|h| h.arm),
            experiment: task.experiment,
            provisional: task.provisional,
            goal_at: task.goal_at,
            next_action_at: task.next_action_at.filter(|_| task.is_active()),
        }
    }

    /// Open (counted among the live tasks) or closed (counted by when it closed).
    pub fn is_open(&self) -> bool {
        !self.status.is_terminal()
    }

    /// When a closed task closed, for its place in the closed tallies (a closed task without
    /// `resolved_at`, from an old import, by its last change).
    pub fn closed_at(task: &Task) -> Timestamp {
        task.resolved_at.unwrap_or(task.updated_at)
    }
}

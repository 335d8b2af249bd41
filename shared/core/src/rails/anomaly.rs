//! Anomaly detection: patterns that mean a task is going wrong, checked each time
//! a due task is worked (the tick hands every due task to a worker, so this is the ticker's
//! check without the tick reading any task). A task found anomalous goes to the owner with
//! the reason in its log; a stuck `executing` step is reset (see `engine::work`).

use jiff::Timestamp;

use crate::kernel::limits::{ANOMALY_MEMBER_REPLIES, ANOMALY_TURNS_WITHOUT_RESOLUTION, EXECUTION_LEASE};
use crate::task::reason::Reason;
use crate::task::{ConversationMessage, Role, Task, TaskStatus};

/// What looks wrong with a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Anomaly {
    /// Many turns of conversation and still no resolution.
    TurnsWithoutResolution { turns: u32 },
    /// The member keeps replying but the task never closes: a possible loop.
    RepliesWithoutResolution { replies: usize },
    /// A worker has held the task in `executing` past its lease.
    StuckExecuting { since: Timestamp },
}

impl Anomaly {
    /// The decision-log reason.
    pub fn reason(&self) -> Reason {
        match self {
            Anomaly::TurnsWithoutResolution { .. } => Reason::AnomalyTurnsWithoutResolution,
            Anomaly::RepliesWithoutResolution { .. } => Reason::AnomalyMemberRepliesWithoutResolution,
            Anomaly::StuckExecuting { .. } => Reason::AnomalyStuckExecuting,
        }
    }

    /// The human detail for the log.
    pub fn detail(&self) -> String {
        match self {
            Anomaly::TurnsWithoutResolution { turns } => {
                format!("{turns} conversation turns without a resolution (threshold {ANOMALY_TURNS_WITHOUT_RESOLUTION}); the owner decides")
            }
            Anomaly::RepliesWithoutResolution { replies } => {
                format!("the member replied {replies} times and the task is still open (threshold {ANOMALY_MEMBER_REPLIES}); possible loop")
            }
            Anomaly::StuckExecuting { since } => {
                format!(
                    "executing since {since}, longer than the {}-minute lease; reset",
                    EXECUTION_LEASE.as_mins()
                )
            }
        }
    }
}

/// How many of `messages` the member wrote.
pub fn member_replies(messages: &[ConversationMessage]) -> usize {
    messages.iter().filter(|m| m.role == Role::Member).count()
}

/// The first anomaly of an open task, given the member's replies so far.
pub fn detect(task: &Task, replies: usize, now: Timestamp) -> Option<Anomaly> {
    if task.status.is_terminal() || task.status == TaskStatus::Escalated {
        return None;
    }
    if task.status == TaskStatus::Executing {
        // Resumed by the owner's guidance: due for its step, not held by a worker.
        if task.awaiting == Some(crate::task::Awaiting::OwnerGuidance) {
            return None;
        }
        let lease_ended = task.next_action_at.is_none_or(|end| end <= now);
        return lease_ended.then(|| Anomaly::StuckExecuting {
            since: task.next_action_at.map_or(task.updated_at, |end| end - EXECUTION_LEASE),
        });
    }
    if task.budget.turns_used >= ANOMALY_TURNS_WITHOUT_RESOLUTION {
        return Some(Anomaly::TurnsWithoutResolution {
            turns: task.budget.turns_used,
        });
    }
    if replies >= ANOMALY_MEMBER_REPLIES {
        return Some(Anomaly::RepliesWithoutResolution { replies });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_task;
    use jiff::SignedDuration;

    #[test]
    fn a_quiet_task_is_not_anomalous() {
        let task = sample_task(TaskStatus::Waiting);
        assert_eq!(detect(&task, 2, task.created_at), None);
    }

    #[test]
    fn five_turns_or_three_replies_without_resolution_are_anomalies() {
        let mut task = sample_task(TaskStatus::Waiting);
        assert_eq!(
            detect(&task, 3, task.created_at),
            Some(Anomaly::RepliesWithoutResolution { replies: 3 })
        );
        task.budget.turns_used = 5;
        assert_eq!(
            detect(&task, 0, task.created_at),
            Some(Anomaly::TurnsWithoutResolution { turns: 5 })
        );
    }

    #[test]
    fn executing_past_the_lease_is_stuck_but_within_it_is_not() {
        let mut task = sample_task(TaskStatus::Executing);
        let start = task.created_at;
        task.next_action_at = Some(start + EXECUTION_LEASE);
        assert_eq!(detect(&task, 0, start + SignedDuration::from_mins(4)), None);
        assert_eq!(
            detect(&task, 0, start + SignedDuration::from_mins(6)),
            Some(Anomaly::StuckExecuting { since: start })
        );
    }

    #[test]
    fn closed_and_escalated_tasks_are_left_alone() {
        let mut task = sample_task(TaskStatus::Escalated);
        task.budget.turns_used = 9;
        assert_eq!(detect(&task, 9, task.created_at), None);
    }
}

//! Work items: what the tick puts on the work queues and the workers take off them. A work
//! item is only a hint that something may be due — the worker re-reads the task and decides.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, TaskId};
use crate::task::{Task, TaskStatus};

/// The queues of the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueName {
    Signals,
    Execute,
    Followup,
    Dormant,
    /// Outbound webhooks: events to deliver and endpoints to drain.
    Deliveries,
}

impl QueueName {
    pub const ALL: [QueueName; 5] = [
        QueueName::Signals,
        QueueName::Execute,
        QueueName::Followup,
        QueueName::Dormant,
        QueueName::Deliveries,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QueueName::Signals => "signals",
            QueueName::Execute => "execute",
            QueueName::Followup => "followup",
            QueueName::Dormant => "dormant",
            QueueName::Deliveries => "deliveries",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkItem {
    pub account_id: AccountId,
    pub task_id: TaskId,
    pub due_at: Timestamp,
}

/// An entry of the due index as the tick reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueEntry {
    pub account_id: AccountId,
    pub task_id: TaskId,
    pub due_at: Timestamp,
    pub status: TaskStatus,
    pub touch: u32,
}

/// Which worker handles a due task.
pub fn queue_for(status: TaskStatus, touch: u32) -> Option<QueueName> {
    match status {
        TaskStatus::Ready => Some(QueueName::Execute),
        TaskStatus::Waiting => Some(QueueName::Followup),
        // The quiet worker also runs the escalation timer (spec §17.5): no sends either.
        // …and a held-out task's end of watch: it never sends either.
        TaskStatus::Dormant | TaskStatus::Escalated | TaskStatus::HeldOut => Some(QueueName::Dormant),
        // A lease that ran out: whoever owns that step takes it over.
        TaskStatus::Executing if touch == 0 => Some(QueueName::Execute),
        TaskStatus::Executing => Some(QueueName::Followup),
        _ => None,
    }
}

/// The due-index shard of a task (spreads the index over partitions).
pub fn due_shard(task_id: &TaskId, shards: u32) -> u32 {
    // FNV-1a over the id's bytes: stable across processes and versions.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in task_id.0.to_bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash % shards
}

/// Whether a task belongs in the due index at all, and when.
pub fn due_at(task: &Task) -> Option<Timestamp> {
    // A paused task waits outside the index until the owner resumes it.
    if task.controls.paused_at.is_some() {
        return None;
    }
    match task.status {
        TaskStatus::Ready
        | TaskStatus::Waiting
        | TaskStatus::Dormant
        | TaskStatus::Executing
        | TaskStatus::Escalated
        | TaskStatus::HeldOut => task.next_action_at,
        _ => None,
    }
}

/// The due-index sort key `{due, RFC 3339 UTC with milliseconds}#{task id}`: fixed width, so
/// it sorts by time as a string.
pub fn due_sort_key(due: Timestamp, task: &TaskId) -> String {
    format!("{}#{task}", due_time_key(due))
}

/// The time part of [`due_sort_key`].
pub fn due_time_key(due: Timestamp) -> String {
    due.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_keys_sort_by_time() {
        let id = TaskId::generate(Timestamp::UNIX_EPOCH);
        let a = due_sort_key("2026-11-02T14:00:00Z".parse().expect("ts"), &id);
        let b = due_sort_key("2026-11-02T14:00:00.5Z".parse().expect("ts"), &id);
        assert!(a.starts_with("2026-11-02T14:00:00.000Z#"), "{a}");
        assert!(a < b);
    }
}

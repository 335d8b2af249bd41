//! What explains a task when it is read back: its whole history, and one decision of the
//! account's activity feed.

use crate::kernel::ids::{MemberId, TaskId};
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, Task};

/// A task with everything that explains it, oldest first.
#[derive(Clone, Debug)]
pub struct TaskHistory {
    pub task: Task,
    pub log: Vec<LogEntry>,
    pub messages: Vec<ConversationMessage>,
    pub outbound: Vec<OutboundMessage>,
}

/// One decision of the account's activity feed: a log entry and the task it explains.
#[derive(Clone, Debug, PartialEq)]
pub struct ActivityEntry {
    pub task_id: TaskId,
    pub task_type: String,
    pub member_id: MemberId,
    /// The member's name as the task knew it when the entry was written (the feed shows it,
    /// never the id); `None` for an entry written before names were kept, or a member without one.
    pub member_name: Option<String>,
    pub entry: LogEntry,
}

impl ActivityEntry {
    /// Where the entry sorts in the feed: by its time (to the millisecond), then its id.
    pub fn sort_key(&self) -> String {
        format!("{}#{}", crate::task::work::due_time_key(self.entry.at), self.entry.id)
    }
}

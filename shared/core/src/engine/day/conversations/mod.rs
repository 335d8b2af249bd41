//! Conversations in progress: every open communication
//! task that has written to its member, with its last message and what happens next. Reads
//! one status page per open status (capped), then the conversation of each shown task.

use super::Engine;
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::AccountId;
use crate::ports::TaskQuery;
use crate::task::error::EngineError;
use crate::task::task_type;
use crate::task::{ConversationMessage, Role, Task, TaskStatus};

/// The most conversations one list shows.
pub const CONVERSATIONS_LISTED: usize = 30;

/// One conversation in progress: the task and its last message (a system line is skipped).
#[derive(Clone, Debug)]
pub struct Conversation {
    pub task: Task,
    pub last: Option<ConversationMessage>,
}

impl Engine {
    /// The account's conversations in progress, most recently changed first; `task_type`
    /// narrows them to one type (an unknown type is `invalid_task_type`).
    pub async fn conversations(&self, account: AccountId, task_type: Option<&str>) -> Result<Vec<Conversation>, EngineError> {
        if let Some(t) = task_type
            && task_type::lookup(t).is_none()
        {
            return Err(InvalidInput::new("invalid_task_type", format!("{t:?} is not a task type")).into());
        }
        let mut open = Vec::new();
        for status in [
            TaskStatus::Waiting,
            TaskStatus::Executing,
            TaskStatus::Escalated,
            TaskStatus::Dormant,
        ] {
            let query = TaskQuery {
                status: Some(status),
                member_id: None,
                limit: CONVERSATIONS_LISTED,
                cursor: None,
            };
            let (tasks, _) = self.store.list_tasks(account, &query).await?;
            open.extend(tasks.into_iter().filter(|t| {
                crate::task::is_open_conversation(t.status, t.touch, &t.task_type) && task_type.is_none_or(|wanted| t.task_type == wanted)
            }));
        }
        open.sort_by_key(|t| std::cmp::Reverse(t.updated_at));
        open.truncate(CONVERSATIONS_LISTED);
        let histories = futures::future::try_join_all(open.iter().map(|t| self.store.task_history(account, t.id))).await?;
        Ok(open
            .into_iter()
            .zip(histories)
            .map(|(task, history)| {
                let last = history.and_then(|h| h.messages.into_iter().rev().find(|m| m.role != Role::System));
                Conversation { task, last }
            })
            .collect())
    }
}

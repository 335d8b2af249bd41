//! The owner's word on a task: a rating of a closed or escalated
//! task, and the correction of a closed task's outcome. Each is one conditional write of the
//! task with its log entry (the daily metrics fold the entry; the learning record rides in
//! the same write); the rules are `task/feedback.rs`.

use super::Engine;
use crate::kernel::ids::TaskId;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::feedback::{self, Rating};
use crate::task::task_type;
use crate::task::transition::record;
use crate::task::{ConversationMessage, Role, Task};

impl Engine {
    /// `POST /tasks/{id}/feedback`: thumbs up or down, with an optional comment, on a closed
    /// or escalated task; the latest rating is kept on the task, every one in its log.
    pub async fn feedback(&self, account: AccountId, id: TaskId, rating: Rating, comment: Option<&str>) -> Result<Task, EngineError> {
        self.feedback_with_reason(account, id, rating, comment, None).await
    }

    /// [`Self::feedback`] with the thumbs-down's reason, kept on the task and
    /// in its learning record.
    pub async fn feedback_with_reason(
        &self,
        account: AccountId,
        id: TaskId,
        rating: Rating,
        comment: Option<&str>,
        reason: Option<feedback::FeedbackReason>,
    ) -> Result<Task, EngineError> {
        feedback::check_reason(rating, reason)?;
        let comment = feedback::comment(comment)?;
        let task = self
            .store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        if !feedback::may_rate(task.status) {
            return Err(EngineError::InvalidState {
                status: task.status,
                action: "feedback (only a closed or escalated task is rated)",
            });
        }
        let now = self.clock.now();
        let (rated, why) = feedback::rate(&task, rating, comment, reason, now);
        let (next, log) = record(&rated, now, why);
        self.store.commit(&TaskCommit::new(next.clone(), log)).await?;
        Ok(next)
    }

    /// `POST /tasks/{id}/outcome`: the owner corrects a closed task's outcome.
    /// The status stays; the value follows the new outcome at the member's price, and
    /// attribution no longer watches the task. The owner's note joins the conversation.
    pub async fn correct_outcome(&self, account: AccountId, id: TaskId, outcome: &str, note: Option<&str>) -> Result<Task, EngineError> {
        let note = feedback::comment(note)?;
        let settings = self
            .store
            .get_account(account)
            .await?
            .ok_or(EngineError::NotFound { what: "account" })?
            .settings;
        let task = self
            .store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        if !task.status.is_terminal() {
            return Err(EngineError::InvalidState {
                status: task.status,
                action: "an outcome correction (only a closed task's outcome is corrected; resolve an open one)",
            });
        }
        let def = task_type::definition(&task.task_type);
        let (corrected, why) = feedback::correct(
            &task,
            def,
            outcome.trim(),
            note.as_deref(),
            super::attribution::member_price(&settings, &task),
        )?;
        let now = self.clock.now();
        let (next, log) = record(&corrected, now, why);
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.extend(note.map(|content| ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::Owner,
            content,
            original: None,
        }));
        self.store.commit(&commit).await?;
        Ok(next)
    }
}

//! "This isn't done yet": the owner brings back a task that
//! closed too early, within its attribution window. The task goes to the owner as an
//! escalation carrying their reason — from there guidance resumes the agent, or the owner
//! resolves or cancels it — with its outcome and value taken back. The transition table has
//! no move out of a closed status: this is the one, the owner's, logged `owner_reopened`.
//! The stores give the task its member and type's guard back in the same write (refused,
//! `409 invalid_state`, while a newer task of the member and type is open).

use jiff::SignedDuration;

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::kernel::limits::ESCALATION_REMINDER_AFTER;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::{EscalationContext, LogEntry, Task, TaskStatus, attribution, feedback, task_type};

impl Engine {
    /// `POST /tasks/{id}/reopen {"reason"}`: a closed task back to work within its window;
    /// `invalid_state` otherwise.
    pub async fn reopen(&self, account: AccountId, id: TaskId, reason: &str) -> Result<Task, EngineError> {
        let reason = feedback::comment(Some(reason))?.ok_or_else(|| InvalidInput::new("invalid_reason", "say why the task is not done"))?;
        let task = self
            .store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        let not_reopened = |action| EngineError::InvalidState {
            status: task.status,
            action,
        };
        if !task.status.is_terminal() {
            return Err(not_reopened("reopen (only a closed task is reopened)"));
        }
        // Reopened, it would go to the owner and from there to the member: a held-out
        // member's task stays held out, so it is never reopened.
        if task.is_held_out() {
            return Err(not_reopened(
                "reopen (its member is held out: the task sends nothing and is only watched)",
            ));
        }
        let now = self.clock.now();
        let def = task_type::definition(&task.task_type);
        let closed = task.resolved_at.unwrap_or(task.updated_at);
        let window = SignedDuration::from_hours(24 * i64::from(attribution::window_days(def)));
        if now >= closed + window {
            return Err(not_reopened("reopen (its attribution window has passed)"));
        }
        let mut next = task.clone();
        next.status = TaskStatus::Escalated;
        next.outcome = None;
        next.outcome_reason = Some(Reason::OwnerReopened.as_str().to_owned());
        next.attributed_value = None;
        next.goal_at = None;
        next.value_source = None;
        next.provisional = false;
        next.attribution_until = None;
        next.next_action_at = Some(now + ESCALATION_REMINDER_AFTER);
        next.escalation = Some(EscalationContext {
            blocked_at: now,
            blocked_by: "owner".into(),
            reason: Reason::OwnerReopened.as_str().to_owned(),
            summary: format!("You reopened it: {reason}"),
            member_words: task.member_last_words.clone(),
            last_draft: None,
            last_draft_sent: None,
            suggested_next_step: "Give guidance for the next message, or resolve it with an outcome.".into(),
            question: None,
            draft_reply: None,
            suggested_actions: vec![
                "give guidance: the agent writes the next message from your words".into(),
                "resolve it yourself with an outcome".into(),
                "cancel it".into(),
            ],
            conversation_snapshot: Vec::new(),
            resume_instructions: "the agent reads your guidance and writes the next message to the member from it".into(),
        });
        next.version += 1;
        next.updated_at = now;
        // What it waited on was settled when it closed: it starts with no loops of its own.
        next.loops.clear();
        let log = LogEntry {
            id: new_ulid(now),
            at: now,
            from_status: Some(task.status),
            to_status: TaskStatus::Escalated,
            reason: Reason::OwnerReopened.as_str().to_owned(),
            detail: Some(format!(
                "was {} ({}): {reason}",
                task.status,
                task.outcome.as_deref().unwrap_or("no outcome")
            )),
        };
        // The owner's action reads the account for its escalation's webhook rule.
        let owner = self.store.get_account(account).await?;
        let commit = TaskCommit {
            expected_version: task.version,
            task: next.clone(),
            log: vec![log],
            messages: Vec::new(),
            send: None,
            loops: Vec::new(),
            webhooks: true,
        }
        .webhooks_for(owner.as_ref());
        match self.store.commit(&commit).await {
            Ok(()) => {
                self.todo_for_reopened_task(&next, commit.webhooks).await;
                Ok(next)
            }
            Err(StoreError::Conflict(Conflict::ActiveTask)) => {
                Err(not_reopened("reopen (a newer task of the same type is open for the member)"))
            }
            Err(e) => Err(e.into()),
        }
    }
}

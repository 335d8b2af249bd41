//! The owner's turn: a task handed to the owner with what they need to decide (escalated, the
//! reason and the conversation's context), and the owner's guidance taken back into the task,
//! which its next step carries out (`replies.rs`) through every gate a follow-up goes through.

use jiff::Timestamp;

use super::StepOutcome;
use super::replies::system_message;
use crate::conversation::reply::{self, Blocker, preview};
use crate::engine::Engine;
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::owner::account::Account;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::transition::{Why, start_handling, transition};
use crate::task::{Awaiting, ConversationMessage, Role, Task, TaskStatus};

impl Engine {
    /// `POST /tasks/{id}/guidance`: escalated → executing with the owner's words in the
    /// conversation; the next step carries them out.
    pub async fn guidance(&self, account: AccountId, id: TaskId, text: &str) -> Result<Task, EngineError> {
        let text = text.trim();
        if text.is_empty() || text.len() > 5_000 {
            return Err(crate::kernel::error::InvalidInput::new("invalid_guidance", "text must be 1-5000 characters").into());
        }
        let now = self.clock.now();
        let task = self
            .store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        if task.status != TaskStatus::Escalated {
            return Err(EngineError::InvalidTransition {
                from: task.status,
                to: TaskStatus::Executing,
            });
        }
        // A task whose messages are spent gets exactly one more for the owner's words, rather
        // than straight back to the owner unsent (CONTRACT.md "The owner away").
        let spent = task.budget.messages_left() == 0;
        let mut detail = preview(text);
        if spent {
            detail.push_str("; its messages were spent: one more is granted for this answer");
        }
        let (mut next, log) = transition(
            &task,
            TaskStatus::Executing,
            now,
            Why::new(Reason::OwnerProvidedGuidance).detail(detail),
        )?;
        if spent {
            next.budget.messages_max = next.budget.messages_used.saturating_add(1);
            next.budget.turns_max = next.budget.turns_max.max(next.budget.turns_used.saturating_add(1));
            next.budget.expires_at = next.budget.expires_at.max(now + jiff::SignedDuration::from_hours(48));
        }
        next.awaiting = Some(Awaiting::OwnerGuidance);
        next.next_action_at = Some(now);
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.push(ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::Owner,
            content: text.to_owned(),
            original: None,
        });
        self.store.commit(&commit).await?;
        self.resume_held_subtasks(&next, now).await;
        Ok(next)
    }

    /// Hand the task to the owner, saying so in the conversation; `account` as the path read
    /// it (whether the escalation's webhook event has an endpoint to reach).
    pub(in crate::engine) async fn escalate(
        &self,
        account: Option<&Account>,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
        reason: Reason,
        blocker: Blocker,
    ) -> Result<StepOutcome, EngineError> {
        let note = system_message(now, format!("Handed to the owner: {reason}"));
        self.escalate_with(account, task, conversation, now, reason, blocker, note).await
    }

    /// A task whose holding reply cannot leave now (`because`: the send window, a cap, a mode
    /// that sends nothing): it goes to the owner at once, with the question it held; the member
    /// hears from the owner instead.
    pub(in crate::engine) async fn escalate_held(&self, task: Task, because: &str, now: Timestamp) -> Result<StepOutcome, EngineError> {
        let Some(held) = task.held_question.clone() else {
            return Err(EngineError::NotFound { what: "held question" });
        };
        let why = held.why(Some(&format!("the holding reply could not leave now ({because})")));
        let (mut next, log) = transition(&task, TaskStatus::Escalated, now, why)?;
        next.escalation = Some(held.context);
        let commit = TaskCommit::new(next, log);
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Escalated,
            reason: held.reason,
        })
    }

    /// Escalate with the context the owner needs and `note` in the conversation.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn escalate_with(
        &self,
        account: Option<&Account>,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
        reason: Reason,
        blocker: Blocker,
        note: ConversationMessage,
    ) -> Result<StepOutcome, EngineError> {
        let why = reply::escalation_why(reason, &blocker);
        // A waiting task escalates directly; a dormant or ready one passes through executing.
        let expected_version = task.version;
        let mut logs = Vec::new();
        let mut current = task;
        if !current.status.can_move_to(TaskStatus::Escalated) {
            let (started, log) = start_handling(&current, now, reason)?;
            logs.push(log);
            current = started;
        }
        let (mut next, log) = transition(&current, TaskStatus::Escalated, now, why)?;
        logs.push(log);
        next.escalation = Some(reply::escalation_context(reason, blocker, conversation, now).or_from(next.escalation.take()));
        let commit = TaskCommit {
            expected_version,
            task: next,
            log: logs,
            messages: vec![note],
            send: None,
            loops: Vec::new(),
            webhooks: true,
        }
        .webhooks_for(account);
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Escalated,
            reason,
        })
    }
}

//! The owner's decisions on a task already made: approve (with an edited draft), skip,
//! cancel and resolve, and the close they share. Each re-reads the task at its version and
//! writes over it, so a decision that meets a step in flight either wins or is told to retry.

use jiff::Timestamp;
use serde::Deserialize;

use super::tasks::check_draft;
use super::{Engine, boxed};
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::kernel::limits;
use crate::owner::account::Account;
use crate::task::commit::TaskCommit;
use crate::task::controls::TaskMode;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::{self, Category};
use crate::task::transition::{Why, record, transition};
use crate::task::{ConversationMessage, Draft, Role, Task, TaskStatus};

/// `POST /tasks/{id}/resolve`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    /// One of the task type's outcome codes.
    #[serde(deserialize_with = "crate::kernel::texts::OutcomeCode::de")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::OutcomeCode::field_schema))]
    pub outcome: String,
    #[serde(default, deserialize_with = "crate::kernel::texts::ResolveNote::de_optional")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ResolveNote::optional_schema))]
    pub note: Option<String>,
}

/// Why a skip closed the task: the owner's reason, if any, is the entry's detail.
fn skip_why(reason: Option<&str>) -> Why {
    let why = Why::new(Reason::OwnerSkipped).outcome("skipped");
    match reason {
        Some(reason) => why.detail(format!("owner's reason: {reason}")),
        None => why,
    }
}

impl Engine {
    /// A later message the owner wrote that says word for word what the member was sent
    /// already: `422 repeats_sent_message`, nothing changed (the member would get it twice).
    async fn refuse_a_repeat(&self, task: &Task, body: &str) -> Result<(), EngineError> {
        let history = self.store.task_history(task.account_id, task.id).await?;
        let Some(sent) = history.iter().flat_map(|h| &h.messages).find(|m| m.says(body)) else {
            return Ok(());
        };
        let tz = self.account(task.account_id).await?.settings.time_zone();
        Err(InvalidInput::new(
            "repeats_sent_message",
            format!(
                "this is word for word the message {} was sent on {}: change it, or skip this one",
                task.member.label(),
                crate::owner::owner_notice::when(sent.at, &tz)
            ),
        )
        .into())
    }

    /// `pending_review → ready`, optionally with the owner's edited draft (the original is
    /// kept in the log, for learning from owner edits).
    pub async fn approve(&self, account: AccountId, id: TaskId, edited: Option<Draft>) -> Result<Task, EngineError> {
        if let Some(draft) = &edited {
            check_draft(draft)?;
        }
        let task = self.current(account, id).await?;
        if let Some(draft) = edited.as_ref().filter(|_| task.touch > 0) {
            self.refuse_a_repeat(&task, &draft.body).await?;
        }
        let now = self.clock.now();
        let mut why = Why::new(Reason::OwnerApproved);
        let changed = edited.as_ref().is_some_and(|d| task.draft.as_ref() != Some(d));
        if changed {
            let original = task
                .draft
                .as_ref()
                .map(|d| format!("subject: {}\n\n{}", d.subject, d.body))
                .unwrap_or_else(|| "(no draft)".into());
            why = Why::new(Reason::OwnerApprovedWithEdits).detail(format!("original draft:\n{original}"));
        }
        // Parents (a batch, a planning task) never write to anyone themselves.
        let mails_a_member =
            task_type::definition(&task.task_type).category == Category::Communication && !task.batch && !task.controls.agent_planning;
        if mails_a_member && edited.is_none() && task.draft.is_none() && task.status == TaskStatus::PendingReview {
            return Err(InvalidInput::new(
                "draft_required",
                "this task has no draft yet: approve it with {\"subject\", \"body\"}",
            )
            .into());
        }
        if task.controls.mode == TaskMode::Plan && task.status == TaskStatus::PendingReview {
            why = Why::new(Reason::OwnerApprovedPlan).detail(format!(
                "the plan of {} step(s) runs live from now{}",
                task.controls.plan.as_ref().map_or(0, |p| p.steps.len()),
                why.detail.map(|d| format!("; {d}")).unwrap_or_default()
            ));
        }
        let (mut next, log) = transition(&task, TaskStatus::Ready, now, why)?;
        if let Some(draft) = edited {
            next.draft = Some(draft);
        }
        next.owner_edited |= changed;
        // A later touch held for the owner's review goes out as they approved it.
        if task.touch > 0 && task.status == TaskStatus::PendingReview && next.draft.is_some() {
            next.reviewed_touch = Some(task.touch);
        }
        if changed && next.original_draft.is_none() {
            next.original_draft = task.draft.clone();
        }
        if next.controls.mode == TaskMode::Plan {
            next.controls.mode = TaskMode::Live;
            if let Some(plan) = next.controls.plan.as_mut() {
                plan.approved_at = Some(now);
            }
        }
        // Due now: the step holds a first touch for the morning hours when it is not morning
        // (spec §29.3; the account's settings are read there, not here).
        next.next_action_at = Some(now);
        next.approved_at = Some(now);
        self.store.commit(&TaskCommit::new(next.clone(), log)).await?;
        if task.status == TaskStatus::PendingReview && mails_a_member {
            self.note_approval(account, &task.task_type, changed).await;
        }
        Ok(next)
    }

    /// `pending_review → cancelled`, with the owner's reason (if they gave one) kept on the
    /// log entry's detail.
    pub async fn skip(&self, account: AccountId, id: TaskId, reason: Option<&str>) -> Result<Task, EngineError> {
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        if reason.is_some_and(|r| r.chars().count() > limits::MAX_SKIP_REASON_CHARS) {
            return Err(InvalidInput::new(
                "invalid_reason",
                format!("reason must be at most {} characters", limits::MAX_SKIP_REASON_CHARS),
            )
            .into());
        }
        let task = self.current(account, id).await?;
        if task.status != TaskStatus::PendingReview {
            return Err(EngineError::InvalidTransition {
                from: task.status,
                to: TaskStatus::Cancelled,
            });
        }
        let account = self.store.get_account(account).await?;
        let closed = self
            .close(task, TaskStatus::Cancelled, skip_why(reason), None, account.as_ref())
            .await?;
        self.cancel_subtasks(&closed, account.as_ref()).await?;
        Ok(closed)
    }

    /// Close as cancelled, from any open state. A cancelled parent (skipped or cancelled)
    /// takes its open subtasks with it.
    pub async fn cancel(&self, account: AccountId, id: TaskId) -> Result<Task, EngineError> {
        boxed(async move {
            let task = self.current(account, id).await?;
            let account = self.store.get_account(account).await?;
            let closed = self
                .close(
                    task,
                    TaskStatus::Cancelled,
                    Why::new(Reason::OwnerCancelled),
                    None,
                    account.as_ref(),
                )
                .await?;
            self.cancel_subtasks(&closed, account.as_ref()).await?;
            Ok(closed)
        })
        .await
    }

    /// The owner closes the task with an outcome from the type's list. It becomes
    /// `completed` where the table allows, else `cancelled` (from review, ready or
    /// escalated), carrying the outcome either way.
    pub async fn resolve(&self, account: AccountId, id: TaskId, resolution: Resolution) -> Result<Task, EngineError> {
        if let Some(note) = &resolution.note {
            crate::kernel::text::bounded_text("invalid_note", "note", note, limits::MAX_RESOLVE_NOTE_CHARS)?;
        }
        let task = self.current(account, id).await?;
        let def = task_type::definition(&task.task_type);
        if def.outcome(&resolution.outcome).is_none() {
            let codes: Vec<&str> = def.goal.outcomes.iter().map(|o| o.code).collect();
            return Err(InvalidInput::new(
                "invalid_outcome",
                format!(
                    "outcome {:?} is not one of {} outcomes: {}",
                    resolution.outcome,
                    def.key,
                    codes.join(", ")
                ),
            )
            .into());
        }
        let to = if task.status.can_move_to(TaskStatus::Completed) {
            TaskStatus::Completed
        } else {
            TaskStatus::Cancelled
        };
        let mut why = Why::new(Reason::OwnerResolved).outcome(resolution.outcome.clone());
        if let Some(note) = resolution.note.clone() {
            why = why.detail(note);
        }
        let note = resolution.note.map(|n| ConversationMessage {
            id: new_ulid(self.clock.now()),
            at: self.clock.now(),
            role: Role::Owner,
            content: n,
            original: None,
        });
        let account = self.store.get_account(account).await?;
        self.close(task, to, why, note, account.as_ref()).await
    }

    /// The owner's close. `account` (read by the action, as a step reads it) says whether the
    /// close's webhook events have an endpoint to reach.
    async fn close(
        &self,
        task: Task,
        to: TaskStatus,
        why: Why,
        note: Option<ConversationMessage>,
        account: Option<&Account>,
    ) -> Result<Task, EngineError> {
        let now = self.clock.now();
        let (mut next, log) = transition(&task, to, now, why)?;
        // The task's open loops end with it, in the same commit: none is left for a late
        // reply or the sweep to resolve on a closed task.
        let loops = crate::task::task_loops::on_move(&mut next, to, now);
        let mut commit = TaskCommit::new(next.clone(), log).webhooks_for(account);
        commit.loops = loops;
        commit.messages.extend(note);
        self.store.commit(&commit).await?;
        self.publish_closed(&commit).await;
        Ok(next)
    }

    /// What follows a committed close: its to-dos done, the `task_closed` rows, the parent
    /// nudged, the bus told, and its webhook events queued if `commit` wrote them.
    pub(crate) async fn publish_closed(&self, commit: &TaskCommit) {
        self.publish_closed_after(&commit.task, true, commit.webhooks).await;
    }

    /// [`Self::publish_closed`] by a caller that knows whether the task may hold a to-do
    /// (`todos`, see `todos::may_hold_todo`): one that cannot, reads no to-do list; and
    /// whether its close wrote webhook events (`webhooks`, [`TaskCommit::webhooks`]).
    pub(crate) async fn publish_closed_after(&self, task: &Task, todos: bool, webhooks: bool) {
        boxed(async move {
            if !task.status.is_terminal() {
                return;
            }
            if todos {
                boxed(self.close_todos_of(task)).await;
            }
            boxed(self.task_closed_triggers(task)).await;
            if let Some(parent) = task.parent_id {
                self.nudge_parent(task.account_id, parent, task.id).await;
            }
            let detail = serde_json::json!({
                "account_id": task.account_id, "task_id": task.id, "task_type": task.task_type,
                "status": task.status, "outcome": task.outcome, "outcome_reason": task.outcome_reason,
            });
            if webhooks {
                self.emit_closed_webhooks(task).await;
            }
            if let Err(e) = self.bus.publish("TaskClosed", detail).await {
                // The task is closed either way; evaluation also runs weekly over closed tasks.
                tracing::warn!(task = %task.id, error = %e, "TaskClosed event not published");
            }
        })
        .await
    }

    /// Log-only decision helper used by workers: keep the status, move the schedule.
    pub(crate) fn reschedule(task: &Task, at: Timestamp, now: Timestamp, why: Why) -> TaskCommit {
        let (mut next, log) = record(task, now, why);
        next.next_action_at = Some(at);
        TaskCommit::new(next, log)
    }
}

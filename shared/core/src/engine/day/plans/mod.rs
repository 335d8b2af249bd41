//! The owner's hand on a plan before approving it: edit a step's words, reorder
//! or remove steps (`edit_plan`), or have the agent plan again with instructions (`replan`).
//! Each is one conditional write of the task with its log entry; the edit or instruction is
//! kept on the plan as feedback (`task/plan_edit.rs`), which the task's learning record
//! carries. The plan's first step is the task's draft, kept in step with it here; removing
//! steps lowers the task's message ceiling to the steps left.

use super::Engine;
use crate::kernel::ids::{AccountId, TaskId};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::plan_edit::{self, StepEdit};
use crate::task::reason::Reason;
use crate::task::task_type::{self, Category};
use crate::task::transition::{Why, record};
use crate::task::{Task, TaskStatus};

impl Engine {
    /// `PUT /api/v1/tasks/{id}/plan`: the plan's steps as the owner wants them, in order (a
    /// step left out is removed). Only a plan waiting for approval changes; `version`, when
    /// given, must be the task's (the page the owner edited).
    pub async fn edit_plan(&self, account: AccountId, id: TaskId, steps: &[StepEdit], version: Option<u64>) -> Result<Task, EngineError> {
        let task = self.plan_task(account, id, version).await?;
        let Some(plan) = task.controls.plan.as_ref() else {
            return Err(not_a_plan(task.status));
        };
        let now = self.clock.now();
        let (edited, feedback) = plan_edit::edit(plan, steps, now)?;
        if feedback.is_empty() {
            return Ok(task);
        }
        let mut next = task.clone();
        next.controls.plan = Some(edited);
        follow_plan(&mut next)?;
        // The owner's words for the first message are an edit of the agent's draft, as an
        // approval with edits is: learning tells its kind apart from the original.
        if next.draft != task.draft {
            next.owner_edited = true;
            if next.original_draft.is_none() {
                next.original_draft = task.draft.clone();
            }
        }
        let why = Why::new(Reason::OwnerEditedPlan).detail(plan_edit::describe(&feedback));
        let (next, log) = record(&next, now, why);
        self.store.commit(&TaskCommit::new(next.clone(), log)).await?;
        Ok(next)
    }

    /// `POST /api/v1/tasks/{id}/plan/replan {"instructions"}`: the agent plans the task again
    /// with the owner's instructions ("don't mention the promotion, just check in"); the old
    /// plan's feedback stays, with the instruction added.
    pub async fn replan(&self, account: AccountId, id: TaskId, instructions: &str, version: Option<u64>) -> Result<Task, EngineError> {
        let task = self.plan_task(account, id, version).await?;
        let Some(old) = task.controls.plan.clone() else {
            return Err(not_a_plan(task.status));
        };
        let instruction = plan_edit::instruction(&old, instructions)?;
        let owner = self
            .store
            .get_account(account)
            .await?
            .ok_or(EngineError::NotFound { what: "account" })?;
        let now = self.clock.now();
        let def = task_type::definition(&task.task_type);
        let memories = self.prompt_memories(account, Some(&task.member.id), now).await?;
        let facts = self.store.get_member(account, &task.member.id).await?.map(|(f, _)| f);
        let fresh = self
            .plan(
                &owner,
                def,
                &task.goal,
                facts.as_ref(),
                task.draft.as_ref(),
                task.confidence,
                &memories.memories,
                now,
                Some(&instruction),
            )
            .await;
        let mut next = task.clone();
        next.controls.plan = Some(plan_edit::replanned(&old, fresh, &instruction, now));
        // A new plan has its own steps: the ceiling is the type's again (a subtask keeps
        // the share its parent gave it), lowered to the steps below.
        if next.parent_id.is_none() && !next.batch {
            next.budget.messages_max = def.budget.max_messages;
        }
        follow_plan(&mut next)?;
        let why = Why::new(Reason::OwnerInstructedPlan).detail(format!("planned again: {instruction}"));
        let (next, log) = record(&next, now, why);
        self.store.commit(&TaskCommit::new(next.clone(), log)).await?;
        Ok(next)
    }

    /// The task, if its plan may still change (and it is the version the owner saw).
    async fn plan_task(&self, account: AccountId, id: TaskId, version: Option<u64>) -> Result<Task, EngineError> {
        let task = self
            .store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        if task.status != TaskStatus::PendingReview || !plan_edit::editable(task.controls.plan.as_ref()) {
            return Err(not_a_plan(task.status));
        }
        if version.is_some_and(|v| v != task.version) {
            return Err(EngineError::StaleVersion);
        }
        Ok(task)
    }
}

fn not_a_plan(status: TaskStatus) -> EngineError {
    EngineError::InvalidState {
        status,
        action: "a plan change (only a plan waiting for your approval changes)",
    }
}

/// The task as its plan now says: the first step's words are the first message, and the
/// steps left are the most messages it sends.
fn follow_plan(task: &mut Task) -> Result<(), EngineError> {
    let Some(plan) = task.controls.plan.as_ref() else {
        return Ok(());
    };
    if task_type::definition(&task.task_type).category != Category::Communication {
        return Ok(());
    }
    let fallback = task.draft.as_ref().map_or_else(
        || task_type::definition(&task.task_type).subject().to_owned(),
        |d| d.subject.clone(),
    );
    if let Some(content) = plan.steps.first().and_then(|s| s.draft_content.as_deref()) {
        let draft = plan_edit::draft_of(content, &fallback);
        super::tasks::check_draft(&draft)?;
        task.draft = Some(draft);
    }
    let steps = u32::try_from(plan.steps.len()).unwrap_or(u32::MAX);
    task.budget.messages_max = task.budget.messages_max.min(steps.max(1));
    Ok(())
}

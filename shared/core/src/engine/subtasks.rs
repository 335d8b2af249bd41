//! Subtasks on the engine (spec §14, §31.7): adding a step to a parent within the subtask
//! limits and the parent's message ceiling, and the parent's step, which derives its state
//! from its subtasks instead of sending.

use jiff::Timestamp;

use super::work::StepOutcome;
use super::{CreateOptions, Created, Engine, NewTask};
use crate::account::Account;
use crate::error::{EngineError, InvalidInput, StoreError};
use crate::ids::{AccountId, MemberId, TaskId};
use crate::limits;
use crate::ports::TaskCommit;
use crate::subtasks::{Derived, Requirement, SubtaskRef, derive, goal_met};
use crate::task::{Task, TaskStatus};
use crate::task_type::{self, Category};
use crate::transition::{Why, record, transition};

/// What a subtask's creation carries from its parent.
#[derive(Clone, Debug)]
pub(crate) struct ParentLink {
    pub parent: TaskId,
    /// The id the parent listed for the subtask.
    pub child: TaskId,
    pub requirement: Requirement,
    /// What is left of the parent's message ceiling for this subtask.
    pub messages_max: u32,
    pub parent_pending_review: bool,
}

/// What [`Engine::create_batch`] made.
#[derive(Debug)]
pub struct Batch {
    pub parent: Task,
    pub subtasks: Vec<Task>,
    /// Members left out, with why.
    pub refused: Vec<(MemberId, EngineError)>,
}

/// How many times an update to a parent re-reads after losing a race.
const PARENT_RACES: usize = 4;

impl Engine {
    /// Add a subtask to `parent` (spec §14.2): the parent lists it first — so its limits hold
    /// however many are added at once — and then it is made through the one creation path.
    pub async fn create_subtask(
        &self,
        account: &Account,
        parent: TaskId,
        input: NewTask,
        requirement: Requirement,
        options: CreateOptions,
    ) -> Result<Task, EngineError> {
        if let Some(existing) = self.store.active_task(account.id, &input.member_id, input.task_type.trim()).await? {
            return Err(InvalidInput::new(
                "active_task_exists",
                format!(
                    "the member already has an active {} task ({existing}); a subtask needs a type of its own",
                    input.task_type.trim()
                ),
            )
            .into());
        }
        let now = self.clock.now();
        let child = TaskId::generate(now);
        let def = task_type::definition(input.task_type.trim());
        let sends = def.category == Category::Communication;
        let mut link = None;
        for _ in 0..PARENT_RACES {
            let parent = self
                .store
                .get_task(account.id, parent)
                .await?
                .ok_or(EngineError::NotFound { what: "parent task" })?;
            // The subtask's own budget, within what the parent has left to promise.
            let messages_max = self.check_parent(account.id, &parent, sends).await?.min(def.budget.max_messages);
            let (mut next, log) = record(
                &parent,
                now,
                Why::new("subtask_added").detail(format!(
                    "{} subtask {child} ({requirement:?}) for member {}",
                    input.task_type.trim(),
                    input.member_id
                )),
            );
            next.subtasks.push(SubtaskRef {
                id: child,
                requirement,
                messages_max,
            });
            // From now on the parent's steps coordinate: the next one derives its state.
            if next.status != TaskStatus::PendingReview {
                let check = now + limits::PARENT_CHECK_INTERVAL;
                next.next_action_at = Some(next.next_action_at.map_or(check, |at| at.min(check)));
            }
            match self.store.commit(&TaskCommit::new(next, log)).await {
                Ok(()) => {
                    link = Some(ParentLink {
                        parent: parent.id,
                        child,
                        requirement,
                        messages_max,
                        parent_pending_review: parent.status == TaskStatus::PendingReview,
                    });
                    break;
                }
                Err(StoreError::Conflict(crate::error::Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        let link = link.ok_or(EngineError::StaleVersion)?;
        let options = CreateOptions {
            parent: Some(link),
            ..options
        };
        match self.create_task_with(account, input, options).await? {
            Created::New(task) => Ok(task),
            // Made by a concurrent request for the same member and type meanwhile: the listed
            // id never exists, and a parent ignores such an entry.
            Created::Existing(existing) => Err(InvalidInput::new(
                "active_task_exists",
                format!("the member already has an active {} task ({})", existing.task_type, existing.id),
            )
            .into()),
        }
    }

    /// A multi-member task (spec §31.7): one batch parent about the whole business and one
    /// optional subtask per member, each made through the one creation path and its gates.
    /// Members whose subtask is refused (an active task of the type, a flood limit…) are
    /// returned with the reason; the parent holds the others.
    pub async fn create_batch(
        &self,
        account: &Account,
        input: NewTask,
        members: Vec<MemberId>,
        mode: crate::autonomy::TaskMode,
    ) -> Result<Batch, EngineError> {
        let mut unique: Vec<MemberId> = Vec::new();
        for member in members {
            if !unique.contains(&member) {
                unique.push(member);
            }
        }
        if unique.is_empty() || unique.len() > limits::MAX_BATCH_SUBTASKS_PER_PARENT {
            return Err(InvalidInput::new(
                "invalid_member_ids",
                format!("a batch names 1-{} distinct members", limits::MAX_BATCH_SUBTASKS_PER_PARENT),
            )
            .into());
        }
        let whole_business = MemberId::parse(crate::recurring::ACCOUNT_WIDE_MEMBER)?;
        let parent_input = NewTask {
            member_id: whole_business,
            ..input.clone()
        };
        let options = CreateOptions {
            batch_of: Some(u32::try_from(unique.len()).unwrap_or(u32::MAX)),
            ..CreateOptions::with_mode(mode)
        };
        let parent = match self.create_task_with(account, parent_input, options).await? {
            Created::New(parent) => parent,
            Created::Existing(existing) => {
                return Err(InvalidInput::new(
                    "active_task_exists",
                    format!("a {} batch is already open ({})", existing.task_type, existing.id),
                )
                .into());
            }
        };
        let mut batch = Batch {
            parent: parent.clone(),
            subtasks: Vec::new(),
            refused: Vec::new(),
        };
        for member in unique {
            let child = NewTask {
                member_id: member.clone(),
                ..input.clone()
            };
            match self
                .create_subtask(account, parent.id, child, Requirement::Optional, CreateOptions::with_mode(mode))
                .await
            {
                Ok(task) => batch.subtasks.push(task),
                Err(e) if !e.is_retryable() => batch.refused.push((member, e)),
                Err(e) => return Err(e),
            }
        }
        if let Some(parent) = self.store.get_task(account.id, parent.id).await? {
            batch.parent = parent;
        }
        Ok(batch)
    }

    /// The parent may take another subtask: open, within the depth and count limits (spec
    /// §7.8, §31.7). Returns the message ceiling left for it.
    async fn check_parent(&self, account: AccountId, parent: &Task, sends: bool) -> Result<u32, EngineError> {
        // Only a parent whose steps run can coordinate: not one that is closed, with the owner,
        // mid-step, or dormant (watched without steps).
        if !matches!(parent.status, TaskStatus::PendingReview | TaskStatus::Ready | TaskStatus::Waiting) {
            return Err(InvalidInput::new(
                "parent_not_open",
                format!(
                    "the parent task is {}; subtasks are added to tasks in review, ready or waiting",
                    parent.status
                ),
            )
            .into());
        }
        if let Some(grandparent) = parent.parent_id {
            let grandparent = self.store.get_task(account, grandparent).await?;
            if grandparent.is_some_and(|g| g.parent_id.is_some()) {
                return Err(InvalidInput::new(
                    "subtask_depth",
                    format!("subtasks nest at most {} levels deep", limits::MAX_SUBTASK_DEPTH),
                )
                .into());
            }
        }
        let max = if parent.batch {
            limits::MAX_BATCH_SUBTASKS_PER_PARENT
        } else {
            limits::MAX_SUBTASKS_PER_PARENT
        };
        if parent.subtasks.len() >= max {
            return Err(InvalidInput::new("subtask_limit", format!("a parent task has at most {max} subtasks")).into());
        }
        let promised: u32 = parent.subtasks.iter().map(|s| s.messages_max).sum();
        let left = parent.budget.messages_max.saturating_sub(promised);
        if sends && left == 0 {
            return Err(InvalidInput::new(
                "parent_budget_exhausted",
                format!(
                    "the parent's {} messages are all promised to its subtasks",
                    parent.budget.messages_max
                ),
            )
            .into());
        }
        Ok(if sends { left } else { 0 })
    }

    /// A parent's step: read its subtasks and move it as they say (spec §14.4) — escalated
    /// with a required one, completed or escalated once all are settled, otherwise waiting
    /// for the next check. It never sends.
    pub(crate) async fn parent_step(&self, parent: Task, now: Timestamp) -> Result<StepOutcome, EngineError> {
        let ids: Vec<TaskId> = parent.subtasks.iter().map(|s| s.id).collect();
        let found = self.store.get_tasks(parent.account_id, &ids).await?;
        let subtasks: Vec<(Requirement, TaskStatus, &Task)> = parent
            .subtasks
            .iter()
            .filter_map(|r| {
                found
                    .iter()
                    .find(|t| t.id == r.id)
                    .map(|t| (r.requirement, crate::subtasks::counted_status(t), t))
            })
            .collect();
        let states: Vec<(Requirement, TaskStatus)> = subtasks.iter().map(|(r, s, _)| (*r, *s)).collect();
        let settled = states.iter().filter(|(_, s)| s.is_terminal()).count();
        let summary = format!("{settled} of {} subtasks closed", states.len());
        let derived = if states.is_empty() {
            Derived::NeedsEvaluation
        } else {
            derive(&states)
        };
        let (to, why) = match derived {
            Derived::Escalated => {
                let blocked: Vec<String> = subtasks
                    .iter()
                    .filter(|(r, s, _)| *r == Requirement::Required && *s == TaskStatus::Escalated)
                    .map(|(_, _, t)| format!("{} {}", t.task_type, t.id))
                    .collect();
                let detail = format!("required subtask with the owner: {}; {summary}", blocked.join(", "));
                (TaskStatus::Escalated, Why::new("required_subtask_escalated").detail(detail))
            }
            Derived::NeedsEvaluation if goal_met(&states) => {
                let why = Why::new("subtasks_completed").outcome("subtasks_completed").detail(summary);
                (TaskStatus::Completed, why)
            }
            Derived::NeedsEvaluation => {
                let failed: Vec<String> = subtasks
                    .iter()
                    .filter(|(r, s, _)| *r == Requirement::Required && *s != TaskStatus::Completed)
                    .map(|(_, s, t)| format!("{} {} ({s})", t.task_type, t.id))
                    .collect();
                let detail = format!("required subtasks did not complete: {}; {summary}", failed.join(", "));
                (TaskStatus::Escalated, Why::new("required_subtask_failed").detail(detail))
            }
            Derived::Executing | Derived::Waiting | Derived::PendingReview => {
                let detail = format!("{summary}; subtasks {derived:?}").to_lowercase();
                (TaskStatus::Waiting, Why::new("subtasks_in_progress").detail(detail))
            }
        };
        self.move_parent(parent, to, now, why).await
    }

    /// Move a parent to `to`, through `executing` when it starts from `ready`; a parent that
    /// keeps waiting is rescheduled for its next check.
    async fn move_parent(&self, parent: Task, to: TaskStatus, now: Timestamp, why: Why) -> Result<StepOutcome, EngineError> {
        let mut parent = parent;
        if parent.status == TaskStatus::Ready {
            let (started, log) = transition(&parent, TaskStatus::Executing, now, Why::new("subtasks_started"))?;
            self.store.commit(&TaskCommit::new(started.clone(), log)).await?;
            parent = started;
        }
        if parent.status == to {
            let until = now + limits::PARENT_CHECK_INTERVAL;
            let reason = why.reason.clone();
            self.store.commit(&Self::reschedule(&parent, until, now, why)).await?;
            return Ok(StepOutcome::Deferred { until, reason });
        }
        if to == TaskStatus::Waiting {
            let (mut next, log) = transition(&parent, to, now, why.clone())?;
            next.next_action_at = Some(now + limits::PARENT_CHECK_INTERVAL);
            self.store.commit(&TaskCommit::new(next, log)).await?;
            return Ok(StepOutcome::Moved { to, reason: why.reason });
        }
        self.move_to(parent, to, now, why).await
    }

    /// Cancel a cancelled parent's open subtasks, re-reading any that moved meanwhile.
    pub(crate) async fn cancel_subtasks(&self, parent: &Task) -> Result<(), EngineError> {
        let ids: Vec<TaskId> = parent.subtasks.iter().map(|s| s.id).collect();
        let mut open: Vec<Task> = self.store.get_tasks(parent.account_id, &ids).await?;
        for _ in 0..PARENT_RACES {
            open.retain(Task::is_active);
            if open.is_empty() {
                return Ok(());
            }
            let mut lost = Vec::new();
            for task in open {
                let why = Why::new("parent_cancelled").detail(format!("parent task {} was cancelled", parent.id));
                let (next, log) = transition(&task, TaskStatus::Cancelled, self.clock.now(), why)?;
                match self.store.commit(&TaskCommit::new(next.clone(), log)).await {
                    Ok(()) => self.publish_closed(&next).await,
                    Err(StoreError::Conflict(crate::error::Conflict::Version)) => lost.push(task.id),
                    Err(e) => return Err(e.into()),
                }
            }
            open = self.store.get_tasks(parent.account_id, &lost).await?;
        }
        Err(EngineError::StaleVersion)
    }

    /// A subtask closed: bring its parent's next check forward to now, so the parent moves at
    /// the next tick rather than at its periodic check. Best effort — the check still comes.
    pub(crate) async fn nudge_parent(&self, account: AccountId, parent: TaskId, child: TaskId) {
        for _ in 0..PARENT_RACES {
            let now = self.clock.now();
            let Ok(Some(task)) = self.store.get_task(account, parent).await else {
                return;
            };
            let waiting = matches!(task.status, TaskStatus::Waiting | TaskStatus::Ready);
            if !waiting || task.next_action_at.is_some_and(|at| at <= now) {
                return;
            }
            let (mut next, log) = record(&task, now, Why::new("subtask_closed").detail(format!("subtask {child} closed")));
            next.next_action_at = Some(now);
            match self.store.commit(&TaskCommit::new(next, log)).await {
                Err(StoreError::Conflict(crate::error::Conflict::Version)) => continue,
                Err(e) => {
                    tracing::warn!(parent = %parent, error = %e, "parent not nudged; its periodic check will see the subtask");
                    return;
                }
                Ok(()) => return,
            }
        }
    }
}

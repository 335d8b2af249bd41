//! Subtasks on the engine: adding a step to a parent within the subtask
//! limits and the parent's message ceiling, and the parent's step, which derives its state
//! from its subtasks instead of sending.

use super::ai::AiGate;
use jiff::Timestamp;

use super::work::StepOutcome;
use super::{CreateOptions, Created, Engine, NewTask};
use crate::kernel::error::{InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits;
use crate::owner::account::Account;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::subtasks::{Derived, Requirement, SubtaskRef, derive, goal_met};
use crate::task::task_type::{self, Category};
use crate::task::transition::{Why, record, transition};
use crate::task::{Task, TaskStatus};

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

/// What planning a parent's next step came to.
enum PlanOutcome {
    /// A step was added (or planning waits for tomorrow's AI budget): the step is done.
    Added(StepOutcome),
    /// The planner proposed nothing more, with why.
    NoStep(String),
    /// The parent goes to the owner.
    Stop(TaskStatus, Why),
}

/// The types a planning parent's steps may be: the ones that talk to the member or hand a
/// person a to-do, except the parent's own type (one active task per member and type) and
/// `ad_hoc` (always reviewed; the planner names a real type).
fn plannable_types(parent_type: &str) -> Vec<String> {
    task_type::REGISTRY
        .iter()
        .filter(|d| matches!(d.category, Category::Communication | Category::StaffTodo))
        .filter(|d| d.key != parent_type && d.key != "ad_hoc")
        .map(|d| d.key.to_owned())
        .collect()
}

/// How many times an update to a parent re-reads after losing a race.
const PARENT_RACES: usize = 4;

impl Engine {
    /// The owner resumed `parent` from its escalation: the subtasks it
    /// held meanwhile (their last decision `held_for_escalated_parent`) are due again now.
    /// The parent's move is already committed; a subtask that moved on meanwhile is left as
    /// it is, and a failure only delays it to its next look.
    pub(crate) async fn resume_held_subtasks(&self, parent: &Task, now: Timestamp) {
        for child in &parent.subtasks {
            let history = match self.store.task_history(parent.account_id, child.id).await {
                Ok(Some(history)) => history,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(parent = %parent.id, subtask = %child.id, error = %e, "held subtask not read; it resumes at its next look");
                    continue;
                }
            };
            let task = history.task;
            let held = matches!(task.status, TaskStatus::Ready | TaskStatus::Waiting)
                && history
                    .log
                    .last()
                    .is_some_and(|l| l.reason == Reason::HeldForEscalatedParent.as_str());
            if !held {
                continue;
            }
            let why = Why::new(Reason::ResumedWithParent).detail(format!("parent task {} resumed", parent.id));
            if let Err(e) = self.store.commit(&Self::reschedule(&task, now, now, why)).await {
                tracing::warn!(parent = %parent.id, subtask = %child.id, error = %e, "held subtask not resumed; it resumes at its next look");
            }
        }
    }

    /// Add a subtask to `parent`: the parent lists it first — so its limits hold
    /// however many are added at once — and then it is made through the one creation path.
    pub async fn create_subtask(
        &self,
        account: &Account,
        parent: TaskId,
        input: NewTask,
        requirement: Requirement,
        options: CreateOptions,
    ) -> Result<Task, EngineError> {
        let why = Why::new(Reason::SubtaskAdded);
        self.add_subtask(account, parent, input, requirement, options, why, false).await
    }

    /// [`Self::create_subtask`] with the reason logged on the parent, and whether the parent
    /// spent an AI call deciding it (counted in the same write).
    #[allow(clippy::too_many_arguments)]
    async fn add_subtask(
        &self,
        account: &Account,
        parent: TaskId,
        input: NewTask,
        requirement: Requirement,
        options: CreateOptions,
        why: Why,
        ai_call: bool,
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
            let added = format!(
                "{} subtask {child} ({requirement:?}) for member {}",
                input.task_type.trim(),
                input.member_id
            );
            let detail = match &why.detail {
                Some(d) => format!("{added}; {d}"),
                None => added,
            };
            let (mut next, log) = record(&parent, now, Why::new(why.reason).detail(detail));
            next.ai_calls += u32::from(ai_call);
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
                Err(StoreError::Conflict(crate::kernel::error::Conflict::Version)) => continue,
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

    /// A multi-member task: one batch parent about the whole business and one
    /// optional subtask per member, each made through the one creation path and its gates.
    /// Members whose subtask is refused (an active task of the type, a flood limit…) are
    /// returned with the reason; the parent holds the others.
    pub async fn create_batch(
        &self,
        account: &Account,
        input: NewTask,
        members: Vec<MemberId>,
        mode: crate::task::controls::TaskMode,
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
        let whole_business = MemberId::parse(crate::owner::recurring::ACCOUNT_WIDE_MEMBER)?;
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

    /// A parent's step: read its subtasks and move it as they say — escalated
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
                    .map(|t| (r.requirement, crate::task::subtasks::counted_status(t), t))
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
        let mut parent = parent;
        let mut planner_said = None;
        if parent.controls.agent_planning && derived == Derived::NeedsEvaluation {
            let steps: Vec<(Requirement, &Task)> = subtasks.iter().map(|(r, _, t)| (*r, *t)).collect();
            match self.plan_step(&mut parent, &steps, now).await? {
                PlanOutcome::Added(outcome) => return Ok(outcome),
                PlanOutcome::Stop(to, why) => return self.move_parent(parent, to, now, why).await,
                PlanOutcome::NoStep(_) if states.is_empty() => {
                    let why = Why::new(Reason::PlannerFoundNoStep).detail("the planner proposed no first step; the owner decides");
                    return self.move_parent(parent, TaskStatus::Escalated, now, why).await;
                }
                PlanOutcome::NoStep(reasoning) => planner_said = Some(reasoning),
            }
        }
        let summary = match planner_said {
            Some(reasoning) => format!("{summary}; planner: {reasoning}"),
            None => summary,
        };
        let (to, why) = match derived {
            Derived::Escalated => {
                let blocked: Vec<String> = subtasks
                    .iter()
                    .filter(|(r, s, _)| *r == Requirement::Required && *s == TaskStatus::Escalated)
                    .map(|(_, _, t)| format!("{} {}", t.task_type, t.id))
                    .collect();
                let detail = format!("required subtask with the owner: {}; {summary}", blocked.join(", "));
                (TaskStatus::Escalated, Why::new(Reason::RequiredSubtaskEscalated).detail(detail))
            }
            Derived::NeedsEvaluation if goal_met(&states) => {
                let why = Why::new(Reason::SubtasksCompleted).outcome("subtasks_completed").detail(summary);
                (TaskStatus::Completed, why)
            }
            Derived::NeedsEvaluation => {
                let failed: Vec<String> = subtasks
                    .iter()
                    .filter(|(r, s, _)| *r == Requirement::Required && *s != TaskStatus::Completed)
                    .map(|(_, s, t)| format!("{} {} ({s})", t.task_type, t.id))
                    .collect();
                let detail = format!("required subtasks did not complete: {}; {summary}", failed.join(", "));
                (TaskStatus::Escalated, Why::new(Reason::RequiredSubtaskFailed).detail(detail))
            }
            Derived::Executing | Derived::Waiting | Derived::PendingReview => {
                let detail = format!("{summary}; subtasks {derived:?}").to_lowercase();
                (TaskStatus::Waiting, Why::new(Reason::SubtasksInProgress).detail(detail))
            }
        };
        self.move_parent(parent, to, now, why).await
    }

    /// A planning parent's next step: ask the planner, given the steps so far,
    /// and add the step it chooses as a subtask (agent-spawned, so the owner reviews it).
    async fn plan_step(&self, parent: &mut Task, steps: &[(Requirement, &Task)], now: Timestamp) -> Result<PlanOutcome, EngineError> {
        let steps_left = limits::MAX_SUBTASKS_PER_PARENT.saturating_sub(parent.subtasks.len());
        if steps_left == 0 {
            return Ok(PlanOutcome::NoStep(format!(
                "the {} steps a task may take are taken",
                limits::MAX_SUBTASKS_PER_PARENT
            )));
        }
        let account = self
            .store
            .get_account(parent.account_id)
            .await?
            .ok_or(EngineError::NotFound { what: "account" })?;
        let permit = match self.ai_call(&account, Some(parent.ai_calls), now).await? {
            AiGate::Allowed(permit) => permit,
            AiGate::DayUsed { until } => {
                let why =
                    Why::new(Reason::AiBudgetDayUsed).detail(format!("no AI call left today to plan the next step; planning {until}"));
                self.store.commit(&Self::reschedule(parent, until, now, why)).await?;
                return Ok(PlanOutcome::Added(StepOutcome::Deferred {
                    until,
                    reason: Reason::AiBudgetDayUsed,
                }));
            }
            AiGate::TaskSpent => {
                let why = Why::new(Reason::AiBudgetExhausted).detail("no AI call left to plan the next step");
                return Ok(PlanOutcome::Stop(TaskStatus::Escalated, why));
            }
        };
        parent.ai_calls += 1;
        let memories = self.prompt_memories(parent.account_id, Some(&parent.member.id), now).await?;
        parent.memories_used = memories.used.clone();
        let step_types = plannable_types(&parent.task_type);
        let facts = self.store.get_member(parent.account_id, &parent.member.id).await?.map(|(f, _)| f);
        let request = crate::ports::PlanRequest {
            task_type: parent.task_type.clone(),
            goal: parent.goal.clone(),
            system_prompt: crate::conversation::prompt::system_prompt(&crate::conversation::prompt::PromptInput::for_task(
                parent,
                &account,
                &memories.memories,
                &[],
                now,
            ))
            .unwrap_or_default(),
            step_types: step_types.clone(),
            steps: steps
                .iter()
                .map(|(requirement, t)| crate::ports::StepResult {
                    task_type: t.task_type.clone(),
                    goal: t.goal.clone(),
                    requirement: *requirement,
                    status: crate::task::subtasks::counted_status(t),
                    outcome: t.outcome.clone(),
                })
                .collect(),
            steps_left: u32::try_from(steps_left).unwrap_or(u32::MAX),
            facts: facts.map_or(serde_json::Value::Null, |f| serde_json::to_value(f).unwrap_or_default()),
        };
        let decision = match permit.plan_next(&request).await {
            Ok(decision) => decision,
            Err(e) => {
                let why = Why::new(Reason::PlannerUnsure).detail(format!("the planner could not decide the next step: {}", e.0));
                return Ok(PlanOutcome::Stop(TaskStatus::Escalated, why));
            }
        };
        let Some(step) = decision.next else {
            return Ok(PlanOutcome::NoStep(decision.reasoning));
        };
        let tried = steps.iter().any(|(_, t)| t.task_type == step.task_type);
        if tried || !step_types.contains(&step.task_type) {
            let why = Why::new(Reason::PlannerChoseAnUnusableStep).detail(format!(
                "{} is not a step this task may take (already tried, or not one of: {})",
                step.task_type,
                step_types.join(", ")
            ));
            return Ok(PlanOutcome::Stop(TaskStatus::Escalated, why));
        }
        let input = NewTask {
            task_type: step.task_type.clone(),
            member_id: parent.member.id.clone(),
            goal: step.goal.clone(),
            confidence: None,
            draft: None,
            trigger_type: crate::task::TriggerType::AgentSpawned,
            trigger_event_id: Some(format!("plan:{}:{}", parent.id, parent.subtasks.len())),
            gate: Default::default(),
            context: serde_json::json!({ "planned_for": parent.id.to_string(), "reasoning": decision.reasoning }),
        };
        let mut detail = decision.reasoning.clone();
        if !decision.remaining.is_empty() {
            detail.push_str(&format!("; then: {}", decision.remaining.join("; ")));
        }
        let why = Why::new(Reason::AgentPlannedStep).detail(detail);
        match self
            .add_subtask(&account, parent.id, input, step.requirement, CreateOptions::default(), why, true)
            .await
        {
            Ok(task) => Ok(PlanOutcome::Added(StepOutcome::Moved {
                to: task.status,
                reason: Reason::AgentPlannedStep,
            })),
            // The member asked to stop: the plan ends with them, as their other tasks did.
            Err(e @ EngineError::MemberSuppressed { .. }) => {
                let why = Why::new(Reason::MemberOptedOut)
                    .outcome("opted_out")
                    .detail(format!("{} step not opened: {e}", step.task_type));
                Ok(PlanOutcome::Stop(TaskStatus::Cancelled, why))
            }
            Err(e @ (EngineError::Invalid(_) | EngineError::Limited(_))) => {
                let why = Why::new(Reason::PlannedStepRefused).detail(format!("{} step: {e}", step.task_type));
                Ok(PlanOutcome::Stop(TaskStatus::Escalated, why))
            }
            Err(e) => Err(e),
        }
    }

    /// Move a parent to `to`, through `executing` when it starts from `ready`; a parent that
    /// keeps waiting is rescheduled for its next check.
    async fn move_parent(&self, parent: Task, to: TaskStatus, now: Timestamp, why: Why) -> Result<StepOutcome, EngineError> {
        let mut parent = parent;
        if parent.status == TaskStatus::Ready {
            let (started, log) = transition(&parent, TaskStatus::Executing, now, Why::new(Reason::SubtasksStarted))?;
            self.store.commit(&TaskCommit::new(started.clone(), log)).await?;
            parent = started;
        }
        if parent.status == to {
            let until = now + limits::PARENT_CHECK_INTERVAL;
            let reason = why.reason;
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

    /// Cancel a cancelled parent's open subtasks, re-reading any that moved meanwhile;
    /// `account` as the parent's close read it (whether their events have an endpoint).
    pub(crate) async fn cancel_subtasks(&self, parent: &Task, account: Option<&Account>) -> Result<(), EngineError> {
        let ids: Vec<TaskId> = parent.subtasks.iter().map(|s| s.id).collect();
        let mut open: Vec<Task> = self.store.get_tasks(parent.account_id, &ids).await?;
        for _ in 0..PARENT_RACES {
            open.retain(Task::is_active);
            if open.is_empty() {
                return Ok(());
            }
            let mut lost = Vec::new();
            for task in open {
                let why = Why::new(Reason::ParentCancelled).detail(format!("parent task {} was cancelled", parent.id));
                let (next, log) = transition(&task, TaskStatus::Cancelled, self.clock.now(), why)?;
                let commit = TaskCommit::new(next, log).webhooks_for(account);
                match self.store.commit(&commit).await {
                    Ok(()) => self.publish_closed(&commit).await,
                    Err(StoreError::Conflict(crate::kernel::error::Conflict::Version)) => lost.push(task.id),
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
            let (mut next, log) = record(
                &task,
                now,
                Why::new(Reason::SubtaskClosed).detail(format!("subtask {child} closed")),
            );
            next.next_action_at = Some(now);
            match self.store.commit(&TaskCommit::new(next, log)).await {
                Err(StoreError::Conflict(crate::kernel::error::Conflict::Version)) => continue,
                Err(e) => {
                    tracing::warn!(parent = %parent, error = %e, "parent not nudged; its periodic check will see the subtask");
                    return;
                }
                Ok(()) => return,
            }
        }
    }
}

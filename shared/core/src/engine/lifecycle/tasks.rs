//! Creating tasks (the one creation path, spec §6.1) and the owner's actions on them.

use super::ai::{self, AiGate};
use super::messages::MessageFor;
use jiff::{SignedDuration, Timestamp};

use super::{Engine, boxed};
use crate::conversation::prompt::PromptInput;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits;
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::business_memory::BusinessMemory;
use crate::ports::{DraftRequest, TaskQuery};
use crate::rails::autonomy;
use crate::rails::gate::{GateContext, initial_status_on};
use crate::rails::priority_rules::PriorityInput;
use crate::task::commit::TaskCommit;
use crate::task::controls::{PlanBudget, PlanStep, TaskControls, TaskMode, TaskPlan};
use crate::task::error::EngineError;
use crate::task::flood::OnceClaim;
use crate::task::flood::{self, Burst, CreationQuota, Limit, Refusal};
use crate::task::history::TaskHistory;
use crate::task::reason::Reason;
use crate::task::task_type::{self, Category, TaskTypeDef};
use crate::task::transition::{Why, created_by_gate};
use crate::task::{Budget, Draft, MemberRef, Task, TaskStatus, TriggerType};

/// Everything a new task needs; used by the API (manual), signals (webhook) and analysis.
#[derive(Clone, Debug)]
pub struct NewTask {
    pub task_type: String,
    pub member_id: MemberId,
    pub goal: String,
    pub confidence: Option<u8>,
    pub draft: Option<Draft>,
    pub trigger_type: TriggerType,
    pub trigger_event_id: Option<String>,
    pub gate: GateContext,
    pub context: serde_json::Value,
}

/// How a new task runs (defaults: live).
#[derive(Clone, Debug, Default)]
pub struct CreateOptions {
    pub mode: TaskMode,
    /// Set by [`Engine::create_subtask`] only: the parent that has already listed this task.
    pub(crate) parent: Option<super::subtasks::ParentLink>,
    /// Set by [`Engine::create_batch`] only: a batch parent for this many members.
    pub(crate) batch_of: Option<u32>,
    /// What an automation task does (checked with [`crate::task::action::parse_actions`]).
    pub actions: Vec<crate::task::action::Action>,
    /// The agent plans the task's steps as subtasks.
    pub agent_planning: bool,
    /// What the task is the one answer to, claimed in its creation's transaction
    /// ([`Engine::create_claimed`]).
    pub(crate) once: Option<OnceClaim>,
}

impl CreateOptions {
    pub fn with_mode(mode: TaskMode) -> Self {
        Self {
            mode,
            parent: None,
            batch_of: None,
            actions: Vec::new(),
            agent_planning: false,
            once: None,
        }
    }

    /// The agent plans the task's steps as subtasks.
    pub fn with_agent_planning(self, agent_planning: bool) -> Self {
        Self { agent_planning, ..self }
    }

    /// An automation task's actions (checked with [`crate::task::action::parse_actions`]).
    pub fn with_actions(self, actions: Vec<crate::task::action::Action>) -> Self {
        Self { actions, ..self }
    }
}

/// Whether creation made a task or found the member's active one of the same type.
#[derive(Debug)]
pub enum Created {
    New(Task),
    Existing(Task),
}

impl Created {
    pub fn task(&self) -> &Task {
        match self {
            Created::New(t) | Created::Existing(t) => t,
        }
    }
}

/// A creation a limit refused: logged with its reason (there is no task to log it on).
fn refused(account: &Account, member: &MemberId, task_type: &str, trigger: TriggerType, refusal: Refusal) -> EngineError {
    tracing::warn!(
        account = %account.id,
        member = %member,
        task_type,
        trigger = ?trigger,
        reason = refusal.limit.reason(),
        "task not created: {refusal}"
    );
    EngineError::Limited(refusal)
}

/// A creation for a suppressed member: skipped before anything is
/// drafted, logged with its reason (there is no task to log it on).
fn suppressed(account: &Account, member: &MemberId, task_type: &str, trigger: TriggerType) -> EngineError {
    tracing::info!(
        account = %account.id,
        member = %member,
        task_type,
        trigger = ?trigger,
        reason = "member_suppressed",
        "task not created: the member asked to get no more mail"
    );
    EngineError::MemberSuppressed { member: member.clone() }
}

/// Actions belong to automation tasks: `member_update` needs at least one, `bulk_tag_at_risk`
/// takes at most one `tag_member` (the tag to give), and no other type takes any.
fn check_actions(def: &TaskTypeDef, actions: &[crate::task::action::Action]) -> Result<(), InvalidInput> {
    use crate::task::action::Action;
    match def.key {
        "member_update" if actions.is_empty() => Err(InvalidInput::new(
            "actions_required",
            "a member_update task lists its actions: [{\"type\": \"tag_member\", \"tag\": \"vip\"}, …]",
        )),
        "member_update" => Ok(()),
        "bulk_tag_at_risk" => match actions {
            [] | [Action::TagMember { .. }] => Ok(()),
            _ => Err(InvalidInput::new(
                "invalid_actions",
                "a bulk_tag_at_risk task takes at most one tag_member action, naming the tag to give",
            )),
        },
        _ if actions.is_empty() => Ok(()),
        other => Err(InvalidInput::new(
            "actions_not_allowed",
            format!("{other} tasks do not take actions; automation types (member_update, bulk_tag_at_risk) do"),
        )),
    }
}

pub(crate) fn check_draft(draft: &Draft) -> Result<(), InvalidInput> {
    if draft.subject.trim().is_empty() || draft.subject.len() > 200 || draft.subject.contains(['\r', '\n']) {
        return Err(InvalidInput::new(
            "invalid_draft",
            "draft.subject must be 1-200 characters on one line",
        ));
    }
    if draft.body.trim().is_empty() || draft.body.len() > 20_000 {
        return Err(InvalidInput::new("invalid_draft", "draft.body must be 1-20000 characters"));
    }
    Ok(())
}

/// The most tasks the review queue reads to put them in order.
pub const REVIEW_QUEUE_READ: usize = 500;

impl Engine {
    /// The one way tasks are made: dedup by the active guard, the confidence gate, the
    /// type's budget, a first draft. A live task; see [`Engine::create_task_with`].
    pub async fn create_task(&self, account: &Account, input: NewTask) -> Result<Created, EngineError> {
        self.create_task_with(account, input, CreateOptions::default()).await
    }

    /// [`Engine::create_task`] with the per-task controls: the execution mode.
    pub async fn create_task_with(&self, account: &Account, input: NewTask, options: CreateOptions) -> Result<Created, EngineError> {
        self.create_task_limited(account, input, options, None).await
    }

    /// [`Engine::create_task`] as one of the creations of an invocation that has its own
    /// allowance (an analysis run, one webhook event: spec §7.9).
    pub async fn create_task_in(&self, account: &Account, input: NewTask, burst: &Burst) -> Result<Created, EngineError> {
        self.create_task_limited(account, input, CreateOptions::default(), Some(burst))
            .await
    }

    /// [`Self::create_task_in`] as the one answer to `claim`, claimed in the creation's own
    /// transaction: `None` when it was claimed already. Nothing is claimed unless the task is
    /// written, so a creation that dies half-way leaves it to be done again. The caller reads
    /// the claim first ([`crate::ports::Idempotency::is_claimed`]), so nothing is drafted for
    /// what is claimed; the transaction's condition stays the guarantee.
    pub(crate) async fn create_claimed(
        &self,
        account: &Account,
        input: NewTask,
        burst: &Burst,
        claim: OnceClaim,
    ) -> Result<Option<Created>, EngineError> {
        let options = CreateOptions {
            once: Some(claim),
            ..CreateOptions::default()
        };
        match self.create_task_limited(account, input, options, Some(burst)).await {
            Err(EngineError::Store(StoreError::Conflict(Conflict::Claimed))) => Ok(None),
            made => made.map(Some),
        }
    }

    /// [`Self::create_claimed`] for a finding's `episode` (a member's risk episode, a lead's
    /// arrival).
    pub(crate) async fn create_for_episode(
        &self,
        account: &Account,
        input: NewTask,
        burst: &Burst,
        episode: &str,
    ) -> Result<Option<Created>, EngineError> {
        if self.episode_claimed(episode).await? {
            return Ok(None);
        }
        let claim = crate::engine::learning::analysis::episode_claim(episode.to_owned(), self.clock.now());
        self.create_claimed(account, input, burst, claim).await
    }

    /// The creation path itself. Every limit is checked here: the invocation's `burst`
    /// before anything is drafted, the account's counters in the store's transaction.
    async fn create_task_limited(
        &self,
        account: &Account,
        input: NewTask,
        options: CreateOptions,
        burst: Option<&Burst>,
    ) -> Result<Created, EngineError> {
        // An unknown type keeps its name and works under `ad_hoc`'s rules (always reviewed).
        let task_type = input.task_type.trim().to_owned();
        let well_formed = !task_type.is_empty()
            && task_type.len() <= limits::MAX_TASK_TYPE_CHARS
            && task_type.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Err(InvalidInput::new("invalid_task_type", "task_type must be 1-64 characters of a-z, 0-9 and _").into());
        }
        let goal = input.goal.trim().to_owned();
        if goal.is_empty() || goal.len() > limits::MAX_GOAL_CHARS {
            return Err(InvalidInput::new("invalid_goal", "goal must be 1-2000 characters").into());
        }
        if let Some(draft) = &input.draft {
            check_draft(draft)?;
        }
        check_actions(task_type::definition(&task_type), &options.actions)?;
        if options.agent_planning && task_type::definition(&task_type).category != Category::Communication {
            return Err(InvalidInput::new(
                "planning_not_allowed",
                "the agent plans steps for goals about a member (communication types such as ad_hoc), not for automation, research or staff to-dos",
            )
            .into());
        }
        // A stop is a stop everywhere: no source opens a task for a suppressed member (nor adds
        // to one), and no AI call is spent on one. The facts are read once, here, for the
        // creation too; the suppression is one more read, only for a member with an address.
        let member = self.store.get_member(account.id, &input.member_id).await?.map(|(facts, _)| facts);
        if let Some(email) = member.as_ref().and_then(|m| m.email.as_ref())
            && self.store.is_suppressed(account.id, email).await?
        {
            return Err(suppressed(account, &input.member_id, &task_type, input.trigger_type));
        }
        // Nor for an erased one: they are not held, so only an unknown member is looked up.
        if member.is_none() && self.erased_identity(account.id, &input.member_id, None).await? {
            return Err(suppressed(account, &input.member_id, &task_type, input.trigger_type));
        }
        if let Some(existing) = self.existing_active(account.id, &input.member_id, &task_type).await? {
            return Ok(Created::Existing(self.merge_duplicate(existing, &Trigger::of(&input)).await?));
        }
        let now = self.clock.now();
        if let Some(burst) = burst {
            burst
                .take()
                .map_err(|refusal| refused(account, &input.member_id, &task_type, input.trigger_type, refusal))?;
        }
        let made = boxed(self.create_counted(account, input, member, options, task_type, goal, now)).await;
        if let (Some(burst), false) = (burst, matches!(made, Ok(Created::New(_)))) {
            burst.release();
        }
        made
    }

    #[allow(clippy::too_many_arguments)]
    async fn create_counted(
        &self,
        account: &Account,
        input: NewTask,
        member: Option<MemberFacts>,
        options: CreateOptions,
        task_type: String,
        goal: String,
        now: Timestamp,
    ) -> Result<Created, EngineError> {
        let trigger = Trigger::of(&input);
        let def: &TaskTypeDef = task_type::definition(&task_type);
        let confidence = input.confidence.unwrap_or(0).min(100);
        // A type on autopilot: the member's value or tenure alone does not ask for review.
        let autopilot = account.settings.autopilot_types.iter().any(|t| t == &task_type);
        let (status, gate_reason) = initial_status_on(
            account.settings.execution_mode,
            def,
            account.settings.calibration,
            confidence,
            &input.gate,
            autopilot,
        );
        let ramp = autonomy::ramp(&account.settings, def.agent, now);
        let (status, gate_reason) = autonomy::review_gate(status, gate_reason, &ramp, options.mode);
        // An action that needs the owner's approval (spec §15.2) means the task waits for it.
        let (status, gate_reason) = match options.actions.iter().find_map(|a| a.kind().approval_reason()) {
            Some(reason) if status == TaskStatus::Ready => (TaskStatus::PendingReview, reason.into()),
            _ => (status, gate_reason),
        };
        // Spec §7.13: a human sees every task the agent decided to create on its own.
        let (status, gate_reason) = if flood::is_agent_spawned(input.trigger_type) {
            (TaskStatus::PendingReview, Reason::AgentSpawnedNeedsReview.into())
        } else {
            (status, gate_reason)
        };
        // Held out (CONTRACT.md "Honest lift"): a member of the holdout group gets nothing —
        // no review, no draft, no AI call — and the task only watches its goal's signals.
        let holdout = super::lift::holdout_for(account, &input, &options, &task_type);
        let held_out = holdout.is_some_and(|h| h.arm == crate::task::holdout::Arm::HeldOut);
        let (status, gate_reason) = if held_out {
            (TaskStatus::HeldOut, Reason::HeldOutForLift.into())
        } else {
            (status, gate_reason)
        };
        // A message experiment of the type (CONTRACT.md "Honest lift") gives the member the
        // current or the proposed prompt, the same on every task of the experiment.
        let experiment = (def.category == Category::Communication && !held_out && options.batch_of.is_none() && !options.agent_planning)
            .then(|| crate::owner::experiment::arm_for(account, &task_type, &input.member_id))
            .flatten();
        let prioritised = self.config.priority_rules.prioritise(&PriorityInput {
            task_type: &task_type,
            trigger: Some(input.trigger_type),
            goal: &goal,
            confidence,
            monthly_value: input.gate.monthly_value.or(member.as_ref().and_then(|m| m.monthly_value)),
            tenure_days: input.gate.tenure_days.or_else(|| {
                member
                    .as_ref()
                    .and_then(|m| m.joined_at)
                    .map(|j| now.duration_since(j).as_hours() / 24)
            }),
            member_status: member.as_ref().and_then(|m| m.status),
        });
        let owner_draft = input.draft.is_some();
        // What the agent's calls below read: only read when one is made.
        let agent_writes = def.category == Category::Communication && options.batch_of.is_none() && !options.agent_planning && !held_out;
        let memories = if agent_writes && (input.draft.is_none() || options.mode == TaskMode::Plan) {
            self.prompt_memories(account.id, Some(&input.member_id), now).await?
        } else {
            super::memories::PromptMemories::default()
        };
        let mut message_template = None;
        let draft = match input.draft {
            Some(draft) => Some(draft),
            // Staff to-dos and research never write to a member; a held-out task writes nothing.
            None if def.category != Category::Communication || held_out => None,
            // A batch or planning parent never writes to anyone; its subtasks draft.
            None if options.batch_of.is_some() || options.agent_planning => None,
            None => {
                let prompt = PromptInput {
                    left_out: crate::owner::experiment::left_out(account, experiment.as_ref()),
                    ..PromptInput::for_new(def, &goal, account, &memories.memories, &[], now)
                };
                let request = DraftRequest {
                    context: input.context.clone(),
                    ..ai::draft_request(account, def, &goal, member.as_ref().and_then(|m| m.first_name.clone()), 0, &prompt)
                };
                let to = MessageFor {
                    member: Some(&input.member_id),
                    first_name: request.member_first_name.clone(),
                    plan_id: None,
                    facts: member.as_ref(),
                };
                let request = self.with_message(account, request, to, now).await?;
                message_template.clone_from(&request.message.template_version);
                match self.ai_call(account, None, now).await? {
                    AiGate::Allowed(permit) => match permit.draft(&request).await {
                        Ok(drafted) => Some(drafted.draft),
                        Err(e) => {
                            tracing::warn!(error = %e, "no first draft; the owner will see an empty draft");
                            None
                        }
                    },
                    gate => {
                        tracing::warn!(?gate, "no first draft; the owner will see an empty draft");
                        None
                    }
                }
            }
        };
        let drafted_by_agent = !owner_draft && draft.is_some();
        // A subtask waits for its parent's approval, and sends within the parent's ceiling.
        let (status, gate_reason) = match &options.parent {
            Some(link) if link.parent_pending_review => (TaskStatus::PendingReview, Reason::ParentNotApproved.into()),
            _ => (status, gate_reason),
        };
        let plan = match options.mode {
            TaskMode::Plan => Some(
                self.plan(
                    account,
                    def,
                    &goal,
                    member.as_ref(),
                    draft.as_ref(),
                    confidence,
                    &memories.memories,
                    now,
                    None,
                )
                .await,
            ),
            _ => None,
        };
        let message_template = message_template.filter(|_| draft.is_some());
        let mut task = Task {
            id: options.parent.as_ref().map_or_else(|| TaskId::generate(now), |link| link.child),
            account_id: account.id,
            task_type,
            status,
            priority: prioritised.priority,
            member: MemberRef {
                id: input.member_id.clone(),
                email: member.as_ref().and_then(|m| m.email.clone()),
                name: member.as_ref().and_then(|m| m.display_name()),
                plan_id: member.as_ref().and_then(|m| m.membership.plan_id()).map(str::to_owned),
                monthly_value: input.gate.monthly_value.or(member.as_ref().and_then(|m| m.monthly_value)),
            },
            goal,
            confidence,
            draft,
            thread_subject: None,
            thread: Vec::new(),
            budget: Budget {
                messages_used: 0,
                messages_max: match (&options.parent, options.batch_of) {
                    (Some(link), _) => def.budget.max_messages.min(link.messages_max),
                    // A batch parent's ceiling is each member's budget, for every member.
                    (None, Some(members)) => def.budget.max_messages.saturating_mul(members),
                    (None, None) => def.budget.max_messages,
                },
                turns_used: 0,
                turns_max: def.budget.max_turns,
                expires_at: now + SignedDuration::from_hours(24 * i64::from(def.budget.max_days)),
            },
            // The first draft's call, when the agent wrote it.
            ai_calls: u32::from(drafted_by_agent),
            memories_used: if drafted_by_agent { memories.used.clone() } else { Vec::new() },
            touch: 0,
            next_action_at: (status == TaskStatus::Ready).then_some(now),
            attempts: 0,
            outcome: None,
            outcome_reason: None,
            attributed_value: None,
            parent_id: options.parent.as_ref().map(|link| link.parent),
            requirement: options.parent.as_ref().map(|link| link.requirement),
            subtasks: Vec::new(),
            batch: options.batch_of.is_some(),
            actions: options.actions.clone(),
            approved_at: None,
            trigger_type: input.trigger_type,
            trigger_event_id: input.trigger_event_id.clone(),
            trigger_context: input.context.clone(),
            created_at: now,
            updated_at: now,
            execution_started_at: None,
            dormant_at: None,
            dormant_expires_at: None,
            resolved_at: None,
            deliverable: None,
            controls: TaskControls {
                mode: options.mode,
                plan,
                agent_planning: options.agent_planning,
                paused_at: None,
            },
            awaiting: None,
            answer: None,
            held_question: None,
            parting: None,
            snoozed_until: None,
            review_since: None,
            escalation: None,
            provisional: false,
            goal_at: None,
            attribution_until: None,
            value_source: None,
            owner_edited: false,
            reviewed_touch: None,
            goal_progress: None,
            feedback: None,
            original_draft: None,
            member_last_words: None,
            holdout,
            message_template,
            experiment,
            loops: Vec::new(),
            todo_id: None,
            version: 1,
        };
        let mut detail = format!("{} for {}", def.label, task.member.label());
        if held_out {
            // Due once, when its watch ends; a goal signal before then closes it at once.
            task.next_action_at = Some(crate::task::holdout::open_until(def, now));
            detail.push_str(&format!(
                "; held out (bucket {} of the {}% holdout): nothing is sent, the goal is watched until {}",
                holdout.map_or(0, |h| h.bucket),
                account.settings.holdout_percent,
                task.next_action_at.map_or_else(String::new, |t| t.to_string())
            ));
        }
        if let Some(arm) = experiment {
            detail.push_str(&format!("; {} version of experiment {}", arm.variant.as_str(), arm.experiment_id));
        }
        if task.status == TaskStatus::Ready {
            // Spec §29.3: a first touch goes in the morning hours.
            let (at, why) = crate::rails::window::first_touch_at(&account.settings, &task, now);
            task.next_action_at = Some(at);
            if let Some(why) = why {
                detail.push_str(&format!("; {why}"));
            }
        }
        if options.mode != TaskMode::Live {
            detail.push_str(&format!("; execution mode {}", options.mode.as_str()));
        }
        if ramp.phase != autonomy::RampPhase::Full {
            detail.push_str(&format!("; {} agent in its {} phase", def.agent, ramp.phase.as_str()));
        }
        if let Some(rule) = &prioritised.raised_by {
            detail.push_str(&format!("; priority {} by rule {rule}", task.priority.as_str()));
        }
        let log = created_by_gate(&task, gate_reason, Some(detail));
        let mut quota = CreationQuota::for_creation(
            limits::local_date(now, &account.settings.time_zone()),
            now,
            task.trigger_type,
            &task.member.id,
            ramp.max_tasks_per_day,
        );
        quota.once = options.once.clone();
        let mut written = self.store.create_task_within(&task, &log, &[], &quota).await;
        for _ in 0..3 {
            // A counter busy with another creation: the transaction changed nothing, try again.
            if !matches!(written, Err(StoreError::Conflict(Conflict::Version))) {
                break;
            }
            written = self.store.create_task_within(&task, &log, &[], &quota).await;
        }
        match written {
            Ok(()) => {
                self.notify_awaiting_review(&task, gate_reason).await;
                self.todo_for_new_task(&task, account).await;
                Ok(Created::New(task))
            }
            Err(StoreError::Conflict(c)) if quota.refusal(c).is_some() => {
                let refusal = quota.refusal(c).unwrap_or(Refusal {
                    limit: Limit::DailyTasks,
                    max: 0,
                });
                Err(refused(account, &task.member.id, &task.task_type, task.trigger_type, refusal))
            }
            // Lost a race with another creation for the same member and type.
            Err(StoreError::Conflict(Conflict::ActiveTask)) => {
                match self.existing_active(account.id, &input.member_id, &task.task_type).await? {
                    Some(existing) => Ok(Created::Existing(self.merge_duplicate(existing, &trigger).await?)),
                    None => Err(EngineError::StaleVersion),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A plan of what the task would do: one step per touch of its cadence, each
    /// with the agent's draft and its timing, for the owner to approve before anything runs.
    /// With the owner's `instructions` (planning again, `engine/day/plans/`), every touch is
    /// drafted anew with them in the draft's context.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn plan(
        &self,
        account: &Account,
        def: &TaskTypeDef,
        goal: &str,
        member: Option<&MemberFacts>,
        first: Option<&Draft>,
        confidence: u8,
        memories: &[BusinessMemory],
        now: Timestamp,
        instructions: Option<&str>,
    ) -> TaskPlan {
        let touches = (def.cadence.intervals.len() as u32).max(1).min(def.budget.max_messages);
        let mut steps = Vec::new();
        let mut ai_calls = 0;
        for touch in 0..touches {
            let draft = if touch == 0 && instructions.is_none() {
                first.cloned()
            } else {
                let prompt = PromptInput::for_new(def, goal, account, memories, &[], now);
                let mut request = ai::draft_request(account, def, goal, member.and_then(|m| m.first_name.clone()), touch, &prompt);
                if let Some(words) = instructions {
                    request.context = serde_json::json!({ "owner_instructions": words });
                }
                let to = MessageFor {
                    member: member.map(|m| &m.member_id),
                    first_name: request.member_first_name.clone(),
                    plan_id: None,
                    facts: member,
                };
                // A plan is only words: without its template's inputs it still shows the step.
                let request = match self.with_message(account, request.clone(), to, now).await {
                    Ok(with) => with,
                    Err(_) => request,
                };
                // A plan is only words: with no AI call left it shows the step without a draft.
                match self.ai_call(account, Some(ai_calls), now).await {
                    Ok(AiGate::Allowed(permit)) => {
                        ai_calls += 1;
                        permit.draft(&request).await.ok().map(|d| d.draft)
                    }
                    _ => None,
                }
            };
            let mails = def.category == Category::Communication;
            steps.push(PlanStep {
                step_number: touch + 1,
                action_type: if mails { "send_email" } else { "notify_owner" }.into(),
                description: format!(
                    "{} ({})",
                    if touch == 0 { "First message" } else { "Follow-up" },
                    def.cadence.tone(touch)
                ),
                draft_content: draft.map(|d| match d.subject.trim() {
                    "" => d.body,
                    subject => format!("Subject: {subject}\n\n{}", d.body),
                }),
                reasoning: format!("the {} cadence: touch {} of {touches}", def.cadence.name, touch + 1),
                timing: autonomy::touch_timing(def.cadence.intervals, touch),
                requires_approval: true,
                confidence,
            });
        }
        let context = member.map_or_else(
            || "no facts known about the member yet".to_owned(),
            |m| {
                format!(
                    "{} (status {}, {} check-ins, payment {})",
                    m.display_name().unwrap_or_else(|| m.member_id.to_string()),
                    m.status
                        .and_then(|s| serde_json::to_value(s).ok())
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_else(|| "unknown".into()),
                    m.checkin_count,
                    if m.payment_failing { "failing" } else { "current" }
                )
            },
        );
        TaskPlan {
            goal: goal.to_owned(),
            member_context: context,
            steps,
            alternative_approach: Some(
                "if the member replies, the conversation takes over from the plan; a negative reply goes to you".into(),
            ),
            estimated_budget: PlanBudget {
                messages: touches,
                days: def.budget.max_days,
                ai_calls,
            },
            created_at: now,
            approved_at: None,
            feedback: Vec::new(),
        }
    }

    /// A trigger for a member and type that already has an open task: its context
    /// is added to the open task's (`merged_triggers`, logged) rather than dropped; the same
    /// event delivered again adds nothing. A trigger without context changes nothing.
    async fn merge_duplicate(&self, existing: Task, input: &Trigger) -> Result<Task, EngineError> {
        // No context, or the very event that made the task delivered again: nothing to add.
        if input.context.is_null() || (input.trigger_event_id.is_some() && input.trigger_event_id == existing.trigger_event_id) {
            return Ok(existing);
        }
        let mut task = existing;
        for _ in 0..4 {
            let now = self.clock.now();
            let Some(context) = merged_context(&task.trigger_context, input, now) else {
                return Ok(task);
            };
            let detail = format!(
                "a {} trigger{} for the same member and type: its context is added to this task",
                serde_json::to_value(input.trigger_type)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                input.trigger_event_id.as_deref().map(|id| format!(" ({id})")).unwrap_or_default()
            );
            let (mut next, log) = crate::task::transition::record(&task, now, Why::new(Reason::DuplicateContextMerged).detail(detail));
            next.trigger_context = context;
            match self.store.commit(&TaskCommit::new(next.clone(), log)).await {
                Ok(()) => {
                    tracing::info!(task = %next.id, "a duplicate trigger's context merged into the open task");
                    return Ok(next);
                }
                Err(StoreError::Conflict(Conflict::Version)) => match self.store.get_task(task.account_id, task.id).await? {
                    Some(t) if t.is_active() => task = t,
                    _ => return Err(EngineError::StaleVersion),
                },
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    async fn existing_active(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<Task>, EngineError> {
        let Some(id) = self.store.active_task(account, member, task_type).await? else {
            return Ok(None);
        };
        Ok(self.store.get_task(account, id).await?.filter(Task::is_active))
    }

    pub async fn task(&self, account: AccountId, id: TaskId) -> Result<TaskHistory, EngineError> {
        self.store
            .task_history(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })
    }

    pub async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), EngineError> {
        Ok(self.store.list_tasks(account, query).await?)
    }

    /// The review queue in [`crate::task::review_order`]: `limit` of the tasks waiting for
    /// review from `offset`, and the next page's offset. The queue is read whole, up to
    /// [`REVIEW_QUEUE_READ`] tasks (review items expire within days, so it stays short; past
    /// the bound the oldest are listed in the order they were stored).
    pub async fn review_queue(&self, account: AccountId, offset: usize, limit: usize) -> Result<(Vec<Task>, Option<usize>), EngineError> {
        let mut queue = Vec::new();
        let mut query = TaskQuery::in_status(TaskStatus::PendingReview, 100);
        loop {
            let (page, next) = self.store.list_tasks(account, &query).await?;
            queue.extend(page);
            match next {
                Some(cursor) if queue.len() < REVIEW_QUEUE_READ => query.cursor = Some(cursor),
                _ => break,
            }
        }
        queue.sort_by(crate::task::review_order);
        let next = (offset + limit < queue.len()).then_some(offset + limit);
        Ok((queue.into_iter().skip(offset).take(limit).collect(), next))
    }

    pub(super) async fn current(&self, account: AccountId, id: TaskId) -> Result<Task, EngineError> {
        self.store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })
    }
}

/// What a creation's trigger said, kept for merging into an open task of the same member and
/// type.
struct Trigger {
    trigger_type: TriggerType,
    trigger_event_id: Option<String>,
    context: serde_json::Value,
}

impl Trigger {
    fn of(input: &NewTask) -> Self {
        Self {
            trigger_type: input.trigger_type,
            trigger_event_id: input.trigger_event_id.clone(),
            context: input.context.clone(),
        }
    }
}

/// The most later triggers a task keeps the context of.
const MAX_MERGED_TRIGGERS: usize = 10;

/// `context` with a later trigger's context added under `merged_triggers`; `None` when there
/// is nothing to add (the same event again, or the list is full).
fn merged_context(context: &serde_json::Value, input: &Trigger, now: Timestamp) -> Option<serde_json::Value> {
    let mut merged = match context {
        serde_json::Value::Object(map) => map.clone(),
        serde_json::Value::Null => serde_json::Map::new(),
        other => serde_json::Map::from_iter([("original".to_owned(), other.clone())]),
    };
    let list = merged
        .entry("merged_triggers")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()))
        .as_array_mut()?;
    let event = input.trigger_event_id.as_deref();
    let seen = list
        .iter()
        .any(|m| event.is_some() && m.get("trigger_event_id").and_then(|v| v.as_str()) == event);
    if seen || list.len() >= MAX_MERGED_TRIGGERS {
        return None;
    }
    list.push(serde_json::json!({
        "at": now,
        "trigger_type": input.trigger_type,
        "trigger_event_id": event,
        "context": input.context,
    }));
    Some(serde_json::Value::Object(merged))
}

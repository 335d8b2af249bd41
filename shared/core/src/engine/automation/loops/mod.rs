//! Open loops, carried out (see [`crate::task::open_loop`]): a signal meets every open loop of
//! its member it satisfies, in one pass; the deadline sweep (each tick) expires what is
//! overdue and carries out what the sweep owns (a no-show's follow-up, a trigger's delayed
//! task). Both resolve a loop with one conditional write, so the event and the sweep can
//! race: whichever is second finds the loop resolved and does nothing.

mod task_side;
mod todo_deadline;

use jiff::Timestamp;
use serde::Serialize;

use super::tasks::{Created, NewTask};
use super::{Engine, boxed};
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits::DUE_INDEX_SHARDS;
use crate::members::event::MemberStatus;
use crate::owner::account::Account;
use crate::rails::gate::GateContext;
use crate::task::TriggerType;
use crate::task::error::EngineError;
use crate::task::flood::Burst;
use crate::task::open_loop::{LoopOpens, LoopSignal, LoopStatus, OnDeadline, OpenLoop};

/// The most loops one sweep resolves (the rest wait for the next tick).
pub const SWEEP_MAX_LOOPS: usize = 200;

/// `GET /api/v1/loops`.
pub const LOOPS_PAGE_MAX: usize = 200;

/// What one deadline sweep did.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct LoopSweep {
    /// Loops this sweep expired.
    pub expired: usize,
    /// Tasks their deadlines opened.
    pub opened: Vec<TaskId>,
}

/// A loop as the owner API shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoopView {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo_id: Option<String>,
    pub member_id: MemberId,
    pub expects: &'static str,
    pub deadline: Timestamp,
    pub on_deadline: &'static str,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

impl From<&OpenLoop> for LoopView {
    fn from(l: &OpenLoop) -> Self {
        Self {
            id: l.id.to_string(),
            task_id: l.task_id,
            todo_id: l.todo_id.clone(),
            member_id: l.member_id.clone(),
            expects: l.expects.as_str(),
            deadline: l.deadline,
            on_deadline: l.on_deadline.as_str(),
            status: l.status.as_str(),
            met_by: l.met_by.clone(),
            resolved_at: l.resolved_at,
            created_at: l.created_at,
        }
    }
}

impl Engine {
    /// Register loops that no task commit carries (a booking's, a trigger's delay, a to-do's).
    pub async fn register_loops(&self, loops: &[OpenLoop]) -> Result<(), EngineError> {
        if loops.is_empty() {
            return Ok(());
        }
        self.store.put_loops(loops).await?;
        Ok(())
    }

    /// Meet every open loop of `member` that `signal` satisfies, in one pass: the loops this
    /// call met (a loop something else resolved first is left out).
    pub async fn meet_loops(&self, account: AccountId, member: &MemberId, signal: LoopSignal<'_>) -> Result<Vec<OpenLoop>, EngineError> {
        let now = self.clock.now();
        let mut met = Vec::new();
        for open in self.store.member_open_loops(account, member).await? {
            let Some(by) = open.met_by_signal(signal) else {
                continue;
            };
            let resolved = OpenLoop {
                status: LoopStatus::Met,
                met_by: Some(by),
                resolved_at: Some(now),
                ..open
            };
            if self.resolve_any_loop(&resolved).await? {
                tracing::info!(%account, loop_id = %resolved.id, expects = resolved.expects.as_str(), met_by = ?resolved.met_by, "open loop met");
                met.push(resolved);
            }
        }
        Ok(met)
    }

    /// A staff to-do was done: meet the loop it registered ([`OpenLoop::for_todo`]). The
    /// owner's-day to-dos call this when one is marked done.
    pub async fn todo_done(&self, account: AccountId, member: &MemberId, todo: &str) -> Result<Vec<OpenLoop>, EngineError> {
        self.meet_loops(account, member, LoopSignal::TodoDone { todo }).await
    }

    /// The deadline sweep: every overdue open loop, across the shards, expired once and —
    /// where the sweep owns the consequence — carried out.
    pub async fn sweep_loops(&self) -> Result<LoopSweep, EngineError> {
        boxed(async move {
            let now = self.clock.now();
            let mut report = LoopSweep::default();
            let pages =
                futures::future::try_join_all((0..DUE_INDEX_SHARDS).map(|shard| self.store.overdue_loops(shard, now, SWEEP_MAX_LOOPS))).await?;
            let mut overdue: Vec<OpenLoop> = pages.into_iter().flatten().collect();
            overdue.sort_by_key(|l| (l.deadline, l.id));
            overdue.truncate(SWEEP_MAX_LOOPS);
            let burst = Burst::analysis_run();
            for open in overdue {
                if !open.is_overdue(now) || crate::task::task_loops::left_to_step(&open, now) {
                    continue;
                }
                let expired = OpenLoop {
                    status: LoopStatus::Expired,
                    resolved_at: Some(now),
                    ..open
                };
                // A task's loop is expired with its task (its step then does what the loop said).
                match self.resolve_any_loop(&expired).await {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        tracing::warn!(account = %expired.account_id, loop_id = %expired.id, error = %e, "an overdue loop was left for the next sweep");
                        continue;
                    }
                }
                report.expired += 1;
                tracing::info!(account = %expired.account_id, loop_id = %expired.id, expects = expired.expects.as_str(), on_deadline = expired.on_deadline.as_str(), "open loop expired");
                if crate::task::task_loops::is_tasks_own(&expired) || !expired.on_deadline.carried_by_sweep() {
                    continue;
                }
                // One loop's failure is logged and the sweep goes on: the loop stays expired
                // (a second try could open the task twice), and the log says why nothing opened.
                match self.carry_out_deadline(&expired, &burst).await {
                    Ok(Some(task)) => report.opened.push(task),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::error!(account = %expired.account_id, loop_id = %expired.id, error = %e, "an expired loop's consequence failed")
                    }
                }
            }
            Ok(report)
        })
        .await
    }

    async fn carry_out_deadline(&self, expired: &OpenLoop, burst: &Burst) -> Result<Option<TaskId>, EngineError> {
        if expired.on_deadline == OnDeadline::Escalate {
            self.escalate_overdue_todo(expired).await?;
            return Ok(None);
        }
        let Some(opens) = &expired.opens else {
            return Ok(None);
        };
        let Some(account) = self.store.get_account(expired.account_id).await? else {
            return Ok(None);
        };
        match expired.on_deadline {
            OnDeadline::NoShowFollowup => {
                let why = format!("the booking's deadline {} passed without a check-in", expired.deadline);
                self.open_no_show_followup(&account, &expired.member_id, opens, &why, burst).await
            }
            OnDeadline::OpenTask => {
                // A trigger switched off or removed while its delay ran opens nothing.
                let book = self.store.trigger_book(account.id).await?;
                let on = opens.trigger_id.as_deref().is_none_or(|id| book.row(id).is_some_and(|t| t.enabled));
                if !on {
                    tracing::info!(account = %account.id, trigger = ?opens.trigger_id, "a delayed trigger's task not opened: the trigger is off");
                    return Ok(None);
                }
                self.open_from_loop(&account, &expired.member_id, opens, burst).await
            }
            OnDeadline::FollowUp | OnDeadline::Close | OnDeadline::Escalate => Ok(None),
        }
    }

    /// The lead follow-up for a no-show, through the one creation path: only for a member who
    /// is still a lead.
    pub(crate) async fn open_no_show_followup(
        &self,
        account: &Account,
        member: &MemberId,
        opens: &LoopOpens,
        why: &str,
        burst: &Burst,
    ) -> Result<Option<TaskId>, EngineError> {
        let facts = self.store.get_member(account.id, member).await?.map(|(f, _)| f);
        if facts.as_ref().and_then(|f| f.status) != Some(MemberStatus::Lead) {
            tracing::info!(account = %account.id, %member, "no no-show follow-up: the member is no longer a lead");
            return Ok(None);
        }
        if !self.builtin_trigger_on(account.id, "trial_no_show").await? {
            tracing::info!(account = %account.id, %member, "no no-show follow-up: the owner switched that trigger off");
            return Ok(None);
        }
        let mut context = opens.context.clone();
        if let Some(map) = context.as_object_mut() {
            map.insert("why".into(), serde_json::Value::String(why.to_owned()));
        }
        let opened = self
            .open_from_loop(account, member, &LoopOpens { context, ..opens.clone() }, burst)
            .await?;
        if let Some(task) = opened {
            self.builtin_fired(account.id, "trial_no_show", member, &opens.event_id, task).await;
        }
        Ok(opened)
    }

    /// Open the task a loop names, through the one creation path (flood limits, suppression
    /// and holdout checks included): its origin is the event that caused it.
    async fn open_from_loop(
        &self,
        account: &Account,
        member: &MemberId,
        opens: &LoopOpens,
        burst: &Burst,
    ) -> Result<Option<TaskId>, EngineError> {
        let facts = self.store.get_member(account.id, member).await?.map(|(f, _)| f);
        let now = self.clock.now();
        let input = NewTask {
            task_type: opens.task_type.clone(),
            member_id: member.clone(),
            goal: opens.goal.clone(),
            confidence: Some(75),
            draft: None,
            trigger_type: TriggerType::Webhook,
            trigger_event_id: Some(opens.event_id.clone()),
            gate: GateContext {
                tenure_days: facts.as_ref().and_then(|f| f.tenure_days(now)),
                monthly_value: facts.as_ref().and_then(|f| f.monthly_value),
                cancellation_reason: None,
            },
            context: opens.context.clone(),
        };
        match self.create_task_in(account, input, burst).await {
            Ok(Created::New(task)) => Ok(Some(task.id)),
            Ok(Created::Existing(_)) | Err(EngineError::Limited(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `GET /api/v1/loops`: the account's loops, newest first.
    pub async fn list_loops(
        &self,
        account: AccountId,
        status: Option<LoopStatus>,
        member: Option<&MemberId>,
        limit: usize,
    ) -> Result<Vec<LoopView>, EngineError> {
        let loops = self
            .store
            .list_loops(account, status, member, limit.clamp(1, LOOPS_PAGE_MAX))
            .await?;
        Ok(loops.iter().map(LoopView::from).collect())
    }

    /// A task's loops (its step and its page read them), oldest first.
    pub async fn task_loops(&self, account: AccountId, task: &crate::task::Task) -> Result<Vec<OpenLoop>, EngineError> {
        let mut loops: Vec<OpenLoop> = self
            .store
            .list_loops(account, None, Some(&task.member.id), LOOPS_PAGE_MAX)
            .await?
            .into_iter()
            .filter(|l| l.task_id == Some(task.id))
            .collect();
        loops.sort_by_key(|l| l.id);
        Ok(loops)
    }
}

impl Engine {
    /// What a member event does to loops, after its facts are projected: it meets every open
    /// loop of the member it satisfies; a lead's booking registers the trial's loop (once: not
    /// for a redelivery); a no-show ends the trial's loop and opens the lead follow-up. The
    /// loops met are returned.
    pub(crate) async fn loops_on_event(
        &self,
        account: &Account,
        facts: &crate::members::member::MemberFacts,
        envelope: &crate::members::event::SignalEnvelope,
        fresh: bool,
        burst: &Burst,
    ) -> Result<Vec<OpenLoop>, EngineError> {
        use crate::members::event::MemberEvent;
        use crate::task::open_loop::{Expects, trial_loop};
        let event = &envelope.event.event;
        let member = &facts.member_id;
        let id = envelope.webhook_id.as_str();
        let met = self.meet_loops(account.id, member, LoopSignal::Event { event, id }).await?;
        let now = self.clock.now();
        match event {
            MemberEvent::TrialBooked { booked_for, .. } if fresh && facts.status == Some(MemberStatus::Lead) => {
                self.register_loops(&[trial_loop(account.id, member.clone(), *booked_for, id, now)])
                    .await?;
            }
            MemberEvent::NoShow { at, .. } if facts.status == Some(MemberStatus::Lead) => {
                // The trial's loop ends here, not at its deadline: whichever resolves it opens
                // the follow-up, once. With no loop (a booking from before), the no-show opens it.
                let trials: Vec<OpenLoop> = self
                    .store
                    .member_open_loops(account.id, member)
                    .await?
                    .into_iter()
                    .filter(|l| l.expects == Expects::TrialAttended)
                    .collect();
                let mut opens = None;
                for open in &trials {
                    let expired = OpenLoop {
                        status: LoopStatus::Expired,
                        met_by: Some(format!("no_show:{id}")),
                        resolved_at: Some(now),
                        ..open.clone()
                    };
                    if self.store.resolve_loop(&expired).await? {
                        opens = opens.or(expired.opens.clone());
                    }
                }
                let opens = match (opens, trials.is_empty()) {
                    (Some(opens), _) => Some(opens),
                    (None, true) if fresh => trial_loop(account.id, member.clone(), *at, id, now).opens,
                    _ => None,
                };
                if let Some(opens) = opens {
                    let why = format!("PushPress reported a no-show at {at}");
                    self.open_no_show_followup(
                        account,
                        member,
                        &LoopOpens {
                            event_id: id.to_owned(),
                            ..opens
                        },
                        &why,
                        burst,
                    )
                    .await?;
                }
            }
            _ => {}
        }
        Ok(met)
    }
}

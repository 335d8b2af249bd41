//! Outcomes from signals: completing open and dormant tasks
//! when the member's facts show their goal, the hourly attribution run over the attribution
//! index, and the provisional close the conversation loop uses for verbal commitments.

use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;

use super::work::StepOutcome;
use super::{Engine, boxed};
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, TaskId};
use crate::kernel::limits::{ATTRIBUTION_PAGE, DUE_INDEX_SHARDS};
use crate::members::event::MemberEvent;
use crate::members::member::MemberFacts;
use crate::owner::account::{Account, Settings};
use crate::owner::alert::Alert;
use crate::task::attribution::{self, Change, Price};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::outcome::{self, GoalReached};
use crate::task::reason::Reason;
use crate::task::task_type::{self, REGISTRY};
use crate::task::transition::{Why, record, transition};
use crate::task::{ConversationMessage, Task, TaskStatus};

/// What one attribution run did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AttributionReport {
    /// Closed tasks read from the attribution index (everything inside a window).
    pub watched: usize,
    pub valued: usize,
    pub confirmed: usize,
    pub downgraded: usize,
    pub late_wins: usize,
    /// Goals seen after a close with nothing to wait for, recorded for the lift alone.
    pub goals_seen: usize,
    /// Left the index: their window closed with nothing to change.
    pub released: usize,
    /// Changed by someone else meanwhile; the next run looks again.
    pub conflicts: usize,
    /// Tasks whose change failed (an account's bad data): skipped, alerted, the run goes on.
    pub failed: usize,
}

/// How many times a decision is re-read and re-made after losing a race.
const MAX_RACES: usize = 4;

/// The goal signals an event can show (the rest of the facts did not change).
fn signals_shown(event: &MemberEvent) -> &'static [&'static str] {
    match event {
        MemberEvent::CheckinCreated { .. } => &["checkin", "reactivation", "checkin_count_"],
        MemberEvent::StatusChanged { .. } | MemberEvent::Customer { .. } | MemberEvent::Enrollment { .. } => &["reactivation"],
        MemberEvent::PaymentSucceeded { .. } => &["payment_succeeded"],
        MemberEvent::TrialBooked { .. } => &["trial_booked"],
        MemberEvent::MemberCreated { .. }
        | MemberEvent::PaymentFailed { .. }
        | MemberEvent::EnrollmentDeleted { .. }
        | MemberEvent::NoShow { .. } => &[],
    }
}

impl Engine {
    /// A member event arrived: close at once each of the member's dormant tasks, and each
    /// waiting task that has written to them, whose goal the facts now show (spec §16.1,
    /// "external event confirms goal"). One guard read per task type the event can complete.
    pub(crate) async fn close_reached_goals(
        &self,
        account: &Account,
        facts: &MemberFacts,
        event: &MemberEvent,
    ) -> Result<Vec<TaskId>, EngineError> {
        let shown = signals_shown(event);
        let mut closed = Vec::new();
        for def in REGISTRY {
            let completes = outcome::completing_signals(def.key).any(|s| shown.iter().any(|p| s.signal.starts_with(p)));
            if !completes {
                continue;
            }
            let Some(id) = self.store.active_task(account.id, &facts.member_id, def.key).await? else {
                continue;
            };
            for _ in 0..MAX_RACES {
                let Some(task) = self.store.get_task(account.id, id).await? else {
                    break;
                };
                let open = matches!(task.status, TaskStatus::Dormant | TaskStatus::HeldOut)
                    || (task.status == TaskStatus::Waiting && task.touch > 0);
                let now = self.clock.now();
                let Some(reached) = open.then(|| outcome::goal_reached(&task, facts, now)).flatten() else {
                    break;
                };
                match self.complete_on_goal(task, &reached, account, now, "a member event").await {
                    Ok(_) => {
                        closed.push(id);
                        break;
                    }
                    Err(EngineError::StaleVersion) => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(closed)
    }

    /// The dormant check's look at the facts: `Some` if the task's goal
    /// shows and the task was completed.
    pub(crate) async fn dormant_goal(&self, task: &Task, now: Timestamp) -> Result<Option<StepOutcome>, EngineError> {
        let Some((facts, _)) = self.store.get_member(task.account_id, &task.member.id).await? else {
            return Ok(None);
        };
        let Some(reached) = outcome::goal_reached(task, &facts, now) else {
            return Ok(None);
        };
        let account = self.account(task.account_id).await?;
        let reason = self
            .complete_on_goal(task.clone(), &reached, &account, now, "the dormant check")
            .await?;
        Ok(Some(StepOutcome::Moved {
            to: TaskStatus::Completed,
            reason,
        }))
    }

    /// Complete `task` with the outcome its goal signal gives, valued at once.
    pub(in crate::engine) async fn complete_on_goal(
        &self,
        task: Task,
        reached: &GoalReached,
        account: &Account,
        now: Timestamp,
        seen_by: &str,
    ) -> Result<Reason, EngineError> {
        let reason = reached.seen.reason;
        let why = Why::new(reason).outcome(reached.outcome).detail(format!(
            "{} (seen by {seen_by}); closes as {}",
            reached.seen.detail, reached.outcome
        ));
        let (mut next, log) = transition(&task, TaskStatus::Completed, now, why)?;
        next.goal_at = Some(reached.seen.at);
        let def = task_type::definition(&next.task_type);
        let price = member_price(&account.settings, &next);
        next.attributed_value = attribution::value_of(def, reached.outcome, price.monthly);
        next.value_source = next.attributed_value.map(|_| price.source);
        if next.is_held_out() {
            // Nothing was sent: the member came back on their own, and Openloop claims none of it.
            next.attributed_value = Some(0.0);
            next.value_source = None;
        }
        next.attribution_until = attribution::watch_until(&next);
        // Its loops still open close with it, in the same commit.
        let mut commit = TaskCommit::new(next.clone(), log).webhooks_for(Some(account));
        commit.task.loops.retain(|n| n.status == crate::task::open_loop::LoopStatus::Open);
        commit.loops = crate::task::task_loops::on_move(&mut commit.task, TaskStatus::Completed, now);
        let next = commit.task.clone();
        match self.store.commit(&commit).await {
            Ok(()) => {}
            Err(StoreError::Conflict(Conflict::Version)) => return Err(EngineError::StaleVersion),
            Err(e) => return Err(e.into()),
        }
        tracing::info!(task = %next.id, signal = reached.seen.signal, outcome = reached.outcome, "completed on its goal signal");
        self.publish_closed(&commit).await;
        self.tell_win(&next, reached.outcome).await;
        Ok(reason)
    }

    /// Close a task on the member's words (a verbal commitment, spec §16.2): `completed` with
    /// `outcome`, marked provisional and valued at the outcome's multiplier; the hourly
    /// attribution run confirms it when the goal's signal shows within the type's window, or
    /// downgrades it (to `verbal_only` where the type has it, with no value) when the window
    /// passes. `messages` join the conversation in the same commit. `Conflict` comes back as
    /// [`EngineError::StaleVersion`]: re-read and decide again.
    pub async fn close_provisionally(
        &self,
        task: &Task,
        outcome: &str,
        why: Why,
        messages: Vec<ConversationMessage>,
    ) -> Result<Task, EngineError> {
        let now = self.clock.now();
        let account = self.account(task.account_id).await?;
        let (mut next, log) = transition(task, TaskStatus::Completed, now, why.outcome(outcome).provisional())?;
        let def = task_type::definition(&next.task_type);
        let price = member_price(&account.settings, &next);
        next.attributed_value = Some(attribution::value_of(def, outcome, price.monthly).unwrap_or(0.0));
        next.value_source = Some(price.source);
        next.attribution_until = attribution::watch_until(&next);
        let mut commit = TaskCommit::new(next.clone(), log).webhooks_for(Some(&account));
        commit.expected_version = task.version;
        commit.messages = messages;
        match self.store.commit(&commit).await {
            Ok(()) => {}
            Err(StoreError::Conflict(Conflict::Version)) => return Err(EngineError::StaleVersion),
            Err(e) => return Err(e.into()),
        }
        self.publish_closed(&commit).await;
        Ok(next)
    }

    /// The attribution run (hourly, spec §9): every closed task in the attribution index is
    /// valued, confirmed, downgraded, won late or released, each change logged with its
    /// reason. Reads the index, the member's facts for tasks waiting on a signal, and each
    /// account once: its cost follows the tasks inside a window, not the tasks stored.
    pub async fn attribute(&self) -> Result<AttributionReport, EngineError> {
        boxed(async move {
            let mut report = AttributionReport::default();
            if self.store.system_config().await?.global_pause {
                return Ok(report);
            }
            let mut settings: HashMap<AccountId, Option<Settings>> = HashMap::new();
            // An account whose data fails is alerted once a run, however many of its tasks fail.
            let mut failed_accounts: std::collections::HashSet<AccountId> = std::collections::HashSet::new();
            // Every shard's first page at once (an idle run is these reads alone), then each
            // shard's tasks and further pages in turn.
            let first_pages = futures::future::try_join_all(
                (0..DUE_INDEX_SHARDS).map(|shard| self.store.attribution_watch(shard, ATTRIBUTION_PAGE, None)),
            )
            .await?;
            for (shard, (mut tasks, mut next)) in (0..DUE_INDEX_SHARDS).zip(first_pages) {
                loop {
                    for task in tasks {
                        report.watched += 1;
                        let account = task.account_id;
                        // One account's bad data never stops the others' attribution.
                        if let Err(e) = self.attribute_one(task, &mut settings, &mut report).await {
                            report.failed += 1;
                            if failed_accounts.insert(account) {
                                self.raise(Alert::account_run_failed(account, "attribution", &e.to_string(), self.clock.now()))
                                    .await;
                            }
                        }
                    }
                    let Some(cursor) = next else { break };
                    (tasks, next) = self.store.attribution_watch(shard, ATTRIBUTION_PAGE, Some(cursor)).await?;
                }
            }
            Ok(report)
        })
        .await
    }

    async fn attribute_one(
        &self,
        task: Task,
        settings: &mut HashMap<AccountId, Option<Settings>>,
        report: &mut AttributionReport,
    ) -> Result<(), EngineError> {
        if let std::collections::hash_map::Entry::Vacant(slot) = settings.entry(task.account_id) {
            slot.insert(self.store.get_account(task.account_id).await?.map(|a| a.settings));
        }
        let Some(Some(account_settings)) = settings.get(&task.account_id) else {
            return Ok(());
        };
        let price = member_price(account_settings, &task);
        let mut task = task;
        for _ in 0..MAX_RACES {
            let now = self.clock.now();
            let waits_for_signal = task.provisional || task.status == TaskStatus::Cancelled;
            let facts = if waits_for_signal {
                self.store.get_member(task.account_id, &task.member.id).await?.map(|(f, _)| f)
            } else {
                None
            };
            let Some(change) = attribution::decide(&task, facts.as_ref(), price, now) else {
                return Ok(());
            };
            let (changed, why) = change.apply(&task, price);
            let (next, log) = record(&changed, now, why);
            let mut commit = TaskCommit::new(next.clone(), log);
            commit.expected_version = task.version;
            match self.store.commit(&commit).await {
                Ok(()) => {
                    tracing::info!(task = %next.id, ?change, "attribution");
                    // A commitment kept and a win after the close are good news too.
                    match &change {
                        Change::LateWin { reached, .. } | Change::Confirmed { reached, .. } => {
                            self.tell_win(&next, reached.outcome).await;
                        }
                        _ => {}
                    }
                    match change {
                        Change::Valued { .. } => report.valued += 1,
                        Change::Confirmed { .. } => report.confirmed += 1,
                        Change::Downgraded { .. } => report.downgraded += 1,
                        Change::LateWin { .. } => report.late_wins += 1,
                        Change::GoalSeen { .. } => report.goals_seen += 1,
                        Change::Released => report.released += 1,
                    }
                    return Ok(());
                }
                Err(StoreError::Conflict(Conflict::Version)) => {
                    // The index copy was stale: read the task itself and decide again.
                    match self.store.get_task(task.account_id, task.id).await? {
                        Some(current) => task = current,
                        None => return Ok(()),
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        report.conflicts += 1;
        Ok(())
    }
}

/// What a task's outcome is reckoned at: a recovered payment's amount when its trigger said
/// it, else the owner's price for the member's plan as the task knew it, else the member's own
/// value, else the account's average.
pub(crate) fn member_price(settings: &Settings, task: &Task) -> Price {
    attribution::task_price(task, settings.price(task.member.plan_id.as_deref(), task.member.monthly_value))
}

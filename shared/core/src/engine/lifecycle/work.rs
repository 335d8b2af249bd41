//! The workers' step (execute, followup, dormant): load → decide → carry out. The rules are
//! [`crate::rails::step`]; here the step reads what they ask for, one input at a time, and does what
//! they decide — a deferral, a move, a reset, the reading of an awaited message, a category's
//! own step, or the claim and send of a touch (`send.rs`).
//!
//! A step commits over the version of the task it read; one that loses that race reads again
//! and decides again, a few times.

use jiff::Timestamp;

use super::ai;
use super::freshness::Fresh;
use super::replies::Read;
use super::{Engine, boxed};
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::limits::{EXECUTION_LEASE, PARTING_NOTE_WAITS_AT_MOST};
use crate::ports::CommitExtras;
use crate::rails::anomaly::Anomaly;
use crate::rails::send_gate::SendSnapshot;
use crate::rails::step::{self, Input, Skip, Step, StepDecision, StepInput, WithoutMail, Worker};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::outcome::{self, GoalReached, SignalSeen};
use crate::task::reason::Reason;
use crate::task::task_loops;
use crate::task::task_type;
use crate::task::transition::{Why, start_handling, transition};
use crate::task::work::WorkItem;
use crate::task::{ConversationMessage, Task, TaskStatus};

/// What a step did, for logs and tests.
#[derive(Clone, Debug, PartialEq)]
pub enum StepOutcome {
    Sent {
        touch: u32,
    },
    Deferred {
        until: Timestamp,
        reason: Reason,
    },
    Moved {
        to: TaskStatus,
        reason: Reason,
    },
    /// Nothing to do (not due, already handled, paused…).
    Skipped(String),
}

/// How many times a step re-reads and re-decides after losing a race.
pub(in crate::engine) const MAX_RACES: usize = 4;

impl Engine {
    /// The execute worker: the first touch of a ready task.
    pub async fn execute(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        boxed(self.step(item, Worker::Execute)).await
    }

    /// The followup worker: a due follow-up, a deferred first touch, or exhaustion.
    pub async fn follow_up(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        boxed(self.step(item, Worker::Followup)).await
    }

    async fn step(&self, item: &WorkItem, worker: Worker) -> Result<StepOutcome, EngineError> {
        for _ in 0..MAX_RACES {
            match self.try_step(item, worker).await {
                Err(EngineError::StaleVersion) => continue,
                other => return other,
            }
        }
        Ok(StepOutcome::Skipped("lost_every_race".into()))
    }

    /// Read what the step's rules ask for until they decide, then carry the decision out.
    async fn try_step(&self, item: &WorkItem, worker: Worker) -> Result<StepOutcome, EngineError> {
        let now = self.clock.now();
        // A follow-up reads the task with its conversation (the reply count, an awaited
        // message) in one request; a first touch has written nothing yet.
        let (task, conversation) = match worker {
            Worker::Followup => match self.store.task_with_conversation(item.account_id, item.task_id).await? {
                Some((task, conversation)) => (Some(task), Some(conversation)),
                None => (None, None),
            },
            Worker::Execute => (self.store.get_task(item.account_id, item.task_id).await?, None),
        };
        let Some(task) = task else {
            return Ok(StepOutcome::Skipped("task_not_found".into()));
        };
        if task.controls.paused_at.is_some() {
            return Ok(StepOutcome::Skipped("paused".into()));
        }
        let mut seen = StepInput::new(worker, task, now);
        seen.conversation = conversation;
        loop {
            match step::decide(&seen) {
                Step::Needs(input) => {
                    if let Some(outcome) = self.read(&mut seen, input).await? {
                        return Ok(outcome);
                    }
                }
                Step::Decided(decision) => {
                    // The facts the step judged (refreshed by the connector, if any) are the
                    // ones the touch is written from.
                    if let (Some(snapshot), Some(Some(facts))) = (seen.snapshot.as_mut(), seen.facts.take()) {
                        snapshot.facts = Some(facts);
                    }
                    let task = seen.after_reading.unwrap_or(seen.task);
                    // The member's other tasks the step read go into the draft's prompt.
                    let member_tasks = seen.member_tasks.unwrap_or_default();
                    let conversation = seen.conversation.unwrap_or_default();
                    return self
                        .carry_out(task, seen.snapshot, &member_tasks, &conversation, decision, now)
                        .await;
                }
            }
        }
    }

    /// Read `input` into what the step has seen; or the step's outcome, when reading it ended
    /// the step (an awaited reply that closed the task, facts that could not be refreshed).
    async fn read(&self, seen: &mut StepInput, input: Input) -> Result<Option<StepOutcome>, EngineError> {
        let (task, now) = (&seen.task, seen.now);
        match input {
            Input::Snapshot => {
                let utc_date = now.to_zoned(jiff::tz::TimeZone::UTC).date();
                // A touch the agent will draft reads its template, the connection and the
                // day's AI calls in the same batch.
                let def = task_type::definition(&task.task_type);
                let (member, email) = (&task.member.id, task.member.email.as_ref());
                let snapshot = match step::touch_text(task, def) {
                    step::TouchText::FromAgent => {
                        let key = crate::conversation::messages::draft_key(def, task.touch, false);
                        let template = (task.task_type.as_str(), key.as_str());
                        self.store
                            .send_snapshot_for_draft(task.account_id, member, email, utc_date, template)
                            .await?
                    }
                    _ => self.store.send_snapshot(task.account_id, member, email, utc_date).await?,
                };
                seen.snapshot = Some(snapshot);
            }
            Input::Outbound => seen.outbound = Some(self.store.outbound(task.account_id, task.id).await?),
            Input::Conversation => seen.conversation = Some(self.conversation(task).await?),
            Input::Reading => {
                let account = account_of(seen.snapshot.as_ref())?;
                let conversation = seen.conversation.as_deref().unwrap_or_default();
                // Boxed: reading a reply (agent calls, escalation, notices) is the step's
                // largest branch; on the heap, every other step's future stays small.
                match self.read_awaiting(&account, task.clone(), conversation, now).await? {
                    Read::Done(outcome) => return Ok(Some(outcome)),
                    Read::Send(answered) => seen.after_reading = Some(*answered),
                }
            }
            Input::Facts => {
                // The connector, if any, refreshes the facts first; if it cannot, the touch
                // waits (spec §34).
                let account = account_of(seen.snapshot.as_ref())?;
                let stored = seen.snapshot.as_ref().and_then(|s| s.facts.clone());
                match self.fresh_facts(&account, seen.current(), stored, now).await? {
                    Fresh::Facts(facts) => seen.facts = Some(facts.map(|f| *f)),
                    Fresh::Defer { until, why } => return self.defer(seen.current(), until, now, why).await.map(Some),
                }
            }
            Input::MemberTasks => seen.member_tasks = Some(self.member_tasks_for_step(seen).await?),
            Input::Parent => {
                let parent = match task.parent_id {
                    Some(parent) => self.store.get_task(task.account_id, parent).await?,
                    None => None,
                };
                seen.parent = Some(parent);
            }
            Input::AddressSuppressed => {
                let current = seen.facts.as_ref().and_then(|f| f.as_ref()).and_then(|f| f.email.as_ref());
                seen.address_suppressed = Some(match current {
                    Some(email) => self.store.is_suppressed(task.account_id, email).await?,
                    None => false,
                });
            }
        }
        Ok(None)
    }

    /// Do what the step decided for `task` (as the step leaves it), with the snapshot it read.
    /// Each large branch (a send, a parent's, research, automation) is boxed, so a step's
    /// future is as large as its common path, not its largest branch.
    async fn carry_out(
        &self,
        task: Task,
        snapshot: Option<SendSnapshot>,
        member_tasks: &[Task],
        conversation: &[ConversationMessage],
        decision: StepDecision,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        boxed(async move {
            // A step that acts has read the task's resolved loops (`task/task_loops.rs`): they
            // leave the task with its commit, whichever it is. A deferral keeps them for later.
            let mut task = task;
            if matches!(
                decision,
                StepDecision::GoalMet { .. }
                    | StepDecision::Close { .. }
                    | StepDecision::Escalate { .. }
                    | StepDecision::StaleGuard { .. }
                    | StepDecision::Anomalous(_)
                    | StepDecision::Dormant { .. }
                    | StepDecision::Send { .. }
                    | StepDecision::Text { .. }
            ) {
                task_loops::consume(&mut task);
            }
            match decision {
                StepDecision::Skip(skip) => Ok(StepOutcome::Skipped(skip.code())),
                StepDecision::GoalMet { note, signal } => {
                    let account = account_of(snapshot.as_ref())?;
                    let reason = self
                        .complete_on_goal(task, &goal_reached(&note, signal, now), &account, now, "the task's step")
                        .await?;
                    Ok(StepOutcome::Moved {
                        to: TaskStatus::Completed,
                        reason,
                    })
                }
                StepDecision::NoAccount => Err(EngineError::NotFound { what: "account" }),
                // A holding reply that cannot leave now does not hold the owner's turn up.
                StepDecision::Defer { why, .. } if task.held_question.is_some() => {
                    let because = why.detail.as_deref().unwrap_or(why.reason.as_str());
                    self.escalate_held(task, because, now).await
                }
                StepDecision::RecordWouldSend { .. } if task.held_question.is_some() => {
                    self.escalate_held(task, "this task's messages are recorded, not sent", now).await
                }
                // A parting note that cannot leave by tomorrow does not keep the conversation
                // open: it closes without it.
                StepDecision::Defer { until, why } if task.parting.is_some() && until > now + PARTING_NOTE_WAITS_AT_MOST => {
                    let because = why.detail.as_deref().unwrap_or(why.reason.as_str()).to_owned();
                    boxed(self.close_without_parting_note(task, &because, snapshot.as_ref(), now)).await
                }
                StepDecision::RecordWouldSend { .. } if task.parting.is_some() => {
                    boxed(self.close_without_parting_note(task, "this task's messages are recorded, not sent", snapshot.as_ref(), now))
                        .await
                }
                StepDecision::Defer { until, why } => self.defer(&task, until, now, why).await,
                StepDecision::Retry { anomaly } => self.retry_abandoned(task, anomaly, now).await,
                StepDecision::SendOutcomeUnknown { reserved } => self.escalate_unknown(task, reserved, now).await,
                StepDecision::Anomalous(anomaly) => {
                    tracing::warn!(task = %task.id, reason = %anomaly.reason(), "anomaly");
                    let why = Why::new(anomaly.reason()).detail(anomaly.detail());
                    self.move_known(task, TaskStatus::Escalated, now, why, snapshot.as_ref()).await
                }
                StepDecision::Escalate { why } => self.move_known(task, TaskStatus::Escalated, now, why, snapshot.as_ref()).await,
                StepDecision::Close { to, why } => self.move_known(task, to, now, why, snapshot.as_ref()).await,
                StepDecision::StaleGuard { to, why } => {
                    if to == TaskStatus::Escalated {
                        tracing::info!(task = %task.id, reason = %why.reason, "stale guard: escalated");
                    } else {
                        tracing::info!(task = %task.id, reason = %why.reason, "stale guard: resolved without sending");
                    }
                    self.move_known(task, to, now, why, snapshot.as_ref()).await
                }
                StepDecision::Dormant {
                    why,
                    next_check,
                    expires_at,
                } => {
                    let reason = why.reason;
                    let (mut next, log) = transition(&task, TaskStatus::Dormant, now, why)?;
                    next.dormant_at = Some(now);
                    next.dormant_expires_at = Some(expires_at);
                    next.next_action_at = Some(next_check);
                    let expired = task_loops::on_move(&mut next, TaskStatus::Dormant, now);
                    let mut commit = TaskCommit::new(next, log);
                    commit.loops = expired;
                    self.store.commit(&commit).await?;
                    Ok(StepOutcome::Moved {
                        to: TaskStatus::Dormant,
                        reason,
                    })
                }
                StepDecision::HonourStop => {
                    let account = account_of(snapshot.as_ref())?;
                    self.honour_stop(&account, task, &crate::conversation::reply::Stop::member_request(), now)
                        .await
                }
                StepDecision::Coordinate => boxed(self.parent_step(task, now)).await,
                StepDecision::WithoutMail(kind) => {
                    let def = task_type::definition(&task.task_type);
                    match kind {
                        WithoutMail::StaffTodo => boxed(self.staff_todo_step(task, def, now)).await,
                        WithoutMail::Research => boxed(self.research_step(task, def, now)).await,
                        WithoutMail::Automation => {
                            let account = account_of(snapshot.as_ref())?;
                            let facts = snapshot.as_ref().and_then(|s| s.facts.as_ref());
                            boxed(self.automation_step(task, def, &account, facts, now)).await
                        }
                    }
                }
                StepDecision::RecordWouldSend { to, mode } => {
                    let account = account_of(snapshot.as_ref())?;
                    self.record_would_send(&account, task, to, mode, now).await
                }
                StepDecision::Send {
                    to,
                    claim,
                    daily_send_limit,
                } => {
                    // Claim the step: from here on this worker owns the task until the lease ends.
                    let (snapshot, account, mut claimed, claim_log) = claim_touch(&task, snapshot, claim, daily_send_limit, now)?;
                    // The address written to is the member's current one: the task keeps it.
                    claimed.member.email = Some(to.clone());
                    // A loop past its deadline ends with the claim: this follow-up is its action,
                    // so a reply or a signal arriving now finds it expired, not both.
                    let expiring = task_loops::on_move(&mut claimed, TaskStatus::Executing, now);
                    // A touch whose text is ready (an approved draft, an answer) waits on nothing
                    // between the claim and the reservation: both go in the reservation's commit.
                    // One the agent drafts is claimed first, so no other worker drafts it too.
                    let def = task_type::definition(&claimed.task_type);
                    let text = step::touch_text(&claimed, def);
                    let mut ahead = super::send::Ahead {
                        reads: snapshot.draft,
                        ai_counted: None,
                    };
                    let claim = if expiring.is_empty() && matches!(text, step::TouchText::Ready(_)) {
                        Some(claim_log)
                    } else {
                        // The draft's AI call, counted in the claim when the day's count the
                        // snapshot read still stands.
                        let ai_call = match text {
                            step::TouchText::FromAgent => ai::countable(&account, &claimed, ahead.reads.as_ref(), now),
                            _ => None,
                        };
                        let extras = CommitExtras {
                            ai_call,
                            ..CommitExtras::default()
                        };
                        let mut commit = TaskCommit::new(claimed.clone(), claim_log);
                        commit.loops = expiring;
                        let committed = match self.store.commit_with(&commit, &extras).await {
                            Err(StoreError::Conflict(Conflict::AiCalls)) => self.store.commit(&commit).await,
                            Ok(()) => {
                                ahead.ai_counted = ai_call.map(|c| c.seen + 1);
                                Ok(())
                            }
                            other => other,
                        };
                        match committed {
                            Ok(()) => {}
                            Err(StoreError::Conflict(Conflict::Version)) => {
                                return Ok(StepOutcome::Skipped("claimed_elsewhere".into()));
                            }
                            Err(e) => return Err(e.into()),
                        }
                        None
                    };
                    boxed(self.send_claimed(
                        &account,
                        super::send::Claimed {
                            task: claimed,
                            claim,
                            ahead,
                        },
                        to,
                        snapshot.ledger,
                        &snapshot.annotations,
                        &snapshot.memories,
                        member_tasks,
                        snapshot.facts.as_ref(),
                        conversation,
                    ))
                    .await
                }
                StepDecision::Text {
                    phone,
                    email,
                    claim,
                    daily_send_limit,
                } => {
                    let (snapshot, account, mut claimed, claim_log) = claim_touch(&task, snapshot, claim, daily_send_limit, now)?;
                    if email.is_some() {
                        claimed.member.email = email;
                    }
                    let mut commit = TaskCommit::new(claimed.clone(), claim_log);
                    commit.loops = task_loops::on_move(&mut commit.task, TaskStatus::Executing, now);
                    let claimed = commit.task.clone();
                    match self.store.commit(&commit).await {
                        Ok(()) => {}
                        Err(StoreError::Conflict(Conflict::Version)) => {
                            return Ok(StepOutcome::Skipped("claimed_elsewhere".into()));
                        }
                        Err(e) => return Err(e.into()),
                    }
                    boxed(self.send_text_claimed(
                        &account,
                        claimed,
                        phone,
                        snapshot.ledger,
                        &snapshot.annotations,
                        &snapshot.memories,
                        member_tasks,
                    ))
                    .await
                }
            }
        })
        .await
    }

    /// Keep the status; come back at `until`.
    async fn defer(&self, task: &Task, until: Timestamp, now: Timestamp, why: Why) -> Result<StepOutcome, EngineError> {
        let reason = why.reason;
        self.store.commit(&Self::reschedule(task, until, now, why)).await?;
        Ok(StepOutcome::Deferred { until, reason })
    }

    /// A task found in `executing` past its lease, its touch not reserved: the step never
    /// reached the send. Back in `waiting`, due now, and the next tick runs it.
    async fn retry_abandoned(&self, task: Task, anomaly: Anomaly, now: Timestamp) -> Result<StepOutcome, EngineError> {
        tracing::warn!(task = %task.id, reason = %anomaly.reason(), "anomaly");
        let (mut next, log) = transition(
            &task,
            TaskStatus::Waiting,
            now,
            Why::new(anomaly.reason()).detail(format!(
                "{}: the worker holding this task stopped before sending; retrying",
                anomaly.detail()
            )),
        )?;
        next.next_action_at = Some(now);
        self.store.commit(&TaskCommit::new(next, log)).await?;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Waiting,
            reason: anomaly.reason(),
        })
    }

    /// The task's conversation, for the §7.5 reply count and for a message the task awaits.
    async fn conversation(&self, task: &Task) -> Result<Vec<ConversationMessage>, EngineError> {
        let history = self.store.task_history(task.account_id, task.id).await?;
        Ok(history.ok_or(EngineError::NotFound { what: "task" })?.messages)
    }

    /// Move to `to`, passing through `executing` when the table needs it (a ready task
    /// cannot escalate without having started).
    pub(crate) async fn move_to(&self, task: Task, to: TaskStatus, now: Timestamp, why: Why) -> Result<StepOutcome, EngineError> {
        self.move_with(task, to, now, why, Vec::new()).await
    }

    /// [`Self::move_to`], adding `messages` to the conversation in the same commit.
    pub(crate) async fn move_with(
        &self,
        task: Task,
        to: TaskStatus,
        now: Timestamp,
        why: Why,
        messages: Vec<ConversationMessage>,
    ) -> Result<StepOutcome, EngineError> {
        self.move_with_known(task, to, now, why, messages, None, &CommitExtras::default())
            .await
    }

    /// [`Self::move_with`], writing `extras` in the same commit.
    pub(crate) async fn move_with_extras(
        &self,
        task: Task,
        to: TaskStatus,
        now: Timestamp,
        why: Why,
        messages: Vec<ConversationMessage>,
        extras: &CommitExtras,
    ) -> Result<StepOutcome, EngineError> {
        self.move_with_known(task, to, now, why, messages, None, extras).await
    }

    /// [`Self::move_to`] by a step that read `snapshot`: the notices of the move read neither
    /// the account nor the member's facts again.
    /// A parting note that cannot leave soon (`because`): the conversation closes without it,
    /// with the outcome the member's words reached.
    async fn close_without_parting_note(
        &self,
        task: Task,
        because: &str,
        snapshot: Option<&SendSnapshot>,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let Some(parting) = task.parting.clone() else {
            return Err(EngineError::NotFound { what: "parting note" });
        };
        let why = parting.why(Some(&format!(
            "the parting note could not leave soon ({because}), so it was not sent"
        )));
        self.move_known(task, TaskStatus::Completed, now, why, snapshot).await
    }

    async fn move_known(
        &self,
        task: Task,
        to: TaskStatus,
        now: Timestamp,
        why: Why,
        snapshot: Option<&SendSnapshot>,
    ) -> Result<StepOutcome, EngineError> {
        // A close's learning record is written with the account the snapshot read.
        let extras = CommitExtras {
            account: snapshot.and_then(|s| s.account.clone()),
            ..CommitExtras::default()
        };
        self.move_with_known(task, to, now, why, Vec::new(), snapshot, &extras).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn move_with_known(
        &self,
        task: Task,
        to: TaskStatus,
        now: Timestamp,
        why: Why,
        messages: Vec<ConversationMessage>,
        snapshot: Option<&SendSnapshot>,
        extras: &CommitExtras,
    ) -> Result<StepOutcome, EngineError> {
        let reason = why.reason;
        let expected_version = task.version;
        let todos = super::todos::may_hold_todo(&task);
        let mut logs = Vec::new();
        let mut current = task;
        if !current.status.can_move_to(to) && current.status.can_move_to(TaskStatus::Executing) {
            let (started, log) = start_handling(&current, now, reason)?;
            logs.push(log);
            current = started;
        }
        let (mut next, log) = transition(&current, to, now, why)?;
        logs.push(log);
        // The task's overdue loops end with the move (all of them when it closes).
        let loops = task_loops::on_move(&mut next, to, now);
        // Both steps in one commit, conditional on the version this worker read.
        // The account the step read says whether its events have an endpoint to reach.
        let account = snapshot.and_then(|s| s.account.as_ref()).or(extras.account.as_ref());
        let commit = TaskCommit {
            expected_version,
            task: next.clone(),
            log: logs,
            messages,
            send: None,
            loops,
            webhooks: true,
        }
        .webhooks_for(account);
        self.store.commit_with(&commit, extras).await?;
        let known = snapshot.and_then(|s| s.account.as_ref().map(|account| (account, s.facts.as_ref())));
        self.notify_commit_with(&commit, known).await;
        self.publish_closed_after(&next, todos, commit.webhooks).await;
        Ok(StepOutcome::Moved { to, reason })
    }

    /// The dormant worker: expiry, or the next quiet check. Never sends.
    pub async fn dormant_check(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        boxed(self.dormant_step(item)).await
    }

    async fn dormant_step(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        if self.store.system_config().await?.global_pause {
            return Ok(StepOutcome::Skipped(Skip::GlobalPause.code()));
        }
        let now = self.clock.now();
        let Some(task) = self.store.get_task(item.account_id, item.task_id).await? else {
            return Ok(StepOutcome::Skipped("task_not_found".into()));
        };
        if task.controls.paused_at.is_some() {
            return Ok(StepOutcome::Skipped("paused".into()));
        }
        if task.status == TaskStatus::Escalated {
            return self.escalation_timer(task, now).await;
        }
        let decision = step::dormant(&task, now);
        // Did the member reach the goal meanwhile? (Spec §6.4 phase 4; no sends, no AI.)
        if !matches!(decision, StepDecision::Skip(_))
            && let Some(completed) = self.dormant_goal(&task, now).await?
        {
            return Ok(completed);
        }
        self.carry_out(task, None, &[], &[], decision, now).await
    }
}

/// The account a step's snapshot read.
/// The goal a met loop shows: its signal's outcome and reason, at the loop's resolution.
pub(super) fn goal_reached(
    note: &task_loops::LoopNote,
    signal: &'static crate::task::task_type::GoalSignal,
    now: Timestamp,
) -> GoalReached {
    GoalReached {
        outcome: signal.outcome.unwrap_or("completed"),
        seen: SignalSeen {
            signal: signal.signal,
            reason: outcome::goal_reason(signal.signal).unwrap_or(Reason::LoopMet),
            at: note.resolved_at.unwrap_or(now),
            detail: format!(
                "its {} loop was met ({})",
                note.expects.as_str(),
                note.met_by.as_deref().unwrap_or("a signal")
            ),
        },
    }
}

fn account_of(snapshot: Option<&SendSnapshot>) -> Result<crate::owner::account::Account, EngineError> {
    snapshot
        .and_then(|s| s.account.clone())
        .ok_or(EngineError::NotFound { what: "account" })
}

/// What a touch's claim (a mail's or a text's) starts from: the snapshot the step read, the
/// account in it with the day's send limit the step decided, and the task moved to
/// `executing` under the lease (not yet committed) with its log entry.
fn claim_touch(
    task: &Task,
    snapshot: Option<SendSnapshot>,
    claim: Why,
    daily_send_limit: u32,
    now: Timestamp,
) -> Result<(SendSnapshot, crate::owner::account::Account, Task, crate::task::LogEntry), EngineError> {
    let mut snapshot = snapshot.ok_or(EngineError::NotFound { what: "account" })?;
    let mut account = snapshot.account.take().ok_or(EngineError::NotFound { what: "account" })?;
    account.settings.daily_send_limit = daily_send_limit;
    let (mut claimed, log) = transition(task, TaskStatus::Executing, now, claim)?;
    claimed.next_action_at = Some(now + EXECUTION_LEASE);
    Ok((snapshot, account, claimed, log))
}

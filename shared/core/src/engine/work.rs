//! The workers' step (execute, followup, dormant): re-read the task, check every gate, claim
//! it, send at most once, schedule the next touch — or defer, exhaust, escalate.
//!
//! The send is made at-most-once by three commits: the claim (`→ executing` with a lease),
//! the reservation (budget, member ledger, daily counter and the outbound record for this
//! touch, all conditional), and the record of what the provider said. A reservation that is
//! committed is never sent again: a worker that finds one it did not finish escalates.

use jiff::{SignedDuration, Timestamp};

use super::Engine;
use super::ai::{self, AiGate};
use crate::account::Account;
use crate::cadence::OnExhaustion;
use crate::error::{Conflict, EngineError, StoreError};
use crate::ids::Email;
use crate::ids::new_ulid;
use crate::limits::{self, EXECUTION_LEASE};
use crate::mail::{OutboundMail, reply_subject, thread_headers};
use crate::member::SendLedger;
use crate::ports::{SendEffect, SendError, TaskCommit};
use crate::reason::Reason;
use crate::send_gate;
use crate::task::{ConversationMessage, Draft, OutboundMessage, OutboundStatus, Role, Task, TaskStatus, ThreadMessage};
use crate::task_type;
use crate::transition::{Why, start_handling, transition};
use crate::work::WorkItem;

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

/// A step that failed and is retried with a backoff (spec §7.11): the reason each attempt
/// logs, and the one logged when the retries run out and the owner takes it.
#[derive(Clone, Copy, Debug)]
enum Retried {
    Draft,
    Send,
}

impl Retried {
    fn reason(self) -> Reason {
        match self {
            Retried::Draft => Reason::DraftFailed,
            Retried::Send => Reason::SendRejected,
        }
    }

    fn given_up(self) -> Reason {
        match self {
            Retried::Draft => Reason::DraftFailedAfterRetries,
            Retried::Send => Reason::SendRejectedAfterRetries,
        }
    }
}

/// What a reservation attempt came to.
enum Reservation {
    Made(Box<Task>),
    Defer(Timestamp, Why),
    AlreadyReserved,
}

/// A waiting task that has sent something: only such a task can have been answered.
fn wrote_to_member(task: &Task) -> bool {
    task.status == TaskStatus::Waiting && task.touch > 0
}

/// Which worker is asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Worker {
    Execute,
    Followup,
}

/// How many times a step re-reads and re-decides after losing a race.
const MAX_RACES: usize = 4;

impl Engine {
    /// The execute worker: the first touch of a ready task.
    pub async fn execute(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        self.step(item, Worker::Execute).await
    }

    /// The followup worker: a due follow-up, a deferred first touch, or exhaustion.
    pub async fn follow_up(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        self.step(item, Worker::Followup).await
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

    async fn try_step(&self, item: &WorkItem, worker: Worker) -> Result<StepOutcome, EngineError> {
        let now = self.clock.now();
        let Some(task) = self.store.get_task(item.account_id, item.task_id).await? else {
            return Ok(StepOutcome::Skipped("task_not_found".into()));
        };
        if !task.next_action_at.is_some_and(|due| limits::is_due(due, now)) {
            return Ok(StepOutcome::Skipped("not_due".into()));
        }
        match (task.status, worker) {
            (TaskStatus::Ready, Worker::Execute) | (TaskStatus::Waiting, Worker::Followup) | (TaskStatus::Executing, _) => {}
            (status, _) => return Ok(StepOutcome::Skipped(format!("status_{status}"))),
        }
        // Everything the gates need, in one read: never trust the message that woke us.
        let utc_date = now.to_zoned(jiff::tz::TimeZone::UTC).date();
        let snapshot = self
            .store
            .send_snapshot(task.account_id, &task.member.id, task.member.email.as_ref(), utc_date)
            .await?;
        if snapshot.system.global_pause {
            return Ok(StepOutcome::Skipped("global_pause".into()));
        }
        if task.status == TaskStatus::Executing && task.awaiting != Some(crate::task::Awaiting::OwnerGuidance) {
            // A lease ran out: the worker that held it died mid-step.
            return self.recover_stuck(task, now).await;
        }
        let account = snapshot.account.clone().ok_or(EngineError::NotFound { what: "account" })?;
        if account.paused {
            if let Some(stopped) = self.stop_while_paused(&account, &task, now).await? {
                return Ok(stopped);
            }
            let until = now + SignedDuration::from_hours(1);
            self.store
                .commit(&Self::reschedule(&task, until, now, Why::new(Reason::AccountPaused)))
                .await?;
            return Ok(StepOutcome::Deferred {
                until,
                reason: Reason::AccountPaused,
            });
        }
        if task.batch || !task.subtasks.is_empty() || task.controls.agent_planning {
            // A parent coordinates: its state is its subtasks' (spec §14.4).
            return self.parent_step(task, now).await;
        }
        let def = task_type::definition(&task.task_type);
        // The conversation, read once for both the anomaly check and an awaited message.
        let conversation = self.conversation_if_needed(&task).await?;
        let replies = match &conversation {
            Some(messages) if wrote_to_member(&task) => crate::anomaly::member_replies(messages),
            _ => 0,
        };
        if let Some(anomaly) = crate::anomaly::detect(&task, replies, now) {
            tracing::warn!(task = %task.id, reason = %anomaly.reason(), "anomaly");
            let why = Why::new(anomaly.reason()).detail(anomaly.detail());
            return self.move_to(task, TaskStatus::Escalated, now, why).await;
        }
        if task.controls.mode == crate::autonomy::TaskMode::Plan {
            let why = Why::new(Reason::PlanNotApproved).detail("a task in plan mode runs only once the owner approves its plan");
            return self.move_to(task, TaskStatus::Escalated, now, why).await;
        }
        // A member's reply or the owner's guidance is read before anything else is decided.
        let task = if task.awaiting.is_some() {
            let conversation = conversation.ok_or(EngineError::NotFound { what: "task" })?;
            match self.read_awaiting(&account, task, &conversation, now).await? {
                super::replies::Read::Done(outcome) => return Ok(outcome),
                super::replies::Read::Send(task) => *task,
            }
        } else {
            task
        };
        if let Some(outcome) = self.step_without_mail(&task, def, &account, now).await {
            return outcome;
        }

        // Step 0 (spec §30): is the task still needed, given what the member did since? The
        // connector, if any, refreshes the facts first; if it cannot, the touch waits (§34).
        let facts = match self.fresh_facts(&account, &task, snapshot.facts.clone(), now).await? {
            super::freshness::Fresh::Facts(facts) => facts,
            super::freshness::Fresh::Defer { until, why } => {
                let reason = why.reason;
                self.store.commit(&Self::reschedule(&task, until, now, why)).await?;
                return Ok(StepOutcome::Deferred { until, reason });
            }
        };
        match crate::stale_guard::check(&task, facts.as_deref(), now) {
            crate::stale_guard::Freshness::Proceed => {}
            crate::stale_guard::Freshness::Resolved {
                to,
                outcome,
                reason,
                detail,
            } => {
                tracing::info!(task = %task.id, %reason, "stale guard: resolved without sending");
                return self.move_to(task, to, now, Why::new(reason).outcome(outcome).detail(detail)).await;
            }
            crate::stale_guard::Freshness::Escalate { reason, detail } => {
                tracing::info!(task = %task.id, %reason, "stale guard: escalated");
                return self
                    .move_to(task, TaskStatus::Escalated, now, Why::new(reason).detail(detail))
                    .await;
            }
        }
        if limits::is_due(task.budget.expires_at, now) {
            return self.exhaust(task, now, Reason::BudgetTimeExpired).await;
        }
        if task.budget.messages_used >= task.budget.messages_max {
            return self.exhaust(task, now, Reason::BudgetMessagesExhausted).await;
        }
        if task.budget.turns_max > 0 && task.budget.turns_used >= task.budget.turns_max {
            return self
                .move_to(task, TaskStatus::Escalated, now, Why::new(Reason::TooManyTurnsWithoutResolution))
                .await;
        }
        // An answer to the member is owed whatever the cadence says; budgets still hold.
        if task.answer.is_none() && !def.cadence.allows_touch(task.touch) {
            return self.exhaust(task, now, Reason::AllFollowupTouchesUsed).await;
        }
        let Some(to) = task.member.email.clone() else {
            let why = Why::new(Reason::MissingMemberEmail).detail("the member has no e-mail address on file");
            return self.move_to(task, TaskStatus::Escalated, now, why).await;
        };
        if snapshot.suppressed {
            return self
                .move_to(
                    task,
                    TaskStatus::Cancelled,
                    now,
                    Why::new(Reason::MemberSuppressed).outcome("opted_out"),
                )
                .await;
        }
        // The ramp (spec §26): a phase may lower the account's daily limit for live sends, and
        // the shadow phase (like a dry-run task) records its touches instead of sending them.
        let ramp = crate::autonomy::ramp(&account.settings, def.agent, now);
        let mode = crate::autonomy::SendMode::of(task.controls.mode, &ramp);
        let mut account = account;
        if mode == crate::autonomy::SendMode::Live {
            account.settings.daily_send_limit = ramp.daily_send_limit;
        }
        let deferral = match send_gate::send_gate(&account.settings, &task, &snapshot, now) {
            Some(deferral) => Some(deferral),
            None => self.yield_to_higher_priority(&task, &account, now).await?,
        };
        if let Some((until, why)) = deferral {
            let reason = why.reason;
            self.store.commit(&Self::reschedule(&task, until, now, why)).await?;
            return Ok(StepOutcome::Deferred { until, reason });
        }

        if mode != crate::autonomy::SendMode::Live {
            return self.record_would_send(&account, task, to, mode, now).await;
        }
        // Claim the step: from here on this worker owns the task until the lease ends.
        let first = task.touch == 0;
        let step = match (&task.answer, first) {
            (Some(_), _) => Reason::AnswerDue,
            (None, true) => Reason::FirstTouchDue,
            (None, false) => Reason::FollowUpDue,
        };
        let why = Why::new(step).detail(format!("touch {}, tone {}", task.touch, def.cadence.tone(task.touch)));
        let (mut claimed, claim_log) = transition(&task, TaskStatus::Executing, now, why)?;
        claimed.next_action_at = Some(now + EXECUTION_LEASE);
        match self.store.commit(&TaskCommit::new(claimed.clone(), claim_log)).await {
            Ok(()) => {}
            Err(StoreError::Conflict(Conflict::Version)) => {
                return Ok(StepOutcome::Skipped("claimed_elsewhere".into()));
            }
            Err(e) => return Err(e.into()),
        }
        self.send_claimed(&account, claimed, to, snapshot.ledger).await
    }

    /// Priority-based allocation (spec §21.3): every send uses the member's one message of
    /// the day, so while a more urgent task about the same member wants to send now, this one
    /// waits for the next local day. Its touch is delayed, never skipped; and a task the gates
    /// deferred is not "wanting to send", so two tasks can never hold each other back.
    async fn yield_to_higher_priority(
        &self,
        task: &Task,
        account: &Account,
        now: Timestamp,
    ) -> Result<Option<(Timestamp, Why)>, EngineError> {
        let others = self.store.member_active_tasks(task.account_id, &task.member.id).await?;
        let wants_to_send = |other: &Task| {
            // A parent coordinates its subtasks and never sends itself.
            let sends = task_type::definition(&other.task_type).category == crate::task_type::Category::Communication
                && other.subtasks.is_empty()
                && !other.batch;
            let moving = match other.status {
                TaskStatus::Ready | TaskStatus::Waiting => true,
                TaskStatus::Executing => other.awaiting != Some(crate::task::Awaiting::OwnerGuidance),
                _ => false,
            };
            sends && moving && other.next_action_at.is_some_and(|due| limits::is_due(due, now))
        };
        let Some(first) = others
            .iter()
            .filter(|o| o.id != task.id && o.priority < task.priority && wants_to_send(o))
            .min_by_key(|o| o.priority)
        else {
            return Ok(None);
        };
        let until = send_gate::next_local_day(now, &account.settings.time_zone());
        let why = Why::new(Reason::YieldingToHigherPriority).detail(format!(
            "{} task {} ({}) goes first for this member; this {} touch waits until {until}",
            first.task_type,
            first.id,
            first.priority.as_str(),
            task.priority.as_str()
        ));
        Ok(Some((until, why)))
    }

    /// Draft, reserve, send and record, for a task this worker has claimed.
    async fn send_claimed(&self, account: &Account, mut claimed: Task, to: Email, ledger: SendLedger) -> Result<StepOutcome, EngineError> {
        let now = self.clock.now();
        let def = task_type::definition(&claimed.task_type);
        let touch = claimed.touch;
        let draft = if let Some(answer) = claimed.answer.clone() {
            let subject = claimed
                .draft
                .as_ref()
                .map_or_else(|| def.subject().to_owned(), |d| d.subject.clone());
            Draft { subject, body: answer }
        } else if touch == 0 {
            match claimed.draft.clone() {
                Some(d) => d,
                None => {
                    return self
                        .move_to(
                            claimed,
                            TaskStatus::Escalated,
                            now,
                            Why::new(Reason::MissingDraft).detail("no approved draft to send"),
                        )
                        .await;
                }
            }
        } else {
            let request = ai::draft_request(account, def, &claimed.goal, ai::first_name(&claimed), touch);
            let permit = match self.ai_call(account, Some(claimed.ai_calls), now).await? {
                AiGate::Allowed(permit) => permit,
                AiGate::TaskSpent => {
                    let why =
                        Why::new(Reason::AiBudgetExhausted).detail(format!("{} AI calls used, the most a task may make", claimed.ai_calls));
                    return self.move_to(claimed, TaskStatus::Escalated, now, why).await;
                }
                AiGate::DayUsed { until } => {
                    let why =
                        Why::new(Reason::AiDailyLimit).detail(format!("the account's AI calls for today are used up; resuming {until}"));
                    let (mut next, log) = transition(&claimed, TaskStatus::Waiting, now, why)?;
                    next.next_action_at = Some(until);
                    self.store.commit(&TaskCommit::new(next, log)).await?;
                    return Ok(StepOutcome::Deferred {
                        until,
                        reason: Reason::AiDailyLimit,
                    });
                }
            };
            claimed.ai_calls += 1;
            match permit.draft(&request).await {
                Ok(d) => d,
                Err(e) => {
                    return self.retry_or_escalate(claimed, now, Retried::Draft, &e.to_string(), None).await;
                }
            }
        };
        let subject = if touch == 0 {
            draft.subject.clone()
        } else {
            reply_subject(claimed.thread_subject.as_deref().unwrap_or(&draft.subject))
        };
        let (in_reply_to, references) = thread_headers(&claimed.thread);
        let from_domain = self
            .config
            .from_email
            .as_str()
            .split_once('@')
            .map(|(_, d)| d.to_owned())
            .unwrap_or_default();
        let outbound = OutboundMessage {
            task_id: claimed.id,
            touch,
            status: OutboundStatus::Reserved,
            to: to.clone(),
            subject: subject.clone(),
            message_id: format!("{}@{from_domain}", new_ulid(now).to_string().to_ascii_lowercase()),
            provider_id: None,
            provider_message_id: None,
            reserved_at: now,
            sent_at: None,
        };
        let ledger_key = format!("{}#{touch}", claimed.id);

        // Reserve: the guarantees are checked by the store in the same transaction.
        let reserved = match self.reserve(account, &claimed, &outbound, &ledger_key, ledger, now).await? {
            Reservation::Made(task) => *task,
            Reservation::Defer(until, why) => {
                // Lost the race for the member's or the account's capacity: defer.
                let reason = why.reason;
                let (mut next, log) = transition(&claimed, TaskStatus::Waiting, now, why)?;
                next.next_action_at = Some(until);
                self.store.commit(&TaskCommit::new(next, log)).await?;
                return Ok(StepOutcome::Deferred { until, reason });
            }
            Reservation::AlreadyReserved => {
                // Someone reserved this touch before: its fate is unknown, never send it again.
                let existing = self
                    .store
                    .outbound(account.id, claimed.id)
                    .await?
                    .into_iter()
                    .find(|m| m.touch == touch)
                    .unwrap_or(outbound);
                return self.escalate_unknown(claimed, existing, now).await;
            }
        };

        let mail = OutboundMail {
            from_name: account.sender_name().to_owned(),
            from: self.config.from_email.clone(),
            to: to.clone(),
            to_name: claimed.member.name.clone(),
            subject,
            text: draft.body.clone(),
            message_id: outbound.message_id.clone(),
            in_reply_to,
            references,
            reply_to: format!(
                "reply+{}@{}",
                self.config.signing_key.reply_token(&claimed.id),
                self.config.reply_domain
            ),
            unsubscribe_url: format!(
                "{}/unsubscribe?token={}",
                self.config.public_url.trim_end_matches('/'),
                self.config.signing_key.unsubscribe_token(&account.id, &to)
            ),
            date: now,
        };
        match self.mailer.send(&mail).await {
            Ok(delivered) => {
                let sent = OutboundMessage {
                    status: OutboundStatus::Sent,
                    provider_id: Some(delivered.provider_id),
                    provider_message_id: delivered.provider_message_id,
                    sent_at: Some(now),
                    ..outbound
                };
                self.record_sent(reserved, sent, draft, now).await
            }
            Err(SendError::Rejected(reason)) => {
                let daily_date = limits::local_date(now, &account.settings.time_zone());
                let release = SendEffect::Release {
                    outbound: OutboundMessage {
                        status: OutboundStatus::Failed,
                        ..outbound
                    },
                    member_id: reserved.member.id.clone(),
                    ledger_key,
                    daily_date,
                };
                let mut given_back = reserved;
                given_back.budget.messages_used = given_back.budget.messages_used.saturating_sub(1);
                self.retry_or_escalate(given_back, now, Retried::Send, &reason, Some(release)).await
            }
            Err(SendError::Ambiguous(reason)) => {
                tracing::error!(task = %reserved.id, touch, %reason, "send outcome unknown; escalating, never retrying blind");
                let unknown = OutboundMessage {
                    status: OutboundStatus::Unknown,
                    ..outbound
                };
                let detail = format!("touch {touch}: {reason}. Check whether the member received it before retrying.");
                let (next, log) = transition(
                    &reserved,
                    TaskStatus::Escalated,
                    now,
                    Why::new(Reason::SendOutcomeUnknown).detail(detail),
                )?;
                let mut commit = TaskCommit::new(next, log);
                commit.send = Some(SendEffect::Record { outbound: unknown });
                self.store.commit(&commit).await?;
                self.notify_commit(&commit).await;
                Ok(StepOutcome::Moved {
                    to: TaskStatus::Escalated,
                    reason: Reason::SendOutcomeUnknown,
                })
            }
        }
    }

    /// Commit the reservation; when another send to the member raced it, re-read the ledger
    /// and decide again.
    async fn reserve(
        &self,
        account: &Account,
        claimed: &Task,
        outbound: &OutboundMessage,
        ledger_key: &str,
        mut ledger: SendLedger,
        now: Timestamp,
    ) -> Result<Reservation, EngineError> {
        let settings = &account.settings;
        let tz = settings.time_zone();
        for _ in 0..MAX_RACES {
            if let Some((until, why)) = send_gate::member_limits(&ledger, settings, now) {
                return Ok(Reservation::Defer(until, why));
            }
            let mut sends = limits::prune_ledger(&ledger.sends, now);
            sends.insert(ledger_key.to_owned(), now);
            let new_ledger = SendLedger {
                sends,
                version: ledger.version + 1,
            };
            let (mut next, log) = crate::transition::record(
                claimed,
                now,
                Why::new(Reason::SendReserved).detail(format!("touch {} to {}", outbound.touch, outbound.to)),
            );
            next.budget.messages_used += 1;
            let mut commit = TaskCommit::new(next.clone(), log);
            let daily_date = limits::local_date(now, &tz);
            commit.send = Some(SendEffect::Reserve {
                outbound: outbound.clone(),
                member_id: claimed.member.id.clone(),
                ledger: new_ledger,
                daily_date,
                daily_limit: settings.daily_send_limit,
            });
            match self.store.commit(&commit).await {
                Ok(()) => return Ok(Reservation::Made(Box::new(next))),
                Err(StoreError::Conflict(Conflict::MemberLedger)) => {
                    ledger = self
                        .store
                        .get_member(account.id, &claimed.member.id)
                        .await?
                        .map(|(_, l)| l)
                        .unwrap_or_default();
                }
                Err(StoreError::Conflict(Conflict::DailyLimit)) => {
                    return Ok(Reservation::Defer(
                        send_gate::next_local_day(now, &tz),
                        Why::new(Reason::DailySendLimit).detail("reached while reserving"),
                    ));
                }
                Err(StoreError::Conflict(Conflict::OutboundExists)) => {
                    return Ok(Reservation::AlreadyReserved);
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Reservation::Defer(
            now + SignedDuration::from_mins(1),
            Why::new(Reason::MemberLedgerContended),
        ))
    }

    /// The mail left: `executing → waiting` with the next touch scheduled, the outbound
    /// record and the conversation updated. If the owner changed the task meanwhile, the
    /// record is still written on top of their change.
    async fn record_sent(&self, reserved: Task, sent: OutboundMessage, draft: Draft, now: Timestamp) -> Result<StepOutcome, EngineError> {
        let touch = sent.touch;
        let def = task_type::definition(&reserved.task_type);
        let message = ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::Agent,
            content: draft.body.clone(),
        };
        let mut current = reserved;
        for _ in 0..MAX_RACES {
            let (mut next, log) = if current.status == TaskStatus::Executing {
                transition(
                    &current,
                    TaskStatus::Waiting,
                    now,
                    Why::new(Reason::MessageSent).detail(format!("touch {touch} sent to {}", sent.to)),
                )?
            } else {
                crate::transition::record(
                    &current,
                    now,
                    Why::new(Reason::MessageSent).detail(format!("touch {touch} sent while the task became {}", current.status)),
                )
            };
            next.touch = touch + 1;
            next.attempts = 0;
            if touch == 0 {
                next.thread_subject = Some(sent.subject.clone());
            }
            if !next.thread.iter().any(|m| m.message_id == sent.message_id) {
                next.thread.push(ThreadMessage {
                    message_id: sent.message_id.clone(),
                    provider_message_id: sent.provider_message_id.clone(),
                });
            }
            next.answer = None;
            if next.status == TaskStatus::Waiting {
                next.next_action_at = Some(if next.awaiting.is_some() {
                    // The member wrote while this mail was going out: read it now.
                    now
                } else {
                    def.cadence.next_after_touch(touch, now, next.budget.expires_at)
                });
            }
            let mut commit = TaskCommit::new(next, log);
            commit.messages.push(message.clone());
            commit.send = Some(SendEffect::Record { outbound: sent.clone() });
            match self.store.commit(&commit).await {
                Ok(()) => return Ok(StepOutcome::Sent { touch }),
                Err(StoreError::Conflict(Conflict::Version)) => {
                    current = self
                        .store
                        .get_task(current.account_id, current.id)
                        .await?
                        .ok_or(EngineError::NotFound { what: "task" })?;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// A failed step: back off and retry (spec §7.11), or hand it to the owner.
    async fn retry_or_escalate(
        &self,
        task: Task,
        now: Timestamp,
        failed: Retried,
        error: &str,
        release: Option<SendEffect>,
    ) -> Result<StepOutcome, EngineError> {
        let attempts = task.attempts + 1;
        let reason = failed.reason();
        let (outcome, commit) = match limits::retry_delay(attempts) {
            Some(delay) => {
                let until = now + delay;
                let (mut next, log) = transition(
                    &task,
                    TaskStatus::Waiting,
                    now,
                    Why::new(reason).detail(format!("attempt {attempts} failed: {error}; retrying at {until}")),
                )?;
                next.attempts = attempts;
                next.next_action_at = Some(until);
                (StepOutcome::Deferred { until, reason }, TaskCommit::new(next, log))
            }
            None => {
                let (mut next, log) = transition(
                    &task,
                    TaskStatus::Escalated,
                    now,
                    Why::new(failed.given_up()).detail(format!("{attempts} attempts failed; last error: {error}")),
                )?;
                next.attempts = attempts;
                (
                    StepOutcome::Moved {
                        to: TaskStatus::Escalated,
                        reason: failed.given_up(),
                    },
                    TaskCommit::new(next, log),
                )
            }
        };
        let mut commit = commit;
        commit.send = release;
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(outcome)
    }

    /// A task found in `executing` past its lease: if its touch was reserved, nobody knows
    /// whether the mail left — escalate. Otherwise the step never reached the send: put the
    /// task back in `waiting`, due now, and let the next tick run it.
    async fn recover_stuck(&self, task: Task, now: Timestamp) -> Result<StepOutcome, EngineError> {
        let outbound = self.store.outbound(task.account_id, task.id).await?;
        if let Some(reserved) = outbound
            .into_iter()
            .find(|m| m.touch == task.touch && matches!(m.status, OutboundStatus::Reserved | OutboundStatus::Sent))
        {
            return self.escalate_unknown(task, reserved, now).await;
        }
        let anomaly = crate::anomaly::detect(&task, 0, now).unwrap_or(crate::anomaly::Anomaly::StuckExecuting { since: task.updated_at });
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

    /// The task's conversation, when the step needs it: for the §7.5 reply count of a task
    /// that has written to the member (a reply needs a message to answer), and for a message
    /// the task awaits. `None` otherwise, at no cost.
    async fn conversation_if_needed(&self, task: &Task) -> Result<Option<Vec<ConversationMessage>>, EngineError> {
        if !wrote_to_member(task) && task.awaiting.is_none() {
            return Ok(None);
        }
        Ok(self.store.task_history(task.account_id, task.id).await?.map(|h| h.messages))
    }

    async fn escalate_unknown(&self, task: Task, reserved: OutboundMessage, now: Timestamp) -> Result<StepOutcome, EngineError> {
        let (next, log) = transition(
            &task,
            TaskStatus::Escalated,
            now,
            Why::new(Reason::SendOutcomeUnknown).detail(format!(
                "touch {} was reserved at {} by a worker that did not finish; check whether the member received it",
                reserved.touch, reserved.reserved_at
            )),
        )?;
        let mut commit = TaskCommit::new(next, log);
        if reserved.status == OutboundStatus::Reserved {
            commit.send = Some(SendEffect::Record {
                outbound: OutboundMessage {
                    status: OutboundStatus::Unknown,
                    ..reserved
                },
            });
        }
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Escalated,
            reason: Reason::SendOutcomeUnknown,
        })
    }

    /// The touches (or the time) ran out: the cadence's exhaustion policy decides.
    async fn exhaust(&self, task: Task, now: Timestamp, reason: Reason) -> Result<StepOutcome, EngineError> {
        let cadence = task_type::definition(&task.task_type).cadence;
        match cadence.on_exhaustion {
            OnExhaustion::Cancel => {
                self.move_to(task, TaskStatus::Cancelled, now, Why::new(reason).outcome("unresponsive"))
                    .await
            }
            OnExhaustion::Escalate => {
                let detail = format!(
                    "{} message(s) sent, no resolution; the cadence asks the owner to decide",
                    task.budget.messages_used
                );
                self.move_to(task, TaskStatus::Escalated, now, Why::new(reason).detail(detail))
                    .await
            }
            OnExhaustion::Dormant { check_days, max_days } => {
                if task.status == TaskStatus::Ready {
                    // Never started: there is nothing to watch for.
                    return self
                        .move_to(task, TaskStatus::Cancelled, now, Why::new(reason).outcome("unresponsive"))
                        .await;
                }
                let (mut next, log) = transition(
                    &task,
                    TaskStatus::Dormant,
                    now,
                    Why::new(reason).detail(format!("no more messages; watching for outcome signals for up to {max_days} days")),
                )?;
                next.dormant_at = Some(now);
                next.dormant_expires_at = Some(now + SignedDuration::from_hours(24 * i64::from(max_days)));
                next.next_action_at = Some(now + SignedDuration::from_hours(24 * i64::from(check_days)));
                self.store.commit(&TaskCommit::new(next, log)).await?;
                Ok(StepOutcome::Moved {
                    to: TaskStatus::Dormant,
                    reason,
                })
            }
        }
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
        let reason = why.reason;
        let expected_version = task.version;
        let mut logs = Vec::new();
        let mut current = task;
        if !current.status.can_move_to(to) && current.status.can_move_to(TaskStatus::Executing) {
            let (started, log) = start_handling(&current, now, reason)?;
            logs.push(log);
            current = started;
        }
        let (next, log) = transition(&current, to, now, why)?;
        logs.push(log);
        // Both steps in one commit, conditional on the version this worker read.
        let commit = TaskCommit {
            expected_version,
            task: next.clone(),
            log: logs,
            messages,
            send: None,
        };
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        self.publish_closed(&next).await;
        Ok(StepOutcome::Moved { to, reason })
    }

    /// The dormant worker: expiry, or the next quiet check. Never sends.
    pub async fn dormant_check(&self, item: &WorkItem) -> Result<StepOutcome, EngineError> {
        if self.store.system_config().await?.global_pause {
            return Ok(StepOutcome::Skipped("global_pause".into()));
        }
        let now = self.clock.now();
        let Some(task) = self.store.get_task(item.account_id, item.task_id).await? else {
            return Ok(StepOutcome::Skipped("task_not_found".into()));
        };
        if task.status == TaskStatus::Escalated {
            return self.escalation_timer(task, now).await;
        }
        if task.status != TaskStatus::Dormant || !task.next_action_at.is_some_and(|due| limits::is_due(due, now)) {
            return Ok(StepOutcome::Skipped("not_due".into()));
        }
        // Did the member reach the goal meanwhile? (Spec §6.4 phase 4; no sends, no AI.)
        if let Some(completed) = self.dormant_goal(&task, now).await? {
            return Ok(completed);
        }
        if task.dormant_expires_at.is_some_and(|end| limits::is_due(end, now)) {
            return self
                .move_to(
                    task,
                    TaskStatus::Cancelled,
                    now,
                    Why::new(Reason::DormantWindowExpired).outcome("unresponsive"),
                )
                .await;
        }
        let OnExhaustion::Dormant { check_days, .. } = task_type::definition(&task.task_type).cadence.on_exhaustion else {
            return self
                .move_to(
                    task,
                    TaskStatus::Cancelled,
                    now,
                    Why::new(Reason::DormantWithoutDormantCadence).outcome("unresponsive"),
                )
                .await;
        };
        let next_check = now + SignedDuration::from_hours(24 * i64::from(check_days));
        let until = task.dormant_expires_at.map_or(next_check, |end| end.min(next_check));
        self.store
            .commit(&Self::reschedule(
                &task,
                until,
                now,
                Why::new(Reason::DormantCheckNoSignal).detail(format!("next check {until}")),
            ))
            .await?;
        Ok(StepOutcome::Deferred {
            until,
            reason: Reason::DormantCheckNoSignal,
        })
    }
}

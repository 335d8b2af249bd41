//! Member signals: a webhook's member event accepted once onto the signals queue; then, from
//! the queue, projected into member facts, firing the triggers that open tasks (today: a
//! failed payment opens `payment_recovery`).

use jiff::{SignedDuration, Timestamp};

use super::tasks::{Created, NewTask};
use super::{Engine, boxed};
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::kernel::limits::{CHECKIN_MILESTONES, WEBHOOK_DEDUP_TTL};
use crate::members::event::{MemberEvent, SignalEnvelope, WebhookEvent};
use crate::members::member::MemberFacts;
use crate::rails::gate::GateContext;
use crate::task::TriggerType;
use crate::task::error::EngineError;
use crate::task::work::QueueName;

/// What became of an authenticated member event.
#[derive(Debug, PartialEq, Eq)]
pub enum Accepted {
    /// Its webhook id was claimed and the event is on the signals queue.
    Queued,
    /// Its webhook id was accepted before (the sender's retry): nothing is queued again.
    Duplicate,
}

/// What a signal did.
#[derive(Debug, PartialEq, Eq)]
pub enum SignalOutcome {
    Applied {
        task_created: Option<crate::kernel::ids::TaskId>,
    },
    Duplicate,
    UnknownAccount,
    /// About a member who was erased: nothing kept, nothing opened.
    Erased,
}

/// The instants member events are accepted at, strictly increasing for this engine: two
/// webhooks accepted in the same instant (a test's clock stands still; a fast sender) still
/// keep the order they arrived in, a nanosecond apart.
#[derive(Debug)]
pub(crate) struct Arrivals {
    last: std::sync::Mutex<Option<Timestamp>>,
}

impl Default for Arrivals {
    fn default() -> Self {
        Self {
            last: std::sync::Mutex::new(None),
        }
    }
}

impl Arrivals {
    /// The acceptance instant of an event received at `now`: `now`, or a nanosecond after the
    /// last one handed out when the clock has not moved past it.
    pub(crate) fn next(&self, now: Timestamp) -> Timestamp {
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = match *last {
            Some(before) if now <= before => before.checked_add(SignedDuration::from_nanos(1)).unwrap_or(before),
            _ => now,
        };
        *last = Some(next);
        next
    }
}

impl Engine {
    /// Accept a member event whose webhook signature was checked: put it on the signals queue
    /// for [`Self::apply_signal`], then claim its webhook id (once per account, remembered for
    /// [`WEBHOOK_DEDUP_TTL`]) to answer a repeated delivery as a duplicate. Queued first: a
    /// function that dies between the two leaves no claim, so the sender's retry is queued
    /// again rather than read as a duplicate of an event nobody kept. A repeated delivery is
    /// queued once more before its claim is found; [`Self::apply_signal`] applies an event
    /// once, whatever its copies. When the queue refuses it, nothing is claimed and the answer
    /// is [`EngineError::Dependency`].
    pub async fn accept_member_event(
        &self,
        account_id: AccountId,
        webhook_id: &str,
        event: WebhookEvent,
        received_at: Timestamp,
    ) -> Result<Accepted, EngineError> {
        // The acceptance order travels with the event: at the same event time, the later
        // accepted wins when the facts are projected, whatever order the queue hands them on in.
        let received_at = self.arrivals.next(received_at);
        let envelope = SignalEnvelope {
            account_id,
            webhook_id: webhook_id.to_owned(),
            received_at,
            event,
        };
        let message = serde_json::to_string(&envelope).map_err(|e| InvalidInput::new("invalid_event", e.to_string()))?;
        if let Err(e) = self.queue.send(QueueName::Signals, vec![(message, SignedDuration::ZERO)]).await {
            tracing::error!(error = %e, "signal not queued");
            return Err(EngineError::Dependency(format!("the signals queue: {e}")));
        }
        let source = format!("pushpress:{account_id}");
        if !self
            .store
            .claim_webhook(&source, webhook_id, received_at, received_at + WEBHOOK_DEDUP_TTL)
            .await?
        {
            return Ok(Accepted::Duplicate);
        }
        Ok(Accepted::Queued)
    }

    pub async fn apply_signal(&self, envelope: &SignalEnvelope) -> Result<SignalOutcome, EngineError> {
        boxed(self.apply_signal_to(envelope)).await
    }

    async fn apply_signal_to(&self, envelope: &SignalEnvelope) -> Result<SignalOutcome, EngineError> {
        let Some(account) = self.store.get_account(envelope.account_id).await?.filter(|a| a.removal.is_none()) else {
            tracing::warn!(account = %envelope.account_id, "signal for an unknown account (or one being removed) dropped");
            return Ok(SignalOutcome::UnknownAccount);
        };
        let event = &envelope.event.event;
        let member_id = event.member_id().clone();
        // Project the facts under optimistic locking; a redelivered event changes nothing.
        let mut facts = None;
        for _ in 0..5 {
            let stored = self.store.get_member(account.id, &member_id).await?.map(|(f, _)| f);
            let new_member = stored.is_none();
            let mut current = stored.unwrap_or_else(|| MemberFacts::new(member_id.clone()));
            if !current.apply_accepted(&envelope.webhook_id, event, envelope.event.timestamp, envelope.received_at) {
                facts = Some((current, false));
                break;
            }
            // An erased member stays forgotten: what arrives about them is not kept.
            if new_member && self.erased_identity(account.id, &member_id, Some(&current)).await? {
                tracing::info!(account = %account.id, "a member event about an erased member dropped");
                return Ok(SignalOutcome::Erased);
            }
            current.version += 1;
            match self.store.save_member_facts(account.id, &current).await {
                Ok(()) => {
                    facts = Some((current, true));
                    break;
                }
                Err(StoreError::Conflict(Conflict::MemberFacts)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        let Some((facts, fresh)) = facts else {
            return Err(EngineError::StaleVersion);
        };

        // Triggers run even for a redelivered event: task creation is deduplicated by the
        // active guard, so a crash between projection and creation is repaired by the retry.
        // One event creates at most a few tasks (spec §7.9); a refused one is logged, not retried.
        let burst = crate::task::flood::Burst::webhook_event();
        // The built-in rows the owner switched off open nothing (`rules/triggers.toml`).
        let book = self.store.trigger_book(account.id).await?;
        let created = match event {
            MemberEvent::PaymentFailed {
                amount,
                currency,
                reason,
                failed_at,
                ..
            } if book.builtin_on("payment_failed") => {
                let now = self.clock.now();
                let tenure_days = facts.joined_at.map(|j| now.duration_since(j).as_hours() / 24);
                let input = NewTask {
                    task_type: "payment_recovery".into(),
                    member_id,
                    goal: format!(
                        "Recover the failed payment of {} from {} without embarrassing the member",
                        crate::kernel::plural::amount(*amount, currency),
                        failed_at.to_zoned(account.settings.time_zone()).strftime("%b %-d")
                    ),
                    confidence: Some(90),
                    draft: None,
                    trigger_type: TriggerType::Webhook,
                    trigger_event_id: Some(envelope.webhook_id.clone()),
                    gate: GateContext {
                        tenure_days,
                        monthly_value: facts.monthly_value,
                        cancellation_reason: None,
                    },
                    context: serde_json::json!({"amount": amount, "currency": currency, "reason": reason, "failed_at": failed_at}),
                };
                match self.create_task_in(&account, input, &burst).await {
                    Ok(Created::New(task)) => Some(task.id),
                    // A limit, or a suppressed member: skipped and logged by the creation path.
                    Ok(Created::Existing(_)) | Err(EngineError::Limited(_) | EngineError::MemberSuppressed { .. }) => None,
                    Err(e) => return Err(e),
                }
            }
            // A check-in that brings the member to a milestone (spec §12, §20.4): a review
            // request, once — only when this event moved the count (a redelivery does not).
            MemberEvent::CheckinCreated { checked_in_at, .. }
                if fresh
                    && CHECKIN_MILESTONES.contains(&facts.checkin_count)
                    && book.builtin_on("checkin_milestone")
                    && milestone_is_current(*checked_in_at, facts.last_checkin_at, self.clock.now()) =>
            {
                let n = facts.checkin_count;
                let name = facts.first_name.clone().unwrap_or_else(|| "the member".into());
                let input = NewTask {
                    task_type: "milestone_review".into(),
                    member_id,
                    goal: format!("Congratulate {name} on their {n}th check-in and invite a review, without pressure"),
                    confidence: Some(80),
                    draft: None,
                    trigger_type: TriggerType::Webhook,
                    trigger_event_id: Some(envelope.webhook_id.clone()),
                    gate: GateContext {
                        tenure_days: facts.joined_at.map(|j| self.clock.now().duration_since(j).as_hours() / 24),
                        monthly_value: facts.monthly_value,
                        cancellation_reason: None,
                    },
                    context: serde_json::json!({"milestone": n, "checkin_count": n}),
                };
                match self.create_task_in(&account, input, &burst).await {
                    Ok(Created::New(task)) => Some(task.id),
                    // A limit, or a suppressed member: skipped and logged by the creation path.
                    Ok(Created::Existing(_)) | Err(EngineError::Limited(_) | EngineError::MemberSuppressed { .. }) => None,
                    Err(e) => return Err(e),
                }
            }
            // A new lead is answered within minutes, not at the next scan (CONTRACT.md "The
            // owner away"), where the first touch may go without review (`limited_auto`;
            // a manual owner's queue keeps the scan's follow-up): the scan's own lead
            // episode, claimed with the task, so it is acted on once. A redelivery acts too:
            // a crash after the projection and before the task is repaired by it, while a
            // lead already answered is found by its guard or its claim.
            MemberEvent::MemberCreated { .. }
                if account.settings.execution_mode == crate::owner::account::ExecutionMode::LimitedAuto
                    && facts.status == Some(crate::members::event::MemberStatus::Lead)
                    && facts.trial_booked_at.is_none()
                    && book.builtin_on("new_lead") =>
            {
                self.answer_new_lead(&account, &facts, &envelope.webhook_id, &burst).await?
            }
            MemberEvent::Enrollment { enrollment, .. } if book.builtin_on("enrollment_alert") => {
                self.inferred_payment_trouble(&account, &facts, enrollment, &envelope.webhook_id, &burst)
                    .await?
            }
            _ => None,
        };
        let builtin = match event {
            MemberEvent::PaymentFailed { .. } => "payment_failed",
            MemberEvent::MemberCreated { .. } => "new_lead",
            MemberEvent::CheckinCreated { .. } => "checkin_milestone",
            _ => "enrollment_alert",
        };
        if let Some(task) = created {
            self.builtin_fired(account.id, builtin, &facts.member_id, &envelope.webhook_id, task)
                .await;
        }
        // The owner's own rows (`POST /api/v1/triggers`).
        let fired = self.fire_triggers(&account, &book, &facts, envelope, &burst).await?;
        let created = created.or(fired.first().copied());
        // Every open loop the event satisfies is met in the same pass (a check-in can meet a
        // churn task's and a to-do's); a booking or a no-show moves the trial's loop. First,
        // so a task the event closes below closes with its goal loop met, not expired.
        let met = self.loops_on_event(&account, &facts, envelope, fresh, &burst).await?;
        // A signal that shows a dormant or waiting task's goal closes it at once (also for a
        // redelivered event: closing is idempotent and repairs a crash after projection).
        let closed = self.close_reached_goals(&account, &facts, event).await?;
        if matches!(event, MemberEvent::CheckinCreated { .. }) {
            self.todos_met_by_checkin(account.id, &facts, &account.settings.time_zone()).await;
        }
        if !fresh && created.is_none() && closed.is_empty() && met.is_empty() {
            return Ok(SignalOutcome::Duplicate);
        }
        Ok(SignalOutcome::Applied { task_created: created })
    }
}

impl Engine {
    /// A lead just told: their follow-up opens now, on the episode the risk scan would find
    /// them by (`lead:{joined_at}`), so the scan does not open a second. Not opened (a limit):
    /// the episode is given back and the scan finds them later.
    async fn answer_new_lead(
        &self,
        account: &crate::owner::account::Account,
        facts: &MemberFacts,
        webhook_id: &str,
        burst: &crate::task::flood::Burst,
    ) -> Result<Option<crate::kernel::ids::TaskId>, EngineError> {
        if facts.email.is_none() && facts.phone.is_none() {
            return Ok(None);
        }
        let episode = crate::engine::learning::analysis::episode_key(
            account.id,
            &facts.member_id,
            "lead_followup",
            &crate::rails::risk::lead_episode(facts.joined_at),
        );
        let name = facts
            .first_name
            .as_deref()
            .map_or_else(|| "them".to_owned(), crate::members::name::as_written);
        let input = NewTask {
            task_type: "lead_followup".into(),
            member_id: facts.member_id.clone(),
            goal: format!("Answer {name}, a new lead, within minutes and help them book a first class"),
            confidence: Some(crate::rails::risk::NEW_LEAD_CONFIDENCE),
            draft: None,
            trigger_type: TriggerType::Webhook,
            trigger_event_id: Some(webhook_id.to_owned()),
            gate: GateContext {
                tenure_days: facts.tenure_days(self.clock.now()),
                monthly_value: facts.monthly_value,
                cancellation_reason: None,
            },
            context: serde_json::json!({"new_lead": true, "why": "a new lead, answered as they arrive"}),
        };
        // Acted on already (by the scan, or by this event before a crash), a limit, or a
        // suppressed member: nothing more (the creation path logs what it refused).
        match self.create_for_episode(account, input, burst, &episode).await {
            Ok(Some(Created::New(task))) => Ok(Some(task.id)),
            Ok(None | Some(Created::Existing(_))) | Err(EngineError::Limited(_) | EngineError::MemberSuppressed { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A milestone's check-in is congratulated only when it is the member's latest and recent
/// (`MILESTONE_CHECKIN_FRESH_HOURS`): a late or replayed check-in of weeks ago would praise a
/// member for showing up while they have stopped coming.
fn milestone_is_current(checked_in_at: Timestamp, latest: Option<Timestamp>, now: Timestamp) -> bool {
    latest.is_none_or(|latest| checked_in_at >= latest)
        && now.duration_since(checked_in_at) <= SignedDuration::from_hours(crate::kernel::limits::MILESTONE_CHECKIN_FRESH_HOURS)
}

//! The at-most-once bookkeeping of a touch: the reservation — the task's
//! budget, the member's ledger, the account's daily counter and the outbound record for this
//! touch, in one conditional commit — the record of what the provider said, and the escalation
//! of a reservation whose fate nobody knows. A reservation that is committed is never sent
//! again: a worker that finds one it did not finish escalates.

use jiff::{SignedDuration, Timestamp};

use super::work::{MAX_RACES, StepOutcome};
use super::{Engine, boxed};
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::new_ulid;
use crate::kernel::limits;
use crate::members::member::SendLedger;
use crate::owner::account::Account;
use crate::ports::SendError;
use crate::rails::step::Failure;
use crate::rails::{send_gate, window};
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type;
use crate::task::transition::{Why, transition};
use crate::task::{
    ConversationMessage, Draft, EscalationContext, LogEntry, OutboundMessage, OutboundStatus, Role, Task, TaskStatus, ThreadMessage,
};

/// What a reservation attempt came to.
pub(in crate::engine) enum Reservation {
    Made(Box<Task>),
    /// The claim that was to ride in the reservation's commit lost its race: another worker
    /// has the task.
    ClaimedElsewhere,
    Defer(Timestamp, Why),
    AlreadyReserved,
}

impl Engine {
    /// Commit the reservation; when another send to the member raced it, re-read the ledger
    /// and decide again. `claim`, the claim's log entry when it is not committed yet, goes in
    /// the reservation's commit (over the version the step read); a reservation that does not
    /// happen commits the claim alone first, so what follows finds the task claimed.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn reserve(
        &self,
        account: &Account,
        claimed: &Task,
        claim: Option<LogEntry>,
        outbound: &OutboundMessage,
        ledger_key: &str,
        mut ledger: SendLedger,
        now: Timestamp,
    ) -> Result<Reservation, EngineError> {
        // Held out stays held out: whatever status a held-out member's task reached, nothing
        // is reserved for it, so nothing is sent.
        if claimed.is_held_out() {
            return Err(EngineError::InvalidState {
                status: claimed.status,
                action: "send (its member is held out)",
            });
        }
        let settings = &account.settings;
        let tz = settings.time_zone();
        let not_made = async |reservation: Reservation| -> Result<Reservation, EngineError> {
            let Some(claim) = claim.clone() else {
                return Ok(reservation);
            };
            match self.store.commit(&TaskCommit::new(claimed.clone(), claim)).await {
                Ok(()) => Ok(reservation),
                Err(StoreError::Conflict(Conflict::Version)) => Ok(Reservation::ClaimedElsewhere),
                Err(e) => Err(e.into()),
            }
        };
        for _ in 0..MAX_RACES {
            if let Some((until, why)) = send_gate::limits_of(claimed, &ledger, settings, now) {
                return not_made(Reservation::Defer(until, why)).await;
            }
            let mut sends = limits::prune_ledger(&ledger.sends, now);
            sends.insert(ledger_key.to_owned(), now);
            let new_ledger = SendLedger {
                sends,
                version: ledger.version + 1,
            };
            let (mut next, log) = crate::task::transition::record(
                claimed,
                now,
                Why::new(Reason::SendReserved).detail(format!("message {} to {}", outbound.touch + 1, outbound.to)),
            );
            next.budget.messages_used += 1;
            let mut commit = TaskCommit::new(next.clone(), log);
            if let Some(claim) = &claim {
                // Both steps in one commit, over the version the step read.
                commit.log.insert(0, claim.clone());
                commit.expected_version -= 1;
            }
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
                Err(StoreError::Conflict(Conflict::Version)) if claim.is_some() => return Ok(Reservation::ClaimedElsewhere),
                Err(StoreError::Conflict(Conflict::MemberLedger)) => {
                    ledger = self
                        .store
                        .get_member(account.id, &claimed.member.id)
                        .await?
                        .map(|(_, l)| l)
                        .unwrap_or_default();
                }
                Err(StoreError::Conflict(Conflict::DailyLimit)) => {
                    return not_made(Reservation::Defer(
                        send_gate::next_local_day(now, &tz),
                        Why::new(Reason::DailySendLimit).detail("reached while reserving"),
                    ))
                    .await;
                }
                Err(StoreError::Conflict(Conflict::OutboundExists)) => {
                    return not_made(Reservation::AlreadyReserved).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        not_made(Reservation::Defer(
            now + SignedDuration::from_mins(1),
            Why::new(Reason::MemberLedgerContended),
        ))
        .await
    }

    /// The mail left: `executing → waiting` with the next touch scheduled, the outbound
    /// record and the conversation updated. If the owner changed the task meanwhile, the
    /// record is still written on top of their change. A touch the agent drafted logs its
    /// confidence.
    pub(in crate::engine) async fn record_sent(
        &self,
        account: &Account,
        reserved: Task,
        sent: OutboundMessage,
        draft: Draft,
        confidence: Option<u8>,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let touch = sent.touch;
        let sure = confidence.map(|c| format!(" (drafted at confidence {c})")).unwrap_or_default();
        let def = task_type::definition(&reserved.task_type);
        let message = ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::Agent,
            content: draft.body.clone(),
            original: None,
        };
        let mut current = reserved;
        for _ in 0..MAX_RACES {
            let (mut next, log) = if current.status == TaskStatus::Executing {
                transition(
                    &current,
                    TaskStatus::Waiting,
                    now,
                    Why::new(Reason::MessageSent).detail(format!("message {} sent to {}{sure}", touch + 1, sent.to)),
                )?
            } else {
                crate::task::transition::record(
                    &current,
                    now,
                    Why::new(Reason::MessageSent).detail(format!("touch {touch} sent while the task became {}{sure}", current.status)),
                )
            };
            // A holding reply has left: the question it went ahead of goes to the owner now,
            // in the same commit (one move more in the log).
            let mut escalated = None;
            if next.status == TaskStatus::Waiting
                && let Some(held) = next.held_question.clone()
            {
                let (mut moved, moved_log) = transition(&next, TaskStatus::Escalated, now, held.why(None))?;
                moved.escalation = Some(EscalationContext {
                    last_draft: Some(draft.body.clone()),
                    last_draft_sent: Some(true),
                    ..held.context
                });
                next = moved;
                escalated = Some(moved_log);
            }
            next.held_question = None;
            // A parting note has left: the conversation closes now, in the same commit.
            let mut closed = None;
            if next.status == TaskStatus::Waiting
                && let Some(parting) = next.parting.clone()
            {
                let (moved, moved_log) = transition(&next, TaskStatus::Completed, now, parting.why(None))?;
                next = moved;
                closed = Some(moved_log);
            }
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
            let mut log = log;
            if next.status == TaskStatus::Waiting {
                next.next_action_at = Some(if next.awaiting.is_some() {
                    // The member wrote while this mail was going out: read it now.
                    now
                } else {
                    // The cadence's day, in the afternoon hours (spec §29.3).
                    let (at, why) = window::after_touch_at(&account.settings, &next, &def.cadence, touch, now);
                    if let Some(why) = why {
                        log.detail = Some(log.detail.map_or(why.clone(), |d| format!("{d}; {why}")));
                    }
                    at
                });
            }
            // What the touch now waits for: a reply by the next step, the goal by its window —
            // noted on the task in the same commit, where its next step reads them. A loop
            // still open past its deadline ends here: this touch was its follow-up.
            let status = next.status;
            let mut loops = crate::task::task_loops::on_move(&mut next, status, now);
            if next.status == TaskStatus::Waiting {
                let new = crate::task::open_loop::loops_for_sent_touch(&next, touch, next.next_action_at, now);
                crate::task::task_loops::note(&mut next, &new);
                loops.extend(new);
                // The next step is due when the first of its open loops is.
                if next.awaiting.is_none()
                    && let Some(first) = crate::task::task_loops::earliest_open_deadline(&next)
                {
                    next.next_action_at = Some(next.next_action_at.map_or(first, |at| at.min(first)));
                }
            }
            let mut commit = TaskCommit::new(next, log);
            let escalates = escalated.is_some();
            let closes = closed.is_some();
            if let Some(moved) = escalated.or(closed) {
                commit.expected_version -= 1;
                commit.log.push(moved);
            }
            if closes {
                commit = commit.webhooks_for(Some(account));
            }
            commit.messages.push(message.clone());
            commit.send = Some(SendEffect::Record { outbound: sent.clone() });
            commit.loops = loops;
            match self.store.commit(&commit).await {
                Ok(()) => {
                    if escalates {
                        self.notify_commit(&commit).await;
                    }
                    if closes {
                        self.publish_closed(&commit).await;
                    }
                    return Ok(StepOutcome::Sent { touch });
                }
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

    /// What the provider said of a reserved touch (`outbound`, by mail or text), recorded:
    /// sent (`result` is its record as sent; `as_sent` the words that left), refused (nothing
    /// went out: the reservation under `ledger_key` is given back and the touch retried after
    /// a back-off), or unknown (escalated, never retried blind). `channel` names the touch in
    /// the log: "touch" or "text".
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn record_send(
        &self,
        account: &Account,
        reserved: Task,
        outbound: OutboundMessage,
        result: Result<OutboundMessage, SendError>,
        as_sent: Draft,
        confidence: Option<u8>,
        ledger_key: String,
        channel: &str,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let touch = outbound.touch;
        match result {
            // Boxed: the record is a large future, and a send's path is deep enough already.
            Ok(sent) => boxed(self.record_sent(account, reserved, sent, as_sent, confidence, now)).await,
            Err(SendError::Rejected(reason)) => {
                let release = SendEffect::Release {
                    outbound: OutboundMessage {
                        status: OutboundStatus::Failed,
                        ..outbound
                    },
                    member_id: reserved.member.id.clone(),
                    ledger_key,
                    daily_date: limits::local_date(now, &account.settings.time_zone()),
                };
                let mut given_back = reserved;
                given_back.budget.messages_used = given_back.budget.messages_used.saturating_sub(1);
                self.after_failure(given_back, now, Failure::Send, &reason, Some(release)).await
            }
            Err(SendError::Ambiguous(reason)) => {
                tracing::error!(task = %reserved.id, touch, channel, %reason, "send outcome unknown; escalating, never retrying blind");
                let unknown = OutboundMessage {
                    status: OutboundStatus::Unknown,
                    ..outbound
                };
                let detail = format!("{channel} {touch}: {reason}. Check whether the member received it before retrying.");
                let (next, log) = transition(
                    &reserved,
                    TaskStatus::Escalated,
                    now,
                    Why::new(Reason::SendOutcomeUnknown).detail(detail),
                )?;
                let mut commit = TaskCommit::new(next, log).webhooks_for(Some(account));
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

    /// A touch whose reservation nobody finished (`reserved`): whether the mail left is
    /// unknown, so the owner checks — it is never sent again.
    pub(in crate::engine) async fn escalate_unknown(
        &self,
        task: Task,
        reserved: OutboundMessage,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
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
}

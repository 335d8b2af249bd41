//! Escalation timeouts: an escalated task the owner has not touched gets one
//! reminder after 48 hours and is cancelled after 7 days (`escalation_timeout`), so stale
//! escalations do not pile up in the owner's queue.
//!
//! Escalating schedules the timer ([`crate::task::transition::transition`] sets `next_action_at`),
//! the tick hands the task to the dormant worker, and that worker lands here. Every owner
//! action on an escalated task (guidance, resolve, cancel) moves it out of `escalated` and
//! ends the timer; the worker re-reads the task and every write is conditional on the
//! version it read, so an owner who acts at the same moment wins.

use jiff::Timestamp;

use super::Engine;
use super::owner_notices::NoticeDraft;
use super::work::StepOutcome;
use crate::kernel::ids::new_ulid;
use crate::kernel::limits::{self, ESCALATION_REMINDER_AFTER, ESCALATION_REMINDERS_PER_DAY, ESCALATION_TIMEOUT};
use crate::owner::owner_notice::NoticeKind;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::task::{ConversationMessage, LogEntry, Role, Task, TaskStatus};

/// Where an escalation's timer stands, from the task's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Nothing due before `at`.
    Wait { at: Timestamp },
    /// The 48-hour reminder is due; the timeout then falls at `timeout_at`.
    Remind { timeout_at: Timestamp },
    /// Seven days passed without the owner.
    TimeOut { escalated_at: Timestamp },
}

/// Decide from the log (oldest first) when the current escalation began and whether its
/// reminder went out.
pub(crate) fn timer(log: &[LogEntry], fallback: Timestamp, now: Timestamp) -> Timer {
    let began = log
        .iter()
        .rposition(|l| l.to_status == TaskStatus::Escalated && l.from_status != Some(TaskStatus::Escalated));
    let escalated_at = began.map_or(fallback, |i| log[i].at);
    let reminded = began.is_some_and(|i| log[i..].iter().any(|l| l.reason == Reason::EscalationReminder.as_str()));
    let timeout_at = escalated_at + ESCALATION_TIMEOUT;
    if limits::is_due(timeout_at, now) {
        Timer::TimeOut { escalated_at }
    } else if reminded {
        Timer::Wait { at: timeout_at }
    } else if limits::is_due(escalated_at + ESCALATION_REMINDER_AFTER, now) {
        Timer::Remind { timeout_at }
    } else {
        Timer::Wait {
            at: escalated_at + ESCALATION_REMINDER_AFTER,
        }
    }
}

impl Engine {
    /// An escalated task whose goal loop was met closes as won, the owner's question with it.
    async fn settle_on_goal_loop(
        &self,
        task: Task,
        note: crate::task::task_loops::LoopNote,
        signal: &'static crate::task::task_type::GoalSignal,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let Some(account) = self.store.get_account(task.account_id).await? else {
            return Err(EngineError::NotFound { what: "account" });
        };
        let reached = super::work::goal_reached(&note, signal, now);
        let reason = self
            .complete_on_goal(task, &reached, &account, now, "the escalation's timer")
            .await?;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Completed,
            reason,
        })
    }

    /// The dormant worker's step for an escalated task.
    pub(crate) async fn escalation_timer(&self, task: Task, now: Timestamp) -> Result<StepOutcome, EngineError> {
        if !task.next_action_at.is_some_and(|due| limits::is_due(due, now)) {
            return Ok(StepOutcome::Skipped("not_due".into()));
        }
        // One consistent read of the task with its log: when did this escalation begin?
        let Some(history) = self.store.task_history(task.account_id, task.id).await? else {
            return Ok(StepOutcome::Skipped("task_not_found".into()));
        };
        let task = history.task;
        if task.status != TaskStatus::Escalated {
            return Ok(StepOutcome::Skipped(format!("status_{}", task.status)));
        }
        // The goal met while the owner was away (the member paid, came back): the task is won,
        // whatever the owner was asked.
        if let crate::task::task_loops::Verdict::GoalMet { note, signal } = crate::task::task_loops::verdict(&task, now) {
            return self.settle_on_goal_loop(task, note, signal, now).await;
        }
        match timer(&history.log, task.updated_at, now) {
            Timer::TimeOut { escalated_at } => {
                let why = Why::new(Reason::EscalationTimeout).detail(format!(
                    "This task was escalated on {escalated_at} but not addressed within {} days.",
                    ESCALATION_TIMEOUT.as_hours() / 24
                ));
                // Never cancelled for want of an answer before its member is on the call list.
                let what = format!(
                    "Call {}: they waited {} for your answer ({})",
                    task.member.label(),
                    crate::kernel::plural::count(ESCALATION_TIMEOUT.as_hours() / 24, "day", "days"),
                    crate::task::escalation::reason_in_words(task.outcome_reason.as_deref().unwrap_or("escalated"))
                );
                let closed = self.close_onto_call_list(task, what, why, now).await?;
                tracing::info!(task = %closed.id, "escalation timed out; cancelled, its member on the call list");
                Ok(StepOutcome::Moved {
                    to: TaskStatus::Cancelled,
                    reason: Reason::EscalationTimeout,
                })
            }
            Timer::Remind { timeout_at } => {
                // The reminder is a batchable owner notice (spec §35): it waits for a day with
                // budget left rather than being dropped, but never past the timeout.
                let account = self.store.get_account(task.account_id).await?;
                let budget = match &account {
                    Some(account) => self.claim_notice_budget(account, NoticeKind::EscalationReminder, now).await?,
                    None => Ok(()),
                };
                let tz = account.as_ref().map_or(jiff::tz::TimeZone::UTC, |a| a.settings.time_zone());
                if let Err(tomorrow) = budget {
                    let at = tomorrow.min(timeout_at);
                    let why = Why::new(Reason::OwnerNotificationBudgetUsed).detail(format!(
                        "{ESCALATION_REMINDERS_PER_DAY} escalation reminders went to the owner today; this one waits until {at}"
                    ));
                    self.store.commit(&Self::reschedule(&task, at, now, why)).await?;
                    return Ok(StepOutcome::Deferred {
                        until: at,
                        reason: Reason::OwnerNotificationBudgetUsed,
                    });
                }
                let hours = ESCALATION_REMINDER_AFTER.as_hours();
                let (mut next, log) = record(
                    &task,
                    now,
                    Why::new(Reason::EscalationReminder).detail(format!(
                        "escalated {hours} hours ago and untouched; the owner is reminded, and it is cancelled at {timeout_at} unless they act"
                    )),
                );
                next.next_action_at = Some(timeout_at);
                let mut commit = TaskCommit::new(next, log);
                commit.messages.push(ConversationMessage {
                    id: new_ulid(now),
                    at: now,
                    role: Role::System,
                    content: format!(
                        "Reminder: this task has waited for you for {hours} hours: {}. Give guidance, resolve it or cancel it; otherwise it is cancelled on {timeout_at}.",
                        crate::task::escalation::reason_in_words(task.outcome_reason.as_deref().unwrap_or("escalated"))
                    ),
                    original: None,
                });
                self.store.commit(&commit).await?;
                tracing::info!(task = %task.id, "escalation reminder");
                let draft = NoticeDraft {
                    kind: NoticeKind::EscalationReminder,
                    task_id: Some(task.id),
                    member_id: Some(task.member.id.clone()),
                    title: format!(
                        "{} still needs you ({})",
                        task.member.label(),
                        super::owner_notices::type_label(&task.task_type)
                    ),
                    detail: format!(
                        "It has waited for you for {hours} hours: {}. Give guidance, resolve or cancel it; otherwise it is cancelled on {}.",
                        crate::task::escalation::reason_in_words(task.outcome_reason.as_deref().unwrap_or("escalated")),
                        crate::owner::owner_notice::when(timeout_at, &tz)
                    ),
                };
                self.notify_owner_after(task.account_id, draft, true).await;
                Ok(StepOutcome::Deferred {
                    until: timeout_at,
                    reason: Reason::EscalationReminder,
                })
            }
            Timer::Wait { at } => {
                self.store
                    .commit(&Self::reschedule(&task, at, now, Why::new(Reason::EscalationTimerRescheduled)))
                    .await?;
                Ok(StepOutcome::Deferred {
                    until: at,
                    reason: Reason::EscalationTimerRescheduled,
                })
            }
        }
    }
}

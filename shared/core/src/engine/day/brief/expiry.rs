//! Nothing found is dropped in silence. A review item the owner
//! leaves undecided gets a last call a day before its `review_expiry_days` run out; then the
//! account's `on_review_expiry` decides: `call_list` (the default) puts the member on the to-do
//! list and closes the task as `review_expired` with its `todo_id`; `send_default` sends its
//! draft as the owner would have approved it; `close` closes it, nothing sent. A lead or a
//! payment always reaches the call list, whatever the setting. The next morning brief says how
//! many closed. A staff to-do waiting for approval is left alone: it is on the call list
//! already, where its own reminders and escalation apply.
//!
//! A closed item that sent nothing never counts as handling its member: the risk scan's claim
//! on the episode is given back, and the scan finds the member again once no to-do of the call
//! list has them (`engine/learning/analysis.rs`).

use jiff::{SignedDuration, Timestamp};

use super::REVIEW_EXPIRED;
use crate::engine::Engine;
use crate::engine::owner_notices::{NoticeDraft, type_label};
use crate::owner::account::Account;
use crate::owner::owner_notice::NoticeKind;
use crate::owner::quiet::OnReviewExpiry;
use crate::ports::TaskQuery;
use crate::task::commit::TaskCommit;
use crate::task::controls::TaskMode;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::{self, Category};
use crate::task::transition::{Why, transition};
use crate::task::{Task, TaskStatus, TriggerType};

/// The review queue's pages one run reads at most (each of [`PAGE`]).
const PAGES: usize = 4;
const PAGE: usize = 50;
/// The idempotency-record source of the last calls: one per review item.
const LAST_CALL_SOURCE: &str = "review_last_call";

/// The task types that always reach the call list at expiry: a lead who asked and a payment
/// that fails are never left to a template or to nothing.
const ALWAYS_CALLED: [&str; 2] = ["lead_followup", "payment_recovery"];

/// What becomes of one expiring review item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AtExpiry {
    CallList,
    Send,
    Close,
}

/// What `setting` makes of `task` at expiry.
fn at_expiry(setting: OnReviewExpiry, task: &Task) -> AtExpiry {
    if ALWAYS_CALLED.contains(&task.task_type.as_str()) {
        return AtExpiry::CallList;
    }
    match setting {
        OnReviewExpiry::CallList => AtExpiry::CallList,
        // Only a plain first message can go as drafted; anything else (no draft, a plan, a
        // batch, an automation) is the owner's to decide, so it reaches the list.
        OnReviewExpiry::SendDefault if sendable_as_drafted(task) => AtExpiry::Send,
        OnReviewExpiry::SendDefault => AtExpiry::CallList,
        OnReviewExpiry::Close => AtExpiry::Close,
    }
}

/// When a review item's wait is counted from: its creation, or later for one the owner put
/// off ("remind me tomorrow"), so that it comes back at its last call and is decided a day
/// after, never while put off.
fn waiting_since(task: &Task, days: i64) -> Timestamp {
    let came = task.in_review_since();
    let back = task
        .snoozed_until
        .map(|until| until + SignedDuration::from_hours(24) - SignedDuration::from_hours(24 * days));
    back.map_or(came, |back| came.max(back))
}

/// What an undecided item leaves unsent: of a first message, everything; of a later one held
/// for the owner (the messages before it went), that one.
fn unsent(task: &Task) -> &'static str {
    if task.touch > 0 {
        "the next message not sent"
    } else {
        "nothing sent"
    }
}

fn sendable_as_drafted(task: &Task) -> bool {
    task_type::definition(&task.task_type).category == Category::Communication
        && task.draft.is_some()
        && task.controls.mode == TaskMode::Live
        && !task.batch
        && !task.controls.agent_planning
        && task.actions.is_empty()
        && task.parent_id.is_none()
}

impl Engine {
    /// Give the account's review items their last call a day before they expire, and decide
    /// those older than its `review_expiry_days`; returns how many were decided.
    pub(crate) async fn expire_reviews(&self, account: &Account, now: Timestamp) -> Result<usize, EngineError> {
        let days = i64::from(account.settings.review_expiry_days);
        let cutoff = now - SignedDuration::from_hours(24 * days);
        let last_call = now - SignedDuration::from_hours(24 * (days - 1).max(0));
        let mut query = TaskQuery {
            status: Some(TaskStatus::PendingReview),
            member_id: None,
            limit: PAGE,
            cursor: None,
        };
        let mut expired = 0;
        for _ in 0..PAGES {
            let (tasks, next) = self.store.list_tasks(account.id, &query).await?;
            for task in tasks.into_iter().filter(reviewed_by_owner) {
                let since = waiting_since(&task, days);
                if since <= cutoff {
                    match self.expire_review(account, task, now).await {
                        Ok(()) => expired += 1,
                        // Decided meanwhile: the owner's word stands.
                        Err(EngineError::StaleVersion | EngineError::InvalidTransition { .. }) => {}
                        Err(e) => return Err(e),
                    }
                } else if since <= last_call {
                    let expires_at = since + SignedDuration::from_hours(24 * days);
                    self.last_call(account, &task, expires_at, now).await?;
                }
            }
            match next {
                Some(cursor) => query.cursor = Some(cursor),
                None => break,
            }
        }
        if expired > 0 {
            tracing::info!(account = %account.id, expired, "undecided review items decided");
        }
        Ok(expired)
    }

    async fn expire_review(&self, account: &Account, task: Task, now: Timestamp) -> Result<(), EngineError> {
        let waited = crate::kernel::plural::count(account.settings.review_expiry_days, "day", "days");
        let name = task.member.label();
        match at_expiry(account.settings.on_review_expiry, &task) {
            AtExpiry::CallList => {
                let why = Why::new(Reason::ReviewExpired)
                    .outcome(REVIEW_EXPIRED)
                    .detail(format!("undecided for {waited}: {}, {name} is on the call list", unsent(&task)));
                let what = crate::engine::day::todos::rules::review_expired(&name, &waited, task.touch > 0);
                let closed = self.close_onto_call_list(task, what, why, now).await?;
                self.release_scan_claim(&closed).await;
            }
            AtExpiry::Send => self.send_as_drafted(task, &waited, now).await?,
            AtExpiry::Close => {
                let why = Why::new(Reason::ReviewExpired)
                    .outcome(REVIEW_EXPIRED)
                    .detail(format!("undecided for {waited}: closed, {}", unsent(&task)));
                let closed = task.clone();
                self.move_to(task, TaskStatus::Cancelled, now, why).await?;
                self.release_scan_claim(&closed).await;
            }
        }
        Ok(())
    }

    /// `pending_review → ready` with the draft as it stands, as the owner's approval would
    /// have done: due now, the first touch's gates (window, caps, quiet days) still apply.
    async fn send_as_drafted(&self, task: Task, waited: &str, now: Timestamp) -> Result<(), EngineError> {
        let why = Why::new(Reason::ReviewExpiredSentAsDrafted)
            .detail(format!("undecided for {waited}: sent as drafted (settings on_review_expiry)"));
        let (mut next, log) = transition(&task, TaskStatus::Ready, now, why)?;
        next.next_action_at = Some(now);
        next.approved_at = Some(now);
        self.store.commit(&TaskCommit::new(next, log)).await?;
        Ok(())
    }

    /// One notice a day before `task` expires at `expires_at`, in the next digest.
    async fn last_call(&self, account: &Account, task: &Task, expires_at: Timestamp, now: Timestamp) -> Result<(), EngineError> {
        let key = format!("{}/{}", account.id, task.id);
        if !self
            .store
            .claim_webhook(LAST_CALL_SOURCE, &key, now, expires_at + SignedDuration::from_hours(24 * 30))
            .await?
        {
            return Ok(());
        }
        let then = match at_expiry(account.settings.on_review_expiry, task) {
            AtExpiry::CallList => format!("{} goes on your call list, {}", task.member.label(), unsent(task)),
            AtExpiry::Send => "its draft is sent as it stands".to_owned(),
            AtExpiry::Close => "it is closed and nothing is sent".to_owned(),
        };
        let tz = account.settings.time_zone();
        let mut detail = format!(
            "Last call: undecided since {}. Approve, edit or skip it before {}; otherwise {then}.",
            crate::owner::owner_notice::when(task.in_review_since(), &tz),
            crate::owner::owner_notice::when(expires_at, &tz),
        );
        if let Some(draft) = &task.draft {
            detail.push_str(&format!("\nDraft: \"{}\"", draft.subject));
        }
        let draft = NoticeDraft {
            kind: NoticeKind::ApprovalNeeded,
            task_id: Some(task.id),
            member_id: Some(task.member.id.clone()),
            title: format!(
                "{}{} — {} closes tomorrow",
                crate::owner::owner_notice::LAST_CALL,
                task.member.label(),
                type_label(&task.task_type)
            ),
            detail,
        };
        // Past the day's approval budget and the owner's absence: a last call is the one
        // notice an item must get.
        self.notify_owner_even_away(account, draft).await;
        Ok(())
    }

    /// A scan's task closed with nothing sent: its episode is the scan's to find again.
    async fn release_scan_claim(&self, task: &Task) {
        if task.trigger_type != TriggerType::CronAnalysis || task.touch > 0 {
            return;
        }
        if let Some(episode) = task.trigger_event_id.as_deref()
            && let Err(e) = self.release_episode(episode).await
        {
            tracing::warn!(task = %task.id, error = %e, "an expired review's scan claim not given back");
        }
    }
}

fn reviewed_by_owner(task: &Task) -> bool {
    task.status == TaskStatus::PendingReview && task_type::definition(&task.task_type).category != Category::StaffTodo
}

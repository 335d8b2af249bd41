//! Nothing nags: a review item the owner leaves undecided for the account's
//! `review_expiry_days` is closed as `review_expired` — cancelled, nothing sent — and the next
//! morning brief says how many. A staff to-do waiting for approval is left alone: it is on the
//! call list, where its own reminders and escalation apply.

use jiff::{SignedDuration, Timestamp};

use super::REVIEW_EXPIRED;
use crate::engine::Engine;
use crate::owner::account::Account;
use crate::ports::TaskQuery;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::{self, Category};
use crate::task::transition::Why;
use crate::task::{Task, TaskStatus};

/// The review queue's pages one run reads at most (each of [`PAGE`]).
const PAGES: usize = 4;
const PAGE: usize = 50;

impl Engine {
    /// Close the account's review items older than its `review_expiry_days`; returns how many.
    pub(crate) async fn expire_reviews(&self, account: &Account, now: Timestamp) -> Result<usize, EngineError> {
        let cutoff = now - SignedDuration::from_hours(24 * i64::from(account.settings.review_expiry_days));
        let mut query = TaskQuery {
            status: Some(TaskStatus::PendingReview),
            member_id: None,
            limit: PAGE,
            cursor: None,
        };
        let mut expired = 0;
        for _ in 0..PAGES {
            let (tasks, next) = self.store.list_tasks(account.id, &query).await?;
            for task in tasks.into_iter().filter(|t| expires(t, cutoff)) {
                let why = Why::new(Reason::ReviewExpired).outcome(REVIEW_EXPIRED).detail(format!(
                    "undecided for {}: closed, nothing sent",
                    crate::kernel::plural::count(account.settings.review_expiry_days, "day", "days")
                ));
                match self.move_to(task, TaskStatus::Cancelled, now, why).await {
                    Ok(_) => expired += 1,
                    // Decided meanwhile: the owner's word stands.
                    Err(EngineError::StaleVersion | EngineError::InvalidTransition { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            match next {
                Some(cursor) => query.cursor = Some(cursor),
                None => break,
            }
        }
        if expired > 0 {
            tracing::info!(account = %account.id, expired, "undecided review items closed");
        }
        Ok(expired)
    }
}

fn expires(task: &Task, cutoff: Timestamp) -> bool {
    task.status == TaskStatus::PendingReview
        && task.created_at <= cutoff
        && task_type::definition(&task.task_type).category != Category::StaffTodo
}

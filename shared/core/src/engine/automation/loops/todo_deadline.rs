//! A to-do's loop (see [`OpenLoop::for_todo`]): registered when the to-do is made (it is on
//! the call list from its first minute), met once by the to-do done — by the owner, with its
//! task, or for a "get them back" one by the member's own check-in —, else expired by the
//! sweep at its deadline, which tells the owner the to-do is overdue. One conditional write
//! decides between the two, so an overdue to-do is escalated at most once and never after
//! the member's check-in met it.

use super::super::Engine;
use super::super::owner_notices::NoticeDraft;
use crate::owner::owner_notice::NoticeKind;
use crate::task::error::EngineError;
use crate::task::open_loop::{LoopSignal, OpenLoop};
use crate::task::todo::Todo;

impl Engine {
    /// The to-do is done: its loop is met (if nothing resolved it first). Trouble is logged:
    /// the to-do is done either way.
    pub(crate) async fn todo_loop_met(&self, todo: &Todo) {
        let id = todo.id.to_string();
        let signal = LoopSignal::TodoDone { todo: &id };
        if let Err(e) = self.meet_loops(todo.account_id, &todo.member.id, signal).await {
            tracing::warn!(todo = %todo.id, error = %e, "a done to-do's loop not met; its deadline may still tell the owner");
        }
    }

    /// A to-do's loop expired: the owner hears that it is overdue, unless it was done or the
    /// owner snoozed it past now.
    pub(crate) async fn escalate_overdue_todo(&self, expired: &OpenLoop) -> Result<(), EngineError> {
        let Some(id) = expired.todo_id.as_deref().and_then(|id| id.parse::<ulid::Ulid>().ok()) else {
            return Ok(());
        };
        let Some(todo) = self.store.get_todo(expired.account_id, id).await? else {
            return Ok(());
        };
        let now = self.clock.now();
        if !todo.is_due(now) {
            tracing::info!(todo = %todo.id, status = todo.status.as_str(), "a to-do's deadline passed: done or snoozed, not escalated");
            return Ok(());
        }
        let name = todo.member.label();
        let draft = NoticeDraft {
            kind: NoticeKind::Escalation,
            task_id: Some(todo.task_id),
            member_id: Some(todo.member.id.clone()),
            title: format!("Overdue to-do: {}", todo.what),
            // How long, not since when: a time needs the gym's zone, an age does not.
            detail: format!(
                "On your call list for {} and not done yet. Log the contact or mark it done for {name}.",
                crate::kernel::plural::count((now.duration_since(todo.due_at).as_hours() / 24).max(1), "day", "days")
            ),
        };
        self.notify_owner_after(todo.account_id, draft, false).await;
        tracing::info!(todo = %todo.id, "an overdue to-do escalated to the owner");
        Ok(())
    }
}

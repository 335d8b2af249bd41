//! The call list as the last resort (CONTRACT.md "The owner away": nothing found is dropped
//! in silence). A task that closes for want of the owner's answer — a review item left
//! undecided, an escalation left unanswered — first puts its member on the to-do list, then
//! closes with its `todo_id` set. The to-do outlives its task: the close does not take it
//! along as it takes a task's other to-dos.

use std::collections::BTreeSet;

use jiff::Timestamp;

use crate::engine::Engine;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, MemberId};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::todo::{self, TASK_CLOSED_OUTCOME, Todo, TodoKind, TodoStatus};
use crate::task::transition::{Why, transition};
use crate::task::{Task, TaskStatus, task_loops};

/// The mark in the `source` of a to-do made by [`Engine::close_onto_call_list`].
const CALL_LIST: &str = "call_list";

impl Engine {
    /// The members of the account on the call list because a task of theirs closed onto it,
    /// while their to-do is pending: the risk scan leaves them to the person calling.
    pub(crate) async fn members_on_call_list(&self, account: AccountId) -> Result<BTreeSet<MemberId>, EngineError> {
        let (open, snoozed) = futures::try_join!(
            self.store.list_todos(account, TodoStatus::Open, super::TODOS_LISTED),
            self.store.list_todos(account, TodoStatus::Snoozed, super::TODOS_LISTED),
        )?;
        let marked = format!(":{CALL_LIST}:");
        Ok(open
            .into_iter()
            .chain(snoozed)
            .filter(|t| t.is_pending() && t.source.contains(&marked))
            .map(|t| t.member.id)
            .collect())
    }

    /// Put `task`'s member on the call list (`what`: the to-do's words), unless a pending
    /// to-do of the task already has them, then close `task` as `Cancelled` with `why` and
    /// the to-do's id. `Err(StaleVersion)`: the task changed meanwhile (the owner decided);
    /// a to-do made for this close is closed again, and the task is left as it is.
    pub(crate) async fn close_onto_call_list(&self, task: Task, what: String, why: Why, now: Timestamp) -> Result<Task, EngineError> {
        let (kept, made) = match self.pending_todo_of(&task).await? {
            Some(todo) => (todo, false),
            None => {
                let source = format!("task:{}:{CALL_LIST}:{}", task.id, task.version);
                match self.make_todo(&task, TodoKind::Call, what, false, source, None, true).await {
                    Some(todo) => (todo, true),
                    // Made by an earlier run that stopped before the close, or not made at
                    // all: the task stays open for the next run rather than close without it.
                    None => match self.pending_todo_of(&task).await? {
                        Some(todo) => (todo, false),
                        None => return Err(EngineError::Dependency("the call list's to-do was not made".into())),
                    },
                }
            }
        };
        let (mut next, log) = transition(&task, TaskStatus::Cancelled, now, why)?;
        next.todo_id = Some(kept.id);
        let loops = task_loops::on_move(&mut next, TaskStatus::Cancelled, now);
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.loops = loops;
        match self.store.commit(&commit).await {
            Ok(()) => {}
            Err(e) => {
                if made && matches!(e, StoreError::Conflict(Conflict::Version)) {
                    self.withdraw_todo(&kept, now).await;
                }
                return Err(e.into());
            }
        }
        self.notify_commit_with(&commit, None).await;
        // Its to-do stays open: `false`, the close reads no to-do list.
        self.publish_closed_after(&next, false, commit.webhooks).await;
        Ok(next)
    }

    /// An open or snoozed to-do of `task`, if it has one.
    async fn pending_todo_of(&self, task: &Task) -> Result<Option<Todo>, EngineError> {
        let (open, snoozed) = futures::try_join!(
            self.store.list_todos(task.account_id, TodoStatus::Open, super::TODOS_LISTED),
            self.store.list_todos(task.account_id, TodoStatus::Snoozed, super::TODOS_LISTED),
        )?;
        Ok(open.into_iter().chain(snoozed).find(|t| t.task_id == task.id && t.is_pending()))
    }

    /// A to-do made for a close that did not happen: done again, its loop met.
    async fn withdraw_todo(&self, made: &Todo, now: Timestamp) {
        let note = "The owner decided the task meanwhile.".to_owned();
        let closed = todo::closed(made, TASK_CLOSED_OUTCOME.to_owned(), Some(note), now);
        match self.store.save_todo(&closed).await {
            Ok(()) => self.todo_loop_met(&closed).await,
            Err(e) => tracing::warn!(todo = %made.id, error = %e, "a withdrawn call-list to-do not closed"),
        }
    }
}

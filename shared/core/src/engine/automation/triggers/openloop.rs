//! The owner's rows on Openloop's own events (`no_checkin_days`, `todo_done`, `task_closed`):
//! each opens its task type when the event happens, through [`Engine::fire_rows`] like a
//! member event's row (filter, delay, re-entry, notify and the firing's log alike).
//!
//! Where each happens: the risk scan reports `no_checkin_days` for each active member a
//! week or more without a check-in (it already reads the trigger table); the owner's "done"
//! on a to-do is `todo_done`; a task's close is `task_closed`. A close can be a worker's step,
//! so whether the account has any row on `task_closed` is remembered for a few minutes: a
//! step that closes a task reads the trigger table only when a row may fire.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

use super::super::Engine;
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::trigger::{OpenloopEvent, TriggerBook};
use crate::task::Task;
use crate::task::error::EngineError;
use crate::task::flood::Burst;
use crate::task::todo::Todo;

/// How long "this account has no row on `task_closed`" is believed without reading the table
/// again (a row added through another process fires from at most this long after).
pub const CLOSED_ROWS_FRESH: SignedDuration = SignedDuration::from_mins(5);

/// Per account: whether it had an enabled row of its own on `task_closed`, and when that was read.
#[derive(Debug, Default)]
pub(crate) struct ClosedRows(Mutex<HashMap<AccountId, (Timestamp, bool)>>);

impl ClosedRows {
    fn known_none(&self, account: AccountId, now: Timestamp) -> bool {
        let seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        matches!(seen.get(&account), Some((at, false)) if now.duration_since(*at) < CLOSED_ROWS_FRESH)
    }

    fn note(&self, account: AccountId, now: Timestamp, book: &TriggerBook) {
        let any = book.custom.iter().any(|t| t.enabled && t.event == "task_closed");
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(account, (now, any));
    }

    /// The account's table changed here: read it again next time.
    pub(crate) fn forget(&self, account: AccountId) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&account);
    }
}

impl Engine {
    /// The owner's rows `event` of `member` sets off; the tasks opened now.
    pub(crate) async fn fire_openloop_event(
        &self,
        account: &Account,
        book: &TriggerBook,
        facts: &MemberFacts,
        event: &OpenloopEvent,
        burst: &Burst,
    ) -> Result<Vec<TaskId>, EngineError> {
        if !book.custom.iter().any(|t| t.enabled && t.event == event.name()) {
            return Ok(Vec::new());
        }
        let fields = event.fields(facts, self.clock.now());
        let id = event.event_id(&facts.member_id);
        self.fire_rows(account, book, facts, &[event.name()], &fields, &id, burst).await
    }

    /// The account, its table and the member's facts, when a row of the account's is on
    /// `name` (else nothing is read beyond the table).
    async fn openloop_firing_context(
        &self,
        account: AccountId,
        member: &MemberId,
        name: &str,
        book: TriggerBook,
    ) -> Result<Option<(Account, TriggerBook, MemberFacts)>, EngineError> {
        if !book.custom.iter().any(|t| t.enabled && t.event == name) {
            return Ok(None);
        }
        let Some(account) = self.store.get_account(account).await? else {
            return Ok(None);
        };
        let facts = match self.store.get_member(account.id, member).await? {
            Some((facts, _)) => facts,
            None => MemberFacts::new(member.clone()),
        };
        Ok(Some((account, book, facts)))
    }

    /// A task closed: the owner's rows on `task_closed`. Trouble is logged: the task is closed
    /// either way.
    pub(crate) async fn task_closed_triggers(&self, task: &Task) {
        let now = self.clock.now();
        if self.closed_rows.known_none(task.account_id, now) {
            return;
        }
        let fired = async {
            let book = self.store.trigger_book(task.account_id).await?;
            self.closed_rows.note(task.account_id, now, &book);
            let Some((account, book, facts)) = self
                .openloop_firing_context(task.account_id, &task.member.id, "task_closed", book)
                .await?
            else {
                return Ok(Vec::new());
            };
            let event = OpenloopEvent::TaskClosed {
                task_id: task.id,
                task_type: task.task_type.clone(),
                status: task.status.to_string(),
                outcome: task.outcome.clone(),
            };
            self.fire_openloop_event(&account, &book, &facts, &event, &Burst::webhook_event())
                .await
        };
        let fired: Result<Vec<TaskId>, EngineError> = fired.await;
        if let Err(e) = fired {
            tracing::error!(task = %task.id, error = %e, "task_closed triggers not carried out");
        }
    }

    /// The owner marked a to-do done: the owner's rows on `todo_done`. Trouble is logged: the
    /// to-do is done either way.
    pub(crate) async fn todo_done_triggers(&self, todo: &Todo) {
        let fired = async {
            let book = self.store.trigger_book(todo.account_id).await?;
            let Some((account, book, facts)) = self
                .openloop_firing_context(todo.account_id, &todo.member.id, "todo_done", book)
                .await?
            else {
                return Ok(Vec::new());
            };
            let kind = serde_json::to_value(todo.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let event = OpenloopEvent::TodoDone {
                todo_id: todo.id,
                kind,
                outcome: todo.outcome.clone(),
            };
            self.fire_openloop_event(&account, &book, &facts, &event, &Burst::webhook_event())
                .await
        };
        let fired: Result<Vec<TaskId>, EngineError> = fired.await;
        if let Err(e) = fired {
            tracing::error!(todo = %todo.id, error = %e, "todo_done triggers not carried out");
        }
    }
}

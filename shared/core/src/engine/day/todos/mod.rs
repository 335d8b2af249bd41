//! The owner's to-dos and call list: made whenever a task asks a
//! person to act, worked through the API and the dashboard, closed with their task or by the
//! member's own check-in. The rules of a to-do are `task/todo.rs`; which escalations make one
//! is data (`rules.rs`, `rules/todos.toml`).
//!
//! A to-do is made as a consequence of a decision already committed (a task created, an
//! escalation): trouble here is logged and never undoes the task's change. Every list reads
//! one status of the to-do index (open, snoozed or done), never what is stored.

mod call_list;
pub(crate) mod rules;

use super::decisions::Resolution;
use super::{Engine, boxed};
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::{self, Category};
use crate::task::todo::{
    self, CHECKED_IN_OUTCOME, ContactKind, ContactResult, TASK_CLOSED_OUTCOME, Todo, TodoKind, TodoMember, TodoStatus,
};
use crate::task::transition::Why;
use crate::task::{Task, TaskStatus};

/// The most to-dos one status's list reads.
pub const TODOS_LISTED: usize = 200;
/// The longest `what` kept.
const WHAT_MAX_CHARS: usize = 500;

/// Whether `task` (as it was before a change) may hold a to-do: a staff to-do task holds one
/// from its creation; any other only after an escalation or a reopen, which leave their
/// reason on the task for good (`outcome_reason` is set by every escalation and close, and
/// never cleared). A task that may not reads no to-do list when it closes.
pub(crate) fn may_hold_todo(task: &Task) -> bool {
    task_type::definition(&task.task_type).category == Category::StaffTodo || task.outcome_reason.is_some()
}

impl Engine {
    /// The account's to-dos in `status`, soonest due first (done: newest first). A snooze
    /// that ran out opens its to-do again as it is read: it is listed open, due from the day
    /// it was snoozed to.
    pub async fn todos(&self, account: AccountId, status: TodoStatus) -> Result<Vec<Todo>, EngineError> {
        let now = self.clock.now();
        match status {
            TodoStatus::Done => Ok(self.store.list_todos(account, TodoStatus::Done, TODOS_LISTED).await?),
            TodoStatus::Snoozed => Ok(self
                .store
                .list_todos(account, TodoStatus::Snoozed, TODOS_LISTED)
                .await?
                .into_iter()
                .filter(|t| !t.is_due(now))
                .collect()),
            TodoStatus::Open => {
                let (mut open, snoozed) = futures::try_join!(
                    self.store.list_todos(account, TodoStatus::Open, TODOS_LISTED),
                    self.store.list_todos(account, TodoStatus::Snoozed, TODOS_LISTED),
                )?;
                for woken in snoozed.iter().filter_map(|t| t.woken(now)) {
                    match self.store.save_todo(&woken).await {
                        Ok(()) => open.push(woken),
                        // Changed meanwhile (done, snoozed again): the next read shows it.
                        Err(StoreError::Conflict(Conflict::Version)) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                open.sort_by_key(|t| (t.due_at, t.id));
                Ok(open)
            }
        }
    }

    /// One to-do of the account.
    pub async fn todo(&self, account: AccountId, id: ulid::Ulid) -> Result<Todo, EngineError> {
        self.store
            .get_todo(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "todo" })
    }

    /// `POST /todos/{id}/contact`: a call, meeting, mail, text or other contact, with how it went.
    pub async fn log_todo_contact(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        kind: ContactKind,
        result: ContactResult,
        note: Option<&str>,
    ) -> Result<Todo, EngineError> {
        let now = self.clock.now();
        self.change_todo_as_stored(account, id, |t| todo::log_contact(t, kind, result, note, now))
            .await
    }

    /// `POST /todos/{id}/snooze`: out of the list until `until` (a time, or a day in the
    /// account's time zone).
    pub async fn snooze_todo(&self, account: AccountId, id: ulid::Ulid, until: &str) -> Result<Todo, EngineError> {
        let tz = self.account(account).await?.settings.time_zone();
        let until = todo::parse_until(until, &tz)?;
        let now = self.clock.now();
        self.change_todo_as_stored(account, id, |t| todo::snooze(t, until, now)).await
    }

    /// `POST /todos/{id}/done`: done, with the owner's outcome and note. Its task, if still
    /// open, is settled with it: with the outcome when it is one of the task type's, and a
    /// staff to-do task as `completed` otherwise (another open task keeps waiting for the
    /// owner's own decision).
    pub async fn complete_todo(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        outcome: Option<&str>,
        note: Option<&str>,
    ) -> Result<Todo, EngineError> {
        boxed(async move {
            let now = self.clock.now();
            let done = self
                .change_todo_as_stored(account, id, |t| todo::complete(t, outcome, note, now))
                .await?;
            self.todo_loop_met(&done).await;
            self.settle_task_of(&done).await?;
            self.todo_done_triggers(&done).await;
            Ok(done)
        })
        .await
    }

    async fn settle_task_of(&self, done: &Todo) -> Result<(), EngineError> {
        let Some(task) = self.store.get_task(done.account_id, done.task_id).await? else {
            return Ok(());
        };
        if !task.is_active() {
            return Ok(());
        }
        let def = task_type::definition(&task.task_type);
        let given = done.outcome.as_deref().unwrap_or_default();
        let outcome = if def.outcome(given).is_some() {
            given
        } else if def.category == Category::StaffTodo {
            "completed"
        } else {
            return Ok(());
        };
        let note = Some(format!(
            "Done from the call list{}{}",
            if outcome == given { String::new() } else { format!(" ({given})") },
            done.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default()
        ));
        let resolution = Resolution {
            outcome: outcome.to_owned(),
            note,
        };
        match self.resolve(done.account_id, task.id, resolution).await {
            Ok(_) => Ok(()),
            // Changed under us (closed meanwhile): the to-do is done either way.
            Err(EngineError::StaleVersion | EngineError::InvalidTransition { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Change a to-do: `change` makes the next version from the one given (`known`, else the
    /// stored one), or `None` to leave it as it is; a lost race re-reads it and changes again.
    /// `Ok(None)`: left as it was.
    async fn change_todo(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        mut known: Option<Todo>,
        change: impl Fn(&Todo) -> Result<Option<Todo>, InvalidInput>,
    ) -> Result<Option<Todo>, EngineError> {
        for _ in 0..3 {
            let current = match known.take() {
                Some(todo) => todo,
                None => self.todo(account, id).await?,
            };
            let Some(next) = change(&current)? else {
                return Ok(None);
            };
            match self.store.save_todo(&next).await {
                Ok(()) => return Ok(Some(next)),
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// [`Self::change_todo`] of the stored to-do by an owner's action, which always changes it.
    async fn change_todo_as_stored(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        change: impl Fn(&Todo) -> Result<Todo, InvalidInput>,
    ) -> Result<Todo, EngineError> {
        self.change_todo(account, id, None, |t| change(t).map(Some))
            .await?
            .ok_or(EngineError::NotFound { what: "todo" })
    }

    /// A new staff to-do task (a staff call, a plan's call step) is a to-do from its first
    /// minute.
    pub(crate) async fn todo_for_new_task(&self, task: &Task, account: &Account) {
        let webhooks = crate::owner::webhook_event::written_for(Some(account));
        self.todo_for_staff_task(task, format!("task:{}:created", task.id), webhooks).await;
    }

    /// A staff to-do task the owner reopened is on the call list again; its event written
    /// as the reopening's were (`webhooks`, [`TaskCommit::webhooks`]).
    pub(crate) async fn todo_for_reopened_task(&self, task: &Task, webhooks: bool) {
        self.todo_for_staff_task(task, format!("task:{}:reopened:{}", task.id, task.version), webhooks)
            .await;
    }

    /// A staff to-do task's call, made once per `source`; other tasks make none here.
    async fn todo_for_staff_task(&self, task: &Task, source: String, webhooks: bool) {
        let def = task_type::definition(&task.task_type);
        if def.category != Category::StaffTodo {
            return;
        }
        let get_them_back = def.outcome_signals.contains(&"checkin");
        self.make_todo(task, TodoKind::Call, task.goal.clone(), get_them_back, source, None, webhooks)
            .await;
    }

    /// An escalation whose reason asks a person to act (`rules/todos.toml`) is a to-do. A
    /// staff to-do task's escalation is its own to-do, already listed.
    /// `facts`: the member's facts when the caller has read them (`Some(None)`: none stored).
    pub(crate) async fn todo_for_escalation(&self, commit: &TaskCommit, facts: Option<Option<&MemberFacts>>) {
        let task = &commit.task;
        if task_type::definition(&task.task_type).category == Category::StaffTodo {
            return;
        }
        let Some(entry) = commit
            .log
            .iter()
            .find(|l| l.to_status == TaskStatus::Escalated && l.from_status != Some(TaskStatus::Escalated))
        else {
            return;
        };
        let Some(rule) = rules::for_escalation(&entry.reason, &task.task_type) else {
            return;
        };
        let name = task.member.label();
        let words = crate::task::escalation::reason_in_words(task.escalation.as_ref().map_or(entry.reason.as_str(), |e| e.reason.as_str()));
        self.make_todo(
            task,
            rule.kind,
            rules::what(
                rule,
                &name,
                &words,
                task.escalation.as_ref().and_then(|e| e.member_words.as_deref()),
            ),
            rule.get_them_back,
            format!("task:{}:escalated:{}", task.id, task.version),
            facts,
            commit.webhooks,
        )
        .await;
    }

    /// `webhooks`: whether its `todo.created` event is written and queued
    /// ([`crate::owner::webhook_event::written_for`] of the account its path read). Returns
    /// the to-do made; `None` when one of `source` was already made, or on trouble (logged).
    #[allow(clippy::too_many_arguments)]
    async fn make_todo(
        &self,
        task: &Task,
        kind: TodoKind,
        what: String,
        get_them_back: bool,
        source: String,
        known: Option<Option<&MemberFacts>>,
        webhooks: bool,
    ) -> Option<Todo> {
        let phone = match known {
            Some(facts) => facts.filter(|f| f.member_id == task.member.id).and_then(|f| f.phone.clone()),
            None => match self.store.get_member(task.account_id, &task.member.id).await {
                Ok(facts) => facts.and_then(|(f, _)| f.phone),
                Err(e) => {
                    tracing::warn!(task = %task.id, error = %e, "member facts not read for a to-do; made without a phone");
                    None
                }
            },
        };
        // A call the rules ask for, to a member with no phone on file, is a note to write them
        // instead (a call the owner asked for stays theirs).
        let by_rule = task_type::definition(&task.task_type).category != Category::StaffTodo;
        let (kind, what) = match (kind, &phone, what.strip_prefix("Call ")) {
            (TodoKind::Call, None, Some(rest)) if by_rule && task.member.email.is_some() => (TodoKind::Message, format!("Write to {rest}")),
            _ => (kind, what),
        };
        let now = self.clock.now();
        let todo = Todo {
            id: new_ulid(now),
            account_id: task.account_id,
            task_id: task.id,
            member: TodoMember {
                id: task.member.id.clone(),
                name: task.member.name.clone(),
                phone,
                email: task.member.email.clone(),
            },
            kind,
            what: what.chars().take(WHAT_MAX_CHARS).collect(),
            due_at: now,
            status: TodoStatus::Open,
            snoozed_until: None,
            contacts: Vec::new(),
            outcome: None,
            note: None,
            get_them_back,
            source,
            created_at: now,
            done_at: None,
            version: 1,
        };
        // Its loop, written with it: done (or the member back) by its deadline, else the
        // owner is told.
        let wait = crate::task::open_loop::OpenLoop::for_todo(
            todo.account_id,
            todo.member.id.clone(),
            &todo.id.to_string(),
            todo.get_them_back,
            todo.due_at + rules::escalate_after(),
            now,
        )
        .for_task(task.id);
        match self.store.create_todo_with_loop(&todo, &wait, webhooks).await {
            Ok(true) => {
                tracing::info!(task = %task.id, todo = %todo.id, "to-do made");
                if webhooks {
                    self.emit_todo_webhook(&todo).await;
                }
                Some(todo)
            }
            Ok(false) => None,
            Err(e) => {
                tracing::error!(task = %task.id, error = %e, "to-do not made");
                None
            }
        }
    }

    /// A closed task's to-dos are done with it, saying how it closed.
    pub(crate) async fn close_todos_of(&self, task: &Task) {
        if !task.status.is_terminal() {
            return;
        }
        let outcome = task.outcome.clone().unwrap_or_else(|| TASK_CLOSED_OUTCOME.to_owned());
        let note = format!("Closed with its task ({}).", task.status);
        if let Err(e) = self
            .close_pending_todos(task.account_id, |t| t.task_id == task.id, &outcome, &note)
            .await
        {
            tracing::error!(task = %task.id, error = %e, "a closed task's to-dos not closed");
        }
    }

    /// The member checked in: their open "get them back" to-dos are done by themselves, and a
    /// staff call still waiting is closed as `member_returned`.
    pub(crate) async fn todos_met_by_checkin(&self, account: AccountId, facts: &MemberFacts, tz: &jiff::tz::TimeZone) {
        let at = facts.last_checkin_at.unwrap_or_else(|| self.clock.now());
        let name = facts.first_name_or_address();
        let note = format!(
            "Done by itself: {name} checked in on {}.",
            at.to_zoned(tz.clone()).strftime("%b %-d at %H:%M")
        );
        let closed = match self
            .close_pending_todos(
                account,
                |t| t.member.id == facts.member_id && t.get_them_back,
                CHECKED_IN_OUTCOME,
                &note,
            )
            .await
        {
            Ok(closed) => closed,
            Err(e) => {
                tracing::error!(account = %account, error = %e, "check-in: to-dos not closed");
                return;
            }
        };
        for todo in closed {
            if let Err(e) = self.close_call_after_checkin(account, todo.task_id, &note).await {
                tracing::error!(task = %todo.task_id, error = %e, "check-in: the staff call not closed");
            }
        }
    }

    async fn close_call_after_checkin(&self, account: AccountId, id: TaskId, note: &str) -> Result<(), EngineError> {
        let Some(task) = self.store.get_task(account, id).await? else {
            return Ok(());
        };
        if !task.is_active() || task_type::definition(&task.task_type).category != Category::StaffTodo {
            return Ok(());
        }
        let to = if task.status.can_move_to(TaskStatus::Completed) || task.status.can_move_to(TaskStatus::Executing) {
            TaskStatus::Completed
        } else {
            TaskStatus::Cancelled
        };
        let why = Why::new(Reason::MemberCheckedInBeforeTheCall)
            .outcome("member_returned")
            .detail(note.to_owned());
        match self.move_to(task, to, self.clock.now(), why).await {
            Ok(_) | Err(EngineError::StaleVersion) => Ok(()),
            Err(EngineError::Store(StoreError::Conflict(Conflict::Version))) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Close every pending (open or snoozed) to-do of the account that `which` picks, with
    /// `outcome` and `note`; returns those closed.
    async fn close_pending_todos(
        &self,
        account: AccountId,
        which: impl Fn(&Todo) -> bool,
        outcome: &str,
        note: &str,
    ) -> Result<Vec<Todo>, EngineError> {
        let (open, snoozed) = futures::try_join!(
            self.store.list_todos(account, TodoStatus::Open, TODOS_LISTED),
            self.store.list_todos(account, TodoStatus::Snoozed, TODOS_LISTED),
        )?;
        let now = self.clock.now();
        let mut closed = Vec::new();
        for pending in open.iter().chain(&snoozed).filter(|t| which(t)) {
            // Changed meanwhile: closed only while still pending.
            let close = |t: &Todo| {
                Ok(t.is_pending()
                    .then(|| todo::closed(t, outcome.to_owned(), Some(note.to_owned()), now)))
            };
            match self.change_todo(account, pending.id, Some(pending.clone()), close).await {
                Ok(Some(next)) => {
                    self.todo_loop_met(&next).await;
                    closed.push(next);
                }
                Ok(None) | Err(EngineError::NotFound { .. } | EngineError::StaleVersion) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(closed)
    }
}

//! People's data: everything held about one member, as one document
//! (`GET /api/v1/members/{id}/export`), and forgetting them (`DELETE /api/v1/members/{id}`,
//! PushPress's `customer.deleted`).
//!
//! An erasure runs in an order that makes it safe to retry and to race with a step:
//! 1. the keyed hashes of the member's id, addresses and phone are kept first, so an import or
//!    a member event arriving meanwhile opens and stores nothing ([`Engine::erased_identity`]);
//! 2. each open task of theirs is cancelled under its version (a step in flight loses its
//!    commit and reads the task closed), with no webhook event (it would name them);
//! 3. each task is removed with what was written with it, over the version it was closed at
//!    (a task a step moved meanwhile is read and cancelled again); its tally stays, so the
//!    owner's numbers do not move;
//! 4. what names them elsewhere goes: webhook events waiting in an endpoint's backlog, the
//!    account's memories about them, then their own records, the member item last.
//!
//! A retry after a failure finds what is left and removes it. Once the member item and
//! their tasks are gone the member is not found: a second erasure answers `404`.

use jiff::Timestamp;
use serde::Serialize;

use super::Engine;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, MemberId};
use crate::members::erasure::{MemberTrace, identities};
use crate::members::member::{MemberFacts, SendLedger};
use crate::ports::TaskQuery;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::todo::TodoStatus;
use crate::task::transition::{Why, transition};
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, Task, TaskStatus};

/// Tasks read per page while an erasure or an export walks a member's tasks.
const TASKS_PAGE: usize = 200;
/// To-dos and loops read per status while an export gathers them.
const LISTED: usize = 1_000;
/// Tries at one task against steps that keep moving it.
const TRIES: usize = 5;

/// Everything Openloop holds about one member: `GET /api/v1/members/{id}/export`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemberExport {
    pub member_id: MemberId,
    pub exported_at: Timestamp,
    /// What the gym's system said of them, as kept: name, address, phone, status, plan,
    /// check-ins, payments, consent to texts (`sms_consent`); `null` when only tasks name them.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub facts: Option<MemberFacts>,
    /// The messages counted against their weekly cap.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub send_ledger: SendLedger,
    /// Openloop's own tags and notes on them.
    pub tags: Vec<String>,
    pub notes: Vec<crate::members::annotation::MemberNote>,
    /// Whether their address is suppressed (they get no more mail).
    pub suppressed: bool,
    /// Every task about them, newest first, with its log, its conversation (what they wrote
    /// and what was written to them) and its sent messages.
    pub tasks: Vec<ExportedTask>,
    /// The owner's to-dos about them.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub todos: Vec<crate::task::todo::Todo>,
    /// The open loops about them (met and expired ones too).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub loops: Vec<crate::task::open_loop::OpenLoop>,
}

/// One task of [`MemberExport`].
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExportedTask {
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub task: Task,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub log: Vec<LogEntry>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub conversation: Vec<ConversationMessage>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub outbound: Vec<OutboundMessage>,
}

impl Engine {
    /// Every task of the account about `member`, newest first.
    async fn tasks_of(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, EngineError> {
        let mut tasks = Vec::new();
        let mut cursor = None;
        loop {
            let query = TaskQuery {
                status: None,
                member_id: Some(member.clone()),
                limit: TASKS_PAGE,
                cursor,
            };
            let (page, next) = self.store.list_tasks(account, &query).await?;
            tasks.extend(page.into_iter().filter(|t| &t.member.id == member));
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(tasks),
            }
        }
    }

    /// Everything held about one member of the account; another account's, or one Openloop
    /// holds nothing about, is not found.
    pub async fn export_member(&self, account: AccountId, member: &MemberId) -> Result<MemberExport, EngineError> {
        self.account(account).await?;
        let stored = self.store.get_member(account, member).await?;
        let tasks = self.tasks_of(account, member).await?;
        if stored.is_none() && tasks.is_empty() {
            return Err(EngineError::NotFound { what: "member" });
        }
        let (facts, send_ledger) = match stored {
            Some((facts, ledger)) => (Some(facts), ledger),
            None => (None, SendLedger::default()),
        };
        let annotations = self.store.member_annotations(account, member).await?;
        let suppressed = match facts.as_ref().and_then(|f| f.email.as_ref()) {
            Some(email) => self.store.is_suppressed(account, email).await?,
            None => false,
        };
        let mut exported = Vec::with_capacity(tasks.len());
        for task in tasks {
            let Some(history) = self.store.task_history(account, task.id).await? else {
                continue;
            };
            exported.push(ExportedTask {
                task: history.task,
                log: history.log,
                conversation: history.messages,
                outbound: history.outbound,
            });
        }
        let mut todos = Vec::new();
        for status in TodoStatus::ALL {
            let listed = self.store.list_todos(account, status, LISTED).await?;
            todos.extend(listed.into_iter().filter(|t| &t.member.id == member));
        }
        let loops = self.store.list_loops(account, None, Some(member), LISTED).await?;
        Ok(MemberExport {
            member_id: member.clone(),
            exported_at: self.clock.now(),
            facts,
            send_ledger,
            tags: annotations.tags.into_iter().collect(),
            notes: annotations.notes,
            suppressed,
            tasks: exported,
            todos,
            loops,
        })
    }

    /// Forget one member of the account (see the module docs for the order and why).
    /// Not found when Openloop holds nothing about them — also once they are erased.
    pub async fn erase_member(&self, account: AccountId, member: &MemberId) -> Result<(), EngineError> {
        let account = self.account(account).await?;
        let facts = self.store.get_member(account.id, member).await?.map(|(f, _)| f);
        let tasks = self.tasks_of(account.id, member).await?;
        if facts.is_none() && tasks.is_empty() {
            return Err(EngineError::NotFound { what: "member" });
        }
        let mut trace = MemberTrace::of(member, facts.as_ref());
        let mut keys: Vec<String> = identities(member, facts.as_ref())
            .into_iter()
            .map(|(what, value)| self.config.signing_key.erasure_key(&account.id, what, &value))
            .collect();
        for task in &tasks {
            trace.tasks.insert(task.id);
            if let Some(email) = &task.member.email {
                trace.add_word(email.as_str());
                keys.push(
                    self.config
                        .signing_key
                        .erasure_key(&account.id, "email", &email.as_str().to_lowercase()),
                );
            }
            if let Some(name) = task.member.name.as_deref().filter(|n| n.trim().contains(' ')) {
                trace.add_word(name);
            }
        }
        keys.sort();
        keys.dedup();
        let now = self.clock.now();
        self.store.put_erased(account.id, &keys, now).await?;
        for task in &tasks {
            self.erase_task(task.clone()).await?;
        }
        self.scrub_webhook_backlogs(account.id, &trace).await?;
        self.scrub_memories(account.id, &trace).await?;
        self.store.erase_member_records(account.id, &trace).await?;
        tracing::info!(account = %account.id, tasks = tasks.len(), "a member was erased");
        Ok(())
    }

    /// Cancel the task if it is open, then remove it over the version it closed at; a step
    /// that moved it meanwhile makes this read it and try again.
    async fn erase_task(&self, task: Task) -> Result<(), EngineError> {
        let mut task = task;
        for _ in 0..TRIES {
            if task.is_active() {
                let why = Why::new(Reason::MemberErased).outcome("erased");
                let (next, log) = transition(&task, TaskStatus::Cancelled, self.clock.now(), why)?;
                // No webhook event: it would carry the member's name out of the account.
                let mut commit = TaskCommit::new(next.clone(), log);
                commit.webhooks = false;
                match self.store.commit(&commit).await {
                    Ok(()) => task = next,
                    Err(StoreError::Conflict(Conflict::Version)) => match self.store.get_task(task.account_id, task.id).await? {
                        Some(t) => {
                            task = t;
                            continue;
                        }
                        None => return Ok(()),
                    },
                    Err(e) => return Err(e.into()),
                }
            }
            match self.store.erase_task(&task).await {
                Ok(()) => return Ok(()),
                Err(StoreError::Conflict(Conflict::Version)) => match self.store.get_task(task.account_id, task.id).await? {
                    Some(t) => task = t,
                    None => return Ok(()),
                },
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Take the events that name the member out of every endpoint's backlog (not delivered
    /// yet), each endpoint under its version.
    async fn scrub_webhook_backlogs(&self, account: AccountId, trace: &MemberTrace) -> Result<(), EngineError> {
        for endpoint in self.store.list_endpoints(account).await? {
            let mut endpoint = endpoint;
            for attempt in 0..TRIES {
                let names = |e: &crate::owner::outbound_webhook::OutboundEvent| trace.names(None, e.task_id, &e.data.to_string());
                if !endpoint.backlog.iter().any(names) {
                    break;
                }
                endpoint.backlog.retain(|e| !names(e));
                endpoint.version += 1;
                match self.store.save_endpoint(&endpoint).await {
                    Ok(()) => break,
                    Err(StoreError::Conflict(Conflict::Version)) if attempt + 1 < TRIES => {
                        match self.store.get_endpoint(account, endpoint.id).await? {
                            Some(e) => endpoint = e,
                            None => break,
                        }
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Take the account's memories about the member out of its book, under its version.
    async fn scrub_memories(&self, account: AccountId, trace: &MemberTrace) -> Result<(), EngineError> {
        for _ in 0..TRIES {
            let mut book = self.store.memory_book(account).await?;
            let names = |m: &crate::owner::business_memory::BusinessMemory| trace.names(m.member_id.as_ref(), None, &m.content);
            if !book.memories.iter().any(names) {
                return Ok(());
            }
            book.memories.retain(|m| !names(m));
            book.version += 1;
            match self.store.save_memory_book(account, &book).await {
                Ok(()) => return Ok(()),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Whether a member the account does not hold yet was erased: their id, address or phone
    /// is among the kept hashes. What arrives for them is not stored, and no task opens.
    /// Found by their address or phone under an id of another, that id is kept too, so what
    /// comes later under it alone (a payment, a check-in) is not kept either.
    pub(in crate::engine) async fn erased_identity(
        &self,
        account: AccountId,
        member: &MemberId,
        facts: Option<&MemberFacts>,
    ) -> Result<bool, EngineError> {
        let keys: Vec<String> = identities(member, facts)
            .into_iter()
            .map(|(what, value)| self.config.signing_key.erasure_key(&account, what, &value))
            .collect();
        if !self.store.any_erased(account, &keys).await? {
            return Ok(false);
        }
        // The first key is the member id's (see `identities`).
        self.store.put_erased(account, &keys[..1], self.clock.now()).await?;
        Ok(true)
    }
}

//! The store's capability for open loops (see [`crate::task::open_loop`]): registered with
//! the action that waits (in the task's own commit where there is one, see
//! [`crate::task::commit::TaskCommit::loops`]), found by member when a signal arrives and by
//! deadline when the sweep runs, and moved out of `open` once, by one conditional write,
//! whoever asks first. Each backend implements it in `loops.rs`, checked by the conformance
//! suite's part of the same name.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, MemberId};
use crate::task::open_loop::{LoopStatus, OpenLoop};

#[async_trait]
pub trait LoopStore: Send + Sync {
    /// Register loops outside a task's commit (a booking's, a trigger's delay): each written
    /// as given, under its id.
    async fn put_loops(&self, loops: &[OpenLoop]) -> Result<(), StoreError>;
    /// A new to-do with the loop that waits on it, in one write: as
    /// [`crate::ports::TodoStore::create_todo`] (`false`, and nothing written, when its source
    /// already made one), the loop written with it or not at all; and its `todo.created`
    /// event's outbox item when `webhooks` ([`crate::owner::webhook_event::written_for`]).
    async fn create_todo_with_loop(&self, todo: &crate::task::todo::Todo, wait: &OpenLoop, webhooks: bool) -> Result<bool, StoreError>;
    /// The member's open loops, from the index by member: a consistent read that grows with
    /// the member's own loops, never with the account's.
    async fn member_open_loops(&self, account: AccountId, member: &MemberId) -> Result<Vec<OpenLoop>, StoreError>;
    /// Write `resolved` (met or expired) only if the stored loop is still open: `true` if
    /// this call moved it, `false` if something else resolved it first (or it is gone).
    async fn resolve_loop(&self, resolved: &OpenLoop) -> Result<bool, StoreError>;
    /// Open loops of every account in one shard of the deadline index whose deadline is at
    /// or before `until`, soonest first, `limit` at most. Read from an index: resolve each
    /// with [`LoopStore::resolve_loop`] before acting on it.
    async fn overdue_loops(&self, shard: u32, until: Timestamp, limit: usize) -> Result<Vec<OpenLoop>, StoreError>;
    /// The account's loops, newest first, in `status` (or any), about `member` (or anyone),
    /// `limit` at most.
    async fn list_loops(
        &self,
        account: AccountId,
        status: Option<LoopStatus>,
        member: Option<&MemberId>,
        limit: usize,
    ) -> Result<Vec<OpenLoop>, StoreError>;
}

/// An account's trigger table ([`crate::owner::trigger::TriggerBook`]): one versioned record
/// (its own rows, its switches of the built-in ones, the firing counts and log). Each backend
/// implements it in `triggers.rs`, checked by the conformance suite's part of the same name.
#[async_trait]
pub trait TriggerStore: Send + Sync {
    /// The account's book (empty at version 0 if never written).
    async fn trigger_book(&self, account: AccountId) -> Result<crate::owner::trigger::TriggerBook, StoreError>;
    /// Write `book` if the stored one is at `book.version - 1` (or absent, for 1);
    /// `Conflict::Version` otherwise.
    async fn save_trigger_book(&self, account: AccountId, book: &crate::owner::trigger::TriggerBook) -> Result<(), StoreError>;
}

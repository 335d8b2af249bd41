//! The store's capability for the owner's to-dos ([`crate::task::todo`]): each made once per
//! source, changed under its version, listed by status soonest due first from an index (the
//! list reads what is in that status, never what is stored). Each backend implements it in
//! `todos.rs`, checked by the conformance suite's part of the same name.

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;
use crate::task::todo::{Todo, TodoStatus};

#[async_trait]
pub trait TodoStore: Send + Sync {
    /// Write a new to-do (version 1) unless the account already has one from its `source`:
    /// `false` then, and nothing is written.
    async fn create_todo(&self, todo: &Todo) -> Result<bool, StoreError>;
    async fn get_todo(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<Todo>, StoreError>;
    /// Write `todo` if the stored one is at `todo.version - 1`; `Conflict::Version` otherwise.
    async fn save_todo(&self, todo: &Todo) -> Result<(), StoreError>;
    /// The account's to-dos in `status`, soonest due first (a snoozed one by its snooze's
    /// end, a done one newest done first), at most `limit`.
    async fn list_todos(&self, account: AccountId, status: TodoStatus, limit: usize) -> Result<Vec<Todo>, StoreError>;
}

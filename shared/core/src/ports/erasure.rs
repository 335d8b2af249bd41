//! The store's capability for forgetting a member ([`crate::members::erasure`]): the keyed
//! hashes of erased identities, which keep them out, and the removal of what was written
//! about them; and for forgetting a whole account, a page of its items at a time. Each removal is safe to run again — what is gone stays gone, what is left is
//! removed — so a failed erasure is finished by its retry. Each backend implements it in
//! `erasure.rs`, checked by the conformance suite's part of the same name.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;
use crate::members::erasure::MemberTrace;
use crate::task::Task;

#[async_trait]
pub trait ErasureStore: Send + Sync {
    /// Keep `keys` (keyed hashes of an erased member's identities) for the account, from
    /// `at`: written again, nothing changes.
    async fn put_erased(&self, account: AccountId, keys: &[String], at: Timestamp) -> Result<(), StoreError>;
    /// Whether any of `keys` is kept for the account: one read, however many are kept.
    async fn any_erased(&self, account: AccountId, keys: &[String]) -> Result<bool, StoreError>;
    /// Remove a closed task and everything written with it — its log (and so its activity),
    /// conversation, outbound records, action records and reply routes — except what the
    /// owner's numbers count: its tally stays, and its learning record stays without its texts
    /// (the mail, the owner's words on it). Only over the version it was read at and only while it is closed: otherwise
    /// `Conflict::Version` and nothing is removed (a step got there first; read it again).
    /// A task already gone is no error.
    async fn erase_task(&self, task: &Task) -> Result<(), StoreError>;
    /// Remove the member's own records and every record that names them (`trace`): their
    /// annotations, loops, to-dos, owner notices, outbound webhook events not yet queued,
    /// suppressions and soft bounces of their addresses, and, last, their member item (facts
    /// and send ledger). Their tasks are removed before, one by one ([`Self::erase_task`]).
    async fn erase_member_records(&self, account: AccountId, trace: &MemberTrace) -> Result<(), StoreError>;
    /// Remove up to about `limit` of the account's items — everything it holds but the account
    /// itself and its token — with the reply routes its tasks and sent messages kept outside
    /// it; how many were removed (`0`: none is left). The cross-tenant learning record, which
    /// names no account, stays.
    async fn remove_account_items(&self, account: AccountId, limit: usize) -> Result<usize, StoreError>;
    /// Remove the account itself and its current API token, last: the account is gone.
    async fn remove_account(&self, account: AccountId) -> Result<(), StoreError>;
}

//! The store's capabilities for what Openloop keeps about an account's PushPress on its own
//! side: the connection — webhook subscription and import progress — and the
//! members' annotations (the tags and notes PushPress has no place for). Each backend
//! implements them in `connections.rs` and `annotations.rs`, checked by the conformance
//! suite's parts of the same names.

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, MemberId};
use crate::members::annotation::{Annotation, MemberAnnotations};
use crate::owner::connection::Connection;

/// An account's PushPress connection, one versioned record.
#[async_trait]
pub trait ConnectionStore: Send + Sync {
    async fn connection(&self, account: AccountId) -> Result<Option<Connection>, StoreError>;
    /// Write `connection` if the stored one is at `connection.version - 1` (or absent, for 1);
    /// `Conflict::Version` otherwise.
    async fn save_connection(&self, account: AccountId, connection: &Connection) -> Result<(), StoreError>;
    /// `false` if there was none.
    async fn delete_connection(&self, account: AccountId) -> Result<bool, StoreError>;
}

/// Members' tags and notes, each change applied atomically.
#[async_trait]
pub trait AnnotationStore: Send + Sync {
    async fn annotate_member(&self, account: AccountId, member: &MemberId, change: &Annotation) -> Result<(), StoreError>;
    /// Empty if the member has none.
    async fn member_annotations(&self, account: AccountId, member: &MemberId) -> Result<MemberAnnotations, StoreError>;
}

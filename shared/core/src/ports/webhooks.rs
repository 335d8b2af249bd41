//! Outbound webhooks' ports: the owners' endpoints ([`WebhookStore`], one versioned record
//! each, with its backlog and delivery log) and the HTTP transport that checks an address on
//! resolution and posts a signed delivery ([`WebhookTransport`]).

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::outbound_webhook::WebhookEndpoint;
use crate::owner::webhook_event::OutboxItem;

/// The owners' webhook endpoints. An endpoint is saved only over the version it was read at.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Store a new endpoint (`AlreadyExists` if its id is taken).
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<(), StoreError>;
    async fn get_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<WebhookEndpoint>, StoreError>;
    /// The account's endpoints, oldest first (at most `MAX_ENDPOINTS` by design: one query).
    async fn list_endpoints(&self, account: AccountId) -> Result<Vec<WebhookEndpoint>, StoreError>;
    /// Write `endpoint` if the stored version is `endpoint.version - 1` (`Conflict::Version`
    /// otherwise, or when it was deleted); it is in the due index while [`WebhookEndpoint::due_at`].
    async fn save_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<(), StoreError>;
    /// Remove it; whether it was there.
    async fn delete_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError>;
    /// Endpoints across accounts due at or before `until` (a back-off ended, a lease lapsed),
    /// soonest first, at most `limit`: `(account, endpoint id)`.
    async fn due_endpoints(&self, until: Timestamp, limit: usize) -> Result<Vec<(AccountId, ulid::Ulid)>, StoreError>;
    /// Write an event to the outbox (over one of the same id). A task's and a to-do's events
    /// are written by their own commit and creation instead (`owner/webhook_event.rs`).
    async fn put_outbox(&self, item: &OutboxItem) -> Result<(), StoreError>;
    /// Outbox items across accounts due at or before `until`, soonest first, at most `limit`.
    async fn due_outbox(&self, until: Timestamp, limit: usize) -> Result<Vec<OutboxItem>, StoreError>;
    /// Save `item`'s new due time and attempts only if it is still there (`Conflict::Version`
    /// when the consumer took it meanwhile).
    async fn postpone_outbox(&self, item: &OutboxItem) -> Result<(), StoreError>;
    /// The event reached its endpoints' backlogs: out of the outbox. Whether it was there.
    async fn delete_outbox(&self, account: AccountId, event_id: &str) -> Result<bool, StoreError>;
}

/// Why a delivery did not reach its receiver.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The address is not one a delivery may reach (checked on resolution).
    #[error("{0}")]
    Refused(String),
    /// No answer (connection, TLS, timeout).
    #[error("{0}")]
    Unreachable(String),
}

/// Posts signed deliveries; checks every address it resolves against the deployment's
/// [`crate::owner::webhook_address::AddressPolicy`].
#[async_trait]
pub trait WebhookTransport: Send + Sync {
    /// Whether `url` may receive: its text, then every address its host resolves to.
    async fn check_address(&self, url: &str) -> Result<(), InvalidInput>;
    /// POST `body` with `headers`; the receiver's status (redirects are not followed).
    async fn post(&self, url: &str, headers: &[(String, String)], body: &str) -> Result<u16, TransportError>;
}

//! Outbound webhooks' ports: the owners' endpoints ([`WebhookStore`], one versioned record
//! each, with its backlog and delivery log) and the HTTP transport that checks an address on
//! resolution and posts a signed delivery ([`WebhookTransport`]).

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::outbound_webhook::WebhookEndpoint;

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

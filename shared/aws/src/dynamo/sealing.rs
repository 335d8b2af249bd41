//! [`SecretStore`] on DynamoDB: every item that holds a gym's secret (the account's PushPress
//! key, an outbound webhook endpoint's secret) is written with it sealed by the store's keyring
//! (`accounts.rs`, `webhooks.rs`, `credentials.rs`); an item written in clear before sealing
//! is read as it is and sealed on its next write. Opening is a KMS `Decrypt` in AWS, asked
//! for only by the code that uses the secret.
//!
//! [`SecretStore`]: openloop_core::ports::SecretStore

use async_trait::async_trait;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::sealed::{Secret, SecretContext};
use openloop_core::ports::SecretStore;
use openloop_core::ports::sealing::open_with;

use super::DynamoStore;

#[async_trait]
impl SecretStore for DynamoStore {
    async fn open_secret(&self, secret: &Secret, context: &SecretContext) -> Result<String, StoreError> {
        open_with(self.keyring.as_ref(), secret, context).await
    }
}

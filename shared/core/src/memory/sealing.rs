//! [`SecretStore`] in memory: what the store keeps is sealed by its [`LocalKeyring`]
//! (`kernel::sealed`), as the DynamoDB store's is by KMS.
//!
//! [`LocalKeyring`]: crate::kernel::sealed::LocalKeyring

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::sealed::{Secret, SecretContext};
use crate::ports::SecretStore;
use crate::ports::sealing::open_with;

use super::MemoryStore;

#[async_trait]
impl SecretStore for MemoryStore {
    async fn open_secret(&self, secret: &Secret, context: &SecretContext) -> Result<String, StoreError> {
        open_with(&self.keyring, secret, context).await
    }
}

//! Secrets sealed at rest (`kernel::sealed`): the [`Keyring`] that seals and opens them (KMS in
//! AWS, [`LocalKeyring`] without it), and the store's [`SecretStore`] capability. A store seals
//! every open secret before it writes it; the engine opens one only where it is used, so a
//! function that never uses a secret never asks for its key.

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::sealed::{Envelope, KeyringError, LocalKeyring, Secret, SecretContext};

/// Seals a secret under the platform's key and opens what it sealed.
#[async_trait]
pub trait Keyring: Send + Sync {
    async fn seal(&self, text: &str, context: &SecretContext) -> Result<Envelope, KeyringError>;
    async fn open(&self, envelope: &Envelope, context: &SecretContext) -> Result<String, KeyringError>;
}

#[async_trait]
impl Keyring for LocalKeyring {
    async fn seal(&self, text: &str, context: &SecretContext) -> Result<Envelope, KeyringError> {
        LocalKeyring::seal(self, text, context)
    }

    async fn open(&self, envelope: &Envelope, context: &SecretContext) -> Result<String, KeyringError> {
        LocalKeyring::open(self, envelope, context)
    }
}

/// The store's side: it sealed what it keeps, and opens a secret for the code that uses it.
#[async_trait]
pub trait SecretStore: Send + Sync {
    /// The text of `secret` (as read from this store) for `context`: an open one as it is (one
    /// read in clear from before sealing), a sealed one through the keyring.
    async fn open_secret(&self, secret: &Secret, context: &SecretContext) -> Result<String, StoreError>;
}

/// A keyring failure as the store reports it: the platform's key is out of reach (retry later)
/// or the envelope does not open (corrupt).
pub fn keyring_failure(e: KeyringError) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}

/// Seal `secret` in place if it is open (what every store does before it writes one).
pub async fn seal_in_place(keyring: &dyn Keyring, secret: &mut Secret, context: &SecretContext) -> Result<(), StoreError> {
    if let Secret::Open(text) = secret {
        *secret = Secret::Sealed(keyring.seal(text, context).await.map_err(keyring_failure)?);
    }
    Ok(())
}

/// Open `secret` with `keyring` (every store's [`SecretStore::open_secret`]).
pub async fn open_with(keyring: &dyn Keyring, secret: &Secret, context: &SecretContext) -> Result<String, StoreError> {
    match secret {
        Secret::Open(text) => Ok(text.clone()),
        Secret::Sealed(envelope) => keyring.open(envelope, context).await.map_err(keyring_failure),
    }
}

/// `account` as a store writes it: its PushPress key sealed (a clone only when there was one
/// open to seal).
pub async fn sealed_account<'a>(
    keyring: &dyn Keyring,
    account: &'a crate::owner::account::Account,
) -> Result<std::borrow::Cow<'a, crate::owner::account::Account>, StoreError> {
    if account.pushpress.as_ref().is_none_or(|c| c.api_key().is_sealed()) {
        return Ok(std::borrow::Cow::Borrowed(account));
    }
    let mut sealed = account.clone();
    if let Some(credentials) = sealed.pushpress.as_mut() {
        seal_in_place(keyring, credentials.api_key_mut(), &SecretContext::pushpress_key(account.id)).await?;
    }
    Ok(std::borrow::Cow::Owned(sealed))
}

/// `endpoint` as a store writes it: its signing secret sealed.
pub async fn sealed_endpoint<'a>(
    keyring: &dyn Keyring,
    endpoint: &'a crate::owner::outbound_webhook::WebhookEndpoint,
) -> Result<std::borrow::Cow<'a, crate::owner::outbound_webhook::WebhookEndpoint>, StoreError> {
    if endpoint.secret.is_sealed() {
        return Ok(std::borrow::Cow::Borrowed(endpoint));
    }
    let mut sealed = endpoint.clone();
    seal_in_place(
        keyring,
        &mut sealed.secret,
        &SecretContext::webhook_endpoint(endpoint.account_id, endpoint.id),
    )
    .await?;
    Ok(std::borrow::Cow::Owned(sealed))
}

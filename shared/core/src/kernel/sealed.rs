//! A gym's secrets as the store keeps them: sealed (envelope-encrypted under the platform's
//! key, `ports::Keyring`), and opened only by the code that uses one — the PushPress key for a
//! call to PushPress, an outbound webhook's secret for signing a delivery.
//!
//! A [`Secret`] is either [`Secret::Open`], its text known in this process (the owner just
//! gave it, or it was opened, or it was read from an item written before secrets were sealed),
//! or [`Secret::Sealed`], an [`Envelope`] as read from the store. The stores seal every open
//! secret before they write it, so an item written in clear before this existed is still read
//! (as open) and is sealed on its next write. `Debug` never shows the text.
//!
//! [`LocalKeyring`] is the keyring of runs without KMS (the in-memory store, tests): AES-free
//! but sound — HMAC-SHA256 as a keyed stream (counter mode) and as the tag over the nonce, the
//! context and the ciphertext (encrypt-then-MAC). Its key is the process's own, so what it
//! seals is only as secret as that key; in AWS the KMS keyring seals instead.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::kernel::ids::AccountId;

type HmacSha256 = Hmac<Sha256>;

/// A secret: its text in this process, or sealed as the store keeps it.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    Open(String),
    Sealed(Envelope),
}

impl Secret {
    pub fn open(text: impl Into<String>) -> Self {
        Self::Open(text.into())
    }

    /// The text, when this process knows it (never for a sealed secret: open it first).
    pub fn open_text(&self) -> Option<&str> {
        match self {
            Self::Open(text) => Some(text),
            Self::Sealed(_) => None,
        }
    }

    pub fn is_sealed(&self) -> bool {
        matches!(self, Self::Sealed(_))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open(_) => f.write_str("Secret::Open(<redacted>)"),
            Self::Sealed(e) => write!(f, "Secret::Sealed({})", e.key),
        }
    }
}

/// Stored as `{"sealed": {envelope}}`; a plain string is a secret from before sealing (read
/// as open, sealed on the next write). An open secret serializes as its text: only the
/// stores serialize, and they seal first.
impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Stored<'a> {
            sealed: &'a Envelope,
        }
        match self {
            Self::Open(text) => serializer.serialize_str(text),
            Self::Sealed(envelope) => Stored { sealed: envelope }.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Clear(String),
            Sealed { sealed: Envelope },
        }
        Ok(match Stored::deserialize(deserializer)? {
            Stored::Clear(text) => Self::Open(text),
            Stored::Sealed { sealed } => Self::Sealed(sealed),
        })
    }
}

/// A sealed secret: the data key that encrypted it, itself encrypted under the platform's key
/// (`key` names which: a KMS key's ARN, or `local`), and the text encrypted with it. Bound to
/// its [`SecretContext`]: opened under another account or purpose it does not open.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub key: String,
    /// Base64: the encrypted data key (KMS's `CiphertextBlob`; empty for the local keyring).
    pub data_key: String,
    /// Base64.
    pub nonce: String,
    /// Base64: the ciphertext with its authentication tag.
    pub ciphertext: String,
}

impl std::fmt::Debug for Envelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Envelope({})", self.key)
    }
}

/// What a secret is bound to: its account, what it is, and which item of that kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretContext {
    pub account: AccountId,
    pub purpose: &'static str,
    pub item: Option<String>,
}

impl SecretContext {
    /// An account's PushPress API key.
    pub fn pushpress_key(account: AccountId) -> Self {
        Self {
            account,
            purpose: "pushpress_api_key",
            item: None,
        }
    }

    /// The signing secret of an owner's outbound webhook endpoint.
    pub fn webhook_endpoint(account: AccountId, endpoint: ulid::Ulid) -> Self {
        Self {
            account,
            purpose: "webhook_endpoint_secret",
            item: Some(endpoint.to_string()),
        }
    }

    /// As name/value pairs (KMS's encryption context; the local keyring's associated data).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = vec![
            ("openloop:account", self.account.to_string()),
            ("openloop:purpose", self.purpose.to_owned()),
        ];
        if let Some(item) = &self.item {
            pairs.push(("openloop:item", item.clone()));
        }
        pairs
    }

    /// The pairs as one string (AES-GCM's associated data; the local keyring's).
    pub fn associated_data(&self) -> String {
        self.pairs().iter().map(|(k, v)| format!("{k}={v};")).collect()
    }
}

/// Why a secret could not be sealed or opened. Never carries the secret.
#[derive(Debug, thiserror::Error)]
#[error("keyring: {0}")]
pub struct KeyringError(pub String);

/// The keyring of runs without KMS: see the module's notes.
#[derive(Clone)]
pub struct LocalKeyring {
    key: Vec<u8>,
}

/// What names the local keyring's envelopes.
pub const LOCAL_KEY: &str = "local";

impl LocalKeyring {
    pub fn new(key: impl Into<Vec<u8>>) -> Self {
        Self { key: key.into() }
    }

    fn mac(&self, label: &[u8]) -> HmacSha256 {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
        mac.update(label);
        mac
    }

    fn keystream(&self, nonce: &[u8], len: usize) -> Vec<u8> {
        let mut stream = Vec::with_capacity(len + 32);
        let mut counter: u64 = 0;
        while stream.len() < len {
            let mut mac = self.mac(b"openloop-local-keyring:stream:");
            mac.update(nonce);
            mac.update(&counter.to_be_bytes());
            stream.extend_from_slice(&mac.finalize().into_bytes());
            counter += 1;
        }
        stream.truncate(len);
        stream
    }

    fn tag(&self, nonce: &[u8], context: &SecretContext, ciphertext: &[u8]) -> Vec<u8> {
        let mut mac = self.mac(b"openloop-local-keyring:tag:");
        mac.update(nonce);
        let ad = context.associated_data();
        mac.update(&(ad.len() as u64).to_be_bytes());
        mac.update(ad.as_bytes());
        mac.update(ciphertext);
        mac.finalize().into_bytes().to_vec()
    }

    /// Seal `text` for `context` with a nonce of the caller's (a fresh random one each time).
    pub fn seal_with_nonce(&self, text: &str, context: &SecretContext, nonce: [u8; 16]) -> Envelope {
        let mut ciphertext: Vec<u8> = text
            .as_bytes()
            .iter()
            .zip(self.keystream(&nonce, text.len()))
            .map(|(b, k)| b ^ k)
            .collect();
        let tag = self.tag(&nonce, context, &ciphertext);
        ciphertext.extend_from_slice(&tag);
        Envelope {
            key: LOCAL_KEY.into(),
            data_key: String::new(),
            nonce: B64.encode(nonce),
            ciphertext: B64.encode(ciphertext),
        }
    }

    /// Seal `text` for `context` under a fresh nonce.
    pub fn seal(&self, text: &str, context: &SecretContext) -> Result<Envelope, KeyringError> {
        let mut nonce = [0u8; 16];
        fresh_nonce(&mut nonce);
        Ok(self.seal_with_nonce(text, context, nonce))
    }

    pub fn open(&self, envelope: &Envelope, context: &SecretContext) -> Result<String, KeyringError> {
        if envelope.key != LOCAL_KEY {
            return Err(KeyringError(format!("sealed under {}, not the local keyring", envelope.key)));
        }
        let bad = || KeyringError("the envelope does not open (altered, or another account's)".into());
        let nonce = B64.decode(&envelope.nonce).map_err(|_| bad())?;
        let sealed = B64.decode(&envelope.ciphertext).map_err(|_| bad())?;
        let (ciphertext, tag) = sealed
            .split_at_checked(sealed.len().checked_sub(32).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        let mut mac = self.mac(b"openloop-local-keyring:tag:");
        mac.update(&nonce);
        let ad = context.associated_data();
        mac.update(&(ad.len() as u64).to_be_bytes());
        mac.update(ad.as_bytes());
        mac.update(ciphertext);
        mac.verify_slice(tag).map_err(|_| bad())?;
        let text: Vec<u8> = ciphertext
            .iter()
            .zip(self.keystream(&nonce, ciphertext.len()))
            .map(|(b, k)| b ^ k)
            .collect();
        String::from_utf8(text).map_err(|_| bad())
    }
}

impl Default for LocalKeyring {
    /// The in-memory store's and the local runs' key: fixed, so only as secret as the process.
    fn default() -> Self {
        Self::new(b"openloop-local-keyring-v1".to_vec())
    }
}

/// A nonce that never repeats in practice: a fresh ULID's 80 random bits (no clock read: its
/// time part is the epoch) mixed with this process's counter.
fn fresh_nonce(out: &mut [u8; 16]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let random = ulid::Ulid::from_datetime(std::time::SystemTime::UNIX_EPOCH).random().to_be_bytes();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes();
    out[..8].copy_from_slice(&random[8..16]);
    for (o, (r, c)) in out[8..].iter_mut().zip(random[..8].iter().zip(count)) {
        *o = r ^ c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> SecretContext {
        SecretContext::pushpress_key(AccountId(ulid::Ulid::from_datetime(std::time::SystemTime::UNIX_EPOCH)))
    }

    #[test]
    fn a_sealed_secret_opens_only_for_its_context_and_unaltered() {
        let keyring = LocalKeyring::default();
        let ctx = context();
        let envelope = keyring.seal("pp_live_key_123", &ctx).expect("seal");
        assert!(!envelope.ciphertext.contains("pp_live"), "no text in clear");
        assert_eq!(keyring.open(&envelope, &ctx).expect("open"), "pp_live_key_123");
        assert!(keyring.open(&envelope, &context()).is_err(), "another account's");
        let mut altered = envelope.clone();
        altered.ciphertext = B64.encode(b"x".repeat(40));
        assert!(keyring.open(&altered, &ctx).is_err(), "altered");
        assert!(LocalKeyring::new(b"other".to_vec()).open(&envelope, &ctx).is_err(), "another key");
        assert_ne!(
            keyring.seal("pp_live_key_123", &ctx).expect("seal").nonce,
            envelope.nonce,
            "fresh nonces"
        );
    }

    #[test]
    fn a_secret_in_clear_from_before_reads_as_open_and_a_sealed_one_round_trips() {
        let clear: Secret = serde_json::from_str("\"pp_old\"").expect("clear");
        assert_eq!(clear.open_text(), Some("pp_old"));
        let sealed = Secret::Sealed(LocalKeyring::default().seal("pp_new", &context()).expect("seal"));
        let json = serde_json::to_string(&sealed).expect("json");
        assert!(json.starts_with("{\"sealed\":") && !json.contains("pp_new"), "{json}");
        assert_eq!(serde_json::from_str::<Secret>(&json).expect("back"), sealed);
        assert!(!format!("{clear:?}").contains("pp_old"));
    }
}

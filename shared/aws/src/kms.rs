//! The [`Keyring`] on AWS KMS: envelope encryption of a gym's secrets (`kernel::sealed`). To
//! seal, `GenerateDataKey` (AES-256) under the platform's key with the secret's context as
//! KMS's encryption context, then AES-256-GCM of the text with that data key here (the same
//! context as associated data); the envelope keeps the data key as KMS encrypted it. To open,
//! `Decrypt` of the data key (with the same context: another account's envelope does not open),
//! then AES-GCM. IAM decides who may do which (`infra/template.yaml`: `kms:Decrypt` only for the
//! functions that use a secret, `kms:GenerateDataKey` for those that write one). Opened data
//! keys are kept a few minutes in the process, so a burst of touches asks KMS once.
//!
//! Locally the emulator's KMS (moto) answers the same calls; provisioning creates the key.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{Value, json};

use openloop_core::kernel::sealed::{Envelope, KeyringError, SecretContext};
use openloop_core::ports::Keyring;

use crate::aws_json::JsonService;

/// How long an opened data key is kept in the process.
const DATA_KEY_KEPT: Duration = Duration::from_secs(300);
/// At most this many opened data keys are kept.
const DATA_KEYS_KEPT: usize = 256;

/// Seals with `key_id` (an ARN, a key id or an alias) through KMS.
pub struct KmsKeyring {
    kms: JsonService,
    key_id: String,
    opened: Mutex<HashMap<String, ([u8; 32], Instant)>>,
}

impl KmsKeyring {
    pub fn new(shared: aws_config::SdkConfig, key_id: impl Into<String>) -> Self {
        Self {
            kms: JsonService::new(shared, "kms", "TrentService"),
            key_id: key_id.into(),
            opened: Mutex::new(HashMap::new()),
        }
    }

    async fn kms(&self, operation: &str, body: Value) -> Result<Value, KeyringError> {
        match self.kms.call_retried(operation, &body).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(refused)) => Err(KeyringError(format!("KMS {operation}: {refused}"))),
            Err(e) => Err(KeyringError(format!("KMS {operation}: {e}"))),
        }
    }

    fn kept(&self, kept_as: &str) -> Option<[u8; 32]> {
        let opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        opened
            .get(kept_as)
            .filter(|(_, at)| at.elapsed() < DATA_KEY_KEPT)
            .map(|(key, _)| *key)
    }

    fn keep(&self, kept_as: &str, key: [u8; 32]) {
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if opened.len() >= DATA_KEYS_KEPT {
            opened.retain(|_, (_, at)| at.elapsed() < DATA_KEY_KEPT);
            if opened.len() >= DATA_KEYS_KEPT {
                opened.clear();
            }
        }
        opened.insert(kept_as.to_owned(), (key, Instant::now()));
    }
}

fn encryption_context(context: &SecretContext) -> Value {
    Value::Object(context.pairs().into_iter().map(|(k, v)| (k.to_owned(), Value::String(v))).collect())
}

fn plaintext_key(answer: &Value) -> Result<[u8; 32], KeyringError> {
    let bytes = answer
        .get("Plaintext")
        .and_then(Value::as_str)
        .and_then(|p| B64.decode(p).ok())
        .ok_or_else(|| KeyringError("KMS answered no data key".into()))?;
    bytes
        .try_into()
        .map_err(|_| KeyringError("KMS answered a data key that is not 256 bits".into()))
}

fn aead_key(key: &[u8; 32]) -> Result<LessSafeKey, KeyringError> {
    UnboundKey::new(&AES_256_GCM, key)
        .map(LessSafeKey::new)
        .map_err(|_| KeyringError("AES-256-GCM key".into()))
}

#[async_trait]
impl Keyring for KmsKeyring {
    async fn seal(&self, text: &str, context: &SecretContext) -> Result<Envelope, KeyringError> {
        let answer = self
            .kms(
                "GenerateDataKey",
                json!({"KeyId": self.key_id, "KeySpec": "AES_256", "EncryptionContext": encryption_context(context)}),
            )
            .await?;
        let key = plaintext_key(&answer)?;
        let data_key = answer
            .get("CiphertextBlob")
            .and_then(Value::as_str)
            .ok_or_else(|| KeyringError("KMS answered no encrypted data key".into()))?
            .to_owned();
        let key_arn = answer.get("KeyId").and_then(Value::as_str).unwrap_or(&self.key_id).to_owned();
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| KeyringError("no randomness for a nonce".into()))?;
        let mut sealed = text.as_bytes().to_vec();
        aead_key(&key)?
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.associated_data()),
                &mut sealed,
            )
            .map_err(|_| KeyringError("AES-256-GCM seal".into()))?;
        Ok(Envelope {
            key: key_arn,
            data_key,
            nonce: B64.encode(nonce),
            ciphertext: B64.encode(sealed),
        })
    }

    async fn open(&self, envelope: &Envelope, context: &SecretContext) -> Result<String, KeyringError> {
        if envelope.data_key.is_empty() {
            return Err(KeyringError(format!("sealed under {}, not with KMS", envelope.key)));
        }
        // Kept per signer: a data key KMS opened for one principal is no answer for another
        // (in Lambda a process has one; the local runtime's functions each sign as their own).
        let kept_as = format!("{}\n{}", self.kms.signer().await, envelope.data_key);
        let key = match self.kept(&kept_as) {
            Some(key) => key,
            None => {
                let answer = self
                    .kms(
                        "Decrypt",
                        json!({"KeyId": envelope.key, "CiphertextBlob": envelope.data_key, "EncryptionContext": encryption_context(context)}),
                    )
                    .await?;
                let key = plaintext_key(&answer)?;
                self.keep(&kept_as, key);
                key
            }
        };
        let bad = || KeyringError("the envelope does not open (altered, or another account's)".into());
        let nonce: [u8; NONCE_LEN] = B64.decode(&envelope.nonce).ok().and_then(|n| n.try_into().ok()).ok_or_else(bad)?;
        let mut sealed = B64.decode(&envelope.ciphertext).map_err(|_| bad())?;
        let text = aead_key(&key)?
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.associated_data()),
                &mut sealed,
            )
            .map_err(|_| bad())?;
        String::from_utf8(text.to_vec()).map_err(|_| bad())
    }
}

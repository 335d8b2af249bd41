//! SNS message signatures: nothing that arrives in an SNS envelope is acted on before its
//! signature is checked against the topic's signing certificate, as AWS describes in
//! "Verifying the signatures of Amazon SNS messages".
//!
//! - The string to sign is built from the envelope's own fields, in the order AWS fixes per
//!   message type (`Key\nValue\n` each; `Subject` only when present).
//! - `SignatureVersion` 1 is RSA PKCS#1 v1.5 over SHA-1, 2 over SHA-256; nothing else passes.
//! - The certificate is fetched only over HTTPS from an `sns.<region>.amazonaws.com` host (TLS
//!   vouches for it); tests and local runs may name another URL prefix with
//!   [`SnsVerifier::trusting_certificates_under`], which Lambda never uses.
//! - Certificates are cached by URL (SNS rotates them rarely), so a batch costs one fetch.
//! - With a topic configured, a correctly signed message of another topic is refused too:
//!   anyone can get SNS to sign messages of their own topic.
//!
//! The crypto is the TLS stack's own (ring); x509-cert only reads the key out of the
//! certificate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use ring::signature::{RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use serde::Deserialize;
use x509_cert::Certificate;
use x509_cert::der::DecodePem;
use x509_cert::der::oid::ObjectIdentifier;

/// rsaEncryption (RFC 8017): the only key type SNS signs with.
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// Certificates kept at most (SNS uses one per region at a time; rotation adds one).
const CERT_CACHE_MAX: usize = 16;
/// A certificate larger than this is not a signing certificate.
const CERT_MAX_BYTES: usize = 64 * 1024;

/// Why an envelope was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SnsError {
    /// Not an SNS envelope at all.
    #[error("not an SNS message: {0}")]
    Malformed(String),
    /// Unsigned, forged, tampered with, signed with an untrusted certificate, or of another
    /// topic: never to be processed.
    #[error("rejected SNS message: {0}")]
    Rejected(String),
    /// The signing certificate could not be fetched now; the message may be retried.
    #[error("signing certificate unavailable: {0}")]
    CertificateUnavailable(String),
}

/// The fields of an SNS envelope (JSON, as SNS delivers it to SQS without raw delivery).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SnsMessage {
    #[serde(rename = "Type")]
    pub kind: String,
    pub message_id: String,
    pub topic_arn: String,
    #[serde(default)]
    pub subject: Option<String>,
    pub message: String,
    pub timestamp: String,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(rename = "SubscribeURL", default)]
    pub subscribe_url: Option<String>,
    #[serde(default)]
    pub signature_version: Option<String>,
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(rename = "SigningCertURL", default)]
    pub signing_cert_url: Option<String>,
}

impl SnsMessage {
    /// Whether a queue body is an SNS envelope (as opposed to one of our own events).
    pub fn is_envelope(body: &str) -> bool {
        serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .is_some_and(|v| v.get("Type").is_some() && v.get("TopicArn").is_some())
    }

    /// The string SNS signed, per message type; `None` for a type SNS does not sign.
    pub fn string_to_sign(&self) -> Option<String> {
        let mut fields: Vec<(&str, &str)> = vec![("Message", &self.message), ("MessageId", &self.message_id)];
        match self.kind.as_str() {
            "Notification" => {
                if let Some(subject) = &self.subject {
                    fields.push(("Subject", subject));
                }
                fields.extend([("Timestamp", self.timestamp.as_str()), ("TopicArn", &self.topic_arn)]);
            }
            "SubscriptionConfirmation" | "UnsubscribeConfirmation" => {
                fields.extend([
                    ("SubscribeURL", self.subscribe_url.as_deref()?),
                    ("Timestamp", self.timestamp.as_str()),
                    ("Token", self.token.as_deref()?),
                    ("TopicArn", &self.topic_arn),
                ]);
            }
            _ => return None,
        }
        fields.push(("Type", &self.kind));
        Some(fields.iter().map(|(k, v)| format!("{k}\n{v}\n")).collect())
    }
}

/// Which certificate URLs are trusted.
#[derive(Clone, Debug)]
enum CertificateHosts {
    /// HTTPS on `sns.<region>.amazonaws.com` (or `.amazonaws.com.cn`) only.
    Aws,
    /// Anything under this prefix (tests and local runs only).
    Prefix(String),
}

/// Checks SNS envelopes; cheap to share (the certificate cache is inside).
#[derive(Clone)]
pub struct SnsVerifier {
    http: reqwest::Client,
    hosts: CertificateHosts,
    topic_arn: Option<String>,
    /// Certificate URL → the RSA public key it holds (PKCS#1 DER).
    keys: Arc<Mutex<HashMap<String, Arc<Vec<u8>>>>>,
}

impl SnsVerifier {
    /// The production verifier: certificates from SNS's own hosts only; with `topic_arn`,
    /// messages of that topic only.
    pub fn new(http: reqwest::Client, topic_arn: Option<String>) -> Self {
        Self {
            http,
            hosts: CertificateHosts::Aws,
            topic_arn,
            keys: Arc::default(),
        }
    }

    /// A verifier that also trusts certificates served under `prefix` (a local stub). For
    /// tests and local runs only: the functions in Lambda build theirs with [`Self::new`].
    pub fn trusting_certificates_under(prefix: impl Into<String>, http: reqwest::Client, topic_arn: Option<String>) -> Self {
        Self {
            hosts: CertificateHosts::Prefix(prefix.into()),
            ..Self::new(http, topic_arn)
        }
    }

    /// Parse `body` as an SNS envelope and check its signature; only a message that passes
    /// comes back.
    pub async fn verify(&self, body: &str) -> Result<SnsMessage, SnsError> {
        let message: SnsMessage = serde_json::from_str(body).map_err(|e| SnsError::Malformed(e.to_string()))?;
        if let Some(topic) = &self.topic_arn
            && &message.topic_arn != topic
        {
            return Err(SnsError::Rejected(format!("topic {} is not ours", message.topic_arn)));
        }
        let algorithm = match message.signature_version.as_deref() {
            Some("1") => &RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
            Some("2") => &RSA_PKCS1_2048_8192_SHA256,
            Some(other) => return Err(SnsError::Rejected(format!("unknown SignatureVersion {other:?}"))),
            None => return Err(SnsError::Rejected("unsigned (no SignatureVersion)".into())),
        };
        let signature = message
            .signature
            .as_deref()
            .ok_or_else(|| SnsError::Rejected("unsigned (no Signature)".into()))?;
        let signature = base64::engine::general_purpose::STANDARD
            .decode(signature)
            .map_err(|_| SnsError::Rejected("Signature is not base64".into()))?;
        let url = message
            .signing_cert_url
            .as_deref()
            .ok_or_else(|| SnsError::Rejected("no SigningCertURL".into()))?;
        self.check_certificate_url(url)?;
        let canonical = message
            .string_to_sign()
            .ok_or_else(|| SnsError::Rejected(format!("message type {:?} is not signed by SNS", message.kind)))?;
        let key = self.public_key(url).await?;
        UnparsedPublicKey::new(algorithm, key.as_slice())
            .verify(canonical.as_bytes(), &signature)
            .map_err(|_| SnsError::Rejected("signature does not match".into()))?;
        Ok(message)
    }

    fn check_certificate_url(&self, url: &str) -> Result<(), SnsError> {
        if let CertificateHosts::Prefix(prefix) = &self.hosts
            && url.starts_with(prefix.as_str())
        {
            return Ok(());
        }
        if is_sns_certificate_url(url) {
            Ok(())
        } else {
            Err(SnsError::Rejected(format!("SigningCertURL {url:?} is not an SNS certificate")))
        }
    }

    async fn public_key(&self, url: &str) -> Result<Arc<Vec<u8>>, SnsError> {
        if let Some(key) = self.keys.lock().ok().and_then(|k| k.get(url).cloned()) {
            return Ok(key);
        }
        let response = self
            .http
            .get(url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| SnsError::CertificateUnavailable(e.to_string()))?;
        let pem = response
            .bytes()
            .await
            .map_err(|e| SnsError::CertificateUnavailable(e.to_string()))?;
        if pem.len() > CERT_MAX_BYTES {
            return Err(SnsError::Rejected("signing certificate too large".into()));
        }
        let key = Arc::new(rsa_public_key(&pem, jiff::Timestamp::now())?);
        if let Ok(mut keys) = self.keys.lock() {
            if keys.len() >= CERT_CACHE_MAX {
                keys.clear();
            }
            keys.insert(url.to_owned(), key.clone());
        }
        Ok(key)
    }
}

/// `https://sns.<region>.amazonaws.com[.cn]/…pem`, no port, no credentials.
pub fn is_sns_certificate_url(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let region = host
        .strip_prefix("sns.")
        .and_then(|h| h.strip_suffix(".amazonaws.com").or_else(|| h.strip_suffix(".amazonaws.com.cn")));
    url.scheme() == "https"
        && url.port().is_none()
        && url.username().is_empty()
        && url.password().is_none()
        && url.path().ends_with(".pem")
        && region.is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
}

/// The RSA public key (PKCS#1 DER) of a PEM certificate that is valid at `now`.
fn rsa_public_key(pem: &[u8], now: jiff::Timestamp) -> Result<Vec<u8>, SnsError> {
    let cert = Certificate::from_pem(pem).map_err(|e| SnsError::Rejected(format!("signing certificate unreadable: {e}")))?;
    let validity = &cert.tbs_certificate.validity;
    let secs = |t: x509_cert::time::Time| i64::try_from(t.to_unix_duration().as_secs()).unwrap_or(i64::MAX);
    let now = now.as_second();
    if now < secs(validity.not_before) || now > secs(validity.not_after) {
        return Err(SnsError::Rejected("signing certificate is not valid now".into()));
    }
    let spki = &cert.tbs_certificate.subject_public_key_info;
    if spki.algorithm.oid != RSA_ENCRYPTION {
        return Err(SnsError::Rejected("signing certificate does not hold an RSA key".into()));
    }
    spki.subject_public_key
        .as_bytes()
        .map(<[u8]>::to_vec)
        .ok_or_else(|| SnsError::Rejected("signing certificate key is malformed".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_sns_hosts_may_serve_the_signing_certificate() {
        for good in [
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem",
        ] {
            assert!(is_sns_certificate_url(good), "{good}");
        }
        for bad in [
            "http://sns.us-east-1.amazonaws.com/cert.pem",
            "https://sns.us-east-1.amazonaws.com.evil.example/cert.pem",
            "https://evil.example/sns.us-east-1.amazonaws.com/cert.pem",
            "https://sns..amazonaws.com/cert.pem",
            "https://sns.us-east-1.amazonaws.com:8443/cert.pem",
            "https://user@sns.us-east-1.amazonaws.com/cert.pem",
            "https://sns.us-east-1.amazonaws.com/cert.txt",
            "https://s3.us-east-1.amazonaws.com/cert.pem",
            "not a url",
        ] {
            assert!(!is_sns_certificate_url(bad), "{bad}");
        }
    }

    fn message(kind: &str, subject: Option<&str>) -> SnsMessage {
        SnsMessage {
            kind: kind.into(),
            message_id: "id-1".into(),
            topic_arn: "arn:aws:sns:us-east-1:1:t".into(),
            subject: subject.map(Into::into),
            message: "hello\nworld".into(),
            timestamp: "2026-11-02T14:00:00.000Z".into(),
            token: Some("tok".into()),
            subscribe_url: Some("https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription".into()),
            signature_version: Some("1".into()),
            signature: None,
            signing_cert_url: None,
        }
    }

    #[test]
    fn the_string_to_sign_follows_the_message_type() {
        assert_eq!(
            message("Notification", None).string_to_sign().as_deref(),
            Some(
                "Message\nhello\nworld\nMessageId\nid-1\nTimestamp\n2026-11-02T14:00:00.000Z\nTopicArn\narn:aws:sns:us-east-1:1:t\nType\nNotification\n"
            )
        );
        let with_subject = message("Notification", Some("Hi")).string_to_sign().unwrap_or_default();
        assert!(with_subject.contains("MessageId\nid-1\nSubject\nHi\nTimestamp\n"), "{with_subject}");
        assert_eq!(
            message("SubscriptionConfirmation", Some("ignored")).string_to_sign().as_deref(),
            Some(
                "Message\nhello\nworld\nMessageId\nid-1\nSubscribeURL\nhttps://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription\n\
                 Timestamp\n2026-11-02T14:00:00.000Z\nToken\ntok\nTopicArn\narn:aws:sns:us-east-1:1:t\nType\nSubscriptionConfirmation\n"
            )
        );
        assert_eq!(message("Surprise", None).string_to_sign(), None);
    }

    #[tokio::test]
    async fn unsigned_and_foreign_envelopes_are_rejected_without_any_fetch() {
        let verifier = SnsVerifier::new(crate::tls::client(), Some("arn:aws:sns:us-east-1:1:ours".into()));
        let unsigned = serde_json::json!({"Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:us-east-1:1:ours",
            "Message": "{}", "Timestamp": "2026-11-02T14:00:00.000Z"});
        assert!(matches!(verifier.verify(&unsigned.to_string()).await, Err(SnsError::Rejected(_))));
        let foreign = serde_json::json!({"Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:us-east-1:2:theirs",
            "Message": "{}", "Timestamp": "2026-11-02T14:00:00.000Z", "SignatureVersion": "1", "Signature": "AAAA",
            "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem"});
        assert!(matches!(verifier.verify(&foreign.to_string()).await, Err(SnsError::Rejected(_))));
        let elsewhere = serde_json::json!({"Type": "Notification", "MessageId": "m", "TopicArn": "arn:aws:sns:us-east-1:1:ours",
            "Message": "{}", "Timestamp": "2026-11-02T14:00:00.000Z", "SignatureVersion": "2", "Signature": "AAAA",
            "SigningCertURL": "https://attacker.example/cert.pem"});
        assert!(matches!(verifier.verify(&elsewhere.to_string()).await, Err(SnsError::Rejected(_))));
        assert!(matches!(verifier.verify("[]").await, Err(SnsError::Malformed(_))));
    }
}

//! Signing SNS envelopes the way AWS does, for tests: a throwaway RSA key, a self-signed
//! certificate served over local HTTP, and envelopes signed with SignatureVersion 1 (SHA-1)
//! or 2 (SHA-256). The verifier it hands out trusts only that local server's URL prefix.

use base64::Engine as _;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use x509_cert::builder::{Builder, CertificateBuilder, Profile};
use x509_cert::der::EncodePem;
use x509_cert::der::pem::LineEnding;
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::SubjectPublicKeyInfoOwned;
use x509_cert::time::Validity;

use openloop_aws::sns::SnsVerifier;

pub const TOPIC_ARN: &str = "arn:aws:sns:us-east-1:123456789012:openloop-mail-events";

/// A key, its certificate on a local server, and the signing of envelopes with them.
pub struct SnsSigner {
    key: rsa::RsaPrivateKey,
    base_url: String,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for SnsSigner {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl SnsSigner {
    /// The test key (a throwaway 2048-bit RSA key made for these tests only, in
    /// `sns-test-key.pem`: generating one in a debug build takes seconds) and a fresh
    /// self-signed certificate for it, served at [`Self::cert_url`].
    pub async fn start() -> Self {
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(include_str!("sns-test-key.pem")).unwrap_or_else(|e| panic!("pkcs8: {e}"));
        let signer = SigningKey::<sha2::Sha256>::new(key.clone());
        let spki = SubjectPublicKeyInfoOwned::from_key(key.to_public_key()).unwrap_or_else(|e| panic!("spki: {e}"));
        let subject: Name = "CN=sns.test.local".parse().unwrap_or_else(|e| panic!("name: {e}"));
        let validity = Validity::from_now(std::time::Duration::from_secs(24 * 3600)).unwrap_or_else(|e| panic!("validity: {e}"));
        let cert = CertificateBuilder::new(Profile::Root, SerialNumber::from(1u32), validity, subject, spki, &signer)
            .unwrap_or_else(|e| panic!("certificate: {e}"))
            .build::<rsa::pkcs1v15::Signature>()
            .unwrap_or_else(|e| panic!("certificate: {e}"));
        let pem = cert.to_pem(LineEnding::LF).unwrap_or_else(|e| panic!("pem: {e}"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let server = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let pem = pem.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/x-pem-file\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{pem}",
                        pem.len()
                    );
                    let _ = socket.write_all(response.as_bytes()).await;
                });
            }
        });
        Self {
            key,
            base_url: format!("http://{addr}/"),
            server,
        }
    }

    pub fn cert_url(&self) -> String {
        format!("{}SimpleNotificationService-test.pem", self.base_url)
    }

    /// A verifier that trusts this signer's certificate server (and accepts only `TOPIC_ARN`).
    pub fn verifier(&self) -> SnsVerifier {
        SnsVerifier::trusting_certificates_under(self.base_url.clone(), openloop_aws::tls::client(), Some(TOPIC_ARN.into()))
    }

    /// A Notification envelope of `TOPIC_ARN` carrying `message`, signed with `version`.
    pub fn notification(&self, message: &str, version: u8) -> Value {
        let mut envelope = json!({"Type": "Notification", "MessageId": ulid::Ulid::new().to_string(), "TopicArn": TOPIC_ARN,
            "Message": message, "Timestamp": "2026-11-02T14:00:00.000Z", "SigningCertURL": self.cert_url(),
            "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe"});
        self.sign(&mut envelope, version);
        envelope
    }

    /// Set `SignatureVersion` and `Signature` over the envelope's fields as they are now.
    pub fn sign(&self, envelope: &mut Value, version: u8) {
        let field = |name: &str| envelope.get(name).and_then(Value::as_str).map(str::to_owned);
        let kind = field("Type").unwrap_or_default();
        let names: &[&str] = if kind == "Notification" {
            &["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
        } else {
            &["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
        };
        let canonical: String = names
            .iter()
            .filter_map(|name| field(name).map(|value| format!("{name}\n{value}\n")))
            .collect();
        let signature = match version {
            1 => SigningKey::<sha1::Sha1>::new(self.key.clone()).sign(canonical.as_bytes()).to_vec(),
            _ => SigningKey::<sha2::Sha256>::new(self.key.clone())
                .sign(canonical.as_bytes())
                .to_vec(),
        };
        envelope["SignatureVersion"] = json!(version.to_string());
        envelope["Signature"] = json!(base64::engine::general_purpose::STANDARD.encode(signature));
    }
}

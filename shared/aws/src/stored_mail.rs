//! The [`StoredMail`] port on S3: SES receiving's S3 action writes each inbound message to
//! the inbound-mail bucket, and the notification names its key. Only the configured bucket is
//! read, whatever a notification names.
//!
//! One operation, S3's `GetObject`, as one SigV4-signed GET over the same reqwest client as
//! the SDK's calls, not through `aws-sdk-s3`: the S3 client brings its checksum crates (their
//! CRC tables alone are 0.7 MB) and its endpoint rules into the signals function's binary for
//! a read that is plain HTTP. The signature is S3's (`aws-sigv4`, the SDK's own signer, with
//! S3's settings: the path encoded once, never normalised, and `x-amz-content-sha256`); the
//! address is virtual-hosted (`{bucket}.s3.{region}.amazonaws.com`) in AWS, path-style against
//! an emulator. Credentials come from the clients' provider on every read (stored mail is
//! read for large messages only; in Lambda the provider reads the environment).

use std::time::SystemTime;

use async_trait::async_trait;
use aws_config::SdkConfig;
use aws_sdk_dynamodb::config::ProvideCredentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, UriPathNormalizationMode, sign,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;

use openloop_core::ports::{StoredMail, StoredMailError};

/// The largest inbound message read (SES receiving accepts up to 40 MB).
const MAX_MESSAGE_BYTES: u64 = 40 * 1024 * 1024;

/// Where and how stored mail is read: made by [`crate::clients::Clients::stored_mail`].
#[derive(Clone)]
pub struct S3StoredMail {
    http: reqwest::Client,
    shared: SdkConfig,
    /// An emulator's address (`AWS_ENDPOINT_URL`): path-style requests to it.
    endpoint: Option<String>,
    bucket: String,
}

impl S3StoredMail {
    pub(crate) fn new(shared: SdkConfig, bucket: impl Into<String>) -> Self {
        Self {
            http: crate::tls::client(),
            endpoint: shared.endpoint_url().map(|e| e.trim_end_matches('/').to_owned()),
            shared,
            bucket: bucket.into(),
        }
    }

    /// The object's address: path-style at an emulator (or for a bucket name with a dot, which
    /// S3's certificate does not cover as a host name), virtual-hosted otherwise.
    fn url(&self, key: &str) -> String {
        let key = encode_key(key);
        let bucket = &self.bucket;
        match &self.endpoint {
            Some(endpoint) => format!("{endpoint}/{bucket}/{key}"),
            None => {
                let region = self.region();
                if bucket.contains('.') {
                    format!("https://s3.{region}.amazonaws.com/{bucket}/{key}")
                } else {
                    format!("https://{bucket}.s3.{region}.amazonaws.com/{key}")
                }
            }
        }
    }

    /// The region requests are signed for and addressed to.
    fn region(&self) -> &str {
        self.shared.region().map_or("us-east-1", |r| r.as_ref())
    }

    async fn identity(&self) -> Result<Identity, StoredMailError> {
        let provider = self
            .shared
            .credentials_provider()
            .ok_or_else(|| StoredMailError::Unavailable("no AWS credentials configured".into()))?;
        let credentials = provider
            .provide_credentials()
            .await
            .map_err(|e| StoredMailError::Unavailable(format!("AWS credentials: {e}")))?;
        Ok(credentials.into())
    }
}

/// A signed S3 GET of `url` at `time`, with `headers` (lower-case names) signed too.
fn signed_get(
    url: &str,
    headers: &[(&str, &str)],
    identity: &Identity,
    region: &str,
    time: SystemTime,
) -> Result<http::Request<()>, String> {
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    let params = v4::SigningParams::builder()
        .identity(identity)
        .region(region)
        .name("s3")
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let signable = SignableRequest::new("GET", url, headers.iter().copied(), SignableBody::Bytes(&[])).map_err(|e| e.to_string())?;
    let (instructions, _) = sign(signable, &params).map_err(|e| e.to_string())?.into_parts();
    let mut request = http::Request::get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut request = request.body(()).map_err(|e| e.to_string())?;
    instructions.apply_to_request_http1x(&mut request);
    Ok(request)
}

/// S3's URI encoding of a key: every byte but the unreserved ones and `/` as `%XX`.
fn encode_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The `<Code>` of S3's XML error body.
fn error_code(body: &str) -> Option<&str> {
    let start = body.find("<Code>")? + "<Code>".len();
    let end = start + body[start..].find("</Code>")?;
    Some(&body[start..end])
}

#[async_trait]
impl StoredMail for S3StoredMail {
    async fn fetch(&self, bucket: &str, key: &str) -> Result<Vec<u8>, StoredMailError> {
        if bucket != self.bucket {
            return Err(StoredMailError::NotFound(format!("{bucket}/{key}: not the inbound-mail bucket")));
        }
        let unavailable = |why: String| StoredMailError::Unavailable(format!("{bucket}/{key}: {why}"));
        let request = signed_get(&self.url(key), &[], &self.identity().await?, self.region(), SystemTime::now()).map_err(unavailable)?;
        let request =
            reqwest::Request::try_from(request.map(|()| reqwest::Body::from(Vec::new()))).map_err(|e| unavailable(e.to_string()))?;
        let mut response = self.http.execute(request).await.map_err(|e| unavailable(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            let code = error_code(&body).unwrap_or(status.as_str()).to_owned();
            return Err(if code == "NoSuchKey" || status == http::StatusCode::NOT_FOUND {
                StoredMailError::NotFound(format!("{bucket}/{key}: {code}"))
            } else {
                unavailable(code)
            });
        }
        let too_large = || StoredMailError::NotFound(format!("{bucket}/{key}: larger than {MAX_MESSAGE_BYTES} bytes"));
        if response.content_length().is_some_and(|n| n > MAX_MESSAGE_BYTES) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| unavailable(e.to_string()))? {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > MAX_MESSAGE_BYTES {
                return Err(too_large());
            }
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use aws_config::{BehaviorVersion, Region};
    use aws_sdk_dynamodb::config::{Credentials, SharedCredentialsProvider};

    use super::*;
    use crate::test_peer::one_exchange;

    /// AWS's own worked example of a signed GET Object ("Signature Calculations for the
    /// Authorization Header", Amazon S3 API Reference: examplebucket, test.txt, a Range header,
    /// 24 May 2013): the same request must carry the same signature.
    #[test]
    fn the_signature_is_the_one_in_awss_example() {
        let identity: Identity = Credentials::new(
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            None,
            None,
            "docs",
        )
        .into();
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_369_353_600); // 2013-05-24T00:00:00Z
        let request = signed_get(
            "https://examplebucket.s3.amazonaws.com/test.txt",
            &[("range", "bytes=0-9")],
            &identity,
            "us-east-1",
            time,
        )
        .expect("signed");
        let authorization = request.headers()["authorization"].to_str().expect("text");
        assert_eq!(
            authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
        assert_eq!(
            request.headers()["x-amz-content-sha256"],
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    fn stored(endpoint: Option<&str>, region: &str, bucket: &str) -> S3StoredMail {
        let mut shared = SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region.to_owned()))
            .credentials_provider(SharedCredentialsProvider::new(Credentials::new(
                "AKIDSIGNALS",
                "secret",
                Some("session".into()),
                None,
                "test",
            )));
        if let Some(endpoint) = endpoint {
            shared = shared.endpoint_url(endpoint);
        }
        S3StoredMail::new(shared.build(), bucket)
    }

    #[test]
    fn addresses_and_keys() {
        let aws = stored(None, "eu-west-1", "inbound-mail");
        assert_eq!(
            aws.url("inbound/a b+c"),
            "https://inbound-mail.s3.eu-west-1.amazonaws.com/inbound/a%20b%2Bc"
        );
        let dotted = stored(None, "us-east-2", "mail.example.com");
        assert_eq!(dotted.url("k"), "https://s3.us-east-2.amazonaws.com/mail.example.com/k");
        let emulator = stored(Some("http://127.0.0.1:4599/"), "us-east-1", "inbound-mail");
        assert_eq!(emulator.url("inbound/é"), "http://127.0.0.1:4599/inbound-mail/inbound/%C3%A9");
        assert_eq!(error_code("<Error><Code>AccessDenied</Code></Error>"), Some("AccessDenied"));
    }

    #[tokio::test]
    async fn a_stored_message_is_read_with_a_signed_get() {
        let (endpoint, server) = one_exchange("HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nFrom: a@b\r\n".into());
        let mail = stored(Some(&endpoint), "eu-west-1", "inbound-mail");
        let raw = mail.fetch("inbound-mail", "inbound/m 1").await.expect("read");
        assert_eq!(raw, b"From: a@b\r\n");
        let request = server.join().expect("server");
        assert!(request.starts_with("GET /inbound-mail/inbound/m%201 HTTP/1.1\r\n"), "{request}");
        let lower = request.to_ascii_lowercase();
        assert!(
            lower.contains("credential=akidsignals/") && lower.contains("/eu-west-1/s3/aws4_request"),
            "{request}"
        );
        assert!(lower.contains("x-amz-security-token: session"), "{request}");
        assert!(lower.contains("x-amz-content-sha256: e3b0c442"), "{request}");
    }

    #[tokio::test]
    async fn a_missing_key_is_not_found_and_a_refusal_is_unavailable() {
        let (endpoint, _server) =
            one_exchange("HTTP/1.1 404 Not Found\r\ncontent-length: 39\r\n\r\n<Error><Code>NoSuchKey</Code></Error>\r\n".into());
        let mail = stored(Some(&endpoint), "us-east-1", "inbound-mail");
        let missing = mail.fetch("inbound-mail", "gone").await.expect_err("an error");
        assert!(
            matches!(&missing, StoredMailError::NotFound(why) if why.contains("NoSuchKey")),
            "{missing:?}"
        );

        let (endpoint, _server) =
            one_exchange("HTTP/1.1 403 Forbidden\r\ncontent-length: 42\r\n\r\n<Error><Code>AccessDenied</Code></Error>\r\n".into());
        let mail = stored(Some(&endpoint), "us-east-1", "inbound-mail");
        let refused = mail.fetch("inbound-mail", "k").await.expect_err("an error");
        assert!(
            matches!(&refused, StoredMailError::Unavailable(why) if why.contains("AccessDenied")),
            "{refused:?}"
        );

        let other = mail.fetch("someone-elses-bucket", "k").await.expect_err("an error");
        assert!(matches!(other, StoredMailError::NotFound(_)), "{other:?}");
    }
}

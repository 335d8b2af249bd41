//! One S3 bucket, spoken to with SigV4-signed HTTP requests over the same reqwest client as the
//! SDK's calls, not through `aws-sdk-s3`: the S3 client brings its checksum crates (their CRC
//! tables alone are 0.7 MB) and its endpoint rules into a binary, and a minute of compiling into
//! every build, for what is plain HTTP here. The functions only read (stored inbound mail,
//! [`crate::stored_mail`]); provisioning creates and removes the bucket on the emulator, and the
//! tests put objects in it.
//!
//! The signature is S3's (`aws-sigv4`, the SDK's own signer, with S3's settings: the path
//! encoded once, never normalised, and `x-amz-content-sha256`); the address is virtual-hosted
//! (`{bucket}.s3.{region}.amazonaws.com`) in AWS, path-style against an emulator. Credentials come
//! from the clients' provider on every request (in Lambda the provider reads the environment).

use std::time::SystemTime;

use aws_config::SdkConfig;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, UriPathNormalizationMode, sign,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;

/// A bucket and how to reach it: made by [`crate::clients::Clients::bucket`].
#[derive(Clone)]
pub struct S3Bucket {
    http: reqwest::Client,
    shared: SdkConfig,
    /// An emulator's address (`AWS_ENDPOINT_URL`): path-style requests to it.
    endpoint: Option<String>,
    name: String,
}

/// S3's answer that was not a success: its HTTP status and the `<Code>` of its XML body.
#[derive(Debug)]
pub struct S3Refusal {
    pub status: http::StatusCode,
    pub code: String,
}

impl std::fmt::Display for S3Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.code, self.status.as_u16())
    }
}

impl S3Bucket {
    pub(crate) fn new(shared: SdkConfig, name: impl Into<String>) -> Self {
        Self {
            http: crate::tls::client(),
            endpoint: shared.endpoint_url().map(|e| e.trim_end_matches('/').to_owned()),
            shared,
            name: name.into(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The object's address (the bucket's own for an empty `key`): path-style at an emulator
    /// (or for a bucket name with a dot, which S3's certificate does not cover as a host
    /// name), virtual-hosted otherwise.
    pub(crate) fn url(&self, key: &str) -> String {
        let path = if key.is_empty() {
            String::new()
        } else {
            format!("/{}", encode_key(key))
        };
        let bucket = &self.name;
        match &self.endpoint {
            Some(endpoint) => format!("{endpoint}/{bucket}{path}"),
            None => {
                let region = self.region();
                if bucket.contains('.') {
                    format!("https://s3.{region}.amazonaws.com/{bucket}{path}")
                } else if path.is_empty() {
                    format!("https://{bucket}.s3.{region}.amazonaws.com/")
                } else {
                    format!("https://{bucket}.s3.{region}.amazonaws.com{path}")
                }
            }
        }
    }

    /// The region requests are signed for and addressed to.
    fn region(&self) -> &str {
        self.shared.region().map_or("us-east-1", |r| r.as_ref())
    }

    /// `method` on `url` (with its query) carrying `body`, signed now; the response whatever
    /// its status (`Err` only when no answer came).
    pub(crate) async fn send(&self, method: &str, url: &str, body: Vec<u8>) -> Result<reqwest::Response, String> {
        let request = signed(
            method,
            url,
            &[],
            &body,
            &crate::aws_json::identity(&self.shared).await?,
            self.region(),
            SystemTime::now(),
        )?;
        let request = reqwest::Request::try_from(request.map(|()| reqwest::Body::from(body))).map_err(|e| e.to_string())?;
        self.http.execute(request).await.map_err(|e| e.to_string())
    }

    /// [`Self::send`], the answer read whole; a refusal is `Ok(Err(_))`.
    async fn call(&self, method: &str, url: &str, body: Vec<u8>) -> Result<Result<String, S3Refusal>, String> {
        let response = self.send(method, url, body).await?;
        let status = response.status();
        let text = response.text().await.map_err(|e| e.to_string())?;
        Ok(if status.is_success() {
            Ok(text)
        } else {
            Err(refusal(status, &text))
        })
    }

    /// `PutObject`.
    pub async fn put(&self, key: &str, body: Vec<u8>) -> Result<(), String> {
        match self.call("PUT", &self.url(key), body).await? {
            Ok(_) => Ok(()),
            Err(refused) => Err(format!("put {}/{key}: {refused}", self.name)),
        }
    }

    /// `DeleteObject`; an object that is not there is no error (S3 answers 204 either way).
    pub async fn delete(&self, key: &str) -> Result<(), String> {
        match self.call("DELETE", &self.url(key), Vec::new()).await? {
            Ok(_) => Ok(()),
            Err(r) if r.code == "NoSuchKey" => Ok(()),
            Err(refused) => Err(format!("delete {}/{key}: {refused}", self.name)),
        }
    }

    /// `CreateBucket`; one that is already there (ours) is fine.
    pub async fn create(&self) -> Result<(), String> {
        match self.call("PUT", &self.url(""), Vec::new()).await? {
            Ok(_) => Ok(()),
            Err(r) if r.code == "BucketAlreadyOwnedByYou" || r.code == "BucketAlreadyExists" => Ok(()),
            Err(refused) => Err(format!("create bucket {}: {refused}", self.name)),
        }
    }

    /// Every object deleted (a page of `ListObjectsV2` at a time), then the bucket; a missing
    /// bucket is fine.
    pub async fn delete_with_objects(&self) -> Result<(), String> {
        loop {
            let listed = match self.call("GET", &format!("{}?list-type=2", self.url("")), Vec::new()).await? {
                Ok(listed) => listed,
                Err(r) if r.code == "NoSuchBucket" => return Ok(()),
                Err(refused) => return Err(format!("bucket {}: {refused}", self.name)),
            };
            let keys = xml_values(&listed, "Key");
            if keys.is_empty() {
                break;
            }
            for key in keys {
                if let Err(refused) = self.call("DELETE", &self.url(&key), Vec::new()).await? {
                    return Err(format!("bucket {} object {key}: {refused}", self.name));
                }
            }
        }
        match self.call("DELETE", &self.url(""), Vec::new()).await? {
            Ok(_) => Ok(()),
            Err(r) if r.code == "NoSuchBucket" => Ok(()),
            Err(refused) => Err(format!("bucket {}: {refused}", self.name)),
        }
    }
}

/// A failed answer of `status` with S3's XML error `body`.
pub(crate) fn refusal(status: http::StatusCode, body: &str) -> S3Refusal {
    S3Refusal {
        status,
        code: xml_values(body, "Code")
            .into_iter()
            .next()
            .unwrap_or_else(|| status.as_str().to_owned()),
    }
}

/// A signed S3 request of `url` at `time`, with `headers` (lower-case names) and `body`'s
/// SHA-256 signed too.
fn signed(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
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
    let signable = SignableRequest::new(method, url, headers.iter().copied(), SignableBody::Bytes(body)).map_err(|e| e.to_string())?;
    let (instructions, _) = sign(signable, &params).map_err(|e| e.to_string())?.into_parts();
    let mut request = http::Request::builder().method(method).uri(url);
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

/// The text of every `<tag>` of an S3 XML answer, unescaped.
fn xml_values(body: &str, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut values = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        values.push(
            after[..end]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        );
        rest = &after[end + close.len()..];
    }
    values
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use aws_config::{BehaviorVersion, Region};
    use aws_sdk_dynamodb::config::{Credentials, SharedCredentialsProvider};

    use super::*;

    /// The credentials of AWS's worked examples.
    fn docs_identity() -> Identity {
        Credentials::new(
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            None,
            None,
            "docs",
        )
        .into()
    }

    /// AWS's own worked example of a signed GET Object ("Signature Calculations for the
    /// Authorization Header", Amazon S3 API Reference: examplebucket, test.txt, a Range header,
    /// 24 May 2013): the same request must carry the same signature.
    #[test]
    fn the_signature_is_the_one_in_awss_example() {
        let identity = docs_identity();
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_369_353_600); // 2013-05-24T00:00:00Z
        let request = signed(
            "GET",
            "https://examplebucket.s3.amazonaws.com/test.txt",
            &[("range", "bytes=0-9")],
            &[],
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

    /// AWS's worked example of a signed PUT Object (the same page: `test$file.text`, "Welcome to
    /// Amazon S3.", a Date header and x-amz-storage-class).
    #[test]
    fn a_put_is_signed_as_in_awss_example() {
        let identity = docs_identity();
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        let request = signed(
            "PUT",
            &format!("https://examplebucket.s3.amazonaws.com/{}", encode_key("test$file.text")),
            &[
                ("date", "Fri, 24 May 2013 00:00:00 GMT"),
                ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
            ],
            b"Welcome to Amazon S3.",
            &identity,
            "us-east-1",
            time,
        )
        .expect("signed");
        assert_eq!(
            request.headers()["authorization"].to_str().expect("text"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, \
             Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
        );
    }

    pub(crate) fn bucket(endpoint: Option<&str>, region: &str, name: &str) -> S3Bucket {
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
        S3Bucket::new(shared.build(), name)
    }

    #[test]
    fn addresses_keys_and_answers() {
        let aws = bucket(None, "eu-west-1", "inbound-mail");
        assert_eq!(
            aws.url("inbound/a b+c"),
            "https://inbound-mail.s3.eu-west-1.amazonaws.com/inbound/a%20b%2Bc"
        );
        assert_eq!(aws.url(""), "https://inbound-mail.s3.eu-west-1.amazonaws.com/");
        let dotted = bucket(None, "us-east-2", "mail.example.com");
        assert_eq!(dotted.url("k"), "https://s3.us-east-2.amazonaws.com/mail.example.com/k");
        let emulator = bucket(Some("http://127.0.0.1:4599/"), "us-east-1", "inbound-mail");
        assert_eq!(emulator.url("inbound/é"), "http://127.0.0.1:4599/inbound-mail/inbound/%C3%A9");
        assert_eq!(emulator.url(""), "http://127.0.0.1:4599/inbound-mail");
        let refused = refusal(http::StatusCode::FORBIDDEN, "<Error><Code>AccessDenied</Code></Error>");
        assert_eq!(refused.code, "AccessDenied");
        assert_eq!(refusal(http::StatusCode::BAD_GATEWAY, "<html>").code, "502");
        let listed = "<ListBucketResult><Contents><Key>a&amp;b</Key></Contents><Contents><Key>c/d</Key></Contents></ListBucketResult>";
        assert_eq!(xml_values(listed, "Key"), ["a&b", "c/d"]);
    }
}

//! The [`StoredMail`] port on S3: SES receiving's S3 action writes each inbound message to
//! the inbound-mail bucket, and the notification names its key. Only the configured bucket is
//! read, whatever a notification names. Two operations, S3's `GetObject` and, once the reply
//! is in its conversation, `DeleteObject`, each one signed request ([`crate::s3`]); stored
//! mail is read for large messages only.

use async_trait::async_trait;

use openloop_core::ports::{StoredMail, StoredMailError};

use crate::s3::{S3Bucket, refusal};

/// The largest inbound message read (SES receiving accepts up to 40 MB).
const MAX_MESSAGE_BYTES: u64 = 40 * 1024 * 1024;

/// Stored mail in its bucket: made by [`crate::clients::Clients::stored_mail`].
#[derive(Clone)]
pub struct S3StoredMail {
    bucket: S3Bucket,
}

impl S3StoredMail {
    pub(crate) fn new(bucket: S3Bucket) -> Self {
        Self { bucket }
    }
}

#[async_trait]
impl StoredMail for S3StoredMail {
    async fn fetch(&self, bucket: &str, key: &str) -> Result<Vec<u8>, StoredMailError> {
        if bucket != self.bucket.name() {
            return Err(StoredMailError::NotFound(format!("{bucket}/{key}: not the inbound-mail bucket")));
        }
        let unavailable = |why: String| StoredMailError::Unavailable(format!("{bucket}/{key}: {why}"));
        let mut response = self
            .bucket
            .send("GET", &self.bucket.url(key), Vec::new())
            .await
            .map_err(unavailable)?;
        let status = response.status();
        if !status.is_success() {
            let refused = refusal(status, &response.text().await.unwrap_or_default());
            return Err(if refused.code == "NoSuchKey" || status == http::StatusCode::NOT_FOUND {
                StoredMailError::NotFound(format!("{bucket}/{key}: {}", refused.code))
            } else {
                unavailable(refused.code)
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

    async fn remove(&self, bucket: &str, key: &str) -> Result<(), StoredMailError> {
        if bucket != self.bucket.name() {
            return Err(StoredMailError::NotFound(format!("{bucket}/{key}: not the inbound-mail bucket")));
        }
        self.bucket
            .delete(key)
            .await
            .map_err(|why| StoredMailError::Unavailable(format!("{bucket}/{key}: {why}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_peer::one_exchange;

    fn stored(endpoint: Option<&str>, region: &str, bucket: &str) -> S3StoredMail {
        S3StoredMail::new(crate::s3::tests::bucket(endpoint, region, bucket))
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

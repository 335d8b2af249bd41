//! The [`StoredMail`] port on S3: SES receiving's S3 action writes each inbound message to
//! the inbound-mail bucket, and the notification names its key. Only the configured bucket is
//! read, whatever a notification names.

use async_trait::async_trait;
use aws_sdk_s3::Client;

use openloop_core::ports::{StoredMail, StoredMailError};

/// The largest inbound message read (SES receiving accepts up to 40 MB).
const MAX_MESSAGE_BYTES: i64 = 40 * 1024 * 1024;

#[derive(Clone)]
pub struct S3StoredMail {
    client: Client,
    bucket: String,
}

impl S3StoredMail {
    pub fn new(client: Client, bucket: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
        }
    }
}

#[async_trait]
impl StoredMail for S3StoredMail {
    async fn fetch(&self, bucket: &str, key: &str) -> Result<Vec<u8>, StoredMailError> {
        if bucket != self.bucket {
            return Err(StoredMailError::NotFound(format!("{bucket}/{key}: not the inbound-mail bucket")));
        }
        let object = self.client.get_object().bucket(bucket).key(key).send().await.map_err(|e| {
            if e.as_service_error().is_some_and(|e| e.is_no_such_key()) {
                StoredMailError::NotFound(format!("{bucket}/{key}"))
            } else {
                StoredMailError::Unavailable(format!(
                    "{bucket}/{key}: {:?}",
                    e.as_service_error().and_then(|e| e.meta().code()).unwrap_or("no response")
                ))
            }
        })?;
        if object.content_length.is_some_and(|n| n > MAX_MESSAGE_BYTES) {
            return Err(StoredMailError::NotFound(format!(
                "{bucket}/{key}: larger than {MAX_MESSAGE_BYTES} bytes"
            )));
        }
        let body = object
            .body
            .collect()
            .await
            .map_err(|e| StoredMailError::Unavailable(format!("{bucket}/{key}: {e}")))?;
        Ok(body.into_bytes().to_vec())
    }
}

//! The SQS [`Queue`]: batches of up to ten, each message with its own delay.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use jiff::SignedDuration;

use openloop_core::ports::{Queue, QueueError};
use openloop_core::task::work::QueueName;

#[derive(Clone)]
pub struct SqsQueue {
    client: Client,
    urls: HashMap<QueueName, String>,
}

impl SqsQueue {
    pub fn new(client: Client, urls: HashMap<QueueName, String>) -> Self {
        Self { client, urls }
    }

    pub fn url(&self, queue: QueueName) -> Option<&str> {
        self.urls.get(&queue).map(String::as_str)
    }
}

/// Batches in flight at once: a tick hands out thousands of items (10 a batch) in seconds.
const SEND_CONCURRENCY: usize = 16;

#[async_trait]
impl Queue for SqsQueue {
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), QueueError> {
        use futures::{StreamExt, TryStreamExt};
        let err = |message: String| QueueError { queue, message };
        let url = self.url(queue).ok_or_else(|| err("no URL configured".into()))?;
        let batches: Vec<_> = messages.chunks(10).map(|chunk| self.send_batch(queue, url, chunk)).collect();
        futures::stream::iter(batches)
            .buffer_unordered(SEND_CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }
}

impl SqsQueue {
    /// One `SendMessageBatch` of at most ten messages, each with its own delay.
    async fn send_batch(&self, queue: QueueName, url: &str, chunk: &[(String, SignedDuration)]) -> Result<(), QueueError> {
        let err = |message: String| QueueError { queue, message };
        let entries = chunk
            .iter()
            .enumerate()
            .map(|(i, (body, delay))| {
                SendMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .message_body(body)
                    .delay_seconds(i32::try_from(delay.as_secs().clamp(0, 900)).unwrap_or(0))
                    .build()
                    .map_err(|e| err(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let out = self
            .client
            .send_message_batch()
            .queue_url(url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|e| {
                err(format!(
                    "{:?}",
                    e.as_service_error().map(|s| s.to_string()).unwrap_or_else(|| e.to_string())
                ))
            })?;
        if !out.failed.is_empty() {
            let codes: Vec<_> = out.failed.iter().map(|f| f.code.clone()).collect();
            return Err(err(format!("{} of {} messages refused: {codes:?}", out.failed.len(), chunk.len())));
        }
        Ok(())
    }
}

//! The SQS [`Queue`]: batches of up to ten, each message with its own delay, sent with
//! `SendMessageBatch` as a signed awsJson 1.0 request of our own ([`crate::aws_json`]; SQS's
//! SDK client is only the local runtime's and the tests', [`crate::clients::Clients::sqs`]).
//! A batch whose answer was lost is sent again, as the SDK's standard retries did: work on the
//! queues is safe to do twice.

use std::collections::HashMap;

use async_trait::async_trait;
use jiff::SignedDuration;
use serde_json::{Value, json};

use openloop_core::ports::{Queue, QueueError};
use openloop_core::task::work::QueueName;

use crate::aws_json::JsonService;

#[derive(Clone)]
pub struct SqsQueue {
    sqs: JsonService,
    urls: HashMap<QueueName, String>,
}

impl SqsQueue {
    pub fn new(shared: aws_config::SdkConfig, urls: HashMap<QueueName, String>) -> Self {
        Self {
            sqs: JsonService::json_1_0(shared, "sqs", "AmazonSQS"),
            urls,
        }
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

/// `SendMessageBatch`'s request: each message its own entry, its delay at most SQS's 15 minutes.
fn send_message_batch(url: &str, chunk: &[(String, SignedDuration)]) -> Value {
    let entries: Vec<Value> = chunk
        .iter()
        .enumerate()
        .map(|(i, (body, delay))| json!({"Id": i.to_string(), "MessageBody": body, "DelaySeconds": delay.as_secs().clamp(0, 900)}))
        .collect();
    json!({"QueueUrl": url, "Entries": entries})
}

impl SqsQueue {
    /// One `SendMessageBatch` of at most ten messages, each with its own delay.
    async fn send_batch(&self, queue: QueueName, url: &str, chunk: &[(String, SignedDuration)]) -> Result<(), QueueError> {
        let err = |message: String| QueueError { queue, message };
        let answer = self
            .sqs
            .call_retried("SendMessageBatch", &send_message_batch(url, chunk))
            .await
            .map_err(|e| err(e.to_string()))?
            .map_err(|refused| err(format!("SendMessageBatch: {refused}")))?;
        let failed: Vec<&str> = answer
            .get("Failed")
            .and_then(Value::as_array)
            .map(|f| {
                f.iter()
                    .map(|e| e.get("Code").and_then(Value::as_str).unwrap_or("unknown"))
                    .collect()
            })
            .unwrap_or_default();
        if !failed.is_empty() {
            return Err(err(format!("{} of {} messages refused: {failed:?}", failed.len(), chunk.len())));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_names_its_queue_and_each_message_with_its_delay_capped_at_fifteen_minutes() {
        let chunk = vec![
            ("a".to_owned(), SignedDuration::ZERO),
            ("b".to_owned(), SignedDuration::from_secs(3600)),
        ];
        let body = send_message_batch("https://sqs.us-east-1.amazonaws.com/1/q", &chunk);
        assert_eq!(body["QueueUrl"], "https://sqs.us-east-1.amazonaws.com/1/q");
        assert_eq!(body["Entries"][0], json!({"Id": "0", "MessageBody": "a", "DelaySeconds": 0}));
        assert_eq!(body["Entries"][1]["DelaySeconds"], 900);
    }
}

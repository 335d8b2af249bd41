//! SQS consumers: each record is handled on its own (concurrently), and only the ones that
//! should be retried are reported back as batch item failures — the rest are deleted.
//! A record that can never succeed (malformed) is also reported, so after the queue's
//! receive limit it lands in the dead-letter queue, where an alarm makes it visible.

use std::future::Future;

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use futures::StreamExt;
use openloop_core::task::error::EngineError;
use openloop_core::task::work::WorkItem;
use serde::de::DeserializeOwned;
use tracing::Instrument;

/// What became of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    Done,
    Retry,
}

/// How many records of one batch are worked on at once.
const CONCURRENCY: usize = 10;

pub async fn process_batch<F, Fut>(event: SqsEvent, handle: F) -> SqsBatchResponse
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Disposition>,
{
    let handle = &handle;
    let failures: Vec<BatchItemFailure> = futures::stream::iter(event.records)
        .map(|record| async move {
            let id = record.message_id.unwrap_or_default();
            let disposition = handle(record.body.unwrap_or_default()).await;
            (disposition == Disposition::Retry).then(|| {
                let mut failure = BatchItemFailure::default();
                failure.item_identifier = id;
                failure
            })
        })
        .buffer_unordered(CONCURRENCY)
        .filter_map(|f| async move { f })
        .collect()
        .await;
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failures;
    response
}

/// Parse a record body; a malformed one is logged and sent towards the dead-letter queue.
pub fn parse<T: DeserializeOwned>(queue: &str, body: &str) -> Result<T, Disposition> {
    serde_json::from_str(body).map_err(|e| {
        tracing::error!(queue, error = %e, "malformed message; it will end in the dead-letter queue");
        Disposition::Retry
    })
}

/// Map an engine result: infrastructure trouble is retried, decisions are final.
pub fn settle<T: std::fmt::Debug>(queue: &str, result: Result<T, EngineError>) -> Disposition {
    match result {
        Ok(outcome) => {
            tracing::info!(queue, ?outcome, "handled");
            Disposition::Done
        }
        Err(e) if e.is_retryable() => {
            tracing::warn!(queue, error = ?e, "will retry");
            Disposition::Retry
        }
        Err(e) => {
            tracing::error!(queue, error = ?e, "dropped: not retryable");
            Disposition::Done
        }
    }
}

/// The work consumers (execute, followup, dormant): each record is a [`WorkItem`] handed to
/// one engine operation, inside a span naming the task. The same task twice in one batch
/// (overlapping ticks) is worked once.
pub async fn process_work<F, Fut, T>(queue: &'static str, event: SqsEvent, operation: F) -> SqsBatchResponse
where
    F: Fn(WorkItem) -> Fut,
    Fut: Future<Output = Result<T, EngineError>>,
    T: std::fmt::Debug,
{
    let operation = &operation;
    let seen = &std::sync::Mutex::new(std::collections::HashSet::new());
    process_batch(event, |body| async move {
        let item: WorkItem = match parse(queue, &body) {
            Ok(item) => item,
            Err(disposition) => return disposition,
        };
        if !seen.lock().unwrap_or_else(|e| e.into_inner()).insert(item.task_id) {
            return Disposition::Done;
        }
        let span = tracing::info_span!("work", queue, task = %item.task_id, account = %item.account_id);
        settle(queue, operation(item).instrument(span).await)
    })
    .await
}

//! The followup function: due follow-ups with the cadence's tone, or exhaustion (cancel / escalate / dormant).
//! Thin: parse each SQS record, call the engine, report partial batch failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use openloop_aws::consumer::{Disposition, parse, process_batch, settle};
use openloop_core::engine::Engine;
use openloop_core::work::WorkItem;
use tracing::Instrument;

pub const QUEUE: &str = "followup";

pub async fn handle(engine: &Engine, event: SqsEvent) -> SqsBatchResponse {
    process_batch(event, |body| async move {
        let item: WorkItem = match parse(QUEUE, &body) {
            Ok(item) => item,
            Err(disposition) => return disposition,
        };
        let span = tracing::info_span!("work", queue = QUEUE, task = %item.task_id, account = %item.account_id);
        let disposition: Disposition = settle(QUEUE, engine.follow_up(&item).instrument(span).await);
        disposition
    })
    .await
}

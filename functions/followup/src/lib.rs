//! The followup function: due follow-ups with the cadence's tone, or exhaustion (cancel / escalate / dormant).
//! Thin: each SQS record is a work item for the engine; partial batch failures are reported.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use openloop_core::engine::Engine;
use openloop_edge::consumer::process_work;

pub const QUEUE: &str = "followup";

pub async fn handle(engine: &Engine, event: SqsEvent) -> SqsBatchResponse {
    process_work(QUEUE, event, |item| async move { engine.follow_up(&item).await }).await
}

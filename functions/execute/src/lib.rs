//! The execute function: the first touch of ready tasks (stale guard, gates, draft, send, `waiting`).
//! Thin: each SQS record is a work item for the engine; partial batch failures are reported.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use openloop_core::engine::Engine;
use openloop_edge::consumer::process_work;

pub const QUEUE: &str = "execute";

pub async fn handle(engine: &Engine, event: SqsEvent) -> SqsBatchResponse {
    process_work(QUEUE, event, |item| async move { engine.execute(&item).await }).await
}

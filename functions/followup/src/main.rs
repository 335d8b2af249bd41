//! Lambda entry point: build the engine once at init, then handle SQS batches.

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    openloop_edge::telemetry::init();
    let (_, engine) = openloop_edge::config::engine_from_env().await?;
    let engine = &engine;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        Ok::<_, lambda_runtime::Error>(openloop_fn_followup::handle(engine, event.payload).await)
    }))
    .await
}

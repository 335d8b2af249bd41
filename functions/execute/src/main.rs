//! Lambda entry point: build the engine once at init, then handle SQS batches.

use std::sync::Arc;

use lambda_runtime::{LambdaEvent, service_fn};
use openloop_aws::config::{Clients, Config};
use openloop_core::ports::SystemClock;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    openloop_aws::telemetry::init();
    let config = Config::from_env()?;
    let clients = Clients::load(&config).await;
    let (engine, _) = openloop_aws::config::engine(&config, &clients, Arc::new(SystemClock), openloop_llm::from_env()?);
    let engine = &engine;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<aws_lambda_events::event::sqs::SqsEvent>| async move {
            Ok::<_, lambda_runtime::Error>(openloop_fn_execute::handle(engine, event.payload).await)
        },
    ))
    .await
}

//! Lambda entry point: build the engine once at init, then run one tick per scheduled event.

use std::sync::Arc;

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
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
    lambda_runtime::run(service_fn(move |_: LambdaEvent<EventBridgeEvent<serde_json::Value>>| async move {
        let report = openloop_fn_tick::handle(
            engine,
            openloop_core::engine::Wake::AtTheirSecond {
                period: openloop_fn_tick::PERIOD,
            },
        )
        .await?;
        Ok::<_, lambda_runtime::Error>(serde_json::to_value(report)?)
    }))
    .await
}

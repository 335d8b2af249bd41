//! Lambda entry point: build the engine once at init, then run attribution per scheduled event.

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    openloop_edge::telemetry::init();
    let (_, engine) = openloop_edge::config::engine_from_env().await?;
    let engine = &engine;
    lambda_runtime::run(service_fn(move |_: LambdaEvent<EventBridgeEvent<serde_json::Value>>| async move {
        let report = openloop_fn_attribution::handle(engine).await?;
        Ok::<_, lambda_runtime::Error>(serde_json::to_value(report)?)
    }))
    .await
}

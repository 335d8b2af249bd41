//! Lambda entry point: build the engine once at init, then evaluate per event (`TaskClosed`
//! or the weekly schedule).

use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    openloop_edge::telemetry::init();
    let start = openloop_edge::config::Start::from_env().await?;
    // `OPENLOOP_EVALUATOR=model`: the model evaluator; the offline one otherwise.
    let evaluator = start.evaluator()?;
    let (_, engine) = openloop_edge::config::engine_from_start(start).await?;
    let engine = match evaluator {
        Some(evaluator) => engine.with_evaluator(evaluator),
        None => engine,
    };
    let engine = &engine;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<openloop_fn_evaluation::Trigger>| async move {
        if event.payload.is_monthly() {
            let report = openloop_fn_evaluation::handle_monthly(engine).await?;
            return Ok::<_, lambda_runtime::Error>(serde_json::to_value(report)?);
        }
        let report = openloop_fn_evaluation::handle(engine, &event.payload).await?;
        Ok::<_, lambda_runtime::Error>(serde_json::to_value(report)?)
    }))
    .await
}

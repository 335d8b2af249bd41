//! Lambda entry point: build the engine once at init, then handle SQS batches.

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    openloop_aws::telemetry::init();
    let (config, engine) = openloop_aws::config::engine_from_env(openloop_llm::from_env()?).await?;
    let clients = openloop_aws::config::Clients::load(&config).await;
    let mail = openloop_fn_signals::MailIntake::from_config(&config, &clients);
    let (engine, mail) = (&engine, &mail);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        Ok::<_, lambda_runtime::Error>(openloop_fn_signals::handle(engine, mail, event.payload).await)
    }))
    .await
}

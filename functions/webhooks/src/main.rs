//! Lambda entry point: build the router once at init, then serve API Gateway events.

use std::sync::Arc;

use openloop_aws::config::{Clients, Config};
use openloop_core::ports::SystemClock;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    openloop_aws::telemetry::init();
    let config = Config::from_env()?;
    let clients = Clients::load(&config).await;
    let (engine, _) = openloop_aws::config::engine(&config, &clients, Arc::new(SystemClock), openloop_llm::from_env()?);
    let state = Arc::new(openloop_fn_webhooks::WebhooksState {
        engine,
        inbound_token: config.inbound_token.clone(),
        accept_wall_clock: false,
    });
    lambda_http::run(openloop_fn_webhooks::router(state)).await
}

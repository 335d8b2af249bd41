//! Lambda entry point: build the router once at init, then serve API Gateway events.

use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    openloop_edge::telemetry::init();
    let (config, engine) = openloop_edge::config::engine_from_env(openloop_llm::from_env()?).await?;
    let state = Arc::new(openloop_fn_api::ApiState {
        engine,
        session_key: openloop_fn_api::app::session_key(&config.signing_key),
        admin_token: config.admin_token,
    });
    lambda_http::run(openloop_fn_api::router(state)).await
}

//! Lambda entry point: build the router once at init, then serve API Gateway events.

use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), openloop_edge::apigw::Error> {
    openloop_edge::telemetry::init();
    let (config, engine) = openloop_edge::config::engine_from_env().await?;
    let state = Arc::new(openloop_fn_webhooks::WebhooksState {
        engine,
        inbound_token: config.inbound_token.clone(),
        accept_wall_clock: false,
        sms_notifications: openloop_aws::sns::SnsVerifier::new(openloop_aws::tls::client(), config.inbound_sms_topic_arn.clone()),
    });
    openloop_edge::apigw::run(openloop_fn_webhooks::router(state)).await
}

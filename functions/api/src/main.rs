//! Lambda entry point of the owner API (`/api/v1`): build the router once at init, then serve
//! API Gateway events.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let state = openloop_fn_api::state_from_env().await?;
    lambda_http::run(openloop_fn_api::api_router(state)).await
}

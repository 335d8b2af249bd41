//! Lambda entry point of the owner's dashboard (`/app`): build the router once at init, then
//! serve API Gateway events.

#[tokio::main]
async fn main() -> Result<(), openloop_edge::apigw::Error> {
    let state = openloop_fn_dashboard::state_from_env().await?;
    openloop_edge::apigw::run(openloop_fn_dashboard::router(state)).await
}

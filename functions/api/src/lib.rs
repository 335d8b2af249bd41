//! The api function: the owner API of CONTRACT.md (tasks, review, settings, suppressions)
//! and the admin calls (accounts, global pause). Every owner call is scoped to the account of
//! its bearer token; another account's task is simply not found. The owner's dashboard, pages
//! over the same operations, is a crate and a function of its own (`functions/dashboard`).
//!
//! One module per resource, each holding its handlers, their request types, their
//! `#[utoipa::path]` and its `routes()`: `tasks`, `review` (approve, skip, … and the plan),
//! `members`, `texts` (a member's consent), `day` (the brief, the to-dos, the churn report),
//! `learning` (memories, suggestions, experiments), `loops` (open loops, recurring templates,
//! triggers), `lift`, `messages` (message templates), `settings` (with the autonomy ramp,
//! suppressions, the credentials and the owner's kill switch), `webhook_endpoints`, `numbers`
//! (scorecard, metrics, activity, notifications) and `admin` (the operator's calls).
//!
//! The arrows point one way. Here at the top the resources' routers are merged into one, and
//! `openapi` assembles the document from their handlers; the resource modules use only what
//! lies under them — `extract` (the state, the caller from the bearer token, the query shapes
//! several resources take) and `schema` (the answers and errors, and `json`) — never each
//! other nor anything above.

mod admin;
mod day;
mod extract;
mod learning;
mod lift;
mod loops;
mod members;
mod messages;
mod numbers;
pub mod openapi;
mod review;
mod schema;
mod settings;
mod tasks;
mod texts;
mod webhook_endpoints;

use std::sync::Arc;

use axum::Router;

pub use extract::ApiState;

/// The function's state, from its environment: logging, the configuration, the engine.
pub async fn state_from_env() -> Result<Arc<ApiState>, openloop_edge::apigw::Error> {
    let (config, engine) = openloop_web::engine_from_env().await?;
    Ok(Arc::new(ApiState {
        engine,
        admin_token: config.admin_token,
    }))
}

/// The owner and admin API with everything around its routes: the `api` function.
pub fn router(state: Arc<ApiState>) -> Router {
    openloop_web::layered(routes(state))
}

/// The API's routes on their state, for a router that serves more than this face (the local
/// runtime's, which adds the dashboard's).
pub fn routes(state: Arc<ApiState>) -> Router {
    api_routes().with_state(state)
}

/// Every resource's routes, merged (a path two resources shared would panic here, at start).
fn api_routes() -> Router<Arc<ApiState>> {
    Router::new()
        .merge(openapi::routes())
        .merge(admin::routes())
        .merge(settings::routes())
        .merge(tasks::routes())
        .merge(review::routes())
        .merge(lift::routes())
        .merge(numbers::routes())
        .merge(loops::routes())
        .merge(members::routes())
        .merge(texts::routes())
        .merge(learning::routes())
        .merge(messages::routes())
        .merge(day::routes())
        .merge(webhook_endpoints::routes())
}

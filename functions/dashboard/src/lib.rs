//! The owner's dashboard under `/app`: server-rendered pages over the same engine operations
//! as the JSON API (`functions/api`), in a function of its own. Sign in with the account's API
//! token or a mailed link; every page is scoped to the session's account, so another account's
//! task is simply not found; every form that changes something carries the session's CSRF
//! token. Every response carries a Content-Security-Policy without inline script, and pages
//! are never cached.
//!
//! One module per resource, each with its routes, its handlers and the views it renders
//! (askama structs over `templates/app/`). Templates escape every value (the `.html`
//! extension makes askama's HTML escaper the default), so member- and owner-written text
//! always shows as text; no template marks anything `safe`.
//!
//! - signing in: `sign_in` (`/app/login`, `/app/logout`), `link` (the mailed sign-in link,
//!   `/app/login/link…`); deciding from the mail without signing in: `action_links` (`/a/{token}`);
//! - the owner's pages: `overview` (`/app`, with its charts), `review` (`/app/review`, and
//!   "Approve selected"), `tasks` (`/app/tasks/{id}` and the task's actions), `escalations`,
//!   `members`, `notifications`;
//! - the owner's day: `day` (`/app/today`, `/app/todos`, `/app/conversations`,
//!   `/app/reports/churn`), a task's plan: `plans`;
//! - what the owner teaches the agent: `learning` (`/app/memories`, `/app/suggestions`, a
//!   task's rating and outcome correction), `lift` (`/app/lift`, the experiments), `templates`
//!   (`/app/templates`, a template as the mail a member reads, changed in words);
//! - the account: `settings` (`/app/settings`, the kill switch), `triggers` (its trigger
//!   table), `schedules` (`/app/schedules`, the recurring templates' controls and runs),
//!   `integrations` (`/app/settings/webhooks`, the keys' rotation).
//!
//! Below them, and importing none of them: `respond` (how a handler finds the signed-in owner,
//! reads a form and answers: pages, redirects, the error page), `page` (the frame of every page
//! and how values read), `notice` (what the owner just did, said back), `session` (the cookie
//! and its tokens), `assets` (the stylesheet, served at `/app/static/…` under a name that
//! carries its hash) and `state` (what every handler runs on). This file only assembles them;
//! no module names it or the module above it, and none passes 900 lines
//! (`tests/module_layers.rs` keeps it so).

mod action_links;
mod assets;
mod day;
mod escalations;
mod integrations;
mod learning;
mod lift;
mod link;
mod members;
mod notice;
mod notifications;
mod overview;
mod page;
mod plans;
mod respond;
mod review;
mod schedules;
mod session;
mod settings;
mod sign_in;
mod state;
mod tasks;
mod templates;
mod triggers;

use std::sync::Arc;

use axum::Router;

pub use state::{DashboardState, session_key, state_from_env};

/// The dashboard with everything around its routes: the `dashboard` function.
pub fn router(state: Arc<DashboardState>) -> Router {
    openloop_web::layered(routes(state))
}

/// The dashboard's routes on their state, for a router that serves more than this face (the
/// local runtime's, which adds the API's).
pub fn routes(state: Arc<DashboardState>) -> Router {
    pages().with_state(state)
}

/// Every resource's routes; any other path under `/app` is the dashboard's own 404 page.
fn pages() -> Router<Arc<DashboardState>> {
    Router::new()
        .merge(sign_in::routes())
        .merge(action_links::routes())
        .merge(link::routes())
        .merge(overview::routes())
        .merge(review::routes())
        .merge(tasks::routes())
        .merge(escalations::routes())
        .merge(settings::routes())
        .merge(triggers::routes())
        .merge(schedules::routes())
        .merge(integrations::routes())
        .merge(members::routes())
        .merge(notifications::routes())
        .merge(learning::routes())
        .merge(lift::routes())
        .merge(templates::routes())
        .merge(day::routes())
        .merge(plans::routes())
        .merge(assets::routes())
        .route("/app/{*rest}", axum::routing::any(respond::no_such_page))
        .layer(axum::middleware::map_response(openloop_web::pages::protect))
}

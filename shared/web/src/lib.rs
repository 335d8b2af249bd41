//! # openloop-web — what the owner API and the dashboard share
//!
//! Openloop has two HTTP faces for the owner: the JSON API (`functions/api`, `/api/v1`) and
//! the server-rendered dashboard (`functions/dashboard`, `/app`). Each is a crate and a Lambda
//! function of its own, depending on the engine and on this crate, never on each other:
//! - [`layered`]: what every face answers with around its routes (a JSON 404 and 405, errors
//!   in the contract's shape, the body limit, the page headers);
//! - [`pages`]: the headers every HTML page carries;
//! - [`access`]: the owner's API token and the admin token, and the owner's presence;
//! - [`secrets`]: new API tokens and webhook secrets;
//! - [`engine_from_env`]: a face's engine in Lambda.
//!
//! The local runtime serves both faces on one router: `layered(api.merge(dashboard))`.

pub mod access;
pub mod pages;
pub mod secrets;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;

use openloop_core::engine::Engine;
use openloop_core::kernel::limits::MAX_BODY_BYTES;
use openloop_edge::config::Config;
use openloop_edge::http::ApiError;

/// A request body, read whole; a body over the limit is the contract's error.
pub type Body = Result<Bytes, BytesRejection>;

/// A face's routes with everything around them: a JSON 404 and 405, errors in the contract's
/// shape, the page headers on the dashboard's paths, the body limit.
pub fn layered(routes: Router) -> Router {
    routes
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint") })
        .method_not_allowed_fallback(openloop_edge::http::method_not_allowed)
        .layer(axum::middleware::map_response(openloop_edge::json_errors::json_errors))
        .layer(axum::middleware::from_fn(pages::protect_page_paths))
        .layer(axum::middleware::map_request(openloop_edge::http::drop_empty_query_params))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(|request, next| {
            openloop_edge::http::limit_declared_body(MAX_BODY_BYTES, request, next)
        }))
}

/// A face's Lambda state, from its environment: logging, the configuration, the engine.
pub async fn engine_from_env() -> Result<(Config, Engine), openloop_edge::apigw::Error> {
    openloop_edge::telemetry::init();
    Ok(openloop_edge::config::engine_from_env().await?)
}

/// `?status=` of a to-do list, open by default: the API's `GET /api/v1/todos` and the
/// dashboard's to-do page read it alike.
pub fn todo_status(raw: Option<&str>) -> Result<openloop_core::task::todo::TodoStatus, ApiError> {
    use openloop_core::task::todo::TodoStatus;
    match raw {
        None => Ok(TodoStatus::Open),
        Some(s) => TodoStatus::parse(s).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_status",
                format!("{s:?} is not a to-do status (open, done or snoozed)"),
            )
        }),
    }
}

//! What every handler is given: the function's state ([`ApiState`]), the caller checked from
//! the bearer token ([`owner`], [`admin`]), a task's id from the path, and the paging query
//! every paged list reads alike ([`PageParams`], [`page_limit`]). Below every resource module;
//! it imports none of them.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use secrecy::SecretString;
use serde::Deserialize;

use openloop_core::engine::Engine;
use openloop_core::kernel::ids::{AccountId, TaskId};
use openloop_core::kernel::texts;
use openloop_edge::http::ApiError;

/// The api function's state: the engine and the operator's admin token.
pub struct ApiState {
    pub engine: Engine,
    pub admin_token: SecretString,
}

/// The state as a handler takes it.
pub(crate) type Shared = State<Arc<ApiState>>;
pub(crate) use openloop_web::Body;

/// The admin token, or the contract's 401.
pub(crate) fn admin(state: &ApiState, headers: &HeaderMap) -> Result<(), ApiError> {
    openloop_web::access::admin(&state.admin_token, headers)
}

/// The account of the request's API token, or the contract's 401.
pub(crate) async fn owner(state: &ApiState, headers: &HeaderMap) -> Result<AccountId, ApiError> {
    openloop_web::access::owner(&state.engine, headers).await
}

/// A task's id from the path; one that does not parse is a task not found.
pub(crate) fn task_id(raw: &str) -> Result<TaskId, ApiError> {
    raw.parse().map_err(|_| ApiError::not_found("task"))
}

/// `?limit=&cursor=` of a paged feed.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageParams {
    /// How many to return.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    limit: Option<String>,
    cursor: Option<texts::CursorText>,
}

impl PageParams {
    /// The limit (a number, if given; its range is the list's to check) and the cursor.
    pub(crate) fn parse(self) -> Result<(Option<usize>, Option<String>), ApiError> {
        Ok((self.limit.as_deref().map(limit_number).transpose()?, self.cursor.map(String::from)))
    }

    /// The limit, within 1–`max`, and the cursor.
    pub(crate) fn parse_within(self, max: usize) -> Result<(Option<usize>, Option<String>), ApiError> {
        Ok((page_limit(self.limit.as_deref(), max)?, self.cursor.map(String::from)))
    }
}

/// A `limit` that is not a number is malformed (400).
fn limit_number(raw: &str) -> Result<usize, ApiError> {
    raw.parse::<usize>()
        .map_err(|_| ApiError::bad_request("invalid_limit", "limit must be a number"))
}

/// A page's `limit`, if given: not a number is malformed (400), a number outside 1–`max` is
/// invalid (422) — as every paged list answers, never quietly clamped.
pub(crate) fn page_limit(raw: Option<&str>, max: usize) -> Result<Option<usize>, ApiError> {
    raw.map(|raw| {
        let limit = limit_number(raw)?;
        (1..=max)
            .contains(&limit)
            .then_some(limit)
            .ok_or_else(|| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_limit", format!("limit must be 1-{max}")))
    })
    .transpose()
}

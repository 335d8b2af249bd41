//! What every handler is given: the function's state ([`ApiState`]); the caller, checked from
//! the bearer token before the handler runs ([`Owner`], [`Admin`]); a task's id from the path;
//! and the shapes more than one resource takes — the paging query ([`PageParams`],
//! [`page_limit`]), the month query ([`MonthParams`]) and an edited draft ([`DraftInput`]).
//! Below every resource module; it imports none of them.

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use secrecy::SecretString;
use serde::Deserialize;

use openloop_core::engine::Engine;
use openloop_core::kernel::ids::{AccountId, TaskId};
use openloop_core::kernel::texts;
use openloop_core::task::Draft;
use openloop_edge::http::ApiError;

/// The api function's state: the engine and the operator's admin token.
pub struct ApiState {
    pub engine: Engine,
    pub admin_token: SecretString,
}

/// The state as a handler takes it.
pub(crate) type Shared = State<Arc<ApiState>>;
pub(crate) use openloop_web::Body;

/// The account whose API token the request carries (its presence noted), or the contract's
/// 401. A handler names it after its path and query and before its body, the order in which
/// the checks answered when each handler made them itself: a query that does not parse is
/// still refused (400, 422) before a missing token is 401.
pub(crate) struct Owner(pub AccountId);

impl FromRequestParts<Arc<ApiState>> for Owner {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<ApiState>) -> Result<Self, ApiError> {
        openloop_web::access::owner(&state.engine, &parts.headers).await.map(Owner)
    }
}

/// The operator's admin token, or the contract's 401 (named where [`Owner`] would be).
pub(crate) struct Admin;

impl FromRequestParts<Arc<ApiState>> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<ApiState>) -> Result<Self, ApiError> {
        openloop_web::access::admin(&state.admin_token, &parts.headers).map(|()| Admin)
    }
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

/// `?month=YYYY-MM`: the scorecard's, the churn report's and the platform's learning.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct MonthParams {
    /// The current month by default.
    pub month: Option<texts::MonthText>,
}

/// An edited draft: `{"subject", "body"}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DraftInput {
    subject: texts::Subject,
    body: texts::MailBody,
}

impl From<DraftInput> for Draft {
    fn from(input: DraftInput) -> Self {
        Draft {
            subject: input.subject.into(),
            body: input.body.into(),
        }
    }
}

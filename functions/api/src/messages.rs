//! The owner's message templates: `GET /api/v1/message-templates`, `PUT` and
//! `DELETE /api/v1/message-templates/{task_type}/{touch}`. A `PUT` answers with the template
//! rendered for a sample member (`preview`); a template that names an unknown variable or does
//! not render is `422 invalid_template` and nothing is saved; an unknown type or touch is `422
//! unknown_template`. Each is scoped to the bearer token's account.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing;

use openloop_core::engine::TemplateWithVariants;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{ApiState, Body, Owner, Shared};
use crate::schema::{MessageTemplates, OwnerErrors, json};

/// The message templates' routes.
pub(crate) fn routes() -> Router<Arc<ApiState>> {
    Router::new()
        .route("/api/v1/message-templates", routing::get(list))
        .route("/api/v1/message-templates/{task_type}/{touch}", routing::put(put).delete(delete))
}

#[utoipa::path(get, operation_id = "list_message_templates", path = "/api/v1/message-templates", tag = "learning", summary = "The message templates", responses((status = 200, description = "The templates", body = MessageTemplates), OwnerErrors))]
pub(crate) async fn list(State(state): Shared, Owner(account): Owner) -> Result<Response, ApiError> {
    let templates = state.engine.list_message_templates(account).await?;
    Ok(json(StatusCode::OK, MessageTemplates { templates }))
}

#[utoipa::path(put, operation_id = "put_message_template", path = "/api/v1/message-templates/{task_type}/{touch}", tag = "learning", summary = "Save the owner's template of a type's touch", params(("task_type" = String, Path, description = "The task type"), ("touch" = String, Path, description = "The touch: first, follow_up, …")), request_body = openloop_core::engine::TemplateWithVariants, responses((status = 200, description = "The saved template with its preview", body = openloop_core::engine::MessageTemplateView), OwnerErrors))]
pub(crate) async fn put(
    State(state): Shared,
    Path((task_type, touch)): Path<(String, String)>,
    Owner(account): Owner,
    body: Body,
) -> Result<Response, ApiError> {
    let input: TemplateWithVariants = json_body(&body.map_err(body_error)?)?;
    let saved = state.engine.put_message_template(account, &task_type, &touch, input).await?;
    Ok(json(StatusCode::OK, saved))
}

#[utoipa::path(delete, operation_id = "delete_message_template", path = "/api/v1/message-templates/{task_type}/{touch}", tag = "learning", summary = "Back to the shipped template", params(("task_type" = String, Path, description = "The task type"), ("touch" = String, Path, description = "The touch")), responses((status = 204, description = "Deleted"), OwnerErrors))]
pub(crate) async fn delete(
    State(state): Shared,
    Path((task_type, touch)): Path<(String, String)>,
    Owner(account): Owner,
) -> Result<Response, ApiError> {
    state.engine.delete_message_template(account, &task_type, &touch).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

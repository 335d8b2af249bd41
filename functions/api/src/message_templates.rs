//! The owner's message templates: `GET /api/v1/message-templates`, `PUT` and
//! `DELETE /api/v1/message-templates/{task_type}/{touch}`. A `PUT` answers with the template
//! rendered for a sample member (`preview`); a template that names an unknown variable or does
//! not render is `422 invalid_template` and nothing is saved; an unknown type or touch is `422
//! unknown_template`. Each is scoped to the bearer token's account.

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use openloop_core::engine::TemplateInput;
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::extract::{Body, Shared, owner};
use crate::schema::json;

#[utoipa::path(get, operation_id = "list_message_templates", path = "/api/v1/message-templates", tag = "learning", summary = "The message templates", responses((status = 200, description = "The templates", body = crate::schema::MessageTemplates), crate::schema::OwnerErrors))]
pub(crate) async fn list(axum::extract::State(state): Shared, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let templates = state.engine.list_message_templates(account).await?;
    Ok(json(StatusCode::OK, crate::schema::MessageTemplates { templates }))
}

#[utoipa::path(put, operation_id = "put_message_template", path = "/api/v1/message-templates/{task_type}/{touch}", tag = "learning", summary = "Save the owner's template of a type's touch", params(("task_type" = String, Path, description = "The task type"), ("touch" = String, Path, description = "The touch: first, follow_up, …")), request_body = openloop_core::engine::TemplateInput, responses((status = 200, description = "The saved template with its preview", body = openloop_core::engine::MessageTemplateView), crate::schema::OwnerErrors))]
pub(crate) async fn put(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Path((task_type, touch)): Path<(String, String)>,
    body: Body,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    let input: TemplateInput = json_body(&body.map_err(body_error)?)?;
    let saved = state.engine.put_message_template(account, &task_type, &touch, input).await?;
    Ok(json(StatusCode::OK, saved))
}

#[utoipa::path(delete, operation_id = "delete_message_template", path = "/api/v1/message-templates/{task_type}/{touch}", tag = "learning", summary = "Back to the shipped template", params(("task_type" = String, Path, description = "The task type"), ("touch" = String, Path, description = "The touch")), responses((status = 204, description = "Deleted"), crate::schema::OwnerErrors))]
pub(crate) async fn delete(
    axum::extract::State(state): Shared,
    headers: HeaderMap,
    Path((task_type, touch)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let account = owner(&state, &headers).await?;
    state.engine.delete_message_template(account, &task_type, &touch).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

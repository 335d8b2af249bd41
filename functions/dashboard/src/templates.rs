//! The owner's message templates in the dashboard (`/app/templates`): every member-facing
//! task type and touch with its subject and body, the owner's own or the shipped one, a form to
//! change each and one to go back to the default. The same engine operations as `GET`, `PUT`
//! and `DELETE /api/v1/message-templates…`: a save shows the template rendered for a sample
//! member, or why it was refused over the form as the owner filled it; nothing is saved then.
//!
//! Routes: `GET /app/templates`, `POST /app/templates/{task_type}/{touch}` (save), `POST
//! /app/templates/{task_type}/{touch}/default`.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};

use openloop_core::conversation::messages::{self, VARIABLES};
use openloop_core::engine::{MessageTemplateView, TemplateInput};
use openloop_core::task::Draft;
use openloop_core::task::error::EngineError;
use openloop_core::task::task_type;
use openloop_edge::http::ApiError;
use openloop_web::Body;

use crate::page::{Layout, layout};
use crate::respond::{PageError, Shared, field, html, page, posted, see_other};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/templates", get(list))
        .route("/app/templates/{task_type}/{touch}", post(save))
        .route("/app/templates/{task_type}/{touch}/default", post(restore))
}

#[derive(Template)]
#[template(path = "app/templates.html")]
pub struct TemplatesPage {
    pub layout: Layout,
    pub notice: Option<String>,
    pub groups: Vec<Group>,
    pub variables: Vec<(&'static str, &'static str)>,
    pub max_subject: usize,
    pub max_body: usize,
}

/// One task type's templates.
pub struct Group {
    pub label: &'static str,
    pub templates: Vec<Card>,
}

/// One template and its form.
pub struct Card {
    pub id: String,
    pub action: String,
    pub title: String,
    pub owned: bool,
    pub subject: String,
    pub body: String,
    /// Opened: the one just saved or refused.
    pub open: bool,
    pub preview: Option<Draft>,
    pub error: Option<String>,
}

/// A touch key as the owner reads it.
fn touch_words(touch: &str) -> String {
    match touch {
        messages::FIRST => "First message".into(),
        messages::REPLY => "Answer to an interested member".into(),
        messages::GUIDED => "Your instructions, said to the member".into(),
        other => match other.strip_prefix("follow_up_") {
            Some(n) => format!("Follow-up {n}"),
            None => other.replace('_', " "),
        },
    }
}

/// What just happened to one template: saved with its preview, or refused with the form as
/// filled.
/// The form as the owner filled it (shown again over a refusal).
#[derive(Clone)]
struct Filled {
    subject: String,
    body: String,
}

struct Outcome {
    task_type: String,
    touch: String,
    filled: Option<Filled>,
    preview: Option<Draft>,
    error: Option<String>,
}

async fn render_page(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Option<String>,
    outcome: Option<Outcome>,
) -> Result<Response, PageError> {
    let (account, templates) = tokio::try_join!(
        state.engine.account(session.account),
        state.engine.list_message_templates(session.account)
    )?;
    let mut groups: Vec<Group> = Vec::new();
    for view in templates {
        let MessageTemplateView {
            task_type,
            touch,
            subject,
            body,
            source,
            ..
        } = view;
        let label = task_type::definition(&task_type).label;
        let this = outcome.as_ref().filter(|o| o.task_type == task_type && o.touch == touch);
        let (subject, body) = match this.and_then(|o| o.filled.as_ref()) {
            Some(filled) => (filled.subject.clone(), filled.body.clone()),
            None => (subject, body),
        };
        let card = Card {
            id: format!("tpl-{task_type}-{touch}"),
            action: format!("/app/templates/{task_type}/{touch}"),
            title: touch_words(&touch),
            owned: source == "owner",
            subject,
            body,
            open: this.is_some(),
            preview: this.and_then(|o| o.preview.clone()),
            error: this.and_then(|o| o.error.clone()),
        };
        match groups.last_mut() {
            Some(group) if group.label == label => group.templates.push(card),
            _ => groups.push(Group {
                label,
                templates: vec![card],
            }),
        }
    }
    let page = TemplatesPage {
        layout: layout("Messages", "templates", Some(state.session_key.csrf(session)), &account.name),
        notice,
        groups,
        variables: VARIABLES.to_vec(),
        max_subject: messages::MAX_SUBJECT_SOURCE_CHARS,
        max_body: messages::MAX_BODY_SOURCE_CHARS,
    };
    Ok(html(status, &page))
}

#[derive(serde::Deserialize)]
struct Params {
    done: Option<String>,
}

/// `GET /app/templates`.
async fn list(State(state): Shared, headers: HeaderMap, Query(params): Query<Params>) -> Response {
    page(state, &headers, |state, session| async move {
        let notice =
            (params.done.as_deref() == Some("default")).then(|| "Back to the default: the next message is written from it.".to_owned());
        render_page(&state, &session, StatusCode::OK, notice, None).await
    })
    .await
}

/// `POST /app/templates/{task_type}/{touch}` ("Save"): the API's `PUT`. The page comes back
/// with the preview, or with the refusal over the form as filled (422).
async fn save(State(state): Shared, headers: HeaderMap, Path((task_type, touch)): Path<(String, String)>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let filled = Filled {
            subject: field(&fields, "subject").unwrap_or_default().replace("\r\n", "\n"),
            body: field(&fields, "body").unwrap_or_default().replace("\r\n", "\n"),
        };
        let input = match (
            messages::TemplateSubject::parse("subject", filled.subject.clone()),
            messages::TemplateBody::parse("body", filled.body.clone()),
        ) {
            (Ok(subject), Ok(body)) => Ok(TemplateInput { subject, body }),
            (Err(e), _) | (_, Err(e)) => Err(EngineError::from(e)),
        };
        let saved = match input {
            Ok(input) => state.engine.put_message_template(session.account, &task_type, &touch, input).await,
            Err(e) => Err(e),
        };
        match saved {
            Ok(view) => {
                let outcome = Outcome {
                    task_type,
                    touch,
                    filled: None,
                    preview: view.preview,
                    error: None,
                };
                let notice = "Saved: the next message is written from it. Below, how it reads for a sample member.".to_owned();
                render_page(&state, &session, StatusCode::OK, Some(notice), Some(outcome)).await
            }
            Err(e @ EngineError::Invalid(_)) => {
                let e = ApiError::from(e);
                let outcome = Outcome {
                    task_type,
                    touch,
                    filled: Some(filled),
                    preview: None,
                    error: Some(e.body.error.message.clone()),
                };
                render_page(&state, &session, e.status, None, Some(outcome)).await
            }
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// `POST /app/templates/{task_type}/{touch}/default` ("Back to the default"): the API's `DELETE`.
async fn restore(State(state): Shared, headers: HeaderMap, Path((task_type, touch)): Path<(String, String)>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, _| async move {
        state.engine.delete_message_template(session.account, &task_type, &touch).await?;
        Ok(see_other("/app/templates?done=default"))
    })
    .await
}

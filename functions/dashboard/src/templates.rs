//! The owner's message templates in the dashboard (`/app/templates`): each template shown as
//! the mail a sample member reads (rendered through the mailer's own renderer by the engine's
//! preview), and one page per template to change it in words — each variable a named chip in
//! square brackets (`[first name]`), each part that changes with the member `[if …] … [end if]`
//! (`conversation::messages::words`) — with a preview that saves nothing and a save; the
//! template language stays underneath for whoever wants it. The same engine operations as
//! `GET`, `PUT` and `DELETE /api/v1/message-templates…` with the same check
//! (`Engine::try_message_template` is the preview): a refused edit says why in the owner's
//! words over the form as filled, and nothing changes.
//!
//! No script on the page: "Preview" is a second submit button of the same form, posting to
//! `…/preview`, which answers the page again with the draft shown as mail beside the form.
//!
//! Routes: `GET /app/templates`, `GET /app/templates/{task_type}/{touch}` (one template),
//! `POST /app/templates/{task_type}/{touch}` (save), `POST …/preview`, `POST …/default`.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};

use openloop_core::conversation::messages::words::{self, Chip};
use openloop_core::conversation::messages::{self, TemplateProblem, TemplateText, VARIABLES};
use openloop_core::engine::TemplateInput;
use openloop_core::owner::account::Account;
use openloop_core::task::Draft;
use openloop_core::task::error::EngineError;
use openloop_core::task::task_type;
use openloop_edge::http::ApiError;
use openloop_web::Body;

use crate::page::{Layout, layout};
use crate::respond::{Fields, PageError, Shared, field, html, page, posted, see_other};
use crate::session::Session;
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/templates", get(list))
        .route("/app/templates/{task_type}/{touch}", get(one).post(save))
        .route("/app/templates/{task_type}/{touch}/preview", post(preview))
        .route("/app/templates/{task_type}/{touch}/default", post(restore))
}

/// Whom every preview is written for: the sample member's first name.
fn sample_name() -> String {
    messages::sample_member().first_name.unwrap_or_default()
}

#[derive(Template)]
#[template(path = "app/templates.html")]
pub struct TemplatesPage {
    pub layout: Layout,
    pub notice: Option<String>,
    pub sample: String,
    pub groups: Vec<Group>,
}

/// One task type's templates.
pub struct Group {
    pub label: &'static str,
    pub templates: Vec<Card>,
}

/// One template as its mail.
pub struct Card {
    pub id: String,
    pub href: String,
    pub title: String,
    pub owned: bool,
    /// The mail the sample member reads; none when it does not read now (`problem`).
    pub mail: Option<Draft>,
    pub problem: Option<String>,
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

/// The mail `text` makes for the sample member, or why it makes none, in the owner's words.
fn mail_of(state: &DashboardState, account: &Account, touch: &str, text: &TemplateText) -> (Option<Draft>, Option<String>) {
    match state.engine.preview(account, touch, text) {
        Ok(mail) => (Some(mail), None),
        Err(problem) => (None, Some(problem.owner_words())),
    }
}

#[derive(serde::Deserialize)]
struct Params {
    done: Option<String>,
}

/// `GET /app/templates`: every template as the sample member reads it, grouped by type.
async fn list(State(state): Shared, headers: HeaderMap, Query(params): Query<Params>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, templates) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.list_message_templates(session.account)
        )?;
        let mut groups: Vec<Group> = Vec::new();
        for view in templates {
            let label = task_type::definition(&view.task_type).label;
            let text = TemplateText {
                subject: view.subject,
                body: view.body,
            };
            let (mail, problem) = mail_of(&state, &account, &view.touch, &text);
            let card = Card {
                id: format!("tpl-{}-{}", view.task_type, view.touch),
                href: format!("/app/templates/{}/{}", view.task_type, view.touch),
                title: touch_words(&view.touch),
                owned: view.source == "owner",
                mail,
                problem,
            };
            match groups.last_mut() {
                Some(group) if group.label == label => group.templates.push(card),
                _ => groups.push(Group {
                    label,
                    templates: vec![card],
                }),
            }
        }
        let notice =
            (params.done.as_deref() == Some("default")).then(|| "Back to the default: the next message is written from it.".to_owned());
        let page = TemplatesPage {
            layout: layout("Messages", "templates", Some(state.session_key.csrf(&session)), &account.name),
            notice,
            sample: sample_name(),
            groups,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

#[derive(Template)]
#[template(path = "app/template.html")]
pub struct TemplatePage {
    pub layout: Layout,
    pub notice: Option<String>,
    /// Why the edit was refused, in the owner's words.
    pub error: Option<String>,
    /// The same, as the template language's reader wants it (shown in the raw editor only).
    pub raw_error: Option<String>,
    pub type_label: &'static str,
    pub title: String,
    pub action: String,
    pub owned: bool,
    /// How many wordings members read of it (one each, always the same).
    pub variants: usize,
    pub sample: String,
    /// The mail shown beside the form: the draft's when previewing, else the saved one's.
    pub mail: Option<Draft>,
    pub mail_problem: Option<String>,
    /// The mail is a preview of the draft, not saved.
    pub previewing: bool,
    /// The template as it is written, in words, chips marked: the subject's and the body's.
    pub written: Option<(Vec<Piece>, Vec<Piece>)>,
    /// The words form's fields (none when the template uses more than the words say).
    pub words: Option<TemplateText>,
    pub raw: TemplateText,
    /// The raw editor opened: it was the one used, or the words cannot say the template.
    pub raw_open: bool,
    pub chips: Vec<Chip>,
    pub variables: Vec<(&'static str, &'static str)>,
    pub max_subject: usize,
    pub max_body: usize,
}

/// A run of words, or a chip.
pub struct Piece {
    pub text: String,
    pub chip: bool,
}

/// `words` cut into its text and its chips (`[first name]`), for showing.
fn pieces(words: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = words;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|i| open + i) else {
            break;
        };
        if open > 0 {
            out.push(Piece {
                text: rest[..open].to_owned(),
                chip: false,
            });
        }
        out.push(Piece {
            text: rest[open + 1..close].to_owned(),
            chip: true,
        });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece {
            text: rest.to_owned(),
            chip: false,
        });
    }
    out
}

/// Which editor a form came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Words,
    Raw,
}

/// A form as the owner filled it.
struct Filled {
    mode: Mode,
    subject: String,
    body: String,
}

impl Filled {
    fn read(fields: &Fields) -> Self {
        let get = |name: &str| field(fields, name).unwrap_or_default().replace("\r\n", "\n");
        Self {
            mode: if field(fields, "mode") == Some("raw") {
                Mode::Raw
            } else {
                Mode::Words
            },
            subject: get("subject"),
            body: get("body"),
        }
    }

    /// The template it writes, or why its words do not make one.
    fn text(&self) -> Result<TemplateText, TemplateProblem> {
        Ok(match self.mode {
            Mode::Raw => TemplateText {
                subject: self.subject.clone(),
                body: self.body.clone(),
            },
            Mode::Words => TemplateText {
                subject: words::from_words(&self.subject)?,
                body: words::from_words(&self.body)?,
            },
        })
    }
}

/// What the page shows over its forms after a post.
#[derive(Default)]
struct Said {
    notice: Option<String>,
    error: Option<String>,
    raw_error: Option<String>,
    /// The draft's mail, previewed.
    draft: Option<Draft>,
}

/// The page of one template: as saved, or with the owner's form as filled and what became of it.
async fn render_one(
    state: &DashboardState,
    session: &Session,
    key: (&str, &str),
    status: StatusCode,
    filled: Option<&Filled>,
    said: Said,
) -> Result<Response, PageError> {
    let (task_type, touch) = key;
    let def = messages::check_key(task_type, touch).map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such message."))?;
    let (account, templates) = tokio::try_join!(
        state.engine.account(session.account),
        state.engine.list_message_templates(session.account)
    )?;
    let view = templates
        .into_iter()
        .find(|t| t.task_type == task_type && t.touch == touch)
        .ok_or_else(|| PageError::new(StatusCode::NOT_FOUND, "There is no such message."))?;
    let saved = TemplateText {
        subject: view.subject.clone(),
        body: view.body.clone(),
    };
    // The fields: as filled in the editor used; the other editor says the same where it can.
    let (words_form, raw) = match filled {
        None => (to_words(&saved), saved.clone()),
        Some(f) if f.mode == Mode::Words => {
            let raw = f.text().unwrap_or_else(|_| saved.clone());
            (
                Some(TemplateText {
                    subject: f.subject.clone(),
                    body: f.body.clone(),
                }),
                raw,
            )
        }
        Some(f) => {
            let raw = TemplateText {
                subject: f.subject.clone(),
                body: f.body.clone(),
            };
            (to_words(&raw), raw)
        }
    };
    let previewing = said.draft.is_some();
    let (mail, mail_problem) = match said.draft {
        Some(draft) => (Some(draft), None),
        None => mail_of(state, &account, touch, &saved),
    };
    let written = to_words(&saved).map(|w| (pieces(&w.subject), pieces(&w.body)));
    let raw_open = filled.is_some_and(|f| f.mode == Mode::Raw) || words_form.is_none();
    let page = TemplatePage {
        layout: layout("Messages", "templates", Some(state.session_key.csrf(session)), &account.name),
        notice: said.notice,
        error: said.error,
        raw_error: said.raw_error,
        type_label: def.label,
        title: touch_words(touch),
        action: format!("/app/templates/{task_type}/{touch}"),
        owned: view.source == "owner",
        variants: view.variants.len(),
        sample: sample_name(),
        mail,
        mail_problem,
        previewing,
        written,
        words: words_form,
        raw,
        raw_open,
        chips: words::chips(),
        variables: VARIABLES.to_vec(),
        max_subject: messages::MAX_SUBJECT_SOURCE_CHARS,
        max_body: messages::MAX_BODY_SOURCE_CHARS,
    };
    Ok(html(status, &page))
}

fn to_words(text: &TemplateText) -> Option<TemplateText> {
    Some(TemplateText {
        subject: words::to_words(&text.subject)?,
        body: words::to_words(&text.body)?,
    })
}

/// `GET /app/templates/{task_type}/{touch}`.
async fn one(
    State(state): Shared,
    headers: HeaderMap,
    Path((task_type, touch)): Path<(String, String)>,
    Query(params): Query<Params>,
) -> Response {
    page(state, &headers, |state, session| async move {
        let notice = (params.done.as_deref() == Some("saved"))
            .then(|| "Saved: the next message is written from it. Beside, how it reads for a sample member.".to_owned());
        let said = Said { notice, ..Said::default() };
        render_one(&state, &session, (&task_type, &touch), StatusCode::OK, None, said).await
    })
    .await
}

/// The owner's form checked as a save would check it: the mail it makes, or the refusal as
/// the page says it (nothing saved either way).
async fn tried(
    state: &DashboardState,
    session: &Session,
    key: (&str, &str),
    filled: &Filled,
) -> Result<Result<(TemplateText, Draft), Said>, PageError> {
    let refused = |problem: TemplateProblem, mode: Mode| Said {
        error: Some(problem.owner_words()),
        raw_error: (mode == Mode::Raw).then(|| problem.to_string()),
        ..Said::default()
    };
    let text = match filled.text() {
        Ok(text) => text,
        Err(problem) => return Ok(Err(refused(problem, filled.mode))),
    };
    match state.engine.try_message_template(session.account, key.0, key.1, &text).await {
        Ok(Ok(mail)) => Ok(Ok((text, mail))),
        Ok(Err(problem)) => Ok(Err(refused(problem, filled.mode))),
        Err(EngineError::Invalid(_)) => Err(PageError::new(StatusCode::NOT_FOUND, "There is no such message.")),
        Err(e) => Err(e.into()),
    }
}

/// `POST /app/templates/{task_type}/{touch}/preview` ("Preview"): the page again with the
/// draft as the sample member would read it beside the form as filled; nothing is saved.
async fn preview(State(state): Shared, headers: HeaderMap, Path((task_type, touch)): Path<(String, String)>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let key = (task_type.as_str(), touch.as_str());
        let filled = Filled::read(&fields);
        match tried(&state, &session, key, &filled).await? {
            Ok((_, mail)) => {
                let said = Said {
                    notice: Some("A preview: nothing is saved until you press Save.".to_owned()),
                    draft: Some(mail),
                    ..Said::default()
                };
                render_one(&state, &session, key, StatusCode::OK, Some(&filled), said).await
            }
            Err(said) => render_one(&state, &session, key, StatusCode::UNPROCESSABLE_ENTITY, Some(&filled), said).await,
        }
    })
    .await
}

/// `POST /app/templates/{task_type}/{touch}` ("Save"): the API's `PUT`; a refusal comes back
/// over the form as filled (422) and changes nothing.
async fn save(State(state): Shared, headers: HeaderMap, Path((task_type, touch)): Path<(String, String)>, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let key = (task_type.as_str(), touch.as_str());
        let filled = Filled::read(&fields);
        let text = match tried(&state, &session, key, &filled).await? {
            Ok((text, _)) => text,
            Err(said) => return render_one(&state, &session, key, StatusCode::UNPROCESSABLE_ENTITY, Some(&filled), said).await,
        };
        let input = match (
            messages::TemplateSubject::parse("subject", text.subject),
            messages::TemplateBody::parse("body", text.body),
        ) {
            (Ok(subject), Ok(body)) => Ok(TemplateInput { subject, body }),
            (Err(e), _) | (_, Err(e)) => Err(EngineError::from(e)),
        };
        match input {
            Ok(input) => {
                state
                    .engine
                    .put_message_template(session.account, &task_type, &touch, input)
                    .await?;
                Ok(see_other(&format!("/app/templates/{task_type}/{touch}?done=saved")))
            }
            Err(e) => {
                let e = ApiError::from(e);
                let said = Said {
                    error: Some("The subject or the message holds characters a mail cannot carry.".to_owned()),
                    raw_error: Some(e.body.error.message.clone()),
                    ..Said::default()
                };
                render_one(&state, &session, key, e.status, Some(&filled), said).await
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_cut_into_text_and_chips() {
        let cut = pieces("[greeting],\nSee you at [usual class].");
        let shown: Vec<(&str, bool)> = cut.iter().map(|p| (p.text.as_str(), p.chip)).collect();
        assert_eq!(
            shown,
            [("greeting", true), (",\nSee you at ", false), ("usual class", true), (".", false)]
        );
    }
}

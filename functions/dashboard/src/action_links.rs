//! The action links of the owner's mail (`/a/{token}`, `Engine::action_link_page`): no
//! sign-in, the signed token is the authority. `GET` shows the item and one button and
//! changes nothing (a mail scanner or a link preview opens links ahead of the owner); only
//! `POST` to the same address decides. A forged or altered token is `400`; an item decided
//! already, or a link past its time, is `410` with what became of it.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;

use openloop_core::engine::{LinkPage, LinkState};

use crate::page::{Layout, layout};
use crate::respond::{PageError, Shared, html};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new().route("/a/{token}", get(show).post(decide))
}

#[derive(Template)]
#[template(path = "app/action.html")]
struct ActionPage {
    layout: Layout,
    business: String,
    title: String,
    detail: Vec<String>,
    open: bool,
    button: &'static str,
    action_path: String,
    done: Option<String>,
    gone: Option<String>,
}

/// The longest token worth checking (a minted one is about 130 characters).
const TOKEN_MAX: usize = 400;

const NOT_A_LINK: &str = "This link is not valid. Open the item from your dashboard instead.";

/// `GET /a/{token}`: the decision and its button.
async fn show(State(state): Shared, Path(token): Path<String>) -> Result<Response, PageError> {
    let page = if token.len() <= TOKEN_MAX {
        state.engine.action_link_page(&token).await?
    } else {
        None
    };
    answer(page, &token)
}

/// `POST /a/{token}`: the decision, once.
async fn decide(State(state): Shared, Path(token): Path<String>) -> Result<Response, PageError> {
    let page = if token.len() <= TOKEN_MAX {
        state.engine.use_action_link(&token).await?
    } else {
        None
    };
    answer(page, &token)
}

fn answer(page: Option<LinkPage>, token: &str) -> Result<Response, PageError> {
    let page = page.ok_or_else(|| PageError::new(StatusCode::BAD_REQUEST, NOT_A_LINK))?;
    let (status, done, gone) = match page.state {
        LinkState::Open => (StatusCode::OK, None, None),
        LinkState::Acted(done) => (StatusCode::OK, Some(done), None),
        LinkState::Gone(gone) => (StatusCode::GONE, None, Some(gone)),
    };
    let view = ActionPage {
        layout: layout(page.action.label(), "", None, &page.business),
        business: page.business,
        title: page.title,
        detail: page.detail,
        open: done.is_none() && gone.is_none(),
        button: page.action.label(),
        action_path: format!("/a/{token}"),
        done,
        gone,
    };
    Ok(html(status, &view))
}

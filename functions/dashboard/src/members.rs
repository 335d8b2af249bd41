//! The members list, `/app/members?cursor=`: the account's members, 50 a page, as `GET
//! /api/v1/members` lists them — status, last check-in, value and open tasks.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use jiff::tz::TimeZone;

use crate::page::{Layout, code, layout, money, when, words};
use crate::respond::{ListParams, Shared, html, page};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new().route("/app/members", get(members))
}

/// Members per page of the members list.
const MEMBERS_PAGE: usize = 50;

#[derive(Template)]
#[template(path = "app/members.html")]
pub struct MembersPage {
    pub layout: Layout,
    pub members: Vec<MemberRow>,
    pub next_page: Option<String>,
}

/// One member, as the list shows them.
pub struct MemberRow {
    pub id: String,
    pub name: String,
    pub email: Option<String>,
    pub status: String,
    pub last_checkin: String,
    pub checkins_30d: usize,
    pub value: String,
    pub open_tasks: usize,
}

/// `GET /app/members?cursor=`: the account's members, 50 a page (as `GET /api/v1/members`).
async fn members(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, (members, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state
                .engine
                .list_members(session.account, Some(MEMBERS_PAGE), params.cursor.filter(|c| !c.is_empty())),
        )?;
        let tz = account.settings.time_zone();
        let page = MembersPage {
            layout: layout("Members", "settings", Some(state.session_key.csrf(&session)), &account.name),
            members: members.iter().map(|m| member_row(m, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

fn member_row(m: &openloop_core::engine::MemberView, tz: &TimeZone) -> MemberRow {
    MemberRow {
        id: m.id.to_string(),
        name: m.name.clone().unwrap_or_else(|| m.id.to_string()),
        email: m.email.as_ref().map(ToString::to_string),
        status: m.status.as_ref().map_or_else(|| "unknown".to_owned(), |s| words(&code(s))),
        last_checkin: m.last_checkin_at.map_or_else(|| "never".to_owned(), |t| when(t, tz)),
        checkins_30d: m.checkins_30d,
        value: money(m.monthly_value),
        open_tasks: m.open_tasks,
    }
}

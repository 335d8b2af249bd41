//! The members list, `/app/members?cursor=`: the account's members, 50 a page, as `GET
//! /api/v1/members` lists them — status (a cancelled member's with why and when they left),
//! last check-in, value and open tasks; and one member, `/app/members/{id}`, as `GET
//! /api/v1/members/{id}` gives them, with their tags and notes.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use jiff::tz::TimeZone;

use openloop_core::kernel::ids::MemberId;

use crate::page::{Layout, cancellation_line, code, layout, money, when, words};
use crate::respond::{ListParams, PageError, Shared, html, page};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/members", get(members))
        .route("/app/members/{id}", get(member_page))
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
    /// Why and when a cancelled member left, in the owner's words.
    pub cancellation: Option<String>,
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
        cancellation: m.cancellation.as_ref().map(|c| cancellation_line(c, tz)),
        last_checkin: m.last_checkin_at.map_or_else(|| "never".to_owned(), |t| when(t, tz)),
        checkins_30d: m.checkins_30d,
        value: money(m.monthly_value),
        open_tasks: m.open_tasks,
    }
}

#[derive(Template)]
#[template(path = "app/member.html")]
pub struct MemberPage {
    pub layout: Layout,
    pub member: MemberRow,
    pub tags: Vec<String>,
    /// The owner's notes on them, newest first: (when, text).
    pub notes: Vec<(String, String)>,
    /// Whether texts may reach them, in words.
    pub texts: &'static str,
}

/// `GET /app/members/{id}`: one member, as `GET /api/v1/members/{id}` gives them.
async fn member_page(State(state): Shared, headers: HeaderMap, Path(id): Path<String>) -> Response {
    page(state, &headers, |state, session| async move {
        // An id that does not parse is as absent as another account's member.
        let id = MemberId::parse(&id).map_err(|_| PageError::new(StatusCode::NOT_FOUND, "There is no such member."))?;
        let (account, detail) = tokio::try_join!(
            state.engine.account(session.account),
            state.engine.member_detail(session.account, &id),
        )?;
        let tz = account.settings.time_zone();
        let mut notes: Vec<_> = detail.notes.iter().map(|n| (n.at, n.text.clone())).collect();
        notes.sort_by_key(|n| std::cmp::Reverse(n.0));
        let texts = match (
            detail.texts.has_phone,
            openloop_core::members::consent::SmsConsent::allows_texts(detail.texts.consent.as_ref()),
        ) {
            (false, _) => "no phone number on file",
            (true, true) => "a phone number, and consent to texts",
            (true, false) => "a phone number, without consent to texts: calls only",
        };
        let page = MemberPage {
            layout: layout("Member", "settings", Some(state.session_key.csrf(&session)), &account.name),
            member: member_row(&detail.member, &tz),
            tags: detail.tags,
            notes: notes.into_iter().map(|(at, text)| (when(at, &tz), text)).collect(),
            texts,
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

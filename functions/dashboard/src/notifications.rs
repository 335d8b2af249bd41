//! The owner's notifications, `/app/notifications?cursor=`: the notices the engine left them
//! (`GET /api/v1/notifications`), newest first, 30 a page, each with what it is about and how
//! it reached them.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use jiff::tz::TimeZone;

use crate::page::{Layout, layout, when};
use crate::respond::{ListParams, Shared, html, page};
use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new().route("/app/notifications", get(notifications))
}

/// Notices per page of the notifications feed.
const NOTICES_PAGE: usize = 30;

#[derive(Template)]
#[template(path = "app/notifications.html")]
pub struct NotificationsPage {
    pub layout: Layout,
    pub notices: Vec<NoticeItem>,
    pub next_page: Option<String>,
    /// Whether notices are also mailed to the owner.
    pub mailed: bool,
}

/// One notice, as the feed shows it.
pub struct NoticeItem {
    pub at: String,
    pub kind: &'static str,
    pub kind_class: &'static str,
    pub task_id: Option<String>,
    pub title: String,
    pub detail: String,
    pub delivery: String,
}

/// `GET /app/notifications?cursor=`: the owner's notices (`GET /api/v1/notifications`),
/// newest first, 30 a page.
async fn notifications(State(state): Shared, headers: HeaderMap, Query(params): Query<ListParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (account, (notices, next)) = tokio::try_join!(
            state.engine.account(session.account),
            state
                .engine
                .owner_notices(session.account, Some(NOTICES_PAGE), params.cursor.filter(|c| !c.is_empty())),
        )?;
        let tz = account.settings.time_zone();
        let page = NotificationsPage {
            layout: layout(
                "Notifications",
                "notifications",
                Some(state.session_key.csrf(&session)),
                &account.name,
            ),
            notices: notices.iter().map(|n| notice_item(n, &tz)).collect(),
            next_page: next.and_then(|c| serde_urlencoded::to_string([("cursor", c)]).ok()),
            mailed: account.settings.owner_email.is_some() && account.settings.owner_notification_channel.mails(),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// A notice in words: what kind it is, with its badge colour, and how it reached the owner.
fn notice_item(n: &openloop_core::owner::owner_notice::OwnerNotice, tz: &TimeZone) -> NoticeItem {
    use openloop_core::owner::owner_notice::{NoticeDelivery, NoticeKind};
    let (kind, kind_class) = match n.kind {
        NoticeKind::Escalation => ("needs you", "bad"),
        NoticeKind::CriticalEscalation => ("urgent", "bad"),
        NoticeKind::EscalationReminder => ("still needs you", "bad"),
        NoticeKind::LateReply => ("late reply", "warn"),
        NoticeKind::MemberOptedOut => ("opted out", "warn"),
        NoticeKind::ActionMessage => ("message", ""),
        NoticeKind::ApprovalNeeded => ("to review", "warn"),
        NoticeKind::SystemAlert => ("alert", "bad"),
        NoticeKind::DailyDigest => ("daily summary", "good"),
        NoticeKind::LearningDigest => ("learned this week", ""),
        NoticeKind::WhileAway => ("while you were away", ""),
    };
    let delivery = match (n.delivery, n.digest_at) {
        (NoticeDelivery::Email, _) => "e-mailed".to_owned(),
        (NoticeDelivery::Digest, Some(at)) => format!("goes in the summary e-mail of {}", when(at, tz)),
        (NoticeDelivery::Digest, None) => "e-mailed in a digest".to_owned(),
        (NoticeDelivery::Dashboard, _) => "here only".to_owned(),
        (NoticeDelivery::OverBudget, _) => "here only: you already had today's e-mails about this".to_owned(),
    };
    NoticeItem {
        at: when(n.at, tz),
        kind,
        kind_class,
        task_id: n.task_id.as_ref().map(ToString::to_string),
        title: n.title.clone(),
        detail: n.detail.clone(),
        delivery,
    }
}

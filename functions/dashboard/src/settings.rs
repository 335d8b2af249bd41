//! The settings page, `/app/settings`: the account's settings as one form (`POST
//! /app/settings`, the same operation as `PUT /api/v1/settings`, saved only over the version
//! the page showed), the kill switch (`POST /app/settings/pause` and `/resume`), the ramp, and
//! the PushPress connection with its import. The trigger table on it is `triggers.rs`; its
//! webhooks and keys page, `integrations.rs`.

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use jiff::tz::TimeZone;

use openloop_core::engine::SettingsPatch;
use openloop_core::kernel::ids::Email;
use openloop_core::owner::account::{AgentOverride, ExecutionMode};
use openloop_core::owner::owner_notice::NotificationChannel;
use openloop_web::Body;

use crate::learning;
use crate::notice::notice;
use crate::page::{Layout, code, layout, phase_explained, when, words};
use crate::respond::{CsrfForm, PageError, Shared, check_csrf, field, form, html, page, posted, see_other};
use crate::state::DashboardState;
use crate::triggers::{self, TriggerRow};

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new()
        .route("/app/settings", get(settings).post(save_settings))
        .route("/app/settings/pause", post(pause))
        .route("/app/settings/resume", post(resume))
        .route("/app/settings/pushpress", post(pushpress))
}

#[derive(Template)]
#[template(path = "app/settings.html")]
pub struct SettingsPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub s: SettingsView,
    /// The trigger table: which event opens which task, each with its switch.
    pub triggers: Vec<TriggerRow>,
    pub tried: Option<triggers::Tried>,
    pub choices: triggers::Choices,
}

/// The settings form's values, as stored now.
pub struct SettingsView {
    /// The account's version the form shows: saving over another is refused, said so.
    pub version: u64,
    pub paused: bool,
    pub execution_mode: String,
    pub phase: &'static str,
    pub phase_explained: &'static str,
    /// Each phase of the ramp and what it means.
    pub ramp: Vec<(&'static str, &'static str)>,
    /// The types autopilot may take over: (type, its label, on autopilot now).
    pub autopilot: Vec<(&'static str, &'static str, bool)>,
    pub daily_send_limit: u32,
    pub member_weekly_limit: u32,
    pub send_window_start: u8,
    pub send_window_end: u8,
    pub timezone: String,
    pub profile: Vec<ProfileField>,
    pub never_mention: String,
    /// The instructions for every agent (the `*` agent's, every type).
    pub agent_additions: String,
    /// Instructions for one agent or type: kept, not edited here.
    pub other_overrides: usize,
    pub channel: String,
    pub owner_email: String,
    pub connector: ConnectorSummary,
    /// The trust gradient: strong memory suggestions saved without review.
    pub auto_save_memories: bool,
    /// Contributing to the cross-tenant learning record.
    pub share_learning: bool,
    /// Cross-business patterns this account's records helped surface.
    pub patterns_helped: usize,
    /// The share of members held out, and when the groups can next be drawn again.
    pub holdout_percent: u8,
    pub holdout_next_reshuffle: String,
    /// The morning brief's local hour; empty: no morning mail.
    pub brief_hour: String,
    pub quiet_start: u8,
    pub quiet_end: u8,
    pub review_expiry_days: u32,
    pub review_expiry_max: u32,
}

/// One text field of the profile: the form field's name, its label, its value.
pub struct ProfileField {
    pub name: &'static str,
    pub label: &'static str,
    pub value: String,
}

/// The PushPress connection and its import, as the settings page shows them.
pub struct ConnectorSummary {
    /// The account has its own PushPress key (it can be disconnected).
    pub has_key: bool,
    pub status: String,
    pub status_class: &'static str,
    pub phase: Option<String>,
    pub members: u32,
    pub checkins: u32,
    pub webhook: bool,
    pub last_sync: Option<String>,
    pub last_error: Option<String>,
}

/// The agent key whose override applies to every agent.
const EVERY_AGENT: &str = "*";

/// The profile's one-line fields the settings page edits, in order.
const PROFILE_FIELDS: [(&str, &str); 8] = [
    ("display_name", "Gym name, as members know it"),
    ("owner_first_name", "Your first name"),
    ("sign_off", "Sign-off"),
    ("business_type", "Kind of gym"),
    ("typical_greeting", "Typical greeting"),
    ("current_promo", "Current offer"),
    ("ways_to_stay", "For a member the cost troubles (a pause, a cheaper plan)"),
    ("billing_link", "Link where members update their card (https://…)"),
];

/// The profile field of that name (one of [`PROFILE_FIELDS`]).
fn profile_field<'a>(profile: &'a mut openloop_core::owner::account::Profile, name: &str) -> Option<&'a mut Option<String>> {
    match name {
        "display_name" => Some(&mut profile.display_name),
        "owner_first_name" => Some(&mut profile.owner_first_name),
        "sign_off" => Some(&mut profile.sign_off),
        "business_type" => Some(&mut profile.business_type),
        "typical_greeting" => Some(&mut profile.typical_greeting),
        "current_promo" => Some(&mut profile.current_promo),
        "ways_to_stay" => Some(&mut profile.ways_to_stay),
        "billing_link" => Some(&mut profile.billing_link),
        _ => None,
    }
}

/// `GET /app/settings`: the account's settings as a form, the kill switch, the ramp, and the
/// PushPress connection with its import (what `GET /api/v1/connector` answers).
/// The settings page's query: what the owner just did, and a trigger to try (its dry run).
#[derive(serde::Deserialize)]
struct SettingsParams {
    done: Option<String>,
    #[serde(rename = "try")]
    try_trigger: Option<String>,
}

async fn settings(State(state): Shared, headers: HeaderMap, Query(params): Query<SettingsParams>) -> Response {
    page(state, &headers, |state, session| async move {
        let (autonomy, connector, book) = tokio::try_join!(
            state.engine.autonomy(session.account),
            state.engine.connector_status(session.account),
            state.engine.trigger_book(session.account),
        )?;
        let tz = autonomy.account.settings.time_zone();
        let tried = match &params.try_trigger {
            Some(id) => triggers::tried(&state, session.account, &book, id, &tz).await?,
            None => None,
        };
        let page = SettingsPage {
            layout: layout(
                "Settings",
                "settings",
                Some(state.session_key.csrf(&session)),
                &autonomy.account.name,
            ),
            notice: notice(params.done.as_deref()),
            s: settings_view(&autonomy, &connector, &tz),
            triggers: triggers::rows(&book),
            tried,
            choices: triggers::choices(),
        };
        Ok(html(StatusCode::OK, &page))
    })
    .await
}

/// The settings form's values, from the account, its ramp and its connection.
fn settings_view(
    autonomy: &openloop_core::engine::Autonomy,
    connector: &openloop_core::engine::ConnectorView,
    tz: &TimeZone,
) -> SettingsView {
    let account = &autonomy.account;
    let settings = &account.settings;
    let mut profile = settings.profile.clone();
    let phase = autonomy.phase.as_str();
    let connection = code(&connector.status);
    SettingsView {
        autopilot: AUTOPILOT_TYPES
            .iter()
            .map(|key| {
                let label = openloop_core::task::task_type::lookup(key).map_or(*key, |d| d.label);
                (*key, label, settings.autopilot_types.iter().any(|t| t == key))
            })
            .collect(),
        version: account.version,
        paused: account.paused,
        execution_mode: code(&settings.execution_mode),
        phase,
        phase_explained: phase_explained(phase),
        ramp: ["shadow", "guided", "limited", "full"]
            .into_iter()
            .map(|p| (p, phase_explained(p)))
            .collect(),
        daily_send_limit: settings.daily_send_limit,
        member_weekly_limit: settings.member_weekly_limit,
        send_window_start: settings.send_window_start,
        send_window_end: settings.send_window_end,
        timezone: settings.timezone.clone(),
        profile: PROFILE_FIELDS
            .iter()
            .map(|(name, label)| ProfileField {
                name,
                label,
                value: profile_field(&mut profile, name).and_then(|v| v.clone()).unwrap_or_default(),
            })
            .collect(),
        never_mention: settings.profile.never_mention.join("\n"),
        agent_additions: settings
            .agent_overrides
            .iter()
            .find(|o| o.agent == EVERY_AGENT && o.task_type.is_none())
            .and_then(|o| o.prompt_additions.clone())
            .unwrap_or_default(),
        other_overrides: settings
            .agent_overrides
            .iter()
            .filter(|o| !(o.agent == EVERY_AGENT && o.task_type.is_none()))
            .count(),
        channel: code(&settings.owner_notification_channel),
        owner_email: settings.owner_email.as_ref().map(ToString::to_string).unwrap_or_default(),
        auto_save_memories: settings.auto_save_memories,
        share_learning: settings.share_learning,
        patterns_helped: account.learning_patterns.len(),
        holdout_percent: settings.holdout_percent,
        brief_hour: settings.brief_hour.map(|h| h.to_string()).unwrap_or_default(),
        quiet_start: settings.quiet_hours.start,
        quiet_end: settings.quiet_hours.end,
        review_expiry_days: settings.review_expiry_days,
        review_expiry_max: openloop_core::owner::quiet::MAX_REVIEW_EXPIRY_DAYS,
        holdout_next_reshuffle: when(account.holdout_draw.next_reshuffle(account.created_at), tz),
        connector: ConnectorSummary {
            has_key: account.pushpress.is_some(),
            status_class: match connection.as_str() {
                "connected" => "good",
                "importing" => "warn",
                "error" => "bad",
                _ => "",
            },
            status: words(&connection),
            phase: connector.import_phase.as_ref().map(|p| words(&code(p))),
            members: connector.imported_members,
            checkins: connector.imported_checkins,
            webhook: connector.webhook.registered,
            last_sync: connector.last_sync_at.map(|t| when(t, tz)),
            last_error: connector.last_error.clone(),
        },
    }
}

/// The types the settings page offers for autopilot: the outreach whose drafts come from its
/// templates. A payment, a question, a complaint or a threat always asks the owner.
const AUTOPILOT_TYPES: [&str; 5] = ["churn_risk", "win_back", "lead_followup", "onboarding", "milestone_review"];

/// `POST /app/settings` ("Save"): the same operation as `PUT /api/v1/settings` — all of it
/// is checked and saved, or nothing is.
async fn save_settings(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    page(state, &headers, |state, session| async move {
        let fields: Vec<(String, String)> = form(body)?;
        check_csrf(&state, &session, field(&fields, "csrf"))?;
        let current = state.engine.account(session.account).await?;
        let changed_since = || {
            PageError::new(
                StatusCode::CONFLICT,
                "These settings were changed since this page was opened (in another window or through the API). \
                 Nothing was saved: open Settings again to see them, then make your change.",
            )
        };
        // The page's form posts every field it showed, with the version it showed: saved only
        // over those settings. (A post of a few fields without a version changes only them.)
        let shown: Option<u64> = match field(&fields, "settings_version").map(str::trim) {
            None => None,
            Some(v) => Some(v.parse().map_err(|_| {
                PageError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "The form's version is not a number: open Settings again.",
                )
            })?),
        };
        if shown.is_some_and(|v| v != current.version) {
            return Err(changed_since());
        }
        let patch = SettingsPatch {
            expected_version: shown,
            ..settings_patch(&fields, &current.settings)?
        };
        match state.engine.update_account(session.account, patch).await {
            Err(openloop_core::task::error::EngineError::StaleVersion) => return Err(changed_since()),
            other => other?,
        };
        Ok(see_other("/app/settings?done=saved"))
    })
    .await
}

/// The settings form as a patch of `PUT /api/v1/settings`: what the page shows is what is
/// sent; the profile and the agents' instructions keep every part the page does not edit.
fn settings_patch(fields: &[(String, String)], current: &openloop_core::owner::account::Settings) -> Result<SettingsPatch, PageError> {
    let invalid = |message: &str| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, message);
    let execution_mode = match field(fields, "execution_mode") {
        None => None,
        Some("manual") => Some(ExecutionMode::Manual),
        Some("limited_auto") => Some(ExecutionMode::LimitedAuto),
        Some(_) => return Err(invalid("Choose an execution mode from the list.")),
    };
    let owner_notification_channel = match field(fields, "owner_notification_channel") {
        None => None,
        Some("email") => Some(NotificationChannel::Email),
        Some("dashboard_only") => Some(NotificationChannel::DashboardOnly),
        Some("email_and_sms") => Some(NotificationChannel::EmailAndSms),
        Some(_) => return Err(invalid("Choose a notification channel from the list.")),
    };
    let owner_email = match field(fields, "owner_email").map(str::trim).filter(|e| !e.is_empty()) {
        None => None,
        Some(e) => Some(Email::parse(e).map_err(|e| invalid(&e.message))?),
    };
    let mut profile = current.profile.clone();
    for (name, _) in PROFILE_FIELDS {
        if let (Some(value), Some(slot)) = (field(fields, name), profile_field(&mut profile, name)) {
            let value = value.trim();
            *slot = (!value.is_empty()).then(|| value.to_owned());
        }
    }
    if let Some(lines) = field(fields, "never_mention") {
        profile.never_mention = lines.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
    }
    let mut agent_overrides = current.agent_overrides.clone();
    if let Some(additions) = field(fields, "agent_additions") {
        let additions = additions.replace("\r\n", "\n");
        let additions = additions.trim();
        let every = |o: &AgentOverride| o.agent == EVERY_AGENT && o.task_type.is_none();
        match agent_overrides.iter_mut().find(|o| every(o)) {
            Some(o) => o.prompt_additions = (!additions.is_empty()).then(|| additions.to_owned()),
            None if !additions.is_empty() => agent_overrides.push(AgentOverride {
                agent: EVERY_AGENT.to_owned(),
                task_type: None,
                prompt_override: None,
                prompt_additions: Some(additions.to_owned()),
            }),
            None => {}
        }
        agent_overrides.retain(|o| !every(o) || o.prompt_override.is_some() || o.prompt_additions.is_some());
    }
    Ok(SettingsPatch {
        execution_mode,
        member_weekly_limit: number(fields, "member_weekly_limit", "Messages a week")?,
        daily_send_limit: number(fields, "daily_send_limit", "Messages a day")?,
        timezone: field(fields, "timezone")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        send_window_start: number(fields, "send_window_start", "Send from")?,
        send_window_end: number(fields, "send_window_end", "Send until")?,
        profile: Some(profile),
        agent_overrides: Some(agent_overrides),
        owner_email,
        owner_notification_channel,
        auto_save_memories: learning::toggle(fields, "auto_save_memories"),
        share_learning: learning::toggle(fields, "share_learning"),
        holdout_percent: number(fields, "holdout_percent", "Members held out")?,
        brief_hour: brief_hour(fields)?,
        quiet_hours: quiet_hours(fields, current)?,
        review_expiry_days: number(fields, "review_expiry_days", "Close undecided reviews after")?,
        // The page's boxes, when it showed them: the ticked ones are the whole list.
        autopilot_types: field(fields, "autopilot_shown").map(|_| {
            fields
                .iter()
                .filter(|(k, v)| k == "autopilot_types" && AUTOPILOT_TYPES.contains(&v.as_str()))
                .map(|(_, v)| v.clone())
                .collect()
        }),
        ..SettingsPatch::default()
    })
}

/// A whole number from a settings field; an empty field keeps the stored value.
fn number<T: std::str::FromStr>(fields: &[(String, String)], name: &str, label: &str) -> Result<Option<T>, PageError> {
    match field(fields, name).map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("{label} must be a whole number."))),
    }
}

/// The brief's hour from the settings form: a number, or empty for no morning mail; a post
/// without the field keeps it.
fn brief_hour(fields: &[(String, String)]) -> Result<Option<Option<u8>>, PageError> {
    match field(fields, "brief_hour").map(str::trim) {
        None => Ok(None),
        Some("") => Ok(Some(None)),
        Some(v) => v.parse::<u8>().map(|h| Some(Some(h))).map_err(|_| {
            PageError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Morning brief at must be an hour, 0-23, or empty for no morning mail.",
            )
        }),
    }
}

/// The quiet hours from the settings form (an empty or missing end keeps the stored one).
fn quiet_hours(
    fields: &[(String, String)],
    current: &openloop_core::owner::account::Settings,
) -> Result<Option<openloop_core::owner::quiet::QuietHours>, PageError> {
    let start: Option<u8> = number(fields, "quiet_start", "Quiet from")?;
    let end: Option<u8> = number(fields, "quiet_end", "Quiet until")?;
    if start.is_none() && end.is_none() {
        return Ok(None);
    }
    Ok(Some(openloop_core::owner::quiet::QuietHours {
        start: start.unwrap_or(current.quiet_hours.start),
        end: end.unwrap_or(current.quiet_hours.end),
    }))
}

/// `POST /app/settings/pause` and `/resume`: the owner's kill switch, as
/// `POST /api/v1/pause` and `/api/v1/resume`.
async fn set_paused(state: Arc<DashboardState>, headers: &HeaderMap, body: Body, paused: bool) -> Response {
    page(state, headers, |state, session| async move {
        let input: CsrfForm = form(body)?;
        check_csrf(&state, &session, input.csrf.as_deref())?;
        state.engine.set_account_paused(session.account, paused, "owner").await?;
        Ok(see_other(if paused {
            "/app/settings?done=paused"
        } else {
            "/app/settings?done=resumed"
        }))
    })
    .await
}

async fn pause(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    set_paused(state, &headers, body, true).await
}

async fn resume(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    set_paused(state, &headers, body, false).await
}

/// `POST /app/settings/pushpress`: connect with the gym's PushPress API key (and company id,
/// for a key that serves several), or disconnect (`disconnect` = `yes`) — the same operation as
/// `PUT /api/v1/settings` with `pushpress`, so a key PushPress refuses is refused here too
/// and nothing changes.
async fn pushpress(State(state): Shared, headers: HeaderMap, body: Body) -> Response {
    posted(state, &headers, body, |state, session, fields| async move {
        let credentials = if field(&fields, "disconnect") == Some("yes") {
            serde_json::Value::Null
        } else {
            let key = field(&fields, "api_key").map(str::trim).unwrap_or_default();
            if key.is_empty() {
                return Err(PageError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Paste the API key from PushPress first.",
                ));
            }
            let company = field(&fields, "company_id").map(str::trim).filter(|c| !c.is_empty());
            serde_json::json!({"api_key": key, "company_id": company})
        };
        let patch: SettingsPatch = serde_json::from_value(serde_json::json!({ "pushpress": credentials }))
            .map_err(|e| PageError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("That key cannot be right: {e}")))?;
        state.engine.update_account(session.account, patch).await?;
        Ok(see_other(if credentials.is_null() {
            "/app/settings?done=pushpress_disconnected#pp-heading"
        } else {
            "/app/settings?done=pushpress_connected#pp-heading"
        }))
    })
    .await
}

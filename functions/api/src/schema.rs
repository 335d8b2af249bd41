//! What the API answers that is its own: the errors every owner call may answer with
//! ([`OwnerErrors`], CONTRACT.md's shape) and the response bodies the core does not name —
//! the lists (`{"tasks": [...], "next_cursor"}`), the settings as the owner sees them, the kill
//! switch — each deriving `ToSchema`, so the document names them as the handlers send them;
//! and [`json`], how every handler sends one. The handlers import from here; this module
//! imports none of them.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::{IntoResponses, ToSchema};

use openloop_core::contract::{ErrorBody, TaskView};
use openloop_core::engine::{LoopView, MemberView, MessageTemplateView};
use openloop_core::kernel::ids::{AccountId, MemberId, TaskId};
use openloop_core::owner::account::{Account, ExecutionMode, Settings};
use openloop_core::owner::brief::{AtRisk, BriefAction, More, PaymentTrouble, Yesterday};
use openloop_core::owner::deliverability::{DnsRecord, DomainStatus};
use openloop_core::owner::owner_notice::{NoticeDelivery, NoticeKind};
use openloop_core::owner::recurring::{RecurringTemplate, TemplateRun};
use openloop_core::owner::trigger::Trigger;
use openloop_core::rails::autonomy::{RampLimits, RampPhase, Sending};

/// `value` as the JSON body of an answer with `status`.
pub(crate) fn json(status: StatusCode, value: impl Serialize) -> Response {
    (status, axum::Json(value)).into_response()
}

/// The errors any owner call may answer with, in CONTRACT.md's shape.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub(crate) enum OwnerErrors {
    /// Malformed: the body is not JSON (`malformed_json`, `unreadable_body`), a cursor this API
    /// did not return (`invalid_cursor`), a limit that is not a number (`invalid_limit`), a
    /// date that does not parse (`invalid_date`).
    #[response(status = 400, example = json!({"error": {"code": "malformed_json", "message": "the body is not valid JSON: EOF while parsing a value at line 1 column 0"}}))]
    BadRequest(ErrorBody),
    /// No token, or not a valid one (`unauthorized`).
    #[response(status = 401, example = json!({"error": {"code": "unauthorized", "message": "an API token is required (Authorization: Bearer …)"}}))]
    Unauthorized(ErrorBody),
    /// Not found (`not_found`): also another account's.
    #[response(status = 404, example = json!({"error": {"code": "not_found", "message": "task not found"}}))]
    NotFound(ErrorBody),
    /// A conflict: the task's state does not take this (`invalid_state`, `invalid_transition`),
    /// it changed meanwhile (`stale_version`), or the name is another account's
    /// (`sending_domain_taken`).
    #[response(status = 409, example = json!({"error": {"code": "invalid_state", "message": "a task in status waiting cannot take approve"}}))]
    Conflict(ErrorBody),
    /// The body is over 256 KiB (`body_too_large`).
    #[response(status = 413, example = json!({"error": {"code": "body_too_large", "message": "the body is larger than this endpoint takes (256 KiB)"}}))]
    TooLarge(ErrorBody),
    /// Input refused, nothing changed: the code says why (`invalid_body`, `invalid_status`,
    /// `invalid_limit`, `unknown_task_type`, `unstorable_number`, `member_suppressed`, …), the
    /// message names the field.
    #[response(status = 422, example = json!({"error": {"code": "invalid_body", "message": "the body is not valid for this call: goal: missing field `goal`"}}))]
    Invalid(ErrorBody),
    /// A limit is reached (`limited`): the day's tasks, the hour's sign-in links.
    #[response(status = 429, example = json!({"error": {"code": "limited", "message": "the account's daily task limit is reached (50)"}}))]
    Limited(ErrorBody),
    /// Retry shortly: the store or a dependency is unavailable (`store_unavailable`,
    /// `dependency_unavailable`), the account or platform is paused (`paused`), a connector is
    /// not configured (`connector_not_configured`).
    #[response(status = 503, example = json!({"error": {"code": "store_unavailable", "message": "the task store is unavailable; retry shortly"}}))]
    Unavailable(ErrorBody),
}

/// `{"tasks": [Task], "next_cursor"}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct TaskList<'a> {
    pub tasks: Vec<TaskView<'a>>,
    /// The cursor of the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// `{"activity": [Activity], "next_cursor"}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct ActivityList<'a> {
    pub activity: Vec<openloop_core::contract::ActivityView<'a>>,
    pub next_cursor: Option<String>,
}

/// `{"todos": [Todo]}`, soonest due first.
#[derive(Serialize, ToSchema)]
pub(crate) struct TodoList<'a> {
    pub todos: Vec<openloop_core::contract::TodoView<'a>>,
}

/// `{"memories": [Memory]}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct MemoryList<'a> {
    pub memories: Vec<openloop_core::contract::MemoryView<'a>>,
}

/// `{"suggestions": [Suggestion]}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct SuggestionList<'a> {
    pub suggestions: Vec<openloop_core::contract::SuggestionView<'a>>,
}

/// A member a batch did not open a task for, and why.
#[derive(Serialize, ToSchema)]
pub(crate) struct Refused {
    pub member_id: String,
    pub error: openloop_core::contract::ErrorDetail,
}

/// `POST /api/v1/tasks/batch`: the parent, its subtasks, and the members refused.
#[derive(Serialize, ToSchema)]
pub(crate) struct BatchCreated<'a> {
    pub parent: TaskView<'a>,
    pub subtasks: Vec<TaskView<'a>>,
    pub refused: Vec<Refused>,
}

/// `{"email", "reason", "tasks_cancelled"}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct SuppressionAdded {
    pub email: String,
    pub reason: String,
    /// The member's active tasks cancelled with it.
    pub tasks_cancelled: usize,
}

/// `{"email" | "id", "deleted": true}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct Deleted {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub deleted: bool,
}

/// `{"account_id", "paused"}`: an account's kill switch.
#[derive(Serialize, ToSchema)]
pub(crate) struct KillSwitch {
    pub account_id: AccountId,
    pub paused: bool,
}

impl KillSwitch {
    /// The account's kill switch as it stands.
    pub(crate) fn of(account: &Account) -> Self {
        KillSwitch {
            account_id: account.id,
            paused: account.paused,
        }
    }
}

/// The holdout draw in force (never its salt).
#[derive(Serialize, ToSchema)]
pub(crate) struct HoldoutDraw {
    pub generation: u32,
    pub drawn_at: jiff::Timestamp,
    pub next_reshuffle_after: jiff::Timestamp,
}

impl HoldoutDraw {
    /// The draw in force, as the settings show it (never its salt).
    pub(crate) fn of(account: &Account) -> Self {
        let draw = &account.holdout_draw;
        HoldoutDraw {
            generation: draw.generation,
            drawn_at: draw.since(account.created_at),
            next_reshuffle_after: draw.next_reshuffle(account.created_at),
        }
    }
}

/// Whether the account has its own PushPress key: `{"api_key": "[set]", "company_id"}` (the
/// key itself is write-only, never shown).
#[derive(Serialize, ToSchema)]
pub(crate) struct PushpressKey<'a> {
    /// Always `[set]`.
    pub api_key: &'static str,
    pub company_id: Option<&'a str>,
}

/// The gym's own sending domain: its status, the DNS records to publish (with the ownership
/// record), and whether mail leaves from it now.
#[derive(Serialize, ToSchema)]
pub(crate) struct SendingIdentityView<'a> {
    pub domain: &'a str,
    pub status: DomainStatus,
    pub dkim_status: Option<&'a str>,
    pub records: Vec<DnsRecord>,
    pub ownership_proven: bool,
    pub sends_from_domain: bool,
    pub error: Option<&'a str>,
    pub checked_at: jiff::Timestamp,
}

impl<'a> SendingIdentityView<'a> {
    /// The gym's own sending domain: its status, the DNS records to publish, and
    /// the address mail leaves from now (`None` without one).
    pub(crate) fn of(account: &'a Account) -> Option<Self> {
        let identity = account.sending_identity.as_ref()?;
        // The ownership record (the account's own token) is published with SES's.
        let mut records = identity.records.clone();
        records.push(identity.ownership_record());
        Some(SendingIdentityView {
            domain: &identity.domain,
            status: identity.status,
            dkim_status: identity.dkim_status.as_deref(),
            records,
            ownership_proven: identity.proven_at.is_some(),
            sends_from_domain: identity.sends_from_domain(),
            error: identity.error.as_deref(),
            checked_at: identity.checked_at,
        })
    }
}

/// The settings as the owner sees them: the settings, with what the
/// account sends now (`sending`), whether it has its own PushPress key, its sending domain,
/// how many cross-business patterns its data helped surface (a count, never which
/// businesses) and the holdout draw in force.
#[derive(Serialize, ToSchema)]
pub(crate) struct SettingsView<'a> {
    #[serde(flatten)]
    pub settings: &'a Settings,
    pub sending: Sending,
    pub pushpress: Option<PushpressKey<'a>>,
    pub sending_identity: Option<SendingIdentityView<'a>>,
    pub learning_patterns_helped: usize,
    pub holdout_draw: HoldoutDraw,
}

impl<'a> SettingsView<'a> {
    /// The settings as the owner sees them at `now`: CONTRACT.md's fields, plus whether the
    /// account has its own PushPress key (`"pushpress": {"api_key": "[set]", "company_id"}` or
    /// `null`) — the key itself is write-only and never shown — and `learning_patterns_helped`.
    pub(crate) fn of(account: &'a Account, now: jiff::Timestamp) -> Self {
        SettingsView {
            settings: &account.settings,
            sending: openloop_core::rails::autonomy::sending(&account.settings, now),
            pushpress: account.pushpress.as_ref().map(|c| PushpressKey {
                api_key: "[set]",
                company_id: c.company_id(),
            }),
            sending_identity: SendingIdentityView::of(account),
            // How many cross-business patterns this account's data helped surface: a count,
            // never which businesses joined it.
            learning_patterns_helped: account.learning_patterns.len(),
            // The holdout draw in force (never its salt).
            holdout_draw: HoldoutDraw::of(account),
        }
    }
}

/// An account as the operator lists it.
#[derive(Serialize, ToSchema)]
pub(crate) struct AccountSummary<'a> {
    pub account_id: AccountId,
    pub name: &'a str,
    pub paused: bool,
    pub created_at: jiff::Timestamp,
    pub settings: &'a Settings,
    /// While the account is being removed (`DELETE /api/v1/accounts/{id}`): when it was
    /// asked for and the items removed so far; a removed account is not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removal: Option<&'a openloop_core::owner::account::AccountRemoval>,
}

/// `{"accounts": [...]}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct Accounts<'a> {
    pub accounts: Vec<AccountSummary<'a>>,
}

/// A new account with its secrets, shown this once.
#[derive(Serialize, ToSchema)]
pub(crate) struct CreatedAccount<'a> {
    pub account_id: AccountId,
    pub api_token: String,
    pub webhook_secret: &'a str,
    pub name: &'a str,
    pub settings: SettingsView<'a>,
}

/// One of the owner's notifications.
#[derive(Serialize, ToSchema)]
pub(crate) struct NotificationView<'a> {
    pub id: String,
    pub at: jiff::Timestamp,
    pub kind: &'a NoticeKind,
    pub task_id: Option<TaskId>,
    pub member_id: Option<&'a MemberId>,
    pub title: &'a str,
    pub detail: &'a str,
    pub delivery: &'a NoticeDelivery,
    pub digest_at: Option<jiff::Timestamp>,
}

/// `{"notifications": [...], "next_cursor"}`, newest first.
#[derive(Serialize, ToSchema)]
pub(crate) struct Notifications<'a> {
    pub notifications: Vec<NotificationView<'a>>,
    pub next_cursor: Option<String>,
}

/// The onboarding ramp as it stands: the account's phase and each agent's limits.
#[derive(Serialize, ToSchema)]
pub(crate) struct AutonomyView<'a> {
    pub execution_mode: &'a ExecutionMode,
    pub paused: bool,
    pub onboarded_at: Option<jiff::Timestamp>,
    pub phase: RampPhase,
    pub agents: &'a std::collections::BTreeMap<&'static str, RampLimits>,
}

/// `{"templates": [RecurringTemplate]}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct RecurringTemplates {
    pub templates: Vec<RecurringTemplate>,
}

/// `{"runs": [...]}`, newest first.
#[derive(Serialize, ToSchema)]
pub(crate) struct TemplateRuns {
    pub runs: Vec<TemplateRun>,
}

/// `{"loops": [...]}`, newest first.
#[derive(Serialize, ToSchema)]
pub(crate) struct Loops {
    pub loops: Vec<LoopView>,
}

/// `{"triggers": [...]}`, the built-in rows first.
#[derive(Serialize, ToSchema)]
pub(crate) struct Triggers {
    pub triggers: Vec<Trigger>,
}

/// `{"members": [...], "next_cursor"}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct Members {
    pub members: Vec<MemberView>,
    pub next_cursor: Option<String>,
}

/// `{"templates": [...]}`: each type's touches, the shipped text and the owner's own.
#[derive(Serialize, ToSchema)]
pub(crate) struct MessageTemplates {
    pub templates: Vec<MessageTemplateView>,
}

/// The morning brief, each to-do as a `Todo`.
#[derive(Serialize, ToSchema)]
pub(crate) struct BriefView<'a> {
    #[schema(value_type = String, format = Date)]
    pub date: jiff::civil::Date,
    pub actions: &'a [BriefAction],
    pub todos: Vec<openloop_core::contract::TodoView<'a>>,
    pub at_risk: &'a [AtRisk],
    pub payments: &'a [PaymentTrouble],
    pub yesterday: &'a Yesterday,
    pub planned_today: usize,
    pub review_expired: usize,
    pub more: &'a More,
}

//! The dashboard's pages: one askama template each (`functions/api/templates/app/`), and the
//! view models they read, made here from the engine's values. Templates escape every value
//! (the `.html` extension makes askama's HTML escaper the default), so member- and
//! owner-written text always shows as text; no template marks anything `safe`.

use askama::Template;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use sha2::{Digest, Sha256};

use openloop_core::task::Task;

use crate::page::{Layout, code, money, phase_explained, status_badge, touch_label, trigger_label, type_label, when, words};

#[derive(Template)]
#[template(path = "app/login.html")]
pub struct LoginPage {
    pub layout: Layout,
    pub login_csrf: String,
    pub error: Option<String>,
    /// What the sign-in link form did (the same words whatever the address).
    pub notice: Option<&'static str>,
    /// A mailed link being followed: the page asks to confirm with one button (a link opened
    /// by a mail scanner signs no one in and stays usable).
    pub link_token: Option<String>,
    /// The account that link signs in to, named on the confirm page.
    pub link_account: Option<String>,
}

#[derive(Template)]
#[template(path = "app/overview.html")]
pub struct OverviewPage {
    pub layout: Layout,
    pub month: String,
    pub heroes: Vec<Hero>,
    pub pending_review: usize,
    pub feed: Vec<FeedItem>,
    pub state: AccountState,
    pub charts: Vec<crate::charts::Chart>,
    pub weeks: usize,
    pub months: usize,
}

#[derive(Template)]
#[template(path = "app/review.html")]
pub struct ReviewPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    /// What "Approve selected" did, when the owner just used it.
    pub bulk: Option<BulkResult>,
    pub cards: Vec<TaskCard>,
    /// The query string of the next page (`cursor=…`), if there is one.
    pub next_page: Option<String>,
    pub paused: bool,
}

#[derive(Template)]
#[template(path = "app/task.html")]
pub struct TaskPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub task: TaskSummary,
    /// The review card, while the task waits for the owner.
    pub review: Option<TaskCard>,
    pub messages: Vec<MessageItem>,
    pub log: Vec<LogItem>,
    /// What the owner can do, while the task is escalated.
    pub escalation: Option<EscalationCard>,
    /// The owner's rating and correction, the goal progress, the memories read.
    pub word: crate::learning_views::OwnerWord,
    /// The task's plan, if it has one (plan mode).
    pub plan: Option<crate::plans::PlanView>,
}

#[derive(Template)]
#[template(path = "app/escalations.html")]
pub struct EscalationsPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub cards: Vec<EscalationCard>,
    pub next_page: Option<String>,
}

#[derive(Template)]
#[template(path = "app/settings.html")]
pub struct SettingsPage {
    pub layout: Layout,
    pub notice: Option<&'static str>,
    pub s: SettingsView,
    /// The trigger table: which event opens which task, each with its switch.
    pub triggers: Vec<crate::triggers::TriggerRow>,
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

pub struct ConnectorSummary {
    pub status: String,
    pub status_class: &'static str,
    pub phase: Option<String>,
    pub members: u32,
    pub checkins: u32,
    pub webhook: bool,
    pub last_sync: Option<String>,
    pub last_error: Option<String>,
}

#[derive(Template)]
#[template(path = "app/members.html")]
pub struct MembersPage {
    pub layout: Layout,
    pub members: Vec<MemberRow>,
    pub next_page: Option<String>,
}

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

/// The agent key whose override applies to every agent.
pub const EVERY_AGENT: &str = "*";

/// The profile's one-line fields the settings page edits, in order.
pub const PROFILE_FIELDS: [(&str, &str); 7] = [
    ("display_name", "Gym name, as members know it"),
    ("owner_first_name", "Your first name"),
    ("sign_off", "Sign-off"),
    ("business_type", "Kind of gym"),
    ("typical_greeting", "Typical greeting"),
    ("current_promo", "Current offer"),
    ("billing_link", "Link where members update their card (https://…)"),
];

/// The profile field of that name (one of [`PROFILE_FIELDS`]).
pub fn profile_field<'a>(profile: &'a mut openloop_core::owner::account::Profile, name: &str) -> Option<&'a mut Option<String>> {
    match name {
        "display_name" => Some(&mut profile.display_name),
        "owner_first_name" => Some(&mut profile.owner_first_name),
        "sign_off" => Some(&mut profile.sign_off),
        "business_type" => Some(&mut profile.business_type),
        "typical_greeting" => Some(&mut profile.typical_greeting),
        "current_promo" => Some(&mut profile.current_promo),
        "billing_link" => Some(&mut profile.billing_link),
        _ => None,
    }
}

pub fn settings_view(
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
        holdout_next_reshuffle: crate::page::when(account.holdout_draw.next_reshuffle(account.created_at), tz),
        connector: ConnectorSummary {
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

pub fn member_row(m: &openloop_core::engine::MemberView, tz: &TimeZone) -> MemberRow {
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

#[derive(Template)]
#[template(path = "app/notifications.html")]
pub struct NotificationsPage {
    pub layout: Layout,
    pub notices: Vec<NoticeItem>,
    pub next_page: Option<String>,
    /// Whether notices are also mailed to the owner.
    pub mailed: bool,
}

pub struct NoticeItem {
    pub at: String,
    pub kind: &'static str,
    pub kind_class: &'static str,
    pub task_id: Option<String>,
    pub title: String,
    pub detail: String,
    pub delivery: String,
}

pub fn notice_item(n: &openloop_core::owner::owner_notice::OwnerNotice, tz: &TimeZone) -> NoticeItem {
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

/// An escalated task as the owner answers it: why it stopped, the member's words, the agent's
/// question or draft, and the type's outcomes for Resolve.
pub struct EscalationCard {
    pub id: String,
    pub member: String,
    pub task_type: String,
    pub at: String,
    pub blocked_by: String,
    /// The escalation's reason code, in words (`member question needs owner`).
    pub kind: String,
    /// The escalation's own account of why.
    pub reason: String,
    pub member_words: Vec<String>,
    pub question: Option<String>,
    pub draft_reply: Option<String>,
    /// The agent's last draft when it is not an answer to send (a system escalation's).
    pub last_draft: Option<String>,
    /// What that draft is: a message the member got, or a draft not sent.
    pub last_draft_heading: String,
    /// What the owner could do next, in one sentence.
    pub next_step: String,
    pub suggested_actions: Vec<String>,
    /// `(code, label)` of each outcome the task's type allows.
    pub outcomes: Vec<(&'static str, &'static str)>,
    /// `dry run` or `plan` when the task does not run live.
    pub mode: Option<&'static str>,
}

/// The result of approving several tasks at once, as the redirect's query carried it.
pub struct BulkResult {
    pub approved: usize,
    pub failed: Vec<BulkFailure>,
}

pub struct BulkFailure {
    pub id: String,
    pub why: &'static str,
}

/// Why one task of a bulk approval was not approved, from its error code (a fixed list, so
/// nothing from the query string is echoed).
pub fn bulk_failure_words(code: &str) -> &'static str {
    match code {
        "draft_required" => "it has no draft yet: open it and write one",
        "invalid_transition" => "it no longer waits for review",
        "not_found" => "there is no such task",
        "stale_version" => "it changed while you were approving; try again",
        _ => "it could not be approved",
    }
}

/// One of the overview's headline numbers.
pub struct Hero {
    pub label: &'static str,
    pub value: String,
    /// Where it leads, if anywhere.
    pub href: Option<&'static str>,
}

pub struct FeedItem {
    pub at: String,
    pub task_id: String,
    pub member: String,
    pub task_type: String,
    pub status: &'static str,
    pub status_class: &'static str,
    pub reason: String,
    pub detail: Option<String>,
}

pub struct AccountState {
    pub execution_mode: String,
    pub execution_mode_explained: &'static str,
    pub phase: &'static str,
    pub phase_explained: &'static str,
    pub paused: bool,
    pub timezone: String,
}

/// A task waiting for the owner, as the review queue shows it.
pub struct TaskCard {
    pub id: String,
    pub member: String,
    pub email: Option<String>,
    pub task_type: String,
    pub touch: String,
    pub why: String,
    pub trigger: &'static str,
    pub goal: String,
    pub confidence: u8,
    pub priority: String,
    pub created: String,
    pub subject: String,
    pub body: String,
    /// A digest of the draft as shown, so an approval knows whether the owner edited it
    /// without reading the task again.
    pub draft_digest: String,
    pub has_draft: bool,
    /// `dry run` or `plan` when the task does not run live.
    pub mode: Option<&'static str>,
}

pub struct TaskSummary {
    pub id: String,
    pub member: String,
    pub email: Option<String>,
    pub task_type: String,
    pub status: &'static str,
    pub status_class: &'static str,
    pub trigger: &'static str,
    pub goal: String,
    pub confidence: u8,
    pub touch: String,
    pub outcome: Option<String>,
    pub outcome_reason: Option<String>,
    pub attributed_value: Option<String>,
    pub provisional: bool,
    pub created: String,
    pub next_action: Option<String>,
    pub bars: Vec<Bar>,
    /// `dry run` or `plan` when the task does not run live.
    pub mode: Option<&'static str>,
}

/// A budget as a bar: used of max.
pub struct Bar {
    pub label: &'static str,
    pub used: i64,
    pub max: i64,
}

pub struct MessageItem {
    pub at: String,
    /// `agent`, `member`, `owner` or `system`.
    pub role: String,
    pub content: String,
}

pub struct LogItem {
    pub at: String,
    pub from: Option<&'static str>,
    pub to: &'static str,
    pub reason: String,
    pub code: String,
    pub detail: Option<String>,
}

fn member_label(task: &Task) -> String {
    task.member.label()
}

/// The digest an approval compares the submitted draft with (after line endings are made
/// `\n`, as the page showed them).
pub fn draft_digest(subject: &str, body: &str) -> String {
    let mut hash = Sha256::new();
    // Length-prefixed, so no subject/body split reads as another.
    hash.update((subject.len() as u64).to_le_bytes());
    hash.update(subject.as_bytes());
    hash.update(body.as_bytes());
    hex::encode(&hash.finalize()[..16])
}

pub fn card(task: &Task, tz: &TimeZone) -> TaskCard {
    let (subject, body) = task
        .draft
        .as_ref()
        .map_or((String::new(), String::new()), |d| (d.subject.clone(), d.body.clone()));
    let trigger = trigger_label(&code(&task.trigger_type));
    TaskCard {
        id: task.id.to_string(),
        member: member_label(task),
        email: task.member.email.as_ref().map(ToString::to_string),
        task_type: type_label(&task.task_type),
        touch: touch_label(task),
        why: format!("Opened by {trigger}"),
        trigger,
        goal: task.goal.clone(),
        confidence: task.confidence,
        priority: code(&task.priority),
        created: when(task.created_at, tz),
        draft_digest: draft_digest(&subject, &body),
        has_draft: task.draft.is_some(),
        mode: crate::plans::mode_badge(task),
        subject,
        body,
    }
}

pub fn summary(task: &Task, tz: &TimeZone, now: Timestamp) -> TaskSummary {
    let status = code(&task.status);
    let (status, status_class) = status_badge(&status);
    let days_total = task.budget.expires_at.duration_since(task.created_at).as_hours() / 24;
    let days_used = now.min(task.budget.expires_at).duration_since(task.created_at).as_hours() / 24;
    TaskSummary {
        id: task.id.to_string(),
        member: member_label(task),
        email: task.member.email.as_ref().map(ToString::to_string),
        task_type: type_label(&task.task_type),
        status,
        status_class,
        trigger: trigger_label(&code(&task.trigger_type)),
        goal: task.goal.clone(),
        confidence: task.confidence,
        touch: touch_label(task),
        outcome: task.outcome.as_deref().map(words),
        outcome_reason: task.outcome_reason.as_deref().map(words),
        attributed_value: task.attributed_value.map(money),
        provisional: task.provisional,
        created: when(task.created_at, tz),
        next_action: task.next_action_at.map(|t| when(t, tz)),
        mode: crate::plans::mode_badge(task),
        bars: vec![
            Bar {
                label: "messages",
                used: i64::from(task.budget.messages_used),
                max: i64::from(task.budget.messages_max),
            },
            Bar {
                label: "turns",
                used: i64::from(task.budget.turns_used),
                max: i64::from(task.budget.turns_max),
            },
            Bar {
                label: "days",
                used: days_used.max(0),
                max: days_total.max(1),
            },
        ],
    }
}

/// The escalation card of an escalated task (`None` for any other).
pub fn escalation_card(task: &Task, tz: &TimeZone) -> Option<EscalationCard> {
    if task.status != openloop_core::task::TaskStatus::Escalated {
        return None;
    }
    let e = task.escalation.as_ref();
    let def = openloop_core::task::task_type::definition(&task.task_type);
    Some(EscalationCard {
        id: task.id.to_string(),
        member: member_label(task),
        task_type: type_label(&task.task_type),
        at: when(e.map_or(task.updated_at, |e| e.blocked_at), tz),
        blocked_by: e.map_or_else(|| "the system".to_owned(), |e| e.blocked_by.clone()),
        kind: task.outcome_reason.as_deref().map_or_else(|| "escalated".to_owned(), words),
        // The summary in words; an escalation stored before summaries kept its words in `reason`.
        reason: e
            .map(|e| {
                if e.summary.is_empty() {
                    e.reason.clone()
                } else {
                    e.summary.clone()
                }
            })
            .unwrap_or_default(),
        member_words: e
            .map(|e| {
                let said: Vec<String> = e
                    .conversation_snapshot
                    .iter()
                    .filter(|m| m.role == openloop_core::task::Role::Member)
                    .map(|m| m.content.clone())
                    .collect();
                if said.is_empty() {
                    e.member_words.iter().cloned().collect()
                } else {
                    said
                }
            })
            .unwrap_or_default(),
        question: e.and_then(|e| e.question.clone()),
        draft_reply: e.and_then(|e| e.draft_reply.clone()),
        last_draft: e.filter(|e| e.draft_reply.is_none()).and_then(|e| e.last_draft.clone()),
        last_draft_heading: e
            .map(|e| openloop_core::task::escalation::last_draft_heading(e, task))
            .unwrap_or_default(),
        next_step: e.map(|e| e.suggested_next_step.clone()).unwrap_or_default(),
        suggested_actions: e.map(|e| e.suggested_actions.clone()).unwrap_or_default(),
        outcomes: def.goal.outcomes.iter().map(|o| (o.code, o.label)).collect(),
        mode: crate::plans::mode_badge(task),
    })
}

pub fn log_item(entry: &openloop_core::task::LogEntry, tz: &TimeZone) -> LogItem {
    LogItem {
        at: when(entry.at, tz),
        from: entry.from_status.map(|s| status_badge(&code(&s)).0),
        to: status_badge(&code(&entry.to_status)).0,
        reason: crate::page::reason_words(&entry.reason),
        code: entry.reason.clone(),
        detail: entry.detail.as_deref().map(|d| crate::page::detail_words(d, tz)),
    }
}

pub fn message_item(message: &openloop_core::task::ConversationMessage, tz: &TimeZone) -> MessageItem {
    MessageItem {
        at: when(message.at, tz),
        role: code(&message.role),
        content: message.content.clone(),
    }
}

pub fn feed_item(entry: &openloop_core::task::history::ActivityEntry, tz: &TimeZone) -> FeedItem {
    let (status, status_class) = status_badge(&code(&entry.entry.to_status));
    FeedItem {
        at: when(entry.entry.at, tz),
        task_id: entry.task_id.to_string(),
        member: entry.member_name.clone().unwrap_or_else(|| entry.member_id.to_string()),
        task_type: type_label(&entry.task_type),
        status,
        status_class,
        reason: crate::page::reason_words(&entry.entry.reason),
        detail: entry.entry.detail.as_deref().map(|d| crate::page::detail_words(d, tz)),
    }
}

pub fn execution_mode_explained(mode: &str) -> &'static str {
    match mode {
        "manual" => "Every message waits for your approval in the review queue.",
        "limited_auto" => "Confident tasks without escalation triggers go out on their own; the rest wait for you.",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_tells_an_edit_apart() {
        assert_eq!(draft_digest("Hi", "Body"), draft_digest("Hi", "Body"));
        assert_ne!(draft_digest("Hi", "Body"), draft_digest("Hi", "Body!"));
        assert_ne!(draft_digest("Hi\0", "Body"), draft_digest("Hi", "\0Body"));
    }
}

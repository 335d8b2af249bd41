//! Owner notifications: what the owner is told without asking, and how
//! often. Every notice is kept in the account's notification feed (`GET /api/v1/notifications`);
//! e-mail to the owner is rationed, because an owner who gets thirty mails a day reads none.
//!
//! - Notices that need the owner's hand now (an escalation: a question, hostility, low
//!   confidence, a spent budget…) are mailed at once and never held back.
//! - The rest are batchable: each kind has a daily budget in the account's local day, and what
//!   fits is collected into one digest mail sent at fixed slots of the send window, at most
//!   every [`limits::OWNER_DIGEST_EVERY`]. Past the budget a notice stays in the feed only.
//! - The daily digest (once a local day, from the window's opening) summarises yesterday and
//!   what waits for the owner now; it leaves with the first digest mail of its day.
//! - An owner without `owner_email`, or with `owner_notification_channel: dashboard_only`,
//!   gets the feed alone.
//! - The account's kill switch stops outreach to members, never the owner's
//!   notices: a paused gym's owner needs to hear about escalations and opt-outs all the more.

use jiff::civil::Time;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits;
use crate::owner::account::Settings;
use crate::owner::action_link::{LinkAction, LinkItem, Links, task_actions};
use crate::task::TaskStatus;

/// What happened that the owner should know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// A task needs the owner's input.
    Escalation,
    /// A task needs the owner now: the member threatened legal action or was abusive (spec
    /// §17.1, §28.4). Mailed at once, whatever the hour.
    CriticalEscalation,
    /// An escalation left untouched for 48 hours.
    EscalationReminder,
    /// A member answered a task that is already closed.
    LateReply,
    /// A member was suppressed: a stop word, the unsubscribe link, a hard bounce or a
    /// complaint; their tasks were cancelled.
    MemberOptedOut,
    /// A message an automation task was asked to pass on (`notify_owner`, `notify_coach`).
    ActionMessage,
    /// A task waits in the review queue for the owner's approval.
    ApprovalNeeded,
    /// Something about the account itself: the AI cost warning at 80% of the day's calls, or
    /// the day's calls used up.
    SystemAlert,
    /// The day's summary.
    DailyDigest,
    /// What the agent learned without review this week, each with its undo (
    /// made once a week by the evaluation).
    LearningDigest,
    /// An owner back after a day or more away: what happened meanwhile, once.
    WhileAway,
}

/// How a review item's last call opens its title (before the member's name).
pub const LAST_CALL: &str = "Last call: ";

/// How a kind reaches the owner's inbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticePolicy {
    /// Mailed at once, never limited.
    Immediate,
    /// Collected into the next digest, at most this many a local day.
    Batched { max_per_day: u32 },
    /// Once a local day, in the first digest mail that leaves after it is made.
    Daily,
}

impl NoticeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Escalation => "escalation",
            NoticeKind::CriticalEscalation => "critical_escalation",
            NoticeKind::EscalationReminder => "escalation_reminder",
            NoticeKind::LateReply => "late_reply",
            NoticeKind::MemberOptedOut => "member_opted_out",
            NoticeKind::ActionMessage => "action_message",
            NoticeKind::ApprovalNeeded => "approval_needed",
            NoticeKind::SystemAlert => "system_alert",
            NoticeKind::DailyDigest => "daily_digest",
            NoticeKind::LearningDigest => "learning_digest",
            NoticeKind::WhileAway => "while_away",
        }
    }

    /// The decisions a mail about a task offers with this notice: a review item's or an
    /// escalation's; nothing for a notice that asks for none.
    pub fn actions(self) -> &'static [LinkAction] {
        match self {
            NoticeKind::ApprovalNeeded => task_actions(TaskStatus::PendingReview),
            NoticeKind::Escalation | NoticeKind::CriticalEscalation | NoticeKind::EscalationReminder => task_actions(TaskStatus::Escalated),
            _ => &[],
        }
    }

    /// Critical notices are never held back, not even by the owner's quiet hours.
    pub fn is_critical(self) -> bool {
        matches!(self, NoticeKind::CriticalEscalation)
    }

    pub fn policy(self) -> NoticePolicy {
        match self {
            NoticeKind::Escalation
            | NoticeKind::CriticalEscalation
            | NoticeKind::SystemAlert
            | NoticeKind::LearningDigest
            | NoticeKind::WhileAway => NoticePolicy::Immediate,
            NoticeKind::DailyDigest => NoticePolicy::Daily,
            NoticeKind::ApprovalNeeded => NoticePolicy::Batched {
                max_per_day: limits::OWNER_APPROVAL_NOTICES_PER_DAY,
            },
            NoticeKind::EscalationReminder => NoticePolicy::Batched {
                max_per_day: limits::ESCALATION_REMINDERS_PER_DAY,
            },
            NoticeKind::LateReply => NoticePolicy::Batched {
                max_per_day: limits::OWNER_LATE_REPLY_NOTICES_PER_DAY,
            },
            NoticeKind::MemberOptedOut => NoticePolicy::Batched {
                max_per_day: limits::OWNER_OPT_OUT_NOTICES_PER_DAY,
            },
            NoticeKind::ActionMessage => NoticePolicy::Batched {
                max_per_day: limits::OWNER_ACTION_NOTICES_PER_DAY,
            },
        }
    }
}

/// Where the owner was (or will be) told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoticeDelivery {
    /// Mailed on its own, at once.
    Email,
    /// In the digest mail at `digest_at` (or already sent in it).
    Digest,
    /// In the feed only: the owner has no address or chose the dashboard.
    Dashboard,
    /// In the feed only: the kind's daily e-mail budget was spent.
    OverBudget,
}

/// One notice of the feed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OwnerNotice {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    pub at: Timestamp,
    /// Stored as `notice_kind`: the table's items already use `kind` for the entity type.
    #[serde(rename = "notice_kind")]
    pub kind: NoticeKind,
    pub task_id: Option<TaskId>,
    pub member_id: Option<MemberId>,
    /// One line for a subject or a list.
    pub title: String,
    pub detail: String,
    pub delivery: NoticeDelivery,
    /// While waiting for its digest: when the digest goes out. `None` once sent (or when the
    /// notice is not batched).
    pub digest_at: Option<Timestamp>,
}

/// How the owner wants to be told: `email_and_sms` also texts critical
/// escalations to `owner_phone`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NotificationChannel {
    #[default]
    Email,
    DashboardOnly,
    EmailAndSms,
}

impl NotificationChannel {
    /// Whether notices are mailed.
    pub fn mails(self) -> bool {
        matches!(self, Self::Email | Self::EmailAndSms)
    }
}

/// The next digest slot at or after `now`: slots start at the send window's opening and
/// repeat every [`limits::OWNER_DIGEST_EVERY`] while the window is open, in the account's
/// time zone; after the last one of a day, the first one of the next.
pub fn next_digest_slot(settings: &Settings, now: Timestamp) -> Timestamp {
    let tz = settings.time_zone();
    let today = now.to_zoned(tz.clone()).date();
    let every = limits::OWNER_DIGEST_EVERY;
    let start = i8::try_from(settings.send_window_start).unwrap_or(8);
    let window = SignedDuration::from_hours(i64::from(settings.send_window_end) - i64::from(settings.send_window_start));
    for day in [Some(today), today.tomorrow().ok()].into_iter().flatten() {
        let Ok(opens) = day.to_datetime(Time::constant(start, 0, 0, 0)).to_zoned(tz.clone()) else {
            continue;
        };
        let opens = opens.timestamp();
        let mut slot = opens;
        while slot.duration_since(opens) < window {
            if slot >= now {
                return slot;
            }
            slot += every;
        }
    }
    now + every
}

/// The action links' lines under `notice` in a mail (none when it asks for no decision).
pub fn notice_links(notice: &OwnerNotice, links: Links) -> String {
    match notice.task_id {
        Some(task) if !notice.kind.actions().is_empty() => links(LinkItem::Task(task), notice.kind.actions()),
        _ => String::new(),
    }
}

/// Whether `notice` asks the owner for a decision its mail carries links for.
fn asks(notice: &OwnerNotice) -> bool {
    !notice.kind.actions().is_empty() && notice.task_id.is_some()
}

/// Whether a digest of `notices` asks for a decision (the brief's items do): a reply to it
/// is read.
pub fn digest_asks(notices: &[OwnerNotice]) -> bool {
    notices.iter().any(|n| asks(n) || n.kind == NoticeKind::DailyDigest)
}

/// Subject and text of a digest of `notices` (oldest first). `awaiting_review`: how many
/// tasks wait in the review queue as the mail leaves, when the digest names some of them.
/// Each item that asks for a decision carries its action links.
///
/// A daily summary opens the mail; tasks awaiting review are one list under their count
/// ("3 tasks need your review"), not one line each among the rest; the rest follow.
pub fn digest_mail(
    business: &str,
    notices: &[OwnerNotice],
    awaiting_review: Option<usize>,
    tz: &jiff::tz::TimeZone,
    links: Links,
) -> (String, String) {
    let of = |kind: NoticeKind| notices.iter().filter(move |n| n.kind == kind);
    let daily: Vec<&OwnerNotice> = of(NoticeKind::DailyDigest).collect();
    let approvals: Vec<&OwnerNotice> = of(NoticeKind::ApprovalNeeded).collect();
    let rest: Vec<&OwnerNotice> = notices
        .iter()
        .filter(|n| !matches!(n.kind, NoticeKind::DailyDigest | NoticeKind::ApprovalNeeded))
        .collect();
    let waiting = awaiting_review.unwrap_or(0).max(approvals.len());
    let tasks = |n: usize| {
        if n == 1 {
            "1 task needs".to_owned()
        } else {
            format!("{n} tasks need")
        }
    };
    let subject = match (daily.first(), approvals.is_empty(), rest.as_slice()) {
        (Some(d), _, _) => format!("{business}: {}", d.title),
        (None, false, []) => format!("{business}: {} your review", tasks(waiting)),
        (None, true, [one]) => format!("{business}: {}", one.title),
        _ => format!("{business}: {} updates from your agent", approvals.len() + rest.len()),
    };
    let mut text = String::new();
    for d in &daily {
        text.push_str(&format!("{}\n\n", d.detail));
    }
    if !approvals.is_empty() {
        text.push_str(&format!("{} your review:\n", tasks(waiting)));
        for a in &approvals {
            text.push_str(&format!(
                "- {}\n  {}\n{}",
                a.title,
                a.detail.replace('\n', "\n  "),
                notice_links(a, links)
            ));
        }
        if waiting > approvals.len() {
            text.push_str(&format!("…and {} more in the review queue.\n", waiting - approvals.len()));
        }
        text.push('\n');
    }
    if !rest.is_empty() {
        text.push_str("Here is what happened since the last summary:\n");
        for notice in &rest {
            text.push_str(&format!(
                "\n- {} ({})\n  {}\n{}",
                notice.title,
                when(notice.at, tz),
                notice.detail,
                notice_links(notice, links)
            ));
        }
    }
    // The brief says it of its own items; the rest of a digest says it here.
    let named = approvals
        .iter()
        .chain(&rest)
        .find(|n| asks(n))
        .and_then(|n| n.title.trim_start_matches(LAST_CALL).split_whitespace().next());
    if let Some(name) = named.filter(|_| daily.is_empty()) {
        text.push_str(&crate::owner::owner_answer::reply_hint_naming(Some(name)));
    }
    (subject, text)
}

/// When a notice was made, as the owner reads a time: "Tue, Mar 10 at 09:05" in their time zone.
pub fn when(at: Timestamp, tz: &jiff::tz::TimeZone) -> String {
    at.to_zoned(tz.clone()).strftime("%a, %b %-d at %H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn digests_go_out_at_four_hour_slots_inside_the_send_window() {
        // New York, window 8–20: slots at 08:00, 12:00 and 16:00 local (13:00, 17:00, 21:00 UTC in winter).
        let settings = Settings::defaults("America/New_York".into());
        assert_eq!(next_digest_slot(&settings, at("2026-11-02T14:10:00Z")), at("2026-11-02T17:00:00Z"));
        assert_eq!(next_digest_slot(&settings, at("2026-11-02T17:00:00Z")), at("2026-11-02T17:00:00Z"));
        assert_eq!(next_digest_slot(&settings, at("2026-11-02T21:30:00Z")), at("2026-11-03T13:00:00Z"));
        assert_eq!(next_digest_slot(&settings, at("2026-11-02T06:00:00Z")), at("2026-11-02T13:00:00Z"));
    }

    #[test]
    fn escalations_are_immediate_and_the_rest_are_rationed() {
        assert_eq!(NoticeKind::Escalation.policy(), NoticePolicy::Immediate);
        assert_eq!(NoticeKind::SystemAlert.policy(), NoticePolicy::Immediate);
        assert_eq!(NoticeKind::DailyDigest.policy(), NoticePolicy::Daily);
        assert_eq!(
            NoticeKind::ApprovalNeeded.policy(),
            NoticePolicy::Batched {
                max_per_day: limits::OWNER_APPROVAL_NOTICES_PER_DAY
            },
            "spec §35.2: five a day, batched"
        );
        for kind in [NoticeKind::EscalationReminder, NoticeKind::LateReply, NoticeKind::MemberOptedOut] {
            assert!(
                matches!(kind.policy(), NoticePolicy::Batched { max_per_day } if max_per_day > 0),
                "{kind:?}"
            );
        }
    }

    fn notice(kind: NoticeKind, title: &str) -> OwnerNotice {
        OwnerNotice {
            id: ulid::Ulid::new(),
            account_id: AccountId::generate(at("2026-11-02T14:00:00Z")),
            at: at("2026-11-02T14:00:00Z"),
            kind,
            task_id: None,
            member_id: None,
            title: title.into(),
            detail: format!("about {title}"),
            delivery: NoticeDelivery::Digest,
            digest_at: None,
        }
    }

    fn no_links(_: LinkItem, _: &[LinkAction]) -> String {
        String::new()
    }

    #[test]
    fn a_digest_carries_each_decisions_links_under_its_item_and_none_elsewhere() {
        let task = TaskId::generate(at("2026-11-02T14:00:00Z"));
        let mut approval = notice(NoticeKind::ApprovalNeeded, "Sam: churn risk");
        approval.task_id = Some(task);
        let mut opted_out = notice(NoticeKind::MemberOptedOut, "Lee opted out");
        opted_out.task_id = Some(TaskId::generate(at("2026-11-02T14:00:00Z")));
        let links = |item: LinkItem, actions: &[LinkAction]| {
            actions
                .iter()
                .map(|a| format!("  {}: <{item:?} {}>\n", a.label(), a.as_str()))
                .collect()
        };
        let (_, text) = digest_mail("Renegade", &[approval, opted_out], Some(1), &jiff::tz::TimeZone::UTC, &links);
        let expected = format!("  Send it as drafted: <Task({task:?}) approve>\n  Skip it: <Task({task:?}) skip>\n");
        assert!(text.contains(&expected), "{text}");
        assert_eq!(text.matches("Skip it").count(), 1, "an opt-out asks nothing: {text}");
    }

    #[test]
    fn a_digest_counts_the_review_queue_in_one_list_and_opens_with_the_daily_summary() {
        let approvals = [
            notice(NoticeKind::ApprovalNeeded, "Sam: churn risk"),
            notice(NoticeKind::ApprovalNeeded, "Pat: win back"),
        ];
        let (subject, text) = digest_mail("Renegade", &approvals, Some(7), &jiff::tz::TimeZone::UTC, &no_links);
        assert_eq!(subject, "Renegade: 7 tasks need your review");
        assert!(text.starts_with("7 tasks need your review:\n- Sam: churn risk"), "{text}");
        assert!(text.contains("…and 5 more in the review queue."), "{text}");

        let mut mixed = vec![notice(NoticeKind::MemberOptedOut, "Lee opted out")];
        mixed.extend(approvals.iter().cloned());
        mixed.push(notice(NoticeKind::DailyDigest, "your daily summary"));
        let (subject, text) = digest_mail("Renegade", &mixed, Some(2), &jiff::tz::TimeZone::UTC, &no_links);
        assert_eq!(subject, "Renegade: your daily summary");
        let (summary, approvals_at, rest) = (
            text.find("about your daily summary"),
            text.find("2 tasks need your review"),
            text.find("Lee opted out"),
        );
        assert!(summary < approvals_at && approvals_at < rest, "{text}");
        assert!(!text.contains("more in the review queue"), "{text}");
    }
}

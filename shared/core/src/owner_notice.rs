//! Owner notifications (spec §35, §17, §22): what the owner is told without asking, and how
//! often. Every notice is kept in the account's notification feed (`GET /api/v1/notifications`);
//! e-mail to the owner is rationed, because an owner who gets thirty mails a day reads none.
//!
//! - Notices that need the owner's hand now (an escalation: a question, hostility, low
//!   confidence, a spent budget…) are mailed at once and never held back.
//! - The rest are batchable: each kind has a daily budget in the account's local day, and what
//!   fits is collected into one digest mail sent at fixed slots of the send window, at most
//!   every [`limits::OWNER_DIGEST_EVERY`]. Past the budget a notice stays in the feed only.
//! - An owner without `owner_email`, or with `owner_notification_channel: dashboard_only`,
//!   gets the feed alone.

use jiff::civil::Time;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::account::Settings;
use crate::ids::{AccountId, MemberId, TaskId};
use crate::limits;

/// What happened that the owner should know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// A task needs the owner's input (spec §17.2).
    Escalation,
    /// An escalation left untouched for 48 hours (spec §17.5).
    EscalationReminder,
    /// A member answered a task that is already closed (spec §16).
    LateReply,
    /// A member was suppressed: a stop word, the unsubscribe link, a hard bounce or a
    /// complaint (spec §22.3); their tasks were cancelled.
    MemberOptedOut,
    /// A message an automation task was asked to pass on (`notify_owner`, `notify_coach`).
    ActionMessage,
}

/// How a kind reaches the owner's inbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticePolicy {
    /// Mailed at once, never limited.
    Immediate,
    /// Collected into the next digest, at most this many a local day.
    Batched { max_per_day: u32 },
}

impl NoticeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Escalation => "escalation",
            NoticeKind::EscalationReminder => "escalation_reminder",
            NoticeKind::LateReply => "late_reply",
            NoticeKind::MemberOptedOut => "member_opted_out",
            NoticeKind::ActionMessage => "action_message",
        }
    }

    pub fn policy(self) -> NoticePolicy {
        match self {
            NoticeKind::Escalation => NoticePolicy::Immediate,
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

/// How the owner wants to be told (spec §35.3; SMS is not offered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationChannel {
    #[default]
    Email,
    DashboardOnly,
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

/// Subject and text of a digest of `notices` (oldest first).
pub fn digest_mail(business: &str, notices: &[OwnerNotice]) -> (String, String) {
    let subject = match notices.len() {
        1 => format!("{business}: {}", notices[0].title),
        n => format!("{business}: {n} updates from your agent"),
    };
    let mut text = String::from("Here is what happened since the last summary:\n");
    for notice in notices {
        text.push_str(&format!("\n- {} ({})\n  {}\n", notice.title, notice.at, notice.detail));
    }
    (subject, text)
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
        for kind in [NoticeKind::EscalationReminder, NoticeKind::LateReply, NoticeKind::MemberOptedOut] {
            assert!(
                matches!(kind.policy(), NoticePolicy::Batched { max_per_day } if max_per_day > 0),
                "{kind:?}"
            );
        }
    }
}

//! Interaction outcomes: the learning record of every closed task (spec 003, "Signal
//! Collection"), with its privacy split.
//!
//! A record is derived from the closed task alone (and the account's time zone and business
//! type), so the store writes it inside the very transaction that closes the task — it cannot
//! be lost, and every path that closes a task (owner, worker, signal, attribution) writes it
//! without knowing about it. A later revision of the closed task (attribution confirming,
//! downgrading or re-valuing it) rewrites the same record, so it always shows the outcome as
//! it stands.
//!
//! The split is a type boundary, not a convention: [`SharedOutcome`] holds only what may be
//! read across tenants — codes, counts, buckets, no ids, no text, no exact times — and
//! [`PrivateOutcome`] holds what never leaves the account (the member, the task, the message
//! that was sent). Cross-tenant readers get `SharedOutcome`s and nothing else.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits::LEARNING_VALUE_ROUNDING;
use crate::owner::account::Settings;
use crate::task::task_type;
use crate::task::{Task, TaskStatus};

/// What may cross tenants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedOutcome {
    pub task_type: String,
    /// `communication`, `staff_todo`, `research`… from the registry.
    pub category: String,
    pub agent: String,
    /// `completed` or `cancelled`.
    pub status: TaskStatus,
    /// The outcome code (from the task type's list), if one was set.
    pub outcome: Option<String>,
    /// The system's reason code for the close (never owner text).
    pub outcome_reason: Option<String>,
    /// A verbal commitment still waiting for its signal.
    pub provisional: bool,
    /// Messages sent, member turns, AI calls.
    pub touches: u32,
    pub turns: u32,
    pub ai_calls: u32,
    /// Whole days from the first touch (or creation, if nothing was sent) to the close.
    pub days_to_outcome: i64,
    /// Whole hours between creation and the first touch (review and gates), if one was made.
    pub hours_to_first_touch: Option<i64>,
    /// The account's local hour (0–23) and weekday (1 = Monday) of the first touch.
    pub first_touch_hour: Option<i8>,
    pub first_touch_weekday: Option<i8>,
    /// Characters of the first message's body.
    pub message_length: Option<usize>,
    /// The owner edited the first message before it was sent (spec 003, "Owner Edit
    /// Signal"): only the fact crosses tenants, never the edit.
    #[serde(default)]
    pub owner_edited: bool,
    /// Confidence at creation, rounded down to a multiple of 10.
    pub confidence_bucket: u8,
    pub trigger: String,
    pub execution_mode: String,
    /// Attributed value rounded to the nearest [`LEARNING_VALUE_ROUNDING`] dollars.
    pub attributed_value: Option<f64>,
    /// The account's business type at the close, as a tag from a fixed list
    /// ([`business_type_tag`]), never the owner's free text.
    pub business_type: Option<String>,
    /// For a task the risk scan opened: whole days between the member's last check-in and
    /// the flag (what calibration compares with what happened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagged_gap_days: Option<i64>,
    /// A keyed pseudonym of the contributing account, the same on all its
    /// records, so a pattern's contributing businesses can be counted without naming any: an
    /// HMAC under a secret of the account's own, so no one holding only ids can link it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contributor: Option<String>,
    /// The first message's subject line by its style ([`subject_style`]): `question`,
    /// `personal` (it names the member) or `plain` — never the words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_style: Option<String>,
    /// Whose template the first message was written from: `default` (shipped) or `owner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The holdout group of a task that went through the draw (the pooled lift counts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<crate::task::holdout::Arm>,
    /// For a win-back the risk scan opened: whole days the member had been away (since their
    /// last check-in) when they cancelled — what calibration asks of members who cancelled
    /// without ever being flagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent_days_at_cancel: Option<i64>,
}

/// What never leaves the account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivateOutcome {
    pub account_id: AccountId,
    pub task_id: TaskId,
    pub member_id: MemberId,
    /// The first message as it was approved (subject and body), if there was one.
    pub message_subject: Option<String>,
    pub message_sent: Option<String>,
    /// Our Message-IDs of the mails the task sent, oldest first.
    pub message_ids: Vec<String>,
    pub created_at: Timestamp,
    pub resolved_at: Timestamp,
    pub attributed_value: Option<f64>,
    /// The kinds of change the owner made to the agent's draft when approving it (never
    /// crosses tenants: it comes from the texts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<crate::learning::edit::EditKind>,
    /// The owner's latest rating of the task, with its reason when thumbs-down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<crate::task::feedback::OwnerFeedback>,
    /// The template the first message was written from, with its version (`default`, or
    /// `owner@{when the owner last changed it}`): the account's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_version: Option<String>,
    /// The owner's edits of the task's plan and instructions for it (spec §27.4's
    /// `plan_edit` and `instruction`), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_feedback: Vec<crate::task::plan_edit::PlanFeedback>,
}

/// One closed task's learning record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InteractionOutcome {
    pub shared: SharedOutcome,
    pub private: PrivateOutcome,
}

impl InteractionOutcome {
    /// The record with nothing the member or the owner wrote: what an erased member's closed
    /// task leaves for the evaluator's counts (its shared part holds no text already).
    pub fn without_texts(&self) -> Self {
        let mut kept = self.clone();
        kept.private.message_subject = None;
        kept.private.message_sent = None;
        kept.private.message_ids.clear();
        kept.private.feedback = None;
        kept.private.plan_feedback.clear();
        kept
    }

    /// The record of a closed task, or `None` for a task that is still open. `settings` are
    /// the account's (time zone for the local hour, the business type); without them the
    /// hour is read in UTC and the business type is unknown.
    pub fn of(task: &Task, settings: Option<&Settings>) -> Option<Self> {
        if !task.status.is_terminal() {
            return None;
        }
        let resolved_at = task.resolved_at.unwrap_or(task.updated_at);
        let first_touch = task.execution_started_at.filter(|_| task.touch > 0);
        let tz = settings.map_or(TimeZone::UTC, Settings::time_zone);
        let local = first_touch.map(|t| t.to_zoned(tz.clone()));
        let def = task_type::definition(&task.task_type);
        let started = first_touch.unwrap_or(task.created_at);
        let shared = SharedOutcome {
            task_type: task.task_type.clone(),
            category: serde_plain(&def.category),
            agent: def.agent.to_owned(),
            status: task.status,
            outcome: task.outcome.clone(),
            outcome_reason: task.outcome_reason.clone(),
            provisional: task.provisional,
            touches: task.touch,
            turns: task.budget.turns_used,
            ai_calls: task.ai_calls,
            days_to_outcome: resolved_at.duration_since(started).as_hours().max(0) / 24,
            hours_to_first_touch: first_touch.map(|t| t.duration_since(task.created_at).as_hours().max(0)),
            first_touch_hour: local.as_ref().map(jiff::Zoned::hour),
            first_touch_weekday: local.as_ref().map(|z| z.weekday().to_monday_one_offset()),
            message_length: task.draft.as_ref().filter(|_| task.touch > 0).map(|d| d.body.chars().count()),
            owner_edited: task.owner_edited && task.touch > 0,
            confidence_bucket: task.confidence / 10 * 10,
            trigger: serde_plain(&task.trigger_type),
            execution_mode: serde_plain(&task.controls.mode),
            attributed_value: task.attributed_value.map(round_value),
            business_type: settings
                .and_then(|s| s.profile.business_type.as_deref())
                .map(|t| business_type_tag(t).to_owned()),
            flagged_gap_days: flagged_gap_days(task),
            contributor: None,
            subject_style: first_subject(task).map(|subject| subject_style(subject, task.member.name.as_deref()).to_owned()),
            template: template_version(task).map(|v| template_of(v).to_owned()),
            arm: task.holdout.map(|h| h.arm),
            absent_days_at_cancel: absent_days_at_cancel(task),
        };
        let sent = task.touch > 0;
        let private = PrivateOutcome {
            account_id: task.account_id,
            task_id: task.id,
            member_id: task.member.id.clone(),
            message_subject: task.draft.as_ref().filter(|_| sent).map(|d| d.subject.clone()),
            message_sent: task.draft.as_ref().filter(|_| sent).map(|d| d.body.clone()),
            message_ids: task.thread.iter().map(|m| m.message_id.clone()).collect(),
            created_at: task.created_at,
            resolved_at,
            attributed_value: task.attributed_value,
            edits: match (&task.original_draft, &task.draft) {
                (Some(original), Some(approved)) => crate::learning::edit::classify(original, approved),
                _ => Vec::new(),
            },
            feedback: task.feedback.clone(),
            template_version: template_version(task).map(str::to_owned),
            plan_feedback: task.controls.plan.as_ref().map(|p| p.feedback.clone()).unwrap_or_default(),
        };
        Some(Self { shared, private })
    }

    /// The record with its contributor's pseudonym, keyed by `key` (the account's own secret).
    pub fn contributed_by(mut self, key: &[u8]) -> Self {
        self.shared.contributor = Some(contributor_pseudonym(key));
        self
    }

    /// The month (`YYYY-MM`, UTC) the record belongs to in the cross-tenant set.
    pub fn month(&self) -> String {
        month_of(self.private.resolved_at)
    }
}

/// The business types a cross-tenant record may name (a tag from a fixed
/// list, never the owner's words).
pub const BUSINESS_TYPE_TAGS: [&str; 7] = [
    "crossfit_gym",
    "yoga_studio",
    "pilates_studio",
    "martial_arts",
    "boutique_fitness",
    "fitness_gym",
    "other",
];

/// The tag of an owner's free-text business type: the first kind its words name, else `other`.
pub fn business_type_tag(free_text: &str) -> &'static str {
    let text = free_text.to_lowercase();
    let names = |words: &[&str]| words.iter().any(|w| text.contains(w));
    if names(&["crossfit", "cross fit"]) {
        "crossfit_gym"
    } else if names(&["yoga"]) {
        "yoga_studio"
    } else if names(&["pilates", "barre"]) {
        "pilates_studio"
    } else if names(&[
        "jiu",
        "bjj",
        "martial",
        "karate",
        "judo",
        "mma",
        "boxing",
        "kickboxing",
        "taekwondo",
        "muay",
    ]) {
        "martial_arts"
    } else if names(&["spin", "cycling", "hiit", "bootcamp", "boot camp", "dance", "boutique"]) {
        "boutique_fitness"
    } else if names(&["gym", "fitness", "strength", "box", "training", "health club"]) {
        "fitness_gym"
    } else {
        "other"
    }
}

/// The keyed pseudonym of the account whose secret is `key`: the same on all its records, and
/// computable only by who holds the secret (the monthly evaluation, to credit contributors).
pub fn contributor_pseudonym(key: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
    mac.update(b"openloop/learning-contributor/v1");
    let digest = mac.finalize().into_bytes();
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}

/// Days from the member's last check-in to the risk scan's flag, for a task the scan opened
/// (its trigger context says `"source": "risk_scan"` and names `last_checkin_at`).
fn flagged_gap_days(task: &Task) -> Option<i64> {
    let context = &task.trigger_context;
    if context.get("source").and_then(serde_json::Value::as_str) != Some("risk_scan") {
        return None;
    }
    let last: Timestamp = context.get("last_checkin_at")?.as_str()?.parse().ok()?;
    Some(task.created_at.duration_since(last).as_hours().max(0) / 24)
}

/// The subject of the first message, if one was sent.
fn first_subject(task: &Task) -> Option<&str> {
    if task.touch == 0 {
        return None;
    }
    task.thread_subject
        .as_deref()
        .or(task.draft.as_ref().map(|d| d.subject.as_str()))
        .filter(|s| !s.trim().is_empty())
}

/// The template the first message was written from, if one was sent.
fn template_version(task: &Task) -> Option<&str> {
    task.message_template.as_deref().filter(|_| task.touch > 0)
}

/// `default` or `owner`, of a template version.
pub fn template_of(version: &str) -> &'static str {
    if version.starts_with(crate::conversation::messages::OWNER_TEMPLATE) {
        crate::conversation::messages::OWNER_TEMPLATE
    } else {
        crate::conversation::messages::DEFAULT_TEMPLATE
    }
}

/// The style of a subject line: `question` when it asks one, else `personal` when it names
/// the member (their first name, as a word), else `plain`.
pub fn subject_style(subject: &str, member_name: Option<&str>) -> &'static str {
    if subject.contains('?') {
        return "question";
    }
    let first = member_name.and_then(|n| n.split_whitespace().next()).map(str::to_lowercase);
    let names = first.is_some_and(|first| {
        first.chars().count() >= 2
            && subject
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
                .any(|word| word == first)
    });
    if names { "personal" } else { "plain" }
}

/// Days from the member's last check-in to their cancellation, for a win-back the scan
/// opened (its context names both).
fn absent_days_at_cancel(task: &Task) -> Option<i64> {
    let context = &task.trigger_context;
    if task.task_type != "win_back" || context.get("source").and_then(serde_json::Value::as_str) != Some("risk_scan") {
        return None;
    }
    let time = |key: &str| context.get(key)?.as_str()?.parse::<Timestamp>().ok();
    let (last, cancelled) = (time("last_checkin_at")?, time("cancelled_at")?);
    Some(cancelled.duration_since(last).as_hours().max(0) / 24)
}

/// `YYYY-MM` of a time, in UTC: how cross-tenant records are grouped.
pub fn month_of(at: Timestamp) -> String {
    at.to_zoned(TimeZone::UTC).strftime("%Y-%m").to_string()
}

/// Round to the nearest [`LEARNING_VALUE_ROUNDING`] (spec 003: values cross tenants only
/// rounded).
fn round_value(v: f64) -> f64 {
    (v / LEARNING_VALUE_ROUNDING).round() * LEARNING_VALUE_ROUNDING
}

/// A unit-like enum's serde name (`"cron_analysis"`), for the record's plain-text codes.
fn serde_plain<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::ThreadMessage;
    use crate::task::reason::Reason;
    use crate::task::transition::{Why, transition};
    use crate::testing::sample_task;
    use jiff::SignedDuration;

    fn hours(n: i64) -> SignedDuration {
        SignedDuration::from_hours(n)
    }

    fn closed_after_two_touches() -> Task {
        let mut task = sample_task(TaskStatus::Waiting);
        task.execution_started_at = Some(task.created_at + hours(2));
        task.touch = 2;
        task.budget.turns_used = 1;
        task.attributed_value = Some(174.0);
        task.thread.push(ThreadMessage {
            message_id: "01abc@mail.example".into(),
            provider_message_id: None,
        });
        let now = task.created_at + hours(2 + 24 * 3 + 5);
        let (closed, _) = transition(
            &task,
            TaskStatus::Completed,
            now,
            Why::new(Reason::GoalSignalPaymentSucceeded).outcome("recovered"),
        )
        .expect("valid");
        closed
    }

    #[test]
    fn an_open_task_has_no_record() {
        assert_eq!(InteractionOutcome::of(&sample_task(TaskStatus::Waiting), None), None);
    }

    #[test]
    fn the_shared_part_carries_codes_counts_and_buckets_in_the_accounts_time() {
        let task = closed_after_two_touches();
        let mut settings = Settings::defaults("America/New_York".into());
        settings.profile.business_type = Some("crossfit box".into());
        let record = InteractionOutcome::of(&task, Some(&settings)).expect("closed");
        let shared = &record.shared;
        assert_eq!(
            (shared.outcome.as_deref(), shared.touches, shared.turns, shared.days_to_outcome),
            (Some("recovered"), 2, 1, 3)
        );
        // First touch at 16:00Z on Monday 2026-11-02 is 11:00 in New York.
        assert_eq!((shared.first_touch_hour, shared.first_touch_weekday), (Some(11), Some(1)));
        assert_eq!((shared.hours_to_first_touch, shared.confidence_bucket), (Some(2), 90));
        assert_eq!(shared.attributed_value, Some(150.0), "value rounded to the nearest $50");
        assert_eq!(
            shared.business_type.as_deref(),
            Some("crossfit_gym"),
            "a tag, not the owner's words"
        );
        assert_eq!(record.month(), "2026-11");
    }

    #[test]
    fn ids_and_texts_stay_in_the_private_part() {
        let task = closed_after_two_touches();
        let record = InteractionOutcome::of(&task, None).expect("closed");
        let shared = serde_json::to_string(&record.shared).expect("json");
        for secret in [
            task.id.to_string(),
            task.account_id.to_string(),
            task.member.id.as_str().to_owned(),
            "01abc@mail.example".to_owned(),
            "did not go through".to_owned(),
            "Quick note".to_owned(),
        ] {
            assert!(!shared.contains(&secret), "{secret} leaked into {shared}");
        }
        assert_eq!(record.private.message_ids, vec!["01abc@mail.example".to_owned()]);
        assert_eq!(record.private.attributed_value, Some(174.0));
        assert!(
            record
                .private
                .message_sent
                .as_deref()
                .is_some_and(|m| m.contains("did not go through"))
        );
    }

    #[test]
    fn an_owner_edit_of_the_sent_message_is_recorded_as_a_fact_only() {
        let mut task = closed_after_two_touches();
        assert!(!InteractionOutcome::of(&task, None).expect("closed").shared.owner_edited);
        task.owner_edited = true;
        let record = InteractionOutcome::of(&task, None).expect("closed");
        assert!(record.shared.owner_edited, "the sent message was the owner's edit");
        let mut unsent = sample_task(TaskStatus::Ready);
        unsent.owner_edited = true;
        let (cancelled, _) = transition(
            &unsent,
            TaskStatus::Cancelled,
            unsent.created_at + hours(1),
            Why::new(Reason::OwnerCancelled).outcome("cancelled"),
        )
        .expect("valid");
        assert!(
            !InteractionOutcome::of(&cancelled, None).expect("closed").shared.owner_edited,
            "an edited draft that never went out was not sent edited"
        );
    }

    #[test]
    fn a_task_closed_before_any_touch_has_no_message_or_timing() {
        let task = sample_task(TaskStatus::PendingReview);
        let (skipped, _) = transition(
            &task,
            TaskStatus::Cancelled,
            task.created_at + hours(30),
            Why::new(Reason::OwnerSkipped).outcome("skipped"),
        )
        .expect("valid");
        let record = InteractionOutcome::of(&skipped, None).expect("closed");
        assert_eq!(
            (
                record.shared.first_touch_hour,
                record.shared.message_length,
                record.private.message_sent.clone()
            ),
            (None, None, None)
        );
        assert_eq!(record.shared.days_to_outcome, 1);
    }

    #[test]
    fn a_business_type_crosses_tenants_only_as_a_tag_of_the_fixed_list() {
        for (free, tag) in [
            ("CrossFit box in Leeds", "crossfit_gym"),
            ("hot yoga studio", "yoga_studio"),
            ("Brazilian Jiu-Jitsu academy", "martial_arts"),
            ("24h gym", "fitness_gym"),
            ("Dan's place, call 555-0100", "other"),
        ] {
            assert_eq!(business_type_tag(free), tag, "{free}");
            assert!(BUSINESS_TYPE_TAGS.contains(&business_type_tag(free)));
        }
    }
}

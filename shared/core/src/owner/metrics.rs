//! Daily metrics per account and the alert conditions on them (§28.4).
//!
//! The metrics are folded from the account's decision log — the activity feed, which every
//! decision already writes — by the hourly run: each run reads only the entries made since
//! the account's watermark ([`MetricsCursor::through`]) and adds them to one item per local
//! day. So the cost grows with the decisions made, never with the tasks stored, and nothing
//! is added to the transactions of the task's own path. The watermark and the additions are
//! written in one conditional transaction: overlapping runs fold each entry once.
//!
//! Rates (completion, escalation, reply, bounce…) are derived from the counts when read.

use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::limits;
use crate::owner::account::Account;
use crate::owner::alert::{Alert, Severity};
use crate::task::TaskStatus;
use crate::task::history::ActivityEntry;
use crate::task::reason::Reason;

/// One account's counts for one local day.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DailyMetrics {
    #[serde(default)]
    pub tasks_created: u32,
    #[serde(default)]
    pub tasks_completed: u32,
    #[serde(default)]
    pub tasks_cancelled: u32,
    #[serde(default)]
    pub tasks_escalated: u32,
    #[serde(default)]
    pub messages_sent: u32,
    #[serde(default)]
    pub member_replies: u32,
    /// Refused or unknown sends.
    #[serde(default)]
    pub send_failures: u32,
    #[serde(default)]
    pub bounces: u32,
    #[serde(default)]
    pub complaints: u32,
    #[serde(default)]
    pub opt_outs: u32,
    #[serde(default)]
    pub owner_approvals: u32,
    /// Approvals with an edited draft (also counted in `owner_approvals`).
    #[serde(default)]
    pub owner_edits: u32,
    #[serde(default)]
    pub owner_skips: u32,
    #[serde(default)]
    pub owner_guidance: u32,
    /// Escalations left 48 hours without an owner action.
    #[serde(default)]
    pub escalation_reminders: u32,
    /// Provisional closes on a verbal commitment, and those downgraded to `verbal_only`.
    #[serde(default)]
    pub verbal_commitments: u32,
    #[serde(default)]
    pub verbal_downgrades: u32,
    /// Late wins credited after the close (`engaged_late`).
    #[serde(default)]
    pub late_attributions: u32,
    #[serde(default)]
    pub anomalies: u32,
    /// Touches deferred because the connector could not refresh the member.
    #[serde(default)]
    pub connector_deferrals: u32,
    /// The account's AI calls that day (read from its AI counter, not folded).
    #[serde(default)]
    pub ai_calls: u32,
    /// The owner's ratings of tasks: thumbs up, thumbs down.
    #[serde(default)]
    pub feedback_up: u32,
    #[serde(default)]
    pub feedback_down: u32,
    /// Closed tasks whose outcome the owner corrected.
    #[serde(default)]
    pub outcome_corrections: u32,
}

/// The account's folding state: how far the log has been folded, lifetime totals, and which
/// alerts were raised on which local day (each at most once a day).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricsCursor {
    pub through: Option<Timestamp>,
    #[serde(default)]
    pub totals: DailyMetrics,
    #[serde(default)]
    pub alerted: BTreeMap<String, Date>,
    /// Optimistic-lock version (0: never written).
    #[serde(default)]
    pub version: u64,
}

fn ratio(part: u32, whole: u32) -> Option<f64> {
    (whole > 0).then(|| f64::from(part) / f64::from(whole))
}

impl DailyMetrics {
    /// Add one decision.
    pub fn count(&mut self, entry: &ActivityEntry) {
        let e = &entry.entry;
        let closes = e.to_status.is_terminal() && e.from_status.is_some_and(|f| !f.is_terminal());
        if e.from_status.is_none() {
            self.tasks_created += 1;
        }
        if closes && e.to_status == TaskStatus::Completed {
            self.tasks_completed += 1;
        }
        if closes && e.to_status == TaskStatus::Cancelled {
            self.tasks_cancelled += 1;
        }
        if e.to_status == TaskStatus::Escalated && e.from_status != Some(TaskStatus::Escalated) {
            self.tasks_escalated += 1;
        }
        let detail = e.detail.as_deref().unwrap_or_default();
        use Reason::*;
        // A code this build does not know (a derived one, or one from an older build) counts
        // in no column.
        let Some(reason) = Reason::parse(&e.reason) else {
            return;
        };
        match reason {
            MessageSent => self.messages_sent += 1,
            MemberReplied | MemberRepliedWhileDormant => self.member_replies += 1,
            SendOutcomeUnknown | SendRejected | SendRejectedAfterRetries => self.send_failures += 1,
            // A member-level stop names its cause: "member-level stop (bounce)".
            MemberOptedOut if detail.ends_with("(bounce)") => self.bounces += 1,
            MemberOptedOut if detail.ends_with("(complaint)") => self.complaints += 1,
            MemberOptedOut => self.opt_outs += 1,
            OwnerApproved | OwnerApprovedPlan => self.owner_approvals += 1,
            OwnerApprovedWithEdits => {
                self.owner_approvals += 1;
                self.owner_edits += 1;
            }
            OwnerSkipped => self.owner_skips += 1,
            OwnerProvidedGuidance | OwnerInstructedPlan => self.owner_guidance += 1,
            OwnerEditedPlan => self.owner_edits += 1,
            OwnerFeedbackUp => self.feedback_up += 1,
            OwnerFeedbackDown => self.feedback_down += 1,
            OwnerCorrectedOutcome => self.outcome_corrections += 1,
            EscalationReminder => self.escalation_reminders += 1,
            VerbalCommitment => self.verbal_commitments += 1,
            NoSignalAfterVerbalCommitment => self.verbal_downgrades += 1,
            GoalSignalAfterClose => self.late_attributions += 1,
            ConnectorUnavailable | ConnectorBackoff => self.connector_deferrals += 1,
            AnomalyTurnsWithoutResolution | AnomalyMemberRepliesWithoutResolution | AnomalyStuckExecuting => self.anomalies += 1,
            _ => {}
        }
    }

    /// Every count with its name, in a fixed order (for stores and metric lines).
    pub fn fields(&self) -> [(&'static str, u32); 24] {
        [
            ("tasks_created", self.tasks_created),
            ("tasks_completed", self.tasks_completed),
            ("tasks_cancelled", self.tasks_cancelled),
            ("tasks_escalated", self.tasks_escalated),
            ("messages_sent", self.messages_sent),
            ("member_replies", self.member_replies),
            ("send_failures", self.send_failures),
            ("bounces", self.bounces),
            ("complaints", self.complaints),
            ("opt_outs", self.opt_outs),
            ("owner_approvals", self.owner_approvals),
            ("owner_edits", self.owner_edits),
            ("owner_skips", self.owner_skips),
            ("owner_guidance", self.owner_guidance),
            ("escalation_reminders", self.escalation_reminders),
            ("verbal_commitments", self.verbal_commitments),
            ("verbal_downgrades", self.verbal_downgrades),
            ("late_attributions", self.late_attributions),
            ("anomalies", self.anomalies),
            ("connector_deferrals", self.connector_deferrals),
            ("ai_calls", self.ai_calls),
            ("feedback_up", self.feedback_up),
            ("feedback_down", self.feedback_down),
            ("outcome_corrections", self.outcome_corrections),
        ]
    }

    /// Add another day's counts (AI calls included).
    pub fn add(&mut self, other: &DailyMetrics) {
        let mut sum = serde_json::Map::new();
        for ((name, a), (_, b)) in self.fields().into_iter().zip(other.fields()) {
            sum.insert(name.to_owned(), (a.saturating_add(b)).into());
        }
        if let Ok(total) = serde_json::from_value(serde_json::Value::Object(sum)) {
            *self = total;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.fields().iter().all(|(_, v)| *v == 0)
    }

    /// Tasks that ended the day decided one way or another.
    fn decided(&self) -> u32 {
        self.tasks_completed + self.tasks_cancelled + self.tasks_escalated
    }

    /// completed / (completed + cancelled + escalated).
    pub fn completion_rate(&self) -> Option<f64> {
        ratio(self.tasks_completed, self.decided())
    }
    /// escalated / (completed + cancelled + escalated).
    pub fn escalation_rate(&self) -> Option<f64> {
        ratio(self.tasks_escalated, self.decided())
    }
    pub fn owner_edit_rate(&self) -> Option<f64> {
        ratio(self.owner_edits, self.owner_approvals)
    }
    pub fn owner_reject_rate(&self) -> Option<f64> {
        ratio(self.owner_skips, self.owner_approvals + self.owner_skips)
    }
    pub fn member_reply_rate(&self) -> Option<f64> {
        ratio(self.member_replies, self.messages_sent)
    }
    pub fn verbal_only_rate(&self) -> Option<f64> {
        ratio(self.verbal_downgrades, self.verbal_commitments)
    }
    pub fn bounce_rate(&self) -> Option<f64> {
        ratio(self.bounces + self.complaints, self.messages_sent)
    }
    pub fn send_failure_rate(&self) -> Option<f64> {
        ratio(self.send_failures, self.messages_sent + self.send_failures)
    }
    /// The day's AI spend at `per_call_usd` a call (see [`AiPricing`]).
    pub fn ai_cost_estimate(&self, per_call_usd: f64) -> f64 {
        f64::from(self.ai_calls) * per_call_usd
    }
}

/// The days an owner asks to see (`GET /api/v1/metrics?from=&to=`), parsed at the edge:
/// local dates of the account, `from` through `to` inclusive, at most
/// [`limits::METRICS_MAX_DAYS`] of them. Without `to` it ends today; without `from` it covers
/// [`limits::METRICS_DEFAULT_DAYS`] days up to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DayRange {
    pub from: Date,
    pub to: Date,
}

impl DayRange {
    pub fn parse(from: Option<&str>, to: Option<&str>, today: Date) -> Result<Self, InvalidInput> {
        let date = crate::kernel::calendar::parse_day;
        let to = match to {
            Some(raw) => date("to", raw)?,
            None => today,
        };
        let from = match from {
            Some(raw) => date("from", raw)?,
            None => to
                .checked_sub(jiff::Span::new().days(limits::METRICS_DEFAULT_DAYS - 1))
                .unwrap_or(to),
        };
        if from > to {
            return Err(InvalidInput::new(
                "invalid_range",
                format!("from ({from}) must not be after to ({to})"),
            ));
        }
        let days = i64::from(to.since(from).map_or(i32::MAX, |span| span.get_days())) + 1;
        if days > limits::METRICS_MAX_DAYS {
            return Err(InvalidInput::new(
                "invalid_range",
                format!("at most {} days at a time ({from} to {to} is {days})", limits::METRICS_MAX_DAYS),
            ));
        }
        Ok(Self { from, to })
    }

    /// Every day of the range, oldest first.
    pub fn days(&self) -> impl Iterator<Item = Date> + '_ {
        self.from.series(jiff::Span::new().days(1)).take_while(|d| *d <= self.to)
    }
}

/// The day's rates (docs/numbers-and-replies.md), derived from a day's (or a range's) counts; `None` where nothing was
/// there to divide.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rates {
    pub completion_rate: Option<f64>,
    pub escalation_rate: Option<f64>,
    pub owner_edit_rate: Option<f64>,
    pub owner_reject_rate: Option<f64>,
    pub member_reply_rate: Option<f64>,
    pub verbal_only_rate: Option<f64>,
    pub bounce_rate: Option<f64>,
    pub send_failure_rate: Option<f64>,
    pub ai_cost_estimate_usd: f64,
}

/// What an AI call costs, and the day's spend per account that alerts us.
/// The cost per call is the deployment's model's (`OPENLOOP_AI_CALL_COSTS`, with a default
/// per known model: see `openloop_edge::config`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AiPricing {
    pub per_call_usd: f64,
    pub alert_daily_usd: f64,
}

impl Default for AiPricing {
    fn default() -> Self {
        Self {
            per_call_usd: limits::AI_CALL_COST_ESTIMATE_USD,
            alert_daily_usd: limits::ALERT_AI_COST_USD,
        }
    }
}

impl Rates {
    pub fn of(m: &DailyMetrics, pricing: &AiPricing) -> Self {
        Self {
            completion_rate: m.completion_rate(),
            escalation_rate: m.escalation_rate(),
            owner_edit_rate: m.owner_edit_rate(),
            owner_reject_rate: m.owner_reject_rate(),
            member_reply_rate: m.member_reply_rate(),
            verbal_only_rate: m.verbal_only_rate(),
            bounce_rate: m.bounce_rate(),
            send_failure_rate: m.send_failure_rate(),
            ai_cost_estimate_usd: m.ai_cost_estimate(pricing.per_call_usd),
        }
    }
}

/// One day of the owner's metrics: its counts and rates.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DayMetrics {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub date: Date,
    #[serde(flatten)]
    pub counts: DailyMetrics,
    pub rates: Rates,
}

/// The counts and rates over a whole range.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RangeTotals {
    #[serde(flatten)]
    pub counts: DailyMetrics,
    pub rates: Rates,
}

/// What `GET /api/v1/metrics` answers: every day of the range (zeros where nothing was
/// counted), oldest first, and the range's totals.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetricsRange {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub from: Date,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub to: Date,
    pub timezone: String,
    pub days: Vec<DayMetrics>,
    pub totals: RangeTotals,
}

impl MetricsRange {
    /// The range's report from the days the store holds (any order; days outside are ignored).
    pub fn of(range: DayRange, timezone: &str, stored: &[(Date, DailyMetrics)], pricing: &AiPricing) -> Self {
        let stored: BTreeMap<Date, &DailyMetrics> = stored.iter().map(|(d, m)| (*d, m)).collect();
        let mut totals = DailyMetrics::default();
        let days = range
            .days()
            .map(|date| {
                let counts = stored.get(&date).map(|m| (*m).clone()).unwrap_or_default();
                totals.add(&counts);
                DayMetrics {
                    date,
                    rates: Rates::of(&counts, pricing),
                    counts,
                }
            })
            .collect();
        Self {
            from: range.from,
            to: range.to,
            timezone: timezone.to_owned(),
            days,
            totals: RangeTotals {
                rates: Rates::of(&totals, pricing),
                counts: totals,
            },
        }
    }
}

/// Fold decisions into per-local-day counts (the account's time zone).
pub fn fold(entries: &[ActivityEntry], tz: &jiff::tz::TimeZone) -> BTreeMap<Date, DailyMetrics> {
    let mut days: BTreeMap<Date, DailyMetrics> = BTreeMap::new();
    for entry in entries {
        days.entry(limits::local_date(entry.entry.at, tz)).or_default().count(entry);
    }
    days
}

/// The §28.4 conditions our data supports, for `account` at `now`: `recent` are its last
/// days up to today, oldest first (as they stand after this fold), `totals` its lifetime
/// counts. The connector's degradation is raised where it happens (the engine's step).
pub fn alerts(account: &Account, recent: &[DailyMetrics], totals: &DailyMetrics, pricing: &AiPricing, now: Timestamp) -> Vec<Alert> {
    let mut out = Vec::new();
    let alert = |code, severity, detail: String, action| Alert {
        code,
        severity,
        account_id: Some(account.id),
        detail,
        action,
        at: now,
    };
    let streak = &recent[recent.len().saturating_sub(limits::ALERT_ESCALATION_DAYS)..];
    let escalating = streak.len() == limits::ALERT_ESCALATION_DAYS
        && streak
            .iter()
            .all(|d| d.decided() >= limits::ALERT_MIN_DECIDED && d.escalation_rate().is_some_and(|r| r > limits::ALERT_ESCALATION_RATE));
    if escalating {
        out.push(alert(
            "escalation_rate",
            Severity::Warning,
            format!(
                "more than {:.0}% of decided tasks escalated on each of the last {} days",
                limits::ALERT_ESCALATION_RATE * 100.0,
                limits::ALERT_ESCALATION_DAYS
            ),
            "check whether the account's confidence thresholds are too low",
        ));
    }
    let today = recent.last().cloned().unwrap_or_default();
    if today.escalation_reminders > 0 {
        out.push(alert(
            "owner_unresponsive",
            Severity::Warning,
            format!(
                "{} escalation(s) waited 48 hours without an owner action",
                today.escalation_reminders
            ),
            "check whether the owner has disengaged",
        ));
    }
    let spend = today.ai_cost_estimate(pricing.per_call_usd);
    if spend > pricing.alert_daily_usd {
        out.push(alert(
            "ai_cost",
            Severity::Warning,
            format!(
                "an estimated ${spend:.2} of AI calls today ({} calls at ${} each; the alert is above ${:.2})",
                today.ai_calls, pricing.per_call_usd, pricing.alert_daily_usd
            ),
            "check for runaway tasks",
        ));
    }
    let attempts = today.messages_sent + today.send_failures;
    if attempts >= limits::ALERT_MIN_SENDS && today.send_failure_rate().is_some_and(|r| r > limits::ALERT_SEND_FAILURE_RATE) {
        out.push(alert(
            "send_failures",
            Severity::Critical,
            format!("{} of {attempts} sends failed today", today.send_failures),
            "something is broken in the send path",
        ));
    }
    if today.messages_sent >= limits::ALERT_MIN_SENDS && today.bounce_rate().is_some_and(|r| r > limits::ALERT_BOUNCE_RATE) {
        out.push(alert(
            "bounce_rate",
            Severity::Warning,
            format!(
                "{} bounce(s) and {} complaint(s) for {} messages today",
                today.bounces, today.complaints, today.messages_sent
            ),
            "check the account's member addresses and the sending reputation",
        ));
    }
    if now.duration_since(account.created_at) >= limits::ALERT_STALLED_AFTER && totals.tasks_completed == 0 {
        out.push(alert(
            "onboarding_stalled",
            Severity::Info,
            "no task completed since the account was created".into(),
            "onboarding may have stalled",
        ));
    }
    if totals.verbal_commitments >= limits::ALERT_MIN_VERBAL
        && totals.verbal_only_rate().is_some_and(|r| r > limits::ALERT_VERBAL_ONLY_RATE)
    {
        out.push(alert(
            "verbal_only_rate",
            Severity::Info,
            format!(
                "{} of {} verbal commitments were never confirmed",
                totals.verbal_downgrades, totals.verbal_commitments
            ),
            "our attribution may be too generous",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::{MemberId, TaskId};
    use crate::task::LogEntry;
    use crate::testing::{at, sample_account};

    fn entry(at_: &str, from: Option<TaskStatus>, to: TaskStatus, reason: &str, detail: Option<&str>) -> ActivityEntry {
        let at_ = at(at_);
        ActivityEntry {
            task_id: TaskId::generate(at_),
            task_type: "churn_risk".into(),
            member_id: MemberId::parse("m_1").expect("id"),
            member_name: None,
            entry: LogEntry {
                id: crate::kernel::ids::new_ulid(at_),
                at: at_,
                from_status: from,
                to_status: to,
                reason: reason.into(),
                detail: detail.map(str::to_owned),
            },
        }
    }

    use TaskStatus::*;

    #[test]
    fn decisions_fold_into_the_accounts_local_days() {
        let tz = jiff::tz::TimeZone::get("America/New_York").expect("tz");
        let entries = vec![
            entry("2026-11-03T03:00:00Z", None, PendingReview, "created", None),
            entry(
                "2026-11-03T15:00:00Z",
                Some(PendingReview),
                Ready,
                "owner_approved_with_edits",
                None,
            ),
            entry("2026-11-03T15:01:00Z", Some(Executing), Waiting, "message_sent", None),
            entry("2026-11-03T16:00:00Z", Some(Waiting), Waiting, "member_replied", None),
            entry(
                "2026-11-03T17:00:00Z",
                Some(Waiting),
                Cancelled,
                "member_opted_out",
                Some("member-level stop (bounce)"),
            ),
            entry(
                "2026-11-03T18:00:00Z",
                Some(Waiting),
                Escalated,
                "send_rejected_after_retries",
                None,
            ),
        ];
        let days = fold(&entries, &tz);
        // 03:00Z is 22:00 the day before in New York.
        let nov2 = days.get(&jiff::civil::date(2026, 11, 2)).expect("nov 2");
        assert_eq!(nov2.tasks_created, 1);
        let nov3 = days.get(&jiff::civil::date(2026, 11, 3)).expect("nov 3");
        assert_eq!(
            (nov3.owner_approvals, nov3.owner_edits, nov3.messages_sent, nov3.member_replies),
            (1, 1, 1, 1)
        );
        assert_eq!((nov3.bounces, nov3.opt_outs, nov3.tasks_cancelled), (1, 0, 1));
        assert_eq!((nov3.send_failures, nov3.tasks_escalated), (1, 1));
        assert_eq!(nov3.member_reply_rate(), Some(1.0));
    }

    #[test]
    fn revising_a_closed_task_is_not_a_second_close() {
        let tz = jiff::tz::TimeZone::UTC;
        let entries = vec![
            entry("2026-11-03T15:00:00Z", Some(Waiting), Completed, "verbal_commitment", None),
            entry(
                "2026-11-20T15:00:00Z",
                Some(Completed),
                Completed,
                "no_signal_after_verbal_commitment",
                None,
            ),
        ];
        let mut total = DailyMetrics::default();
        for day in fold(&entries, &tz).values() {
            total.add(day);
        }
        assert_eq!(
            (total.tasks_completed, total.verbal_commitments, total.verbal_downgrades),
            (1, 1, 1)
        );
        assert_eq!(total.verbal_only_rate(), Some(1.0));
    }

    #[test]
    fn a_range_defaults_to_the_last_thirty_days_and_refuses_more_than_ninety_two() {
        let today = jiff::civil::date(2026, 11, 30);
        let range = DayRange::parse(None, None, today).expect("default");
        assert_eq!((range.from, range.to), (jiff::civil::date(2026, 11, 1), today));
        assert_eq!(range.days().count(), 30);
        let full = DayRange::parse(Some("2026-09-01"), Some("2026-12-01"), today).expect("92 days");
        assert_eq!(full.days().count(), 92);
        for (from, to, code) in [
            (Some("2026-08-31"), Some("2026-12-01"), "invalid_range"),
            (Some("2026-11-05"), Some("2026-11-04"), "invalid_range"),
            (Some("2026-11-31"), None, "invalid_date"),
            (Some("2026-1-5"), None, "invalid_date"),
            (None, Some("yesterday"), "invalid_date"),
        ] {
            let err = DayRange::parse(from, to, today).expect_err("refused");
            assert_eq!(err.code, code, "{from:?}..{to:?}");
        }
    }

    #[test]
    fn a_range_report_shows_every_day_with_rates_and_totals() {
        let range = DayRange::parse(Some("2026-11-01"), Some("2026-11-03"), jiff::civil::date(2026, 11, 30)).expect("range");
        let stored = vec![
            (
                jiff::civil::date(2026, 11, 2),
                DailyMetrics {
                    messages_sent: 4,
                    member_replies: 1,
                    ..DailyMetrics::default()
                },
            ),
            (jiff::civil::date(2026, 10, 30), day(9, 9)),
        ];
        let report = MetricsRange::of(range, "UTC", &stored, &AiPricing::default());
        assert_eq!(report.days.len(), 3, "days without counts show zeros");
        assert_eq!(report.days[1].rates.member_reply_rate, Some(0.25));
        assert_eq!(report.days[0].rates.member_reply_rate, None);
        assert_eq!(report.totals.counts.messages_sent, 4);
        assert_eq!(report.totals.counts.tasks_completed, 0, "days outside the range are left out");
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["days"][1]["date"], "2026-11-02");
        assert_eq!(json["days"][1]["messages_sent"], 4);
        assert_eq!(json["totals"]["rates"]["member_reply_rate"], 0.25);
    }

    fn day(completed: u32, escalated: u32) -> DailyMetrics {
        DailyMetrics {
            tasks_completed: completed,
            tasks_escalated: escalated,
            ..DailyMetrics::default()
        }
    }

    fn codes(alerts: &[Alert]) -> Vec<&'static str> {
        alerts.iter().map(|a| a.code).collect()
    }

    #[test]
    fn escalation_rate_alerts_only_after_three_bad_days_in_a_row() {
        let now = at("2026-11-05T14:00:00Z");
        let account = sample_account(now);
        let totals = day(3, 9);
        assert_eq!(
            codes(&alerts(
                &account,
                &[day(1, 3), day(1, 3), day(1, 3)],
                &totals,
                &AiPricing::default(),
                now
            )),
            vec!["escalation_rate"]
        );
        assert!(alerts(&account, &[day(3, 1), day(1, 3), day(1, 3)], &totals, &AiPricing::default(), now).is_empty());
        assert!(
            alerts(&account, &[day(0, 1), day(0, 1), day(0, 1)], &totals, &AiPricing::default(), now).is_empty(),
            "too few decisions to judge"
        );
    }

    #[test]
    fn send_failures_bounces_reminders_and_cost_alert_on_todays_numbers() {
        let now = at("2026-11-05T14:00:00Z");
        let account = sample_account(now);
        let today = DailyMetrics {
            messages_sent: 10,
            send_failures: 2,
            bounces: 1,
            escalation_reminders: 1,
            ai_calls: 10_000,
            tasks_completed: 1,
            ..DailyMetrics::default()
        };
        let found = codes(&alerts(&account, std::slice::from_ref(&today), &today, &AiPricing::default(), now));
        assert_eq!(found, vec!["owner_unresponsive", "ai_cost", "send_failures", "bounce_rate"]);
        let calm = DailyMetrics {
            messages_sent: 40,
            tasks_completed: 1,
            ..DailyMetrics::default()
        };
        assert!(alerts(&account, std::slice::from_ref(&calm), &calm, &AiPricing::default(), now).is_empty());
    }

    #[test]
    fn an_account_with_nothing_completed_after_two_weeks_is_flagged() {
        let created = at("2026-11-01T14:00:00Z");
        let account = sample_account(created);
        let none = DailyMetrics::default();
        assert!(
            alerts(
                &account,
                std::slice::from_ref(&none),
                &none,
                &AiPricing::default(),
                created + limits::ALERT_STALLED_AFTER - jiff::SignedDuration::from_hours(1)
            )
            .is_empty()
        );
        assert_eq!(
            codes(&alerts(
                &account,
                std::slice::from_ref(&none),
                &none,
                &AiPricing::default(),
                created + limits::ALERT_STALLED_AFTER
            )),
            vec!["onboarding_stalled"]
        );
    }
}

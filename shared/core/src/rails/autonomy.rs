//! Autonomy: how much the system may do alone for an account and a task.
//!
//! Two independent dials. The **onboarding ramp** is derived from time — days since the gym
//! was onboarded (`settings.onboarded_at`), and for an agent enabled later, days since
//! `settings.agent_ramps[agent]` — so it needs no job to advance it: `shadow` (everything
//! reviewed, nothing sent: approved steps run as dry runs), `guided` (everything reviewed, 3
//! sends a day), `limited` (confidence-gated auto, 10 a day), `full`. The **task execution
//! mode** is chosen per task: `live`, `dry_run` (every gate runs, the would-be send is
//! recorded, the mailer is never called and the member and account caps are not touched) or
//! `plan` (the task starts as a plan of touches that the owner approves before anything runs).
//!
//! An account without `onboarded_at` is treated as past its ramp: accounts made before the
//! ramp existed keep working as they did.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::limits;
use crate::owner::account::Settings;
use crate::task::controls::TaskMode;
use crate::task::reason::{GateReason, Reason};

/// A ramp phase, in the order an account goes through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RampPhase {
    Shadow,
    Guided,
    Limited,
    Full,
}

impl RampPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            RampPhase::Shadow => "shadow",
            RampPhase::Guided => "guided",
            RampPhase::Limited => "limited",
            RampPhase::Full => "full",
        }
    }

    /// The reason logged when this phase sends a new task to review.
    pub fn review_reason(self) -> Reason {
        match self {
            RampPhase::Shadow => Reason::RampShadowRequiresReview,
            RampPhase::Guided => Reason::RampGuidedRequiresReview,
            RampPhase::Limited => Reason::RampLimitedRequiresReview,
            RampPhase::Full => Reason::RampFullRequiresReview,
        }
    }

    /// The phase `since` days ago (`None`: no ramp).
    pub fn since(start: Option<Timestamp>, now: Timestamp) -> RampPhase {
        let Some(start) = start else {
            return RampPhase::Full;
        };
        // Day 1 is the first 24 hours after onboarding.
        let day = now.duration_since(start).as_secs().max(0) / (24 * 3600) + 1;
        match day {
            d if d <= limits::RAMP_SHADOW_DAYS => RampPhase::Shadow,
            d if d <= limits::RAMP_GUIDED_DAYS => RampPhase::Guided,
            d if d <= limits::RAMP_LIMITED_DAYS => RampPhase::Limited,
            _ => RampPhase::Full,
        }
    }
}

/// What a phase allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RampLimits {
    pub phase: RampPhase,
    /// Every new task goes to the owner first, whatever the execution mode.
    pub force_review: bool,
    /// Nothing is sent: steps run as dry runs.
    pub never_send: bool,
    /// The account's daily send limit in this phase.
    pub daily_send_limit: u32,
    /// New tasks a day in this phase (`None`: the normal flood limits).
    pub max_tasks_per_day: Option<u32>,
}

/// The deliverability warm-up of a newly onboarded account: at most 3, 5 and 10
/// sends a day in its weeks 1, 2 and 3, then no cap of its own (`None`).
pub fn warmup_cap(onboarded_at: Option<Timestamp>, now: Timestamp) -> Option<u32> {
    let start = onboarded_at?;
    let week = now.duration_since(start).as_secs().max(0) / (7 * 24 * 3600) + 1;
    match week {
        1 => Some(limits::WARMUP_WEEK_1_DAILY_SENDS),
        2 => Some(limits::WARMUP_WEEK_2_DAILY_SENDS),
        3 => Some(limits::WARMUP_WEEK_3_DAILY_SENDS),
        _ => None,
    }
}

/// What the account may send today, for `GET /api/v1/settings`: its own ramp phase, the
/// warm-up's cap if any, and the lower of those and its daily send limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Sending {
    pub ramp_phase: RampPhase,
    pub warmup_cap: Option<u32>,
    pub daily_send_cap: u32,
}

pub fn sending(settings: &Settings, now: Timestamp) -> Sending {
    let limits = account_ramp(settings, RampPhase::since(settings.onboarded_at, now), now);
    Sending {
        ramp_phase: limits.phase,
        warmup_cap: warmup_cap(settings.onboarded_at, now),
        daily_send_cap: limits.daily_send_limit,
    }
}

/// The ramp of one agent (`TaskTypeDef::agent`) on an account: the stricter of the account's
/// own ramp and the agent's, if it was enabled later. Its daily send limit is
/// also held under the warm-up's cap: the lower of warm-up and ramp wins.
pub fn ramp(settings: &Settings, agent: &str, now: Timestamp) -> RampLimits {
    let account = RampPhase::since(settings.onboarded_at, now);
    let agent = RampPhase::since(settings.agent_ramps.get(agent).copied(), now);
    account_ramp(settings, account.min(agent), now)
}

fn account_ramp(settings: &Settings, phase: RampPhase, now: Timestamp) -> RampLimits {
    let mut limits = phase_limits(settings, phase);
    if let Some(cap) = warmup_cap(settings.onboarded_at, now) {
        limits.daily_send_limit = limits.daily_send_limit.min(cap);
    }
    limits
}

fn phase_limits(settings: &Settings, phase: RampPhase) -> RampLimits {
    match phase {
        RampPhase::Shadow => RampLimits {
            phase,
            force_review: true,
            never_send: true,
            daily_send_limit: 0,
            max_tasks_per_day: Some(limits::RAMP_SHADOW_TASKS_PER_DAY),
        },
        RampPhase::Guided => RampLimits {
            phase,
            force_review: true,
            never_send: false,
            daily_send_limit: settings.daily_send_limit.min(limits::RAMP_GUIDED_DAILY_SENDS),
            max_tasks_per_day: Some(limits::RAMP_GUIDED_TASKS_PER_DAY),
        },
        RampPhase::Limited => RampLimits {
            phase,
            force_review: false,
            never_send: false,
            daily_send_limit: settings.daily_send_limit.min(limits::RAMP_LIMITED_DAILY_SENDS),
            max_tasks_per_day: Some(limits::RAMP_LIMITED_TASKS_PER_DAY),
        },
        RampPhase::Full => RampLimits {
            phase,
            force_review: false,
            never_send: false,
            daily_send_limit: settings.daily_send_limit,
            max_tasks_per_day: None,
        },
    }
}

/// A day's review capacity (spec §26.1: a gym that connects with 150 at-risk members is not
/// handed 150 drafts before breakfast): how many more tasks of `agent` the account may get
/// today in its ramp phase, given the `created_today` so far. `None` past the ramp: only the
/// flood limits apply. The risk scan proposes the most valuable findings within it and
/// leaves the rest for later days; the creation counters enforce the same cap.
pub fn review_capacity(settings: &Settings, agent: &str, now: Timestamp, created_today: u32) -> Option<u32> {
    ramp(settings, agent, now)
        .max_tasks_per_day
        .map(|max| max.saturating_sub(created_today))
}

/// The phase of every agent the registry knows, for `GET /api/v1/autonomy`.
pub fn phases(settings: &Settings, now: Timestamp) -> BTreeMap<&'static str, RampLimits> {
    crate::task::task_type::REGISTRY
        .iter()
        .map(|def| (def.agent, ramp(settings, def.agent, now)))
        .collect()
}

/// How a step runs once every gate has passed: for real, or recorded only (and why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Live,
    /// The task asked for a dry run.
    DryRun,
    /// The account or agent is in its shadow phase.
    Shadow,
}

impl SendMode {
    pub fn of(task_mode: TaskMode, ramp: &RampLimits) -> SendMode {
        if ramp.never_send {
            SendMode::Shadow
        } else if task_mode == TaskMode::DryRun {
            SendMode::DryRun
        } else {
            SendMode::Live
        }
    }

    /// The decision-log reason of a recorded (not sent) touch.
    pub fn would_send_reason(self) -> Reason {
        match self {
            SendMode::Live => Reason::MessageSent,
            SendMode::DryRun => Reason::DryRunWouldSend,
            SendMode::Shadow => Reason::ShadowWouldSend,
        }
    }
}

/// The review decision after the confidence gate: plan mode and the ramp's forced review
/// both send a task that could run to the owner first.
pub fn review_gate(
    status: crate::task::TaskStatus,
    reason: GateReason,
    ramp: &RampLimits,
    mode: TaskMode,
) -> (crate::task::TaskStatus, GateReason) {
    use crate::task::TaskStatus;
    if mode == TaskMode::Plan {
        return (TaskStatus::PendingReview, Reason::PlanModeRequiresReview.into());
    }
    if ramp.force_review && status == TaskStatus::Ready {
        return (TaskStatus::PendingReview, ramp.phase.review_reason().into());
    }
    (status, reason)
}

/// When touch `touch` of a cadence goes out, in words, counting from the first.
pub fn touch_timing(intervals: &[u32], touch: u32) -> String {
    if touch == 0 {
        return "immediately, inside the send window".into();
    }
    let day: u32 = intervals.iter().take(touch as usize).sum();
    format!("day {day} if no reply")
}

/// Days from `a` to `b`, rounded down, never negative.
pub fn whole_days(a: Timestamp, b: Timestamp) -> i64 {
    (b.duration_since(a).max(SignedDuration::ZERO).as_secs()) / (24 * 3600)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    fn settings(onboarded: Option<&str>) -> Settings {
        let mut s = Settings::defaults("America/New_York".into());
        s.onboarded_at = onboarded.map(at);
        s
    }

    #[test]
    fn the_ramp_walks_shadow_guided_limited_full_by_day() {
        let s = settings(Some("2026-11-01T00:00:00Z"));
        let phase = |now: &str| ramp(&s, "retention", at(now)).phase;
        assert_eq!(phase("2026-11-01T01:00:00Z"), RampPhase::Shadow, "day 1");
        assert_eq!(phase("2026-11-03T23:00:00Z"), RampPhase::Shadow, "day 3");
        assert_eq!(phase("2026-11-04T01:00:00Z"), RampPhase::Guided, "day 4");
        assert_eq!(phase("2026-11-08T01:00:00Z"), RampPhase::Limited, "day 8");
        assert_eq!(phase("2026-11-15T01:00:00Z"), RampPhase::Full, "day 15");
    }

    #[test]
    fn each_phase_caps_sends_and_review() {
        let s = settings(Some("2026-11-01T00:00:00Z"));
        let shadow = ramp(&s, "retention", at("2026-11-02T00:00:00Z"));
        assert!(shadow.force_review && shadow.never_send);
        assert_eq!(shadow.daily_send_limit, 0);
        let guided = ramp(&s, "retention", at("2026-11-05T00:00:00Z"));
        assert!(guided.force_review && !guided.never_send);
        assert_eq!(guided.daily_send_limit, 3);
        let limited = ramp(&s, "retention", at("2026-11-09T00:00:00Z"));
        assert!(!limited.force_review);
        assert_eq!(limited.daily_send_limit, 5, "day 9 is the warm-up's week 2: the lower wins");
        assert_eq!(
            ramp(&s, "retention", at("2026-11-20T00:00:00Z")).daily_send_limit,
            10,
            "week 3, full ramp"
        );
        assert_eq!(ramp(&s, "retention", at("2026-12-01T00:00:00Z")).daily_send_limit, 15);
    }

    #[test]
    fn the_warm_up_caps_a_new_accounts_sends_for_three_weeks() {
        let start = Some(at("2026-11-01T00:00:00Z"));
        let cap = |now: &str| warmup_cap(start, at(now));
        assert_eq!(cap("2026-11-01T01:00:00Z"), Some(3), "week 1");
        assert_eq!(cap("2026-11-08T01:00:00Z"), Some(5), "week 2");
        assert_eq!(cap("2026-11-15T01:00:00Z"), Some(10), "week 3");
        assert_eq!(cap("2026-11-22T01:00:00Z"), None, "week 4: no cap of its own");
        assert_eq!(warmup_cap(None, at("2026-11-22T01:00:00Z")), None, "not newly onboarded");
        // An agent enabled later keeps its own ramp, but the account's warm-up binds it too.
        let mut s = settings(Some("2026-11-01T00:00:00Z"));
        s.agent_ramps.insert("sales".into(), at("2026-10-01T00:00:00Z"));
        assert_eq!(
            ramp(&s, "sales", at("2026-11-02T00:00:00Z")).daily_send_limit,
            0,
            "the account is in shadow"
        );
        let later = sending(&s, at("2026-11-16T00:00:00Z"));
        assert_eq!(
            (later.ramp_phase, later.warmup_cap, later.daily_send_cap),
            (RampPhase::Full, Some(10), 10)
        );
    }

    #[test]
    fn an_agent_enabled_later_runs_its_own_ramp_and_others_stay_full() {
        let mut s = settings(Some("2026-01-01T00:00:00Z"));
        s.agent_ramps.insert("sales".into(), at("2026-11-01T00:00:00Z"));
        let now = at("2026-11-02T00:00:00Z");
        assert_eq!(ramp(&s, "sales", now).phase, RampPhase::Shadow);
        assert_eq!(ramp(&s, "retention", now).phase, RampPhase::Full);
    }

    #[test]
    fn a_days_review_capacity_is_the_ramps_daily_tasks_less_those_made() {
        let s = settings(Some("2026-11-01T00:00:00Z"));
        let day1 = at("2026-11-01T10:00:00Z");
        assert_eq!(review_capacity(&s, "retention", day1, 0), Some(10), "shadow");
        assert_eq!(review_capacity(&s, "retention", day1, 7), Some(3));
        assert_eq!(review_capacity(&s, "retention", day1, 12), Some(0));
        assert_eq!(review_capacity(&s, "retention", at("2026-11-05T10:00:00Z"), 0), Some(15), "guided");
        assert_eq!(
            review_capacity(&s, "retention", at("2026-12-05T10:00:00Z"), 0),
            None,
            "past the ramp"
        );
    }

    #[test]
    fn without_an_onboarding_date_there_is_no_ramp() {
        assert_eq!(
            ramp(&settings(None), "retention", at("2026-11-02T00:00:00Z")).phase,
            RampPhase::Full
        );
    }

    #[test]
    fn shadow_makes_every_send_a_record_and_dry_run_too() {
        let s = settings(Some("2026-11-01T00:00:00Z"));
        let shadow = ramp(&s, "retention", at("2026-11-02T00:00:00Z"));
        let full = ramp(&s, "retention", at("2026-12-02T00:00:00Z"));
        assert_eq!(SendMode::of(TaskMode::Live, &shadow), SendMode::Shadow);
        assert_eq!(SendMode::of(TaskMode::DryRun, &full), SendMode::DryRun);
        assert_eq!(SendMode::of(TaskMode::Live, &full), SendMode::Live);
    }

    #[test]
    fn plan_timing_counts_the_cadence_from_the_first_touch() {
        assert_eq!(touch_timing(&[3, 5, 7], 2), "day 8 if no reply");
        assert!(touch_timing(&[3, 5, 7], 0).starts_with("immediately"));
    }
}

//! Outcome checkers: does what we know about a member show a task's goal
//! was reached? Each goal signal of a task type (`checkin`, `checkin_count_N`,
//! `payment_succeeded`, `reactivation`, `trial_booked`) has a checker over the member facts
//! and a reason the log gives when it completes a task (`goal_signal_<signal>`; a new
//! `checkin_count_N` needs its reason added before it is seen); the task type says which
//! signals complete its goal and with which outcome.
//!
//! The checkers read only the facts (the projection of connector events), never the
//! connector itself, so a check costs no request and cannot be wrong because the connector is
//! down: a fact we do not have is a signal we have not seen. `reply_positive` and
//! `review_posted` have no connector event — the conversation loop judges replies, the owner
//! confirms reviews — so no checker ever fires for them.
//!
//! Used by the signals function (a signal completes an open or dormant task at once), the
//! dormant function (its periodic look) and attribution (late wins, provisional outcomes).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::members::member::{MemberFacts, days};
use crate::task::Task;
use crate::task::reason::Reason;
use crate::task::task_type::{self, GoalSignal};

/// A signal found in the facts: which, when, and what it was.
#[derive(Clone, Debug, PartialEq)]
pub struct SignalSeen {
    pub signal: &'static str,
    /// The log reason of a task this signal completes.
    pub reason: Reason,
    pub at: Timestamp,
    pub detail: String,
}

/// A goal reached: the outcome the task closes with and the signal that showed it.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalReached {
    pub outcome: &'static str,
    pub seen: SignalSeen,
}

/// When a task's watching starts: the first outreach, or its creation if it never started.
pub fn watch_from(task: &Task) -> Timestamp {
    task.execution_started_at.unwrap_or(task.created_at)
}

/// The number in a `checkin_count_N` signal.
fn checkin_milestone(signal: &str) -> Option<usize> {
    signal.strip_prefix("checkin_count_")?.parse().ok().filter(|n| *n > 0)
}

/// The log reason of a task completed by `signal`; `None` for a signal no checker sees.
pub fn goal_reason(signal: &str) -> Option<Reason> {
    Some(match signal {
        "checkin" => Reason::GoalSignalCheckin,
        "checkin_count_3" => Reason::GoalSignalCheckinCount3,
        "payment_succeeded" => Reason::GoalSignalPaymentSucceeded,
        "reactivation" => Reason::GoalSignalReactivation,
        "trial_booked" => Reason::GoalSignalTrialBooked,
        _ => return None,
    })
}

/// Whether `signal` shows in `facts` within `[from, until]`.
pub fn check(signal: &'static str, facts: &MemberFacts, from: Timestamp, until: Timestamp) -> Option<SignalSeen> {
    let within = |t: Timestamp| t >= from && t <= until;
    let reason = goal_reason(signal)?;
    let seen = |at: Timestamp, detail: String| {
        Some(SignalSeen {
            signal,
            reason,
            at,
            detail,
        })
    };
    match signal {
        "checkin" => {
            let at = facts.nth_checkin_since(from, 1).filter(|t| *t <= until)?;
            seen(at, format!("checked in at {at}"))
        }
        "payment_succeeded" => {
            let at = facts.last_payment_succeeded_at.filter(|t| within(*t))?;
            seen(at, format!("a payment succeeded at {at}"))
        }
        // Back from cancelled: the connector says so, or the member checks in (a cancelled
        // member cannot check in without coming back).
        "reactivation" => {
            if let Some(at) = facts.reactivated_at.filter(|t| within(*t)) {
                return seen(at, format!("membership reactivated at {at}"));
            }
            let at = facts.nth_checkin_since(from, 1).filter(|t| *t <= until)?;
            seen(at, format!("checked in at {at}, back after cancelling"))
        }
        "trial_booked" => {
            let at = facts.trial_booked_at.filter(|t| within(*t))?;
            let detail = match facts.trial_booked_for {
                Some(when) => format!("booked a trial for {when}"),
                None => "booked a trial".to_owned(),
            };
            seen(at, detail)
        }
        other => {
            let n = checkin_milestone(other)?;
            let at = facts.nth_checkin_since(from, n).filter(|t| *t <= until)?;
            seen(at, format!("{n} check-ins since {from}, the last at {at}"))
        }
    }
}

/// The signals of the task's type that complete its goal.
pub fn completing_signals(task_type: &str) -> impl Iterator<Item = &'static GoalSignal> {
    task_type::definition(task_type)
        .goal
        .signals
        .iter()
        .filter(|s| s.completes_goal && s.outcome.is_some())
}

/// Whether the task type has any signal a checker can see (so attribution can watch it).
pub fn is_watchable(task_type: &str) -> bool {
    completing_signals(task_type).next().is_some()
}

/// The first completing signal seen between the task's start and `until`, earliest first.
pub fn goal_reached(task: &Task, facts: &MemberFacts, until: Timestamp) -> Option<GoalReached> {
    let from = watch_from(task);
    completing_signals(&task.task_type)
        .filter_map(|s| {
            let seen = check(s.signal, facts, from, until)?;
            Some(GoalReached { outcome: s.outcome?, seen })
        })
        .min_by_key(|r| r.seen.at)
}

/// The longest verification window of the type's completing signals (how long after a task
/// closes a late signal still counts), in days.
pub fn verification_window_days(task_type: &str) -> Option<u32> {
    completing_signals(task_type).map(|s| s.verification_window_days).max()
}

/// Progress on a progressive goal (`checkin_count_N`): one milestone per check-in, with when
/// it was reached. Empty for types without such a goal.
pub fn milestones(task: &Task, facts: &MemberFacts) -> Vec<Milestone> {
    let from = watch_from(task);
    let Some(goal) = completing_signals(&task.task_type).find_map(|s| checkin_milestone(s.signal).map(|n| (n, s))) else {
        return Vec::new();
    };
    let (n, signal) = goal;
    let until = from + days(i64::from(signal.verification_window_days));
    (1..=n)
        .map(|k| {
            let hit_at = facts.nth_checkin_since(from, k).filter(|t| *t <= until);
            Milestone {
                name: format!("check-in {k} of {n}"),
                hit: hit_at.is_some(),
                hit_at,
            }
        })
        .collect()
}

/// One milestone of a progressive goal (onboarding: three check-ins).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Milestone {
    pub name: String,
    pub hit: bool,
    pub hit_at: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::MemberId;
    use crate::members::event::{MemberEvent, MemberStatus};
    use crate::task::TaskStatus;
    use crate::testing::{at, sample_task};

    #[test]
    fn every_signal_a_checker_sees_closes_a_task_with_its_own_reason() {
        for def in task_type::REGISTRY {
            for goal in def.goal.signals {
                let reason = goal_reason(goal.signal);
                let unseen = matches!(goal.signal, "reply_positive" | "review_posted");
                assert_eq!(reason.is_none(), unseen, "{}: {}", def.key, goal.signal);
                if let Some(reason) = reason {
                    assert_eq!(reason.as_str(), format!("goal_signal_{}", goal.signal));
                }
            }
        }
    }

    fn member() -> MemberId {
        MemberId::parse("m_1").expect("member")
    }

    fn facts_with(events: &[MemberEvent]) -> MemberFacts {
        let mut facts = MemberFacts::new(member());
        for (i, e) in events.iter().enumerate() {
            let t = match e {
                MemberEvent::CheckinCreated { checked_in_at, .. } => *checked_in_at,
                _ => at("2026-11-20T00:00:00Z"),
            };
            facts.apply(&format!("e{i}"), e, t);
        }
        facts
    }

    fn checkin(t: &str) -> MemberEvent {
        MemberEvent::CheckinCreated {
            member_id: member(),
            checked_in_at: at(t),
            class_name: None,
        }
    }

    fn task_of(task_type: &str) -> Task {
        let mut task = sample_task(TaskStatus::Waiting);
        task.task_type = task_type.into();
        task.execution_started_at = Some(at("2026-11-02T14:00:00Z"));
        task
    }

    #[test]
    fn a_checkin_after_outreach_retains_a_churn_risk_member_but_one_before_does_not() {
        let task = task_of("churn_risk");
        let before = facts_with(&[checkin("2026-11-01T10:00:00Z")]);
        assert_eq!(goal_reached(&task, &before, at("2026-11-30T00:00:00Z")), None);
        let after = facts_with(&[checkin("2026-11-05T10:00:00Z")]);
        let reached = goal_reached(&task, &after, at("2026-11-30T00:00:00Z")).expect("reached");
        assert_eq!((reached.outcome, reached.seen.signal), ("retained", "checkin"));
    }

    #[test]
    fn onboarding_needs_three_checkins_and_reports_milestones_on_the_way() {
        let task = task_of("onboarding");
        let two = facts_with(&[checkin("2026-11-03T10:00:00Z"), checkin("2026-11-05T10:00:00Z")]);
        assert_eq!(goal_reached(&task, &two, at("2026-11-30T00:00:00Z")), None);
        let hit: Vec<bool> = milestones(&task, &two).iter().map(|m| m.hit).collect();
        assert_eq!(hit, vec![true, true, false]);
        let three = facts_with(&[
            checkin("2026-11-03T10:00:00Z"),
            checkin("2026-11-05T10:00:00Z"),
            checkin("2026-11-09T10:00:00Z"),
        ]);
        let reached = goal_reached(&task, &three, at("2026-11-30T00:00:00Z")).expect("reached");
        assert_eq!(reached.outcome, "habit_formed");
        assert_eq!(reached.seen.at, at("2026-11-09T10:00:00Z"));
    }

    #[test]
    fn a_win_back_is_recovered_by_reactivation_or_by_a_checkin() {
        let task = task_of("win_back");
        let back = facts_with(&[MemberEvent::StatusChanged {
            member_id: member(),
            status: MemberStatus::Active,
            previous_status: Some(MemberStatus::Cancelled),
            cancellation_reason: None,
        }]);
        assert_eq!(
            goal_reached(&task, &back, at("2026-12-30T00:00:00Z")).map(|r| r.outcome),
            Some("recovered")
        );
        let visit = facts_with(&[checkin("2026-12-01T10:00:00Z")]);
        assert_eq!(
            goal_reached(&task, &visit, at("2026-12-30T00:00:00Z")).map(|r| r.seen.signal),
            Some("reactivation")
        );
    }

    #[test]
    fn payments_trials_and_the_checkin_window_have_their_checkers() {
        let mut facts = MemberFacts::new(member());
        facts.apply(
            "p",
            &MemberEvent::PaymentSucceeded {
                member_id: member(),
                amount: 150.0,
                currency: "USD".into(),
                paid_at: at("2026-11-04T00:00:00Z"),
            },
            at("2026-11-04T00:00:00Z"),
        );
        let task = task_of("payment_recovery");
        assert_eq!(
            goal_reached(&task, &facts, at("2026-11-10T00:00:00Z")).map(|r| r.outcome),
            Some("recovered")
        );
        // The window ends before the payment: not seen.
        assert_eq!(goal_reached(&task, &facts, at("2026-11-03T00:00:00Z")), None);
        facts.apply(
            "t",
            &MemberEvent::TrialBooked {
                member_id: member(),
                booked_for: at("2026-11-08T00:00:00Z"),
            },
            at("2026-11-05T00:00:00Z"),
        );
        let lead = task_of("lead_followup");
        assert_eq!(
            goal_reached(&lead, &facts, at("2026-11-10T00:00:00Z")).map(|r| r.outcome),
            Some("converted")
        );
        // Signals no connector event carries never fire.
        assert_eq!(
            check("reply_positive", &facts, at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z")),
            None
        );
        assert_eq!(goal_reached(&task_of("ad_hoc"), &facts, at("2026-11-10T00:00:00Z")), None);
    }
}

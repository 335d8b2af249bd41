//! The stale guard: before any outbound touch, re-read what is known about the
//! member and ask whether the task is still needed. A task can wait days in review; if the
//! member came back, paid, or left meanwhile, the message it was made for would be wrong.
//!
//! The facts are the projection of the connector's webhooks (`member::MemberFacts`), read in
//! the same batch as the send gates — so the guard costs no extra request. Only what changed
//! after the task was made counts: the facts that made the task cannot resolve it.

use jiff::Timestamp;

use crate::kernel::limits::STALE_GUARD_RECENT_CHECKIN;
use crate::members::event::MemberStatus;
use crate::members::member::MemberFacts;
use crate::task::reason::Reason;
use crate::task::{Task, TaskStatus};

/// What the guard decided, with the log reason (and outcome code for closing moves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Still needed: go on to the gates.
    Proceed,
    /// The situation resolved itself (or the member did what the task asked).
    Resolved {
        to: TaskStatus,
        outcome: &'static str,
        reason: Reason,
        detail: String,
    },
    /// Something changed that the agent must not guess about: the owner decides.
    Escalate { reason: Reason, detail: String },
}

/// Decide for `task` about to send touch `task.touch`, given the member's facts now.
pub fn check(task: &Task, facts: Option<&MemberFacts>, now: Timestamp) -> Freshness {
    let Some(facts) = facts else {
        // Nothing known (or the connector is down): proceed on what the task knows.
        return Freshness::Proceed;
    };
    let since = task.created_at;
    let before = if task.touch == 0 { "before_outreach" } else { "before_follow_up" };
    let after = |at: Option<Timestamp>| at.is_some_and(|t| t > since);
    match task.task_type.as_str() {
        "payment_recovery" => {
            let paid = !facts.payment_failing
                && facts
                    .last_payment_succeeded_at
                    .is_some_and(|paid| facts.last_payment_failed_at.is_none_or(|failed| paid > failed));
            if paid {
                let (outcome, reason) = if task.touch == 0 {
                    ("self_resolved", Reason::PaymentResolvedBeforeOutreach)
                } else {
                    ("recovered", Reason::PaymentResolvedBeforeFollowUp)
                };
                return Freshness::Resolved {
                    to: TaskStatus::Completed,
                    outcome,
                    reason,
                    detail: format!(
                        "the member's payment went through at {}",
                        facts.last_payment_succeeded_at.map(|t| t.to_string()).unwrap_or_default()
                    ),
                };
            }
            if facts.status == Some(MemberStatus::Cancelled) && after(facts.cancelled_at) {
                return Freshness::Resolved {
                    to: TaskStatus::Cancelled,
                    outcome: "cancelled",
                    reason: Reason::MemberCancelledMembership,
                    detail: "the member cancelled after the payment failed; nothing to recover by mail".into(),
                };
            }
        }
        "churn_risk" => {
            if let Some(checkin) = facts.last_checkin_at
                && checkin > since
                && now.duration_since(checkin) < STALE_GUARD_RECENT_CHECKIN
            {
                return Freshness::Resolved {
                    to: TaskStatus::Completed,
                    outcome: "self_resolved",
                    reason: if task.touch == 0 {
                        Reason::MemberCheckedInBeforeOutreach
                    } else {
                        Reason::MemberCheckedInBeforeFollowUp
                    },
                    detail: format!("the member checked in at {checkin}"),
                };
            }
        }
        "win_back" if facts.status == Some(MemberStatus::Active) && after(facts.reactivated_at) => {
            return Freshness::Resolved {
                to: TaskStatus::Completed,
                outcome: "recovered",
                reason: if task.touch == 0 {
                    Reason::MemberReactivatedBeforeOutreach
                } else {
                    Reason::MemberReactivatedBeforeFollowUp
                },
                detail: format!(
                    "the member is active again since {}",
                    facts.reactivated_at.map(|t| t.to_string()).unwrap_or_default()
                ),
            };
        }
        _ => {}
    }
    // A member who left or froze since the task was made: a retention message would be
    // wrong, and whether to write at all is the owner's call (escalation is the safe failure).
    let left = facts.status == Some(MemberStatus::Cancelled) && after(facts.cancelled_at) && task.task_type != "win_back";
    let frozen = facts.status == Some(MemberStatus::Frozen) && facts.status_stamp.as_ref().is_some_and(|s| s.at > since);
    if left || frozen {
        let status = if left { "cancelled" } else { "frozen" };
        return Freshness::Escalate {
            reason: if left {
                Reason::MemberCancelledSinceTaskCreated
            } else {
                Reason::MemberFrozenSinceTaskCreated
            },
            detail: format!(
                "the member's membership is now {status}; decide whether this {} message still fits ({before})",
                task.task_type
            ),
        };
    }
    Freshness::Proceed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_task;
    use jiff::SignedDuration;

    fn hours(n: i64) -> SignedDuration {
        SignedDuration::from_hours(n)
    }

    fn churn(touch: u32) -> Task {
        let mut task = sample_task(TaskStatus::Ready);
        task.task_type = "churn_risk".into();
        task.touch = touch;
        task
    }

    #[test]
    fn a_recent_check_in_after_the_task_was_made_resolves_a_churn_task() {
        let task = churn(0);
        let mut facts = MemberFacts::new(task.member.id.clone());
        facts.last_checkin_at = Some(task.created_at + hours(30));
        let now = task.created_at + hours(48);
        assert!(matches!(
            check(&task, Some(&facts), now),
            Freshness::Resolved {
                outcome: "self_resolved",
                reason: Reason::MemberCheckedInBeforeOutreach,
                ..
            }
        ));
    }

    #[test]
    fn the_check_in_that_predates_the_task_or_is_old_does_not() {
        let task = churn(0);
        let mut facts = MemberFacts::new(task.member.id.clone());
        facts.last_checkin_at = Some(task.created_at - hours(1));
        assert_eq!(check(&task, Some(&facts), task.created_at + hours(2)), Freshness::Proceed);
        facts.last_checkin_at = Some(task.created_at + hours(1));
        assert_eq!(check(&task, Some(&facts), task.created_at + hours(24 * 5)), Freshness::Proceed);
    }

    #[test]
    fn a_payment_that_went_through_completes_payment_recovery() {
        let task = sample_task(TaskStatus::Ready);
        let mut facts = MemberFacts::new(task.member.id.clone());
        facts.last_payment_failed_at = Some(task.created_at - hours(1));
        facts.last_payment_succeeded_at = Some(task.created_at + hours(5));
        assert!(matches!(
            check(&task, Some(&facts), task.created_at + hours(6)),
            Freshness::Resolved {
                to: TaskStatus::Completed,
                outcome: "self_resolved",
                ..
            }
        ));
        facts.payment_failing = true;
        assert_eq!(check(&task, Some(&facts), task.created_at + hours(6)), Freshness::Proceed);
    }

    #[test]
    fn a_member_who_cancelled_since_escalates_a_churn_task_and_cancels_payment_recovery() {
        let mut facts = MemberFacts::new(churn(0).member.id.clone());
        let task = churn(1);
        facts.status = Some(MemberStatus::Cancelled);
        facts.cancelled_at = Some(task.created_at + hours(1));
        assert!(matches!(
            check(&task, Some(&facts), task.created_at + hours(2)),
            Freshness::Escalate {
                reason: Reason::MemberCancelledSinceTaskCreated,
                ..
            }
        ));
        let payment = sample_task(TaskStatus::Waiting);
        facts.payment_failing = true;
        assert!(matches!(
            check(&payment, Some(&facts), payment.created_at + hours(2)),
            Freshness::Resolved {
                to: TaskStatus::Cancelled,
                outcome: "cancelled",
                ..
            }
        ));
    }

    #[test]
    fn unknown_facts_proceed() {
        assert_eq!(check(&churn(0), None, churn(0).created_at), Freshness::Proceed);
    }
}

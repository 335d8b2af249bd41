//! Outcome attribution: what a closed task is worth, and what is still
//! watched after it closed.
//!
//! A task's revenue is its outcome's revenue multiplier (the registry) times the member's
//! monthly price ([`Price`]: the owner's price for their PushPress plan, else the member's
//! own value, else the account's `avg_membership_price`), and the task says which it used. Closing does not end the story in three cases, each watched for a
//! bounded window after the close — and only those tasks are in the attribution index, so
//! the hourly run costs what is inside a window, never what is stored:
//! - a completed task whose outcome credits revenue and has no value yet: valued at once;
//! - a provisional outcome (a verbal commitment): confirmed with the signal's outcome when the
//!   goal's signal shows within the verification window, downgraded when the window passes;
//! - a task cancelled as `unresponsive` after we wrote: a late win (`engaged_late`) when the
//!   goal's signal shows within the window after the close.
//!
//! Everything here is pure; `engine::attribution` reads and commits.

use jiff::Timestamp;

use crate::kernel::limits::PROVISIONAL_WINDOW_DAYS;
use crate::members::member::{MemberFacts, days};
use crate::task::outcome::{self, GoalReached};
use crate::task::reason::Reason;
use crate::task::task_type::{self, TaskTypeDef};
use crate::task::transition::Why;
use crate::task::{Task, TaskStatus};

/// The outcome a late signal gives a task closed unanswered.
pub const LATE_WIN: &str = "engaged_late";
/// What a verbal commitment becomes when its signal never comes (where the type has it).
pub const VERBAL_ONLY: &str = "verbal_only";
/// The outcome of a task closed without an answer.
pub const UNRESPONSIVE: &str = "unresponsive";

/// Where a member's monthly price came from (PushPress has no prices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// The failed payment's amount, as the trigger said (a payment recovery).
    PaymentAmount,
    /// The owner's price for the member's PushPress plan (settings `plan_prices`).
    PlanPrice,
    /// The member's own value, as a member event said.
    Member,
    /// The account's `avg_membership_price`.
    Average,
}

impl ValueSource {
    pub fn describe(self) -> &'static str {
        match self {
            ValueSource::PaymentAmount => "the failed payment's amount",
            ValueSource::PlanPrice => "the owner's price for the member's plan",
            ValueSource::Member => "the member's own value",
            ValueSource::Average => "the account's average membership price",
        }
    }
}

/// What one of an outcome's months is worth (a recovered payment: the payment), and where it
/// came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    pub monthly: f64,
    pub source: ValueSource,
}

/// The revenue `outcome` credits for a task of `def`, or `None` if it credits nothing.
pub fn value_of(def: &TaskTypeDef, outcome: &str, price: f64) -> Option<f64> {
    let multiplier = def.outcome(outcome)?.revenue_multiplier?;
    Some(round_cents(multiplier * price))
}

/// What `task`'s outcome is reckoned at: a payment-recovery task whose trigger named the failed
/// payment's amount is worth that amount; any other, the member's `price`.
pub fn task_price(task: &Task, price: Price) -> Price {
    let amount = task
        .trigger_context
        .get("amount")
        .and_then(serde_json::Value::as_f64)
        .filter(|a| a.is_finite() && *a > 0.0);
    match amount {
        Some(amount) if task.task_type == "payment_recovery" => Price {
            monthly: amount,
            source: ValueSource::PaymentAmount,
        },
        _ => price,
    }
}

fn round_cents(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// How long after the close a provisional outcome or a late win is watched, in days.
pub fn window_days(def: &TaskTypeDef) -> u32 {
    outcome::verification_window_days(def.key)
        .or_else(|| def.goal.signals.iter().map(|s| s.verification_window_days).max())
        .unwrap_or(PROVISIONAL_WINDOW_DAYS)
}

/// Whether attribution watches `task` (closed), and until when. Computed at every close
/// (see [`crate::task::transition::transition`]); attribution clears it once the task is settled.
pub fn watch_until(task: &Task) -> Option<Timestamp> {
    let closed = task.resolved_at?;
    let def = task_type::definition(&task.task_type);
    let outcome = task.outcome.as_deref()?;
    let window = closed + days(i64::from(window_days(def)));
    match task.status {
        TaskStatus::Completed if task.provisional => Some(window),
        TaskStatus::Completed => {
            let credits = def.outcome(outcome).and_then(|o| o.revenue_multiplier).is_some();
            (credits && task.attributed_value.is_none()).then_some(closed)
        }
        // Only a task that wrote to the member can be won late, and only by a signal a
        // checker can see, into an outcome the type has.
        // A held-out task wrote nothing but is watched the same way, to be measured the same way.
        TaskStatus::Cancelled
            if outcome == UNRESPONSIVE
                && (task.touch > 0 || task.is_held_out())
                && outcome::is_watchable(def.key)
                && def.outcome(LATE_WIN).is_some() =>
        {
            Some(cohort_end(task).map_or(window, |end| end.max(window)))
        }
        // Any other task the holdout draw assigned (skipped, expired, closed by the owner) is
        // still watched to its cohort's end, for the lift alone: intent to treat counts it
        // whatever became of it (`Change::GoalSeen`).
        TaskStatus::Cancelled if task.goal_at.is_none() && outcome::is_watchable(def.key) => cohort_end(task).filter(|end| *end > closed),
        _ => None,
    }
}

/// The end of the lift's fixed window for a task the holdout draw assigned (either group).
fn cohort_end(task: &Task) -> Option<Timestamp> {
    task.holdout
        .map(|_| task.created_at + crate::task::holdout::conversion_window(task_type::definition(&task.task_type)))
}

/// What attribution does to one watched task.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The outcome's revenue, first set (provisional outcomes keep being watched).
    Valued { value: f64 },
    /// The signal came: the provisional outcome becomes the signal's outcome.
    Confirmed { from: String, reached: GoalReached, value: f64 },
    /// The window passed without the signal.
    Downgraded { from: String, to: String, window_days: u32 },
    /// A task closed unanswered whose signal came within the window.
    LateWin { reached: GoalReached, value: f64 },
    /// The goal of a task closed without an answer to wait for (skipped, expired, closed by
    /// the owner) showed inside its cohort's window: recorded for the lift, the outcome and
    /// its value left as they are.
    GoalSeen { at: Timestamp },
    /// The window passed (or nothing is left to watch): leave the index.
    Released,
}

impl Change {
    /// The task after the change (version not bumped) and why, for the decision log.
    pub fn apply(&self, task: &Task, price: Price) -> (Task, Why) {
        let mut next = task.clone();
        if !matches!(self, Change::Released | Change::Downgraded { .. }) && !task.is_held_out() {
            next.value_source = Some(price.source);
        }
        let at_price = format!("at {:.2} a month, {}", price.monthly, price.source.describe());
        let outcome = task.outcome.clone().unwrap_or_default();
        let why = match self {
            Change::Valued { value } => {
                next.attributed_value = Some(*value);
                if !next.provisional {
                    next.attribution_until = None;
                }
                let what = if task.provisional {
                    Reason::ProvisionalValueAttributed
                } else {
                    Reason::RevenueAttributed
                };
                Why::new(what).detail(format!("{outcome}: {} {at_price}", money(*value)))
            }
            Change::Confirmed { from, reached, value } => {
                next.goal_at = Some(reached.seen.at);
                next.outcome = Some(reached.outcome.to_owned());
                next.outcome_reason = Some(Reason::ProvisionalOutcomeConfirmed.to_string());
                next.attributed_value = Some(*value);
                next.provisional = false;
                next.attribution_until = None;
                Why::new(Reason::ProvisionalOutcomeConfirmed).detail(format!(
                    "{from} confirmed by the {} signal ({}): {} now, {} {at_price}",
                    reached.seen.signal,
                    reached.seen.detail,
                    reached.outcome,
                    money(*value)
                ))
            }
            Change::Downgraded { from, to, window_days } => {
                next.outcome = Some(to.clone());
                next.outcome_reason = Some(Reason::NoSignalAfterVerbalCommitment.to_string());
                next.attributed_value = Some(0.0);
                next.provisional = false;
                next.attribution_until = None;
                Why::new(Reason::NoSignalAfterVerbalCommitment).detail(format!(
                    "{from} downgraded to {to}: no goal signal within {window_days} days of the commitment; value zeroed"
                ))
            }
            Change::GoalSeen { at } => {
                next.goal_at = Some(*at);
                next.attribution_until = None;
                Why::new(Reason::GoalSignalAfterClose).detail(format!(
                    "the goal showed after the close ({outcome}); counted in the lift only, the outcome and its value stay"
                ))
            }
            Change::LateWin { reached, value } => {
                next.goal_at = Some(reached.seen.at);
                next.outcome = Some(LATE_WIN.into());
                next.outcome_reason = Some(Reason::GoalSignalAfterClose.to_string());
                next.attributed_value = Some(*value);
                next.attribution_until = None;
                Why::new(Reason::GoalSignalAfterClose).detail(format!(
                    "{outcome} re-attributed as {LATE_WIN} by the {} signal ({}): {} {at_price}; the status stays {}",
                    reached.seen.signal,
                    reached.seen.detail,
                    money(*value),
                    task.status
                ))
            }
            Change::Released => {
                next.attribution_until = None;
                let detail = match task.status {
                    TaskStatus::Cancelled => format!(
                        "no goal signal within {} days of closing",
                        window_days(task_type::definition(&task.task_type))
                    ),
                    _ => "nothing left to attribute".to_owned(),
                };
                Why::new(Reason::AttributionWindowClosed).detail(detail)
            }
        };
        (next, why)
    }
}

fn money(v: f64) -> String {
    format!("{v:.2} attributed")
}

/// Decide what attribution does to `task` (in the index) given the member's facts, the
/// member's monthly price and `now`; `None` while it simply keeps watching.
pub fn decide(task: &Task, facts: Option<&MemberFacts>, price: Price, now: Timestamp) -> Option<Change> {
    // A held-out member's return is never revenue Openloop caused.
    let price = if task.is_held_out() { 0.0 } else { price.monthly };
    let until = task.attribution_until?;
    let def = task_type::definition(&task.task_type);
    let outcome = task.outcome.clone().unwrap_or_default();
    let reached = || facts.and_then(|f| outcome::goal_reached(task, f, now.min(until)));
    match task.status {
        TaskStatus::Completed if task.provisional => {
            if let Some(reached) = reached() {
                let value = value_of(def, reached.outcome, price).unwrap_or(0.0);
                return Some(Change::Confirmed {
                    from: outcome,
                    reached,
                    value,
                });
            }
            if now >= until {
                let to = if def.outcome(VERBAL_ONLY).is_some() {
                    VERBAL_ONLY.to_owned()
                } else {
                    outcome.clone()
                };
                return Some(Change::Downgraded {
                    from: outcome,
                    to,
                    window_days: window_days(def),
                });
            }
            if task.attributed_value.is_none() {
                return Some(Change::Valued {
                    value: value_of(def, &outcome, price).unwrap_or(0.0),
                });
            }
            None
        }
        TaskStatus::Completed => match (task.attributed_value, value_of(def, &outcome, price)) {
            (None, Some(value)) => Some(Change::Valued { value }),
            _ => Some(Change::Released),
        },
        TaskStatus::Cancelled if outcome == UNRESPONSIVE => {
            if let Some(reached) = reached() {
                let value = value_of(def, LATE_WIN, price).unwrap_or(0.0);
                return Some(Change::LateWin { reached, value });
            }
            (now >= until).then_some(Change::Released)
        }
        TaskStatus::Cancelled if task.holdout.is_some() && task.goal_at.is_none() => {
            if let Some(reached) = reached() {
                return Some(Change::GoalSeen { at: reached.seen.at });
            }
            (now >= until).then_some(Change::Released)
        }
        _ => Some(Change::Released),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::MemberId;
    use crate::members::event::MemberEvent;
    use crate::task::transition::transition;
    use crate::testing::{at, sample_task};

    fn avg(monthly: f64) -> Price {
        Price {
            monthly,
            source: ValueSource::Average,
        }
    }

    fn facts_with_checkin(t: &str) -> MemberFacts {
        let member = MemberId::parse("m_1").expect("member");
        let mut facts = MemberFacts::new(member.clone());
        facts.apply(
            "c",
            &MemberEvent::CheckinCreated {
                member_id: member,
                checked_in_at: at(t),
                class_name: None,
            },
            at(t),
        );
        facts
    }

    fn churn(status: TaskStatus) -> Task {
        let mut task = sample_task(status);
        task.task_type = "churn_risk".into();
        task.execution_started_at = Some(at("2026-11-02T14:00:00Z"));
        task.touch = 1;
        task
    }

    #[test]
    fn a_provisional_close_is_watched_for_the_types_window_and_a_plain_one_only_until_valued() {
        let task = churn(TaskStatus::Waiting);
        let now = at("2026-11-04T10:00:00Z");
        let why = Why::new(Reason::VerbalCommitment).outcome("verbal_commitment").provisional();
        let (closed, _) = transition(&task, TaskStatus::Completed, now, why).expect("valid");
        assert!(closed.provisional);
        assert_eq!(closed.attribution_until, Some(now + days(14)));
        let (retained, _) = transition(
            &task,
            TaskStatus::Completed,
            now,
            Why::new(Reason::GoalSignalCheckin).outcome("retained"),
        )
        .expect("valid");
        assert_eq!((retained.provisional, retained.attribution_until), (false, Some(now)));
        let (handled, _) = transition(
            &task,
            TaskStatus::Completed,
            now,
            Why::new(Reason::OwnerResolved).outcome("owner_handled"),
        )
        .expect("valid");
        assert_eq!(handled.attribution_until, None);
        let (gone, _) = transition(
            &task,
            TaskStatus::Cancelled,
            now,
            Why::new(Reason::BudgetTimeExpired).outcome("unresponsive"),
        )
        .expect("valid");
        assert_eq!(gone.attribution_until, Some(now + days(14)));
        let (opted, _) = transition(
            &task,
            TaskStatus::Cancelled,
            now,
            Why::new(Reason::MemberOptedOut).outcome("opted_out"),
        )
        .expect("valid");
        assert_eq!(opted.attribution_until, None);
    }

    #[test]
    fn a_verbal_commitment_is_valued_at_half_then_downgraded_after_fourteen_days_without_a_checkin() {
        let task = churn(TaskStatus::Waiting);
        let closed_at = at("2026-11-04T10:00:00Z");
        let why = Why::new(Reason::VerbalCommitment).outcome("verbal_commitment").provisional();
        let (closed, _) = transition(&task, TaskStatus::Completed, closed_at, why).expect("valid");
        let nothing = MemberFacts::new(MemberId::parse("m_1").expect("member"));
        let first = decide(&closed, Some(&nothing), avg(150.0), closed_at).expect("valued");
        assert_eq!(first, Change::Valued { value: 75.0 });
        let (valued, _) = first.apply(&closed, avg(150.0));
        assert_eq!(decide(&valued, Some(&nothing), avg(150.0), closed_at + days(13)), None);
        let late = decide(&valued, Some(&nothing), avg(150.0), closed_at + days(14)).expect("downgraded");
        let (down, why) = late.apply(&valued, avg(150.0));
        assert_eq!(down.outcome.as_deref(), Some("verbal_only"));
        assert_eq!(
            (down.attributed_value, down.provisional, down.attribution_until),
            (Some(0.0), false, None)
        );
        assert_eq!(why.reason, Reason::NoSignalAfterVerbalCommitment);
    }

    #[test]
    fn a_checkin_inside_the_window_confirms_a_verbal_commitment_and_one_after_it_does_not() {
        let task = churn(TaskStatus::Waiting);
        let closed_at = at("2026-11-04T10:00:00Z");
        let why = Why::new(Reason::VerbalCommitment).outcome("verbal_commitment").provisional();
        let (closed, _) = transition(&task, TaskStatus::Completed, closed_at, why).expect("valid");
        let inside = facts_with_checkin("2026-11-10T18:00:00Z");
        let change = decide(&closed, Some(&inside), avg(150.0), at("2026-11-10T19:00:00Z")).expect("confirmed");
        let (confirmed, _) = change.apply(&closed, avg(150.0));
        assert_eq!(confirmed.outcome.as_deref(), Some("retained"));
        assert_eq!((confirmed.attributed_value, confirmed.provisional), (Some(150.0), false));
        let outside = facts_with_checkin("2026-11-20T18:00:00Z");
        let change = decide(&closed, Some(&outside), avg(150.0), at("2026-11-20T19:00:00Z")).expect("downgraded");
        assert!(matches!(change, Change::Downgraded { .. }), "{change:?}");
    }

    #[test]
    fn an_unresponsive_task_is_won_late_by_a_checkin_inside_its_window_and_released_after_it() {
        let task = churn(TaskStatus::Waiting);
        let closed_at = at("2026-11-16T10:00:00Z");
        let why = Why::new(Reason::BudgetTimeExpired).outcome("unresponsive");
        let (closed, _) = transition(&task, TaskStatus::Cancelled, closed_at, why).expect("valid");
        let nothing = MemberFacts::new(MemberId::parse("m_1").expect("member"));
        assert_eq!(decide(&closed, Some(&nothing), avg(150.0), closed_at + days(3)), None);
        let back = facts_with_checkin("2026-11-20T07:00:00Z");
        let change = decide(&closed, Some(&back), avg(200.0), at("2026-11-20T08:00:00Z")).expect("late win");
        let (won, _) = change.apply(&closed, avg(200.0));
        assert_eq!((won.status, won.outcome.as_deref()), (TaskStatus::Cancelled, Some("engaged_late")));
        assert_eq!(won.attributed_value, Some(200.0));
        assert_eq!(
            decide(&closed, Some(&nothing), avg(150.0), closed_at + days(14)),
            Some(Change::Released)
        );
    }

    #[test]
    fn a_task_that_never_wrote_is_not_watched_for_a_late_win() {
        let mut task = churn(TaskStatus::Waiting);
        task.touch = 0;
        let (closed, _) = transition(
            &task,
            TaskStatus::Cancelled,
            at("2026-11-16T10:00:00Z"),
            Why::new(Reason::BudgetTimeExpired).outcome("unresponsive"),
        )
        .expect("valid");
        assert_eq!(closed.attribution_until, None);
    }
}

//! What the outreach caused: per task type, the success rate of
//! the members Openloop contacted and of those it held out, the difference with its 95%
//! interval, and a verdict in plain words; revenue "after outreach" and "caused by outreach".
//!
//! The interval is Newcombe's hybrid score interval (Newcombe 1998, "Interval estimation for
//! the difference between independent proportions: comparison of eleven methods", method
//! 10): a Wilson score interval for each proportion, combined. It behaves well at the small
//! counts a gym has, where the textbook Wald interval does not.
//!
//! By intent to treat, per cohort: every task the holdout draw assigned in the window counts,
//! contacted or held out, whatever happened to it after (skipped, expired, still open). Its
//! success is whether its goal showed within the type's fixed conversion window from
//! assignment (`task::holdout::conversion_window`), the same window for both groups. A task
//! whose window has not passed yet is counted apart, "still in their window", in both groups
//! alike — never as a failure, never left out of one group only. A held-out member who got a
//! message by another path (another task, the owner's own) is counted as crossed over.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::task::holdout::Arm;
use crate::task::tally::TaskTally;

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;
/// z for 80% power.
const Z80: f64 = 0.841_621_233_572_914_3;
/// The lift the verdict asks the sample to be able to tell: 10 points.
pub const DETECTABLE_LIFT: f64 = 0.10;

/// The Wilson score interval of `successes` out of `n` at `z` (without continuity
/// correction); `[0, 1]` when there is nothing to go on.
pub fn wilson(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denominator = 1.0 + z2 / n;
    (((centre - half) / denominator).max(0.0), ((centre + half) / denominator).min(1.0))
}

/// Newcombe's hybrid score interval (method 10) for `x1/n1 − x2/n2`: the difference and its
/// 95% interval. `None` when either group is empty.
pub fn newcombe(x1: u64, n1: u64, x2: u64, n2: u64) -> Option<(f64, f64, f64)> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (p1, p2) = (x1 as f64 / n1 as f64, x2 as f64 / n2 as f64);
    let (l1, u1) = wilson(x1, n1, Z95);
    let (l2, u2) = wilson(x2, n2, Z95);
    let d = p1 - p2;
    let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Some((d, low, high))
}

/// How many members in all (both groups, `ratio` contacted for each held out) a two-sided
/// test at 5% needs to tell a lift of `delta` over a held-out rate of `baseline` with 80%
/// power — the standard two-proportion sample size (normal approximation, no continuity
/// correction, unequal groups).
pub fn members_needed(baseline: f64, delta: f64, ratio: f64) -> u64 {
    let p0 = baseline.clamp(0.0, 1.0);
    let p1 = if p0 + delta <= 1.0 { p0 + delta } else { p0 - delta };
    let k = ratio.max(f64::EPSILON);
    let pooled = (p0 + k * p1) / (1.0 + k);
    let h0 = Z95 * (pooled * (1.0 - pooled) * (1.0 + 1.0 / k)).sqrt();
    let h1 = Z80 * (p0 * (1.0 - p0) + p1 * (1.0 - p1) / k).sqrt();
    let held_out = ((h0 + h1) / delta).powi(2);
    (held_out * (1.0 + k)).ceil() as u64
}

pub use crate::task::holdout::succeeded;

/// One group's count.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Group {
    pub n: u64,
    pub succeeded: u64,
    /// `succeeded / n`, `None` with nobody in the group.
    pub rate: Option<f64>,
}

impl Group {
    fn add(&mut self, success: bool) {
        self.n += 1;
        self.succeeded += u64::from(success);
        self.rate = Some(round4(self.succeeded as f64 / self.n as f64));
    }
}

/// The members of a cohort whose window has not passed yet, by group: counted in neither
/// rate until it has.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StillInWindow {
    pub contacted: u64,
    pub held_out: u64,
}

/// Whose tasks a group's rates count: those assigned from `from` to `to` (the gym's local
/// dates), the last day whose members' window has passed; `to` is `None` while nobody's has.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Cohort {
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub from: Option<jiff::civil::Date>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub to: Option<jiff::civil::Date>,
}

/// The lift of one task type.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TypeLift {
    pub task_type: String,
    /// How long after assignment a member's goal counts (the same for both groups).
    pub window_days: i64,
    /// The assignment days the rates count.
    pub cohort: Cohort,
    pub contacted: Group,
    pub held_out: Group,
    /// Assigned in the window, their own window not passed yet.
    pub still_in_window: StillInWindow,
    /// Held-out members who got a message anyway by another path (another task, the
    /// owner's own) within their window; still counted held out (intent to treat).
    pub crossed_over: u64,
    /// Contacted rate minus held-out rate; `None` until both groups have members.
    pub difference: Option<f64>,
    /// Its 95% interval (Newcombe's hybrid score method).
    pub ci95: Option<[f64; 2]>,
    pub verdict: String,
    /// About how many more members (both groups) until a 10-point lift would show; 0 when
    /// there are enough.
    pub members_needed: u64,
    /// The contacted group's revenue as attributed (after outreach).
    pub revenue_after_outreach: f64,
    /// The part of it the lift says the outreach caused.
    pub revenue_caused: f64,
    /// The same lift across gyms of this business type, when at least three that share their
    /// learning had both groups (the latest monthly evaluation's; `learning/pooled.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled: Option<crate::owner::pooled_lift::PooledLift>,
}

/// The lift over a window: one entry per task type, and the revenue totals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lift {
    pub groups: Vec<TypeLift>,
    pub revenue_after_outreach: f64,
    pub revenue_caused: f64,
}

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

fn round_cents(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn points(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

/// The lift of the tasks in `tallies` the holdout draw `assigned` in a window (the others
/// show who crossed over), per task type — only
/// `task_type` if given (listed even with no tasks yet) — as it stands at `now`.
/// `holdout_percent` is the account's setting: it sizes the groups the verdict plans for
/// until both have members.
pub fn lift(
    tallies: &[TaskTally],
    assigned: std::ops::Range<Timestamp>,
    task_type: Option<&str>,
    holdout_percent: u8,
    now: Timestamp,
) -> Lift {
    struct Count {
        /// The type's conversion window.
        window: jiff::SignedDuration,
        contacted: Group,
        held_out: Group,
        revenue: f64,
        still: StillInWindow,
        crossed_over: u64,
    }
    let mut by_type: BTreeMap<String, Count> = BTreeMap::new();
    // When each member was written to by a task no draw held out: who crossed over.
    let mut contacted_at: BTreeMap<&str, Vec<Timestamp>> = BTreeMap::new();
    for t in tallies.iter().filter(|t| t.arm != Some(Arm::HeldOut) && t.touch > 0) {
        contacted_at.entry(t.member_id.as_str()).or_default().push(t.created_at);
    }
    let count_of = |task_type: &str| Count {
        window: crate::task::holdout::conversion_window(crate::task::task_type::definition(task_type)),
        contacted: Group::default(),
        held_out: Group::default(),
        revenue: 0.0,
        still: StillInWindow::default(),
        crossed_over: 0,
    };
    if let Some(t) = task_type {
        by_type.insert(t.to_owned(), count_of(t));
    }
    for tally in tallies {
        let Some(arm) = tally.arm else { continue };
        if task_type.is_some_and(|t| t != tally.task_type) || !assigned.contains(&tally.created_at) {
            continue;
        }
        if !by_type.contains_key(&tally.task_type) {
            by_type.insert(tally.task_type.clone(), count_of(&tally.task_type));
        }
        let Some(count) = by_type.get_mut(&tally.task_type) else { continue };
        // The tally's fixed window ends its assignment plus its type's conversion window.
        let end = tally.created_at + count.window;
        match (arm, end > now) {
            (Arm::Contacted, true) => count.still.contacted += 1,
            (Arm::HeldOut, true) => count.still.held_out += 1,
            (Arm::Contacted, false) => {
                let success = succeeded_within(tally, end);
                count.contacted.add(success);
                if success {
                    count.revenue += tally.attributed_value.filter(|v| *v > 0.0).unwrap_or(0.0);
                }
            }
            (Arm::HeldOut, false) => {
                count.held_out.add(succeeded_within(tally, end));
                let reached = contacted_at
                    .get(tally.member_id.as_str())
                    .is_some_and(|at| at.iter().any(|at| (tally.created_at..=end).contains(at)));
                count.crossed_over += u64::from(reached);
            }
        }
    }
    let groups: Vec<TypeLift> = by_type
        .into_iter()
        .map(|(task_type, c)| TypeLift {
            window_days: c.window.as_hours() / 24,
            still_in_window: c.still,
            crossed_over: c.crossed_over,
            ..judge(task_type, c.contacted, c.held_out, c.revenue, holdout_percent)
        })
        .collect();
    Lift {
        revenue_after_outreach: round_cents(groups.iter().map(|g| g.revenue_after_outreach).sum()),
        revenue_caused: round_cents(groups.iter().map(|g| g.revenue_caused).sum()),
        groups,
    }
}

/// Whether `tally`'s goal showed by `end`: when it showed, as the task recorded it, or, for a
/// task closed on its goal before that was recorded, its close.
fn succeeded_within(tally: &TaskTally, end: Timestamp) -> bool {
    let closed_on_goal = || {
        (!tally.provisional && succeeded(&tally.task_type, tally.outcome.as_deref()))
            .then_some(tally.resolved_at)
            .flatten()
    };
    tally.goal_at.or_else(closed_on_goal).is_some_and(|at| at <= end)
}

/// What success is for a task type, in the words of a verdict ("about 4 more … came back").
fn what_success_is(task_type: &str) -> &'static str {
    match task_type {
        "churn_risk" | "win_back" => "came back",
        "onboarding" => "kept coming",
        "lead_followup" => "joined",
        "payment_recovery" => "paid",
        _ => "reached the goal",
    }
}

/// A type's lift from its counts alone, `(n, succeeded)` of each group (for tests elsewhere).
#[cfg(test)]
pub(crate) fn of_counts(task_type: &str, contacted: (u64, u64), held_out: (u64, u64)) -> TypeLift {
    let group = |(n, succeeded): (u64, u64)| {
        let mut g = Group::default();
        (0..n).for_each(|i| g.add(i < succeeded));
        g
    };
    judge(task_type.to_owned(), group(contacted), group(held_out), 0.0, 10)
}

fn judge(task_type: String, contacted: Group, held_out: Group, revenue: f64, holdout_percent: u8) -> TypeLift {
    let total = contacted.n + held_out.n;
    // The groups as they are split, or as the setting will split them.
    let ratio = if contacted.n > 0 && held_out.n > 0 {
        contacted.n as f64 / held_out.n as f64
    } else {
        let share = f64::from(if holdout_percent == 0 { 10 } else { holdout_percent }) / 100.0;
        (1.0 - share) / share
    };
    let baseline = if total > 0 {
        (contacted.succeeded + held_out.succeeded) as f64 / total as f64
    } else {
        0.5
    };
    let needed = members_needed(baseline, DETECTABLE_LIFT, ratio);
    let more = needed.saturating_sub(total);
    // "About": a round number of members.
    let more = more.div_ceil(10) * 10;
    let interval = newcombe(contacted.succeeded, contacted.n, held_out.succeeded, held_out.n);
    let not_enough = format!("not enough members yet: about {more} more to tell a 10-point lift");
    // In members, as an owner reads it: the difference over the contacted group.
    let members = |share: f64| (share * contacted.n as f64).round().abs() as u64;
    let did = what_success_is(&task_type);
    let verdict = match interval {
        None if held_out.n == 0 && holdout_percent == 0 => {
            "no held-out members: hold out some members (10% is recommended) to see what outreach causes".to_owned()
        }
        None => not_enough.clone(),
        Some((d, low, high)) if low > 0.0 => format!(
            "outreach works: about {} more of the {} members contacted {did} than would have on their own (somewhere between {} and {}); {} points more succeeded (95% interval {} to {} points)",
            members(d),
            contacted.n,
            members(low),
            members(high),
            points(d),
            points(low),
            points(high)
        ),
        Some((d, low, high)) if high < 0.0 => format!(
            "contacted members did worse: about {} fewer of the {} contacted {did} than would have on their own (somewhere between {} and {}); {} points fewer succeeded (95% interval {} to {} points)",
            members(d),
            contacted.n,
            members(high),
            members(low),
            points(-d),
            points(low),
            points(high)
        ),
        Some(_) if more > 0 => not_enough.clone(),
        Some((_, low, high)) => format!(
            "no difference shown: with this many members a 10-point lift would show, and the 95% interval ({} to {} points) includes zero",
            points(low),
            points(high)
        ),
    };
    // Caused: the lift's share of the contacted group's successes, at their average value.
    let caused = match (interval, contacted.succeeded) {
        (Some((d, _, _)), s) if s > 0 => d * contacted.n as f64 * (revenue / s as f64),
        _ => 0.0,
    };
    TypeLift {
        task_type,
        difference: interval.map(|(d, _, _)| round4(d)),
        ci95: interval.map(|(_, low, high)| [round4(low), round4(high)]),
        verdict,
        members_needed: if interval.is_some_and(|(_, low, high)| low > 0.0 || high < 0.0) {
            0
        } else {
            more
        },
        revenue_after_outreach: round_cents(revenue),
        revenue_caused: round_cents(caused),
        pooled: None,
        window_days: 0,
        cohort: Cohort::default(),
        still_in_window: StillInWindow::default(),
        crossed_over: 0,
        contacted,
        held_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::{MemberId, TaskId};
    use crate::task::TaskStatus;
    use crate::testing::at;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 0.000_05
    }

    /// Newcombe (1998), Table II, method 10 (score interval without continuity correction,
    /// combined): the paper's eight worked examples, each to its four decimals.
    #[test]
    fn the_interval_matches_newcombes_worked_examples() {
        let table = [
            ((56, 70, 48, 80), (0.0524, 0.3339)),
            ((9, 10, 3, 10), (0.1705, 0.8090)),
            ((6, 7, 2, 7), (0.0582, 0.8062)),
            ((5, 56, 0, 29), (-0.0381, 0.1926)),
            ((0, 10, 0, 20), (-0.1611, 0.2775)),
            ((0, 10, 0, 10), (-0.2775, 0.2775)),
            ((10, 10, 0, 20), (0.6791, 1.0000)),
            ((10, 10, 0, 10), (0.6075, 1.0000)),
        ];
        for ((x1, n1, x2, n2), (low, high)) in table {
            let (d, l, h) = newcombe(x1, n1, x2, n2).unwrap_or_else(|| panic!("both groups have members"));
            assert!(close(d, x1 as f64 / n1 as f64 - x2 as f64 / n2 as f64));
            assert!(
                close(round4(l), low) && close(round4(h), high),
                "{x1}/{n1} - {x2}/{n2}: {l:.4} to {h:.4}, the paper {low} to {high}"
            );
        }
        assert_eq!(newcombe(3, 10, 0, 0), None, "nothing to compare with");
    }

    /// Wilson (1927) as Newcombe (1998, Table I, method 3) gives it: 81/263 → 0.2553 to 0.3662.
    #[test]
    fn the_wilson_interval_matches_the_published_example() {
        let (low, high) = wilson(81, 263, Z95);
        assert!(close(round4(low), 0.2553) && close(round4(high), 0.3662), "{low} {high}");
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }

    /// The textbook case (Fleiss): 30% against 40% in two equal groups needs 356 a group at
    /// 5% two-sided and 80% power — 712 in all.
    #[test]
    fn the_sample_size_is_the_standard_two_proportion_one() {
        assert_eq!(members_needed(0.3, 0.1, 1.0), 712);
        // Holding out 10% (nine contacted for each held out) needs more members in all.
        assert!(members_needed(0.3, 0.1, 9.0) > 712);
    }

    /// The lift of `tallies` (assigned on 2026-11-02) once every window has passed.
    fn judged(tallies: &[TaskTally], task_type: Option<&str>, holdout_percent: u8) -> Lift {
        lift(
            tallies,
            Timestamp::MIN..Timestamp::MAX,
            task_type,
            holdout_percent,
            at("2027-06-01T00:00:00Z"),
        )
    }

    fn open(i: usize, arm: Arm) -> TaskTally {
        TaskTally {
            status: if arm == Arm::HeldOut {
                TaskStatus::HeldOut
            } else {
                TaskStatus::Waiting
            },
            resolved_at: None,
            outcome: None,
            ..tally(i, arm, "", None)
        }
    }

    /// The gym: 120 members, a fifth held out, a third of each group back — and only
    /// the successes closed. Counting closes gave 1.0 against 1.0; by intent to treat, once the
    /// window has passed, both rates are a third. Before it has, nobody is counted as a failure:
    /// every member is still in their window, in both groups alike.
    #[test]
    fn every_member_assigned_is_counted_once_the_window_has_passed() {
        let mut tallies = Vec::new();
        for i in 0..120 {
            let arm = if i % 5 == 0 { Arm::HeldOut } else { Arm::Contacted };
            tallies.push(if i % 3 == 0 {
                tally(i, arm, "retained", Some(150.0))
            } else {
                open(i, arm)
            });
        }
        let group = &judged(&tallies, None, 20).groups[0];
        assert_eq!((group.contacted.n, group.contacted.succeeded), (96, 32));
        assert_eq!((group.held_out.n, group.held_out.succeeded), (24, 8));
        assert_eq!(group.difference, Some(0.0));
        assert_eq!(group.still_in_window, StillInWindow::default());
        assert_eq!(group.window_days, 14);

        let early = lift(&tallies, Timestamp::MIN..Timestamp::MAX, None, 20, at("2026-11-10T00:00:00Z"));
        let group = &early.groups[0];
        assert_eq!((group.contacted.n, group.held_out.n), (0, 0));
        assert_eq!(
            group.still_in_window,
            StillInWindow {
                contacted: 96,
                held_out: 24
            }
        );
        assert!(group.verdict.starts_with("not enough members yet"), "{}", group.verdict);
    }

    /// A goal that shows after the window counts for neither group; one that shows inside it
    /// counts whatever became of the task (skipped, expired, closed by the owner).
    #[test]
    fn success_is_the_goal_within_the_fixed_window_from_assignment() {
        let assigned = at("2026-11-02T14:00:00Z");
        let late = TaskTally {
            goal_at: Some(assigned + jiff::SignedDuration::from_hours(24 * 15)),
            ..tally(0, Arm::HeldOut, "retained", None)
        };
        let skipped_but_back = TaskTally {
            status: TaskStatus::Cancelled,
            goal_at: Some(assigned + jiff::SignedDuration::from_hours(24 * 3)),
            ..tally(1, Arm::Contacted, "skipped", None)
        };
        // A commitment whose signal never came is no success once the window has passed.
        let promised = TaskTally {
            provisional: true,
            ..tally(2, Arm::Contacted, "retained", Some(75.0))
        };
        let group = &judged(&[late, skipped_but_back, promised], None, 20).groups[0];
        assert_eq!((group.held_out.n, group.held_out.succeeded), (1, 0));
        assert_eq!((group.contacted.n, group.contacted.succeeded), (2, 1));
    }

    /// A held-out member mailed by the owner's own task within their window stays held out
    /// (intent to treat), and the report says one crossed over.
    #[test]
    fn a_held_out_member_contacted_another_way_is_counted_as_crossed_over() {
        let held = open(7, Arm::HeldOut);
        let owners = TaskTally {
            arm: None,
            task_type: "ad_hoc".into(),
            created_at: held.created_at + jiff::SignedDuration::from_hours(48),
            ..tally(7, Arm::Contacted, "unresponsive", None)
        };
        let group = &judged(&[held, owners], Some("churn_risk"), 20).groups[0];
        assert_eq!((group.held_out.n, group.crossed_over), (1, 1));
    }

    fn tally(i: usize, arm: Arm, outcome: &str, value: Option<f64>) -> TaskTally {
        let now = at("2026-11-02T14:00:00Z");
        TaskTally {
            task_id: TaskId::generate(now),
            member_id: MemberId::parse(&format!("m_{i}")).unwrap_or_else(|e| panic!("{e}")),
            status: TaskStatus::Completed,
            touch: 1,
            created_at: now,
            resolved_at: Some(now),
            outcome: Some(outcome.into()),
            attributed_value: value,
            task_type: "churn_risk".into(),
            arm: Some(arm),
            experiment: None,
            provisional: false,
            goal_at: None,
            next_action_at: None,
        }
    }

    #[test]
    fn a_planted_difference_shows_with_an_interval_above_zero_and_the_revenue_it_caused() {
        // 80 contacted, 60 of them back (150 each); 20 held out, 5 back by themselves.
        let mut tallies: Vec<TaskTally> = (0..80)
            .map(|i| match i < 60 {
                true => tally(i, Arm::Contacted, "retained", Some(150.0)),
                false => tally(i, Arm::Contacted, "unresponsive", None),
            })
            .collect();
        tallies.extend((80..100).map(|i| tally(i, Arm::HeldOut, if i < 85 { "retained" } else { "unresponsive" }, Some(0.0))));
        // Not counted: a task no draw went through.
        tallies.push(TaskTally {
            arm: None,
            ..tally(101, Arm::Contacted, "retained", Some(150.0))
        });
        let lift = judged(&tallies, None, 20);
        let [group] = lift.groups.as_slice() else {
            panic!("one type: {lift:?}")
        };
        assert_eq!(
            (
                group.contacted.n,
                group.contacted.succeeded,
                group.held_out.n,
                group.held_out.succeeded
            ),
            (80, 60, 20, 5)
        );
        assert_eq!(group.difference, Some(0.5));
        let [low, high] = group.ci95.unwrap_or_else(|| panic!("an interval"));
        assert!(low > 0.0 && high > low, "{low} {high}");
        assert!(
            group.verdict.starts_with(
                "outreach works: about 40 more of the 80 members contacted came back than would have on their own (somewhere between "
            ),
            "{}",
            group.verdict
        );
        assert!(group.verdict.contains("; 50.0 points more succeeded"), "{}", group.verdict);
        assert_eq!(lift.revenue_after_outreach, 9_000.0);
        // Half of the 80 contacted came back because of it: 40 members at 150.
        assert_eq!(lift.revenue_caused, 6_000.0);
    }

    #[test]
    fn no_difference_gives_an_interval_across_zero_and_says_not_enough() {
        let mut tallies: Vec<TaskTally> = (0..40)
            .map(|i| tally(i, Arm::Contacted, if i % 2 == 0 { "retained" } else { "unresponsive" }, None))
            .collect();
        tallies.extend((40..50).map(|i| tally(i, Arm::HeldOut, if i % 2 == 0 { "engaged_late" } else { "unresponsive" }, None)));
        let lift = judged(&tallies, Some("churn_risk"), 20);
        let group = &lift.groups[0];
        let [low, high] = group.ci95.unwrap_or_else(|| panic!("an interval"));
        assert!(low < 0.0 && high > 0.0, "{low} {high}");
        assert!(group.verdict.starts_with("not enough members yet: about "), "{}", group.verdict);
        assert!(group.members_needed > 500, "{}", group.members_needed);
        assert!(group.verdict.contains(&format!("about {} more", group.members_needed)));
    }

    #[test]
    fn without_held_out_members_the_verdict_says_what_to_do() {
        let tallies: Vec<TaskTally> = (0..10).map(|i| tally(i, Arm::Contacted, "retained", Some(150.0))).collect();
        let off = judged(&tallies, None, 0);
        assert_eq!(off.groups[0].difference, None);
        assert!(
            off.groups[0].verdict.starts_with("no held-out members"),
            "{}",
            off.groups[0].verdict
        );
        assert_eq!(off.revenue_caused, 0.0);
        let on = judged(&tallies, Some("win_back"), 10);
        assert_eq!(on.groups[0].task_type, "win_back");
        assert_eq!(on.groups[0].contacted.n, 0);
        assert!(
            on.groups[0].verdict.starts_with("not enough members yet"),
            "{}",
            on.groups[0].verdict
        );
    }

    #[test]
    fn success_is_the_goals_own_outcome() {
        assert!(succeeded("churn_risk", Some("retained")));
        assert!(succeeded("churn_risk", Some("engaged_late")));
        assert!(succeeded("win_back", Some("recovered")));
        assert!(!succeeded("churn_risk", Some("verbal_only")));
        assert!(!succeeded("churn_risk", Some("unresponsive")));
        assert!(!succeeded("churn_risk", None));
    }
}

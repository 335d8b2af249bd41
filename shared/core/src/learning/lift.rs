//! What the outreach caused (CONTRACT.md "Honest lift"): per task type, the success rate of
//! the members Openloop contacted and of those it held out, the difference with its 95%
//! interval, and a verdict in plain words; revenue "after outreach" and "caused by outreach".
//!
//! The interval is Newcombe's hybrid score interval (Newcombe 1998, "Interval estimation for
//! the difference between independent proportions: comparison of eleven methods", method
//! 10): a Wilson score interval for each proportion, combined. It behaves well at the small
//! counts a gym has, where the textbook Wald interval does not.
//!
//! A task succeeded when it closed with an outcome its goal's signal gives (or a late win, or
//! a return before any outreach): the same test for both groups, by intent to treat — every
//! contacted task counts, whatever the owner or the member did with it. An outcome still
//! awaiting its signal (a verbal commitment) counts in neither group until it is settled.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::task::holdout::Arm;
use crate::task::tally::TaskTally;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
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

/// The lift of one task type.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TypeLift {
    pub task_type: String,
    pub contacted: Group,
    pub held_out: Group,
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

/// The lift of the closed tasks in `tallies` (each counted once, by the group its draw put
/// it in), per task type — only `task_type` if given (listed even with no tasks yet).
/// `holdout_percent` is the account's setting: it sizes the groups the verdict plans for
/// until both have members.
pub fn lift(tallies: &[TaskTally], task_type: Option<&str>, holdout_percent: u8) -> Lift {
    let mut by_type: BTreeMap<String, (Group, Group, f64)> = BTreeMap::new();
    if let Some(t) = task_type {
        by_type.entry(t.to_owned()).or_default();
    }
    for tally in tallies {
        let Some(arm) = tally.arm else { continue };
        if tally.is_open() || tally.provisional || task_type.is_some_and(|t| t != tally.task_type) {
            continue;
        }
        let success = succeeded(&tally.task_type, tally.outcome.as_deref());
        let (contacted, held_out, revenue) = by_type.entry(tally.task_type.clone()).or_default();
        match arm {
            Arm::Contacted => {
                contacted.add(success);
                *revenue += tally.attributed_value.filter(|v| *v > 0.0).unwrap_or(0.0);
            }
            Arm::HeldOut => held_out.add(success),
        }
    }
    let groups: Vec<TypeLift> = by_type
        .into_iter()
        .map(|(task_type, (contacted, held_out, revenue))| judge(task_type, contacted, held_out, revenue, holdout_percent))
        .collect();
    Lift {
        revenue_after_outreach: round_cents(groups.iter().map(|g| g.revenue_after_outreach).sum()),
        revenue_caused: round_cents(groups.iter().map(|g| g.revenue_caused).sum()),
        groups,
    }
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
    let verdict = match interval {
        None if held_out.n == 0 && holdout_percent == 0 => {
            "no held-out members: hold out some members (10% is recommended) to see what outreach causes".to_owned()
        }
        None => not_enough.clone(),
        Some((d, low, _)) if low > 0.0 => format!(
            "outreach works: {} points more succeeded when contacted (95% interval {} to {} points)",
            points(d),
            points(low),
            points(interval.map_or(0.0, |i| i.2))
        ),
        Some((d, low, high)) if high < 0.0 => format!(
            "contacted members did worse: {} points fewer succeeded (95% interval {} to {} points)",
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
        // Not counted: a commitment awaiting its signal, and a task no draw went through.
        tallies.push(TaskTally {
            provisional: true,
            ..tally(100, Arm::Contacted, "verbal_commitment", Some(75.0))
        });
        tallies.push(TaskTally {
            arm: None,
            ..tally(101, Arm::Contacted, "retained", Some(150.0))
        });
        let lift = lift(&tallies, None, 20);
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
        assert!(group.verdict.starts_with("outreach works: 50.0 points more"), "{}", group.verdict);
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
        let lift = lift(&tallies, Some("churn_risk"), 20);
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
        let off = lift(&tallies, None, 0);
        assert_eq!(off.groups[0].difference, None);
        assert!(
            off.groups[0].verdict.starts_with("no held-out members"),
            "{}",
            off.groups[0].verdict
        );
        assert_eq!(off.revenue_caused, 0.0);
        let on = lift(&tallies, Some("win_back"), 10);
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

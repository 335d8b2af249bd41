//! Lift a small gym can read: the gyms' own lifts pooled per business type and task type — the
//! contacted and the held-out members of every contributing gym added up, each counted as its
//! own gym's lift counts them (by intent to treat, once their window has passed), and the
//! difference within gyms with its 95% interval ([`within_gyms`]).
//!
//! Under the cross-tenant privacy rules: only counts cross gyms; gyms are told apart only by
//! their keyed pseudonyms; accounts that do not share are left out before this runs
//! (`engine/learning/network.rs`); and a figure exists only with at least [`MIN_CONTRIBUTORS`]
//! gyms behind it. A gym counts only for a task type it has both contacted and held-out members
//! of: pooling one gym's contacted members with another's held-out ones would compare gyms, not
//! outreach.

use std::collections::BTreeMap;

use super::lift::{TypeLift, Z95};
use super::network::MIN_CONTRIBUTORS;
use crate::owner::pooled_lift::{PooledGroup, PooledLift};

/// (members, succeeded) contacted, then held out.
type Counts = [(u64, u64); 2];

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

fn group((n, succeeded): (u64, u64)) -> PooledGroup {
    PooledGroup {
        n,
        succeeded,
        rate: round4(succeeded as f64 / n.max(1) as f64),
    }
}

/// The sentence the owner reads beside their own numbers.
pub fn summary(gyms: u64, difference: f64, low: f64, high: f64) -> String {
    let (verb, size) = if difference >= 0.0 {
        ("adds", difference)
    } else {
        ("takes off", -difference)
    };
    format!(
        "across {gyms} gyms like yours, outreach of this type {verb} {:.1} points (95% interval {:.1} to {:.1} points)",
        size * 100.0,
        low * 100.0,
        high * 100.0
    )
}

/// The difference within gyms, pooled (the Mantel–Haenszel risk difference), and its 95%
/// interval: each gym's own contacted-minus-held-out difference, weighted by `n_c·n_h/(n_c+n_h)`.
/// Adding up the counts instead would compare gyms with each other: a gym that holds out 20%
/// of members who come back often, beside one that holds out 10% of members who seldom do,
/// shows a "difference" with no outreach at all. The variance is the gyms' own under the
/// fixed weights (each gym's groups are independent binomials); `make bench` checks its
/// coverage by simulation.
fn within_gyms(gyms: &[&Counts]) -> Option<(f64, f64, f64)> {
    let (mut weights, mut sum, mut variance) = (0.0, 0.0, 0.0);
    for [(nc, sc), (nh, sh)] in gyms.iter().map(|c| **c) {
        if nc == 0 || nh == 0 {
            continue;
        }
        let (nc, nh) = (nc as f64, nh as f64);
        let (pc, ph) = (sc as f64 / nc, sh as f64 / nh);
        let w = nc * nh / (nc + nh);
        weights += w;
        sum += w * (pc - ph);
        variance += w * w * (pc * (1.0 - pc) / nc + ph * (1.0 - ph) / nh);
    }
    if weights == 0.0 {
        return None;
    }
    let d = sum / weights;
    let half = Z95 * variance.sqrt() / weights;
    Some((d, (d - half).max(-1.0), (d + half).min(1.0)))
}

/// One gym's own lift as it goes into the pool: its business type, its keyed pseudonym and
/// its groups, counted as its own lift counts them (intent to treat, each member once their
/// window has passed: `super::lift::lift`).
pub struct GymLift<'a> {
    pub business_type: &'a str,
    pub contributor: &'a str,
    pub groups: &'a [TypeLift],
}

/// The pooled lift of every (business type, task type) the gyms' lifts support.
pub fn pooled(month: &str, gyms: &[GymLift<'_>]) -> Vec<PooledLift> {
    let mut by: BTreeMap<(&str, &str), BTreeMap<&str, Counts>> = BTreeMap::new();
    for gym in gyms {
        for g in gym.groups {
            let counts = by
                .entry((gym.business_type, g.task_type.as_str()))
                .or_default()
                .entry(gym.contributor)
                .or_default();
            counts[0].0 += g.contacted.n;
            counts[0].1 += g.contacted.succeeded;
            counts[1].0 += g.held_out.n;
            counts[1].1 += g.held_out.succeeded;
        }
    }
    let mut found = Vec::new();
    for ((business_type, task_type), gyms) in by {
        let both: Vec<&Counts> = gyms.values().filter(|c| c[0].0 > 0 && c[1].0 > 0).collect();
        if both.len() < MIN_CONTRIBUTORS {
            continue;
        }
        let sum = |i: usize| both.iter().fold((0, 0), |(n, s), c| (n + c[i].0, s + c[i].1));
        let (contacted, held_out) = (sum(0), sum(1));
        let Some((difference, low, high)) = within_gyms(&both) else {
            continue;
        };
        let gyms = both.len() as u64;
        found.push(PooledLift {
            task_type: task_type.to_owned(),
            business_type: business_type.to_owned(),
            month: month.to_owned(),
            gyms,
            contacted: group(contacted),
            held_out: group(held_out),
            difference: round4(difference),
            ci95: [round4(low), round4(high)],
            summary: summary(gyms, difference, low, high),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gym's churn lift: contacted members (`back` of them back) and held-out ones.
    fn gym(contacted: (u64, u64), held_out: (u64, u64)) -> Vec<TypeLift> {
        vec![super::super::lift::of_counts("churn_risk", contacted, held_out)]
    }

    #[test]
    fn three_gyms_of_a_type_pool_their_groups_and_two_do_not() {
        let (a, b, c) = (gym((20, 10), (5, 1)), gym((20, 12), (5, 1)), gym((20, 8), (5, 1)));
        let one = |who, business_type, groups| GymLift {
            business_type,
            contributor: who,
            groups,
        };
        let mut gyms = vec![one("a", "crossfit_gym", &a), one("b", "crossfit_gym", &b)];
        assert!(pooled("2026-10", &gyms).is_empty(), "two gyms are not enough");
        gyms.push(one("c", "crossfit_gym", &c));
        // Not counted: a gym with no held-out members, another type.
        let (d, f) = (gym((20, 20), (0, 0)), gym((20, 10), (5, 1)));
        gyms.push(one("d", "crossfit_gym", &d));
        gyms.push(one("f", "yoga_studio", &f));
        let found = pooled("2026-10", &gyms);
        let [lift] = found.as_slice() else {
            panic!("one pooled figure: {found:?}")
        };
        assert_eq!(
            (lift.business_type.as_str(), lift.task_type.as_str(), lift.gyms),
            ("crossfit_gym", "churn_risk", 3)
        );
        assert_eq!((lift.contacted.n, lift.contacted.succeeded), (60, 30));
        assert_eq!((lift.held_out.n, lift.held_out.succeeded), (15, 3));
        // Each gym's own difference (0.3, 0.4, 0.2), equally weighted: their sizes are equal.
        assert_eq!(lift.difference, 0.3);
        let [low, high] = lift.ci95;
        assert!(0.0 < low && low < 0.3 && 0.3 < high, "{low} {high}");
        assert!(
            lift.summary
                .starts_with("across 3 gyms like yours, outreach of this type adds 30.0 points (95% interval "),
            "{}",
            lift.summary
        );
    }
}

//! Lift a small gym can read: one month of cross-tenant records pooled per business type and
//! task type — the contacted and the held-out members of every contributing gym added up, and
//! the difference with Newcombe's 95% interval, as one gym's lift is measured.
//!
//! Under the cross-tenant record's privacy rules: gyms are told apart only by their keyed
//! pseudonyms; a record without one counts for nothing; the records of accounts that do not
//! share are left out before this runs (`engine/learning/network.rs`); and a figure exists only with at
//! least [`MIN_CONTRIBUTORS`] gyms behind it. A gym counts only for a task type it has both
//! contacted and held-out members of that month: pooling one gym's contacted members with
//! another's held-out ones would compare gyms, not outreach.

use std::collections::BTreeMap;

use super::interaction::SharedOutcome;
use super::lift::newcombe;
use super::network::MIN_CONTRIBUTORS;
use crate::owner::pooled_lift::{PooledGroup, PooledLift};
use crate::task::holdout::{Arm, succeeded};

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

/// The pooled lift of every (business type, task type) the month's records support.
pub fn pooled(month: &str, records: &[SharedOutcome]) -> Vec<PooledLift> {
    let mut by: BTreeMap<(&str, &str), BTreeMap<&str, Counts>> = BTreeMap::new();
    for r in records {
        let (Some(business_type), Some(who), Some(arm)) = (r.business_type.as_deref(), r.contributor.as_deref(), r.arm) else {
            continue;
        };
        // A commitment awaiting its signal counts in neither group until it is settled.
        if r.provisional {
            continue;
        }
        let counts = by.entry((business_type, r.task_type.as_str())).or_default().entry(who).or_default();
        let slot = &mut counts[usize::from(arm == Arm::HeldOut)];
        slot.0 += 1;
        slot.1 += u64::from(succeeded(&r.task_type, r.outcome.as_deref()));
    }
    let mut found = Vec::new();
    for ((business_type, task_type), gyms) in by {
        let both: Vec<&Counts> = gyms.values().filter(|c| c[0].0 > 0 && c[1].0 > 0).collect();
        if both.len() < MIN_CONTRIBUTORS {
            continue;
        }
        let sum = |i: usize| both.iter().fold((0, 0), |(n, s), c| (n + c[i].0, s + c[i].1));
        let (contacted, held_out) = (sum(0), sum(1));
        let Some((difference, low, high)) = newcombe(contacted.1, contacted.0, held_out.1, held_out.0) else {
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

    /// `per` records of a gym: contacted members (`back` of them back) and held-out ones.
    fn gym(who: &str, business_type: &str, contacted: (u32, u32), held_out: (u32, u32)) -> Vec<SharedOutcome> {
        let one = |arm: Arm, back: bool| SharedOutcome {
            outcome: Some(if back { "retained" } else { "unresponsive" }.into()),
            business_type: Some(business_type.into()),
            contributor: Some(who.into()),
            arm: Some(arm),
            touches: u32::from(arm == Arm::Contacted),
            ..crate::testing::sample_shared_outcome(10, false)
        };
        (0..contacted.0)
            .map(|i| one(Arm::Contacted, i < contacted.1))
            .chain((0..held_out.0).map(|i| one(Arm::HeldOut, i < held_out.1)))
            .collect()
    }

    #[test]
    fn three_gyms_of_a_type_pool_their_groups_and_two_do_not() {
        let mut records = gym("a", "crossfit_gym", (20, 10), (5, 1));
        records.extend(gym("b", "crossfit_gym", (20, 12), (5, 1)));
        assert!(pooled("2026-10", &records).is_empty(), "two gyms are not enough");
        records.extend(gym("c", "crossfit_gym", (20, 8), (5, 1)));
        // Not counted: a gym with no held-out members, a record without a pseudonym, another type.
        records.extend(gym("d", "crossfit_gym", (20, 20), (0, 0)));
        records.push(SharedOutcome {
            contributor: None,
            ..gym("e", "crossfit_gym", (0, 0), (1, 1))[0].clone()
        });
        records.extend(gym("f", "yoga_studio", (20, 10), (5, 1)));
        let found = pooled("2026-10", &records);
        let [lift] = found.as_slice() else {
            panic!("one pooled figure: {found:?}")
        };
        assert_eq!(
            (lift.business_type.as_str(), lift.task_type.as_str(), lift.gyms),
            ("crossfit_gym", "churn_risk", 3)
        );
        assert_eq!((lift.contacted.n, lift.contacted.succeeded), (60, 30));
        assert_eq!((lift.held_out.n, lift.held_out.succeeded), (15, 3));
        assert_eq!(lift.difference, 0.3);
        let (d, low, high) = newcombe(30, 60, 3, 15).unwrap_or_else(|| panic!("groups"));
        assert_eq!(lift.ci95, [round4(low), round4(high)]);
        assert!(low > 0.0 && (d - 0.3).abs() < 1e-9);
        assert!(
            lift.summary
                .starts_with("across 3 gyms like yours, outreach of this type adds 30.0 points (95% interval "),
            "{}",
            lift.summary
        );
    }
}

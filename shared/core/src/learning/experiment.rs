//! What a message experiment shows: each version's
//! closed tasks and successes, the proposed version's rate minus the current one's with the
//! same 95% interval as the lift (Newcombe's hybrid score method, [`super::lift::newcombe`]),
//! and a verdict in plain words. The proposed version wins once each version has
//! [`MIN_EXPERIMENT_SAMPLE`] closed tasks and the interval lies above zero.
//!
//! A task counts as the lift counts it: closed with an outcome its goal's signal gives, by
//! intent to treat; an outcome still awaiting its signal counts for neither version.

use serde::Serialize;

use crate::learning::lift::{newcombe, succeeded};
use crate::owner::experiment::{Experiment, ExperimentStatus, MIN_EXPERIMENT_SAMPLE};
use crate::task::experiment::Variant;
use crate::task::tally::TaskTally;

/// One version's count.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VariantCount {
    /// `current` or `proposed`.
    pub name: String,
    pub n: u64,
    pub succeeded: u64,
    /// `succeeded / n`; `None` before any closed task.
    pub rate: Option<f64>,
}

/// An experiment's numbers and verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExperimentResult {
    /// The current version first, then the proposed one.
    pub variants: Vec<VariantCount>,
    /// Proposed rate minus current rate; `None` until both have closed tasks.
    pub difference: Option<f64>,
    /// Its 95% interval.
    pub ci95: Option<[f64; 2]>,
    pub verdict: String,
    /// The proposed version won at 95% over the minimum sample.
    pub proposed_wins: bool,
}

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

fn points(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

/// The result of `experiment` over the tallies (only those of its tasks count).
pub fn result(experiment: &Experiment, tallies: &[TaskTally]) -> ExperimentResult {
    let mut counts = [(0u64, 0u64); 2];
    for tally in tallies {
        let Some(arm) = tally.experiment.filter(|a| a.experiment_id == experiment.id) else {
            continue;
        };
        if tally.is_open() || tally.provisional {
            continue;
        }
        let slot = &mut counts[usize::from(arm.variant == Variant::Proposed)];
        slot.0 += 1;
        slot.1 += u64::from(succeeded(&tally.task_type, tally.outcome.as_deref()));
    }
    let [(nc, sc), (np, sp)] = counts;
    let interval = newcombe(sp, np, sc, nc);
    let enough = nc >= MIN_EXPERIMENT_SAMPLE && np >= MIN_EXPERIMENT_SAMPLE;
    let proposed_wins = enough && interval.is_some_and(|(_, low, _)| low > 0.0);
    let shown = |(d, low, high): (f64, f64, f64)| {
        format!(
            "{} points {} succeeded with the proposed version (95% interval {} to {} points)",
            points(d.abs()),
            if d >= 0.0 { "more" } else { "fewer" },
            points(low),
            points(high)
        )
    };
    let ends = experiment.ends_at.strftime("%Y-%m-%d");
    let verdict = match (experiment.status, interval) {
        (ExperimentStatus::Kept, Some(i)) => format!("kept for every task: {}", shown(i)),
        (ExperimentStatus::Kept, None) => "kept for every task".to_owned(),
        (ExperimentStatus::Ended, Some(i)) => format!("ended without a win; the current version stays: {}", shown(i)),
        (ExperimentStatus::Ended, None) => "ended without a win; the current version stays".to_owned(),
        (_, Some(i)) if proposed_wins => format!("the proposed version wins: {}", shown(i)),
        (_, _) if !enough => {
            format!("not enough tasks yet: {nc} and {np} closed of the {MIN_EXPERIMENT_SAMPLE} each version needs; runs until {ends}")
        }
        (_, Some(i)) if i.2 < 0.0 => format!(
            "the proposed version does worse: {}; it ends on {ends} and nothing changes",
            shown(i)
        ),
        (_, Some(i)) => format!("no difference shown yet: {}; runs until {ends}", shown(i)),
        (_, None) => format!("no closed tasks yet; runs until {ends}"),
    };
    let count = |variant: Variant, n: u64, s: u64| VariantCount {
        name: variant.as_str().to_owned(),
        n,
        succeeded: s,
        rate: (n > 0).then(|| round4(s as f64 / n as f64)),
    };
    ExperimentResult {
        variants: vec![count(Variant::Current, nc, sc), count(Variant::Proposed, np, sp)],
        difference: interval.map(|(d, _, _)| round4(d)),
        ci95: interval.map(|(_, low, high)| [round4(low), round4(high)]),
        verdict,
        proposed_wins,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::{MemberId, TaskId};
    use crate::owner::experiment::Trial;
    use crate::task::TaskStatus;
    use crate::task::experiment::ExperimentArm;
    use crate::testing::at;

    fn experiment() -> Experiment {
        Experiment::new(
            ulid::Ulid::from_parts(1, 1),
            ulid::Ulid::from_parts(1, 2),
            "Mention the new class".into(),
            Trial::Learned {
                suggestion_id: ulid::Ulid::from_parts(1, 2),
            },
            vec!["churn_risk".into()],
            at("2026-11-02T14:00:00Z"),
        )
    }

    fn tallies(e: &Experiment, variant: Variant, n: usize, won: usize) -> Vec<TaskTally> {
        let now = at("2026-11-10T14:00:00Z");
        (0..n)
            .map(|i| TaskTally {
                task_id: TaskId::generate(now),
                member_id: MemberId::parse(&format!("m_{i}")).unwrap_or_else(|e| panic!("{e}")),
                status: TaskStatus::Completed,
                touch: 1,
                created_at: now,
                resolved_at: Some(now),
                outcome: Some(if i < won { "retained" } else { "unresponsive" }.into()),
                attributed_value: None,
                task_type: "churn_risk".into(),
                arm: None,
                experiment: Some(ExperimentArm {
                    experiment_id: e.id,
                    variant,
                }),
                provisional: false,
                goal_at: None,
                next_action_at: None,
            })
            .collect()
    }

    #[test]
    fn a_planted_win_over_the_minimum_sample_wins_and_a_small_or_even_one_does_not() {
        let e = experiment();
        // Newcombe's example (h): 56/70 vs 48/80, proposed minus current 0.2 (0.0524 to 0.3339).
        let mut t = tallies(&e, Variant::Proposed, 70, 56);
        t.extend(tallies(&e, Variant::Current, 80, 48));
        // Another experiment's task does not count.
        t.extend(tallies(
            &Experiment {
                id: ulid::Ulid::from_parts(9, 9),
                ..e.clone()
            },
            Variant::Current,
            5,
            0,
        ));
        let r = result(&e, &t);
        assert!(r.proposed_wins, "{r:?}");
        assert_eq!(
            (r.variants[0].n, r.variants[0].succeeded, r.variants[1].n, r.variants[1].succeeded),
            (80, 48, 70, 56)
        );
        assert_eq!(r.ci95, Some([0.0524, 0.3339]));
        assert!(
            r.verdict.starts_with("the proposed version wins: 20.0 points more"),
            "{}",
            r.verdict
        );

        // The same rates on 20 tasks each: below the minimum sample, whatever the interval.
        let mut small = tallies(&e, Variant::Proposed, 20, 20);
        small.extend(tallies(&e, Variant::Current, 20, 0));
        let r = result(&e, &small);
        assert!(
            !r.proposed_wins && r.verdict.starts_with("not enough tasks yet: 20 and 20"),
            "{}",
            r.verdict
        );

        // Even, over the sample: no win, the interval spans zero.
        let mut even = tallies(&e, Variant::Proposed, 40, 20);
        even.extend(tallies(&e, Variant::Current, 40, 20));
        let r = result(&e, &even);
        let [low, high] = r.ci95.unwrap_or_else(|| panic!("interval"));
        assert!(!r.proposed_wins && low < 0.0 && high > 0.0, "{r:?}");
        assert!(r.verdict.starts_with("no difference shown yet"), "{}", r.verdict);
    }
}

//! The one comparison the evaluator makes, parameterised by what it measures: the sent tasks
//! in groups (a part of the day, a length, a subject style…), each counted a success when the
//! measure says — a reply to the first message, or the goal reached — then the best group
//! against the worst, each with enough members, and whether the difference is one to suggest.

use serde_json::json;

use super::{ClosedTask, MIN_RATE_GAP_PCT, MIN_SENDS_PER_GROUP, MODERATE_SENDS, STRONG_SENDS};
use crate::learning::lift::newcombe;
use crate::learning::suggestion::Strength;

/// Members each compared group needs before its success rate is compared (outcomes).
pub const MIN_OUTCOME_GROUP: u64 = 10;

/// What a comparison counts as a success, and the test its difference must pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Measure {
    /// The first message was answered: [`MIN_SENDS_PER_GROUP`] a group, a gap of
    /// [`MIN_RATE_GAP_PCT`] points or more.
    Replies,
    /// The goal was reached: [`MIN_OUTCOME_GROUP`] a group, the 95% interval of the difference
    /// (Newcombe's, as the lift uses) above zero.
    Outcomes,
}

impl Measure {
    fn min_group(self) -> u64 {
        match self {
            Measure::Replies => u64::from(MIN_SENDS_PER_GROUP),
            Measure::Outcomes => MIN_OUTCOME_GROUP,
        }
    }
}

/// The tasks in one group, and how many of them succeeded.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Tally {
    pub n: u64,
    pub hits: u64,
    pub tasks: Vec<String>,
}

impl Tally {
    pub fn add(&mut self, task: &ClosedTask, success: bool) {
        self.n += 1;
        self.hits += u64::from(success);
        self.tasks.push(task.task_id.to_string());
    }

    pub fn rate(&self) -> f64 {
        self.hits as f64 / self.n.max(1) as f64
    }

    /// The rate in whole percentage points, rounded down.
    pub fn rate_pct(&self) -> u64 {
        (self.hits * 100).checked_div(self.n).unwrap_or(0)
    }

    /// The group's numbers in a suggestion's evidence.
    pub fn evidence(&self, measure: Measure) -> serde_json::Value {
        match measure {
            Measure::Replies => json!({"sent": self.n, "replied": self.hits, "reply_rate": self.rate()}),
            Measure::Outcomes => json!({"sent": self.n, "succeeded": self.hits, "success_rate": round4(self.rate())}),
        }
    }

    /// How the measure orders groups: replies by whole points, outcomes exactly.
    fn score(&self, measure: Measure) -> f64 {
        match measure {
            Measure::Replies => self.rate_pct() as f64,
            Measure::Outcomes => self.rate(),
        }
    }
}

pub(super) fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

/// Groups by name, in the order first seen.
pub(super) type Groups = Vec<(String, Tally)>;

/// The group named `key`, added empty if new.
pub(super) fn group<'a>(groups: &'a mut Groups, key: &str) -> &'a mut Tally {
    let at = match groups.iter().position(|(k, _)| k == key) {
        Some(at) => at,
        None => {
            groups.push((key.to_owned(), Tally::default()));
            groups.len() - 1
        }
    };
    &mut groups[at].1
}

/// The sent tasks by `key` (none: left out), each a success when `success` says.
pub(super) fn grouped(tasks: &[ClosedTask], key: impl Fn(&ClosedTask) -> Option<String>, success: impl Fn(&ClosedTask) -> bool) -> Groups {
    let mut groups = Groups::new();
    for t in tasks.iter().filter(|t| t.shared.touches > 0) {
        if let Some(k) = key(t) {
            group(&mut groups, &k).add(t, success(t));
        }
    }
    groups
}

/// A difference the measure supports: the best and the worst group with enough members, how
/// strong and how sure the finding is, and (outcomes) the difference with its 95% interval.
pub(super) struct Contrast<'a> {
    pub best: &'a (String, Tally),
    pub worst: &'a (String, Tally),
    pub strength: Strength,
    pub confidence: u8,
    /// The difference of the rates and its interval (outcomes only).
    pub interval: Option<(f64, f64, f64)>,
}

/// The best group against the worst, if `measure` finds the difference worth suggesting.
pub(super) fn contrast(groups: &Groups, measure: Measure) -> Option<Contrast<'_>> {
    let enough: Vec<&(String, Tally)> = groups.iter().filter(|(_, g)| g.n >= measure.min_group()).collect();
    // Ties: the best is the first by name; the worst is the first by name for replies and
    // the last for outcomes.
    let best = *enough
        .iter()
        .max_by(|a, b| a.1.score(measure).total_cmp(&b.1.score(measure)).then_with(|| b.0.cmp(&a.0)))?;
    let worst = *enough.iter().min_by(|a, b| {
        let by_name = match measure {
            Measure::Replies => a.0.cmp(&b.0),
            Measure::Outcomes => b.0.cmp(&a.0),
        };
        a.1.score(measure).total_cmp(&b.1.score(measure)).then(by_name)
    })?;
    if best.0 == worst.0 {
        return None;
    }
    let n = best.1.n + worst.1.n;
    let strength = match u32::try_from(n).unwrap_or(u32::MAX) {
        n if n >= STRONG_SENDS => Strength::Strong,
        n if n >= MODERATE_SENDS => Strength::Moderate,
        _ => Strength::Weak,
    };
    let (confidence, interval) = match measure {
        Measure::Replies => {
            let gap = best.1.rate_pct().saturating_sub(worst.1.rate_pct());
            if gap < u64::from(MIN_RATE_GAP_PCT) {
                return None;
            }
            // The gap, discounted while the sample is small; never certain.
            ((gap * n.min(30) / 30).min(95), None)
        }
        Measure::Outcomes => {
            let (difference, low, high) = newcombe(best.1.hits, best.1.n, worst.1.hits, worst.1.n)?;
            (low > 0.0).then_some(())?;
            // The interval's lower end, discounted while the sample is small; never certain.
            (
                ((low * 100.0).round() as u64 * n.min(30) / 30).clamp(1, 95),
                Some((difference, low, high)),
            )
        }
    };
    Some(Contrast {
        best,
        worst,
        strength,
        confidence: u8::try_from(confidence).unwrap_or(95),
        interval,
    })
}

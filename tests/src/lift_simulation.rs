//! The lift's interval proven by simulation, not assumed: seeded gyms of 100–2,000 members, a
//! 10% or 20% holdout, a known true effect of outreach on the chance that a member's goal
//! shows within the window. Each gym's members become the tallies the product keeps — closed
//! early on their goal, skipped, closed unanswered or still open, as tasks end on their own
//! clocks — and the product's own lift (`learning::lift::lift`) and pooled lift
//! (`learning::pooled::pooled`) judge them. `make bench` prints the figures over thousands of
//! gyms ([`BENCH`]); this crate's tests run a smaller draw ([`TEST`]).

use jiff::{SignedDuration, Timestamp};
use openloop_core::kernel::ids::{MemberId, TaskId};
use openloop_core::learning::lift::{self, DETECTABLE_LIFT, TypeLift, members_needed};
use openloop_core::learning::pooled::{GymLift, pooled};
use openloop_core::task::TaskStatus;
use openloop_core::task::holdout::Arm;
use openloop_core::task::tally::TaskTally;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const TYPE: &str = "churn_risk";
/// The type's conversion window, in days (`task::holdout::conversion_window`).
const WINDOW_DAYS: i64 = 14;

/// How many gyms each figure draws.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Gyms with a true effect of 0, 5, 10 or 15 points (coverage), and as many with none.
    pub gyms: usize,
    /// Gyms per size of the power check.
    pub power_gyms: usize,
    /// Pools of 3–8 gyms of one type.
    pub pools: usize,
}

/// `make bench`'s draw.
pub const BENCH: Scale = Scale {
    gyms: 4_000,
    power_gyms: 500,
    pools: 600,
};
/// The tests' draw: the same code, fewer gyms.
pub const TEST: Scale = Scale {
    gyms: 400,
    power_gyms: 150,
    pools: 300,
};

/// One simulated gym.
#[derive(Clone, Copy, Debug)]
pub struct Gym {
    pub members: u64,
    /// Held out, in percent.
    pub holdout_percent: u8,
    /// The chance that a held-out member's goal shows within the window.
    pub baseline: f64,
    /// What outreach adds to that chance: the true difference.
    pub effect: f64,
}

impl Gym {
    fn draw(rng: &mut SmallRng, effect: f64) -> Self {
        Self {
            members: rng.random_range(100..=2_000),
            holdout_percent: if rng.random_bool(0.5) { 10 } else { 20 },
            baseline: rng.random_range(0.15..0.6),
            effect,
        }
    }
}

/// The members' ids, made once: a gym's tallies clone them.
struct Ids(Vec<MemberId>);

impl Ids {
    fn new(n: usize) -> Self {
        Self((0..n).filter_map(|i| MemberId::parse(&format!("m_sim_{i}")).ok()).collect())
    }

    fn get(&mut self, i: usize) -> MemberId {
        while self.0.len() <= i {
            let next = self.0.len();
            self.0.extend(MemberId::parse(&format!("m_sim_{next}")).ok());
        }
        self.0[i].clone()
    }
}

fn assigned() -> Timestamp {
    Timestamp::from_second(1_780_315_200).unwrap_or(Timestamp::UNIX_EPOCH) // 2026-06-01 12:00 UTC
}

fn days(n: f64) -> SignedDuration {
    SignedDuration::from_secs_f64(n * 86_400.0)
}

/// One member's task as the product keeps it: the draw put them in `arm`; their goal showed
/// (`back`) some day of the window and closed the task, or it did not and the task ended the
/// way tasks end — skipped by the owner, closed unanswered, or still open.
fn tally(task: u64, member: MemberId, arm: Arm, back: bool, rng: &mut SmallRng) -> TaskTally {
    let at = assigned();
    let (status, resolved_at, outcome, goal_at) = if back {
        let seen = at + days(rng.random_range(0.0..WINDOW_DAYS as f64));
        (TaskStatus::Completed, Some(seen), Some("retained"), Some(seen))
    } else {
        match (arm, rng.random_range(0..3)) {
            (Arm::Contacted, 0) => (TaskStatus::Cancelled, Some(at + days(2.0)), Some("skipped"), None),
            (Arm::Contacted, 1) => (TaskStatus::Waiting, None, None, None),
            (Arm::HeldOut, 0 | 1) => (TaskStatus::HeldOut, None, None, None),
            _ => (
                TaskStatus::Cancelled,
                Some(at + days(WINDOW_DAYS as f64)),
                Some("unresponsive"),
                None,
            ),
        }
    };
    TaskTally {
        task_id: TaskId(ulid::Ulid::from_parts(task, 0)),
        member_id: member,
        status,
        touch: u32::from(arm == Arm::Contacted),
        created_at: at,
        resolved_at,
        outcome: outcome.map(str::to_owned),
        attributed_value: None,
        task_type: TYPE.to_owned(),
        arm: Some(arm),
        experiment: None,
        provisional: false,
        goal_at,
        next_action_at: None,
    }
}

/// The gym's lift as the product reads it once every member's window has passed.
fn judge(gym: Gym, ids: &mut Ids, rng: &mut SmallRng) -> Option<TypeLift> {
    let held_share = f64::from(gym.holdout_percent) / 100.0;
    let tallies: Vec<TaskTally> = (0..gym.members)
        .map(|i| {
            let arm = if rng.random_bool(held_share) {
                Arm::HeldOut
            } else {
                Arm::Contacted
            };
            let chance = if arm == Arm::HeldOut {
                gym.baseline
            } else {
                gym.baseline + gym.effect
            };
            let back = rng.random_bool(chance.clamp(0.0, 1.0));
            tally(i, ids.get(i as usize), arm, back, rng)
        })
        .collect();
    let at = assigned();
    let now = at + days(2.0 * WINDOW_DAYS as f64);
    let judged = lift::lift(&tallies, at..at + days(1.0), Some(TYPE), gym.holdout_percent, now);
    judged.groups.into_iter().next()
}

fn says_lift(l: &TypeLift) -> bool {
    l.verdict.starts_with("outreach works")
}

/// The power check of one baseline and holdout: the members the verdict says are needed to
/// tell a 10-point lift, against the size at which simulated gyms tell it 80% of the time.
#[derive(Clone, Debug)]
pub struct Power {
    pub baseline: f64,
    pub holdout_percent: u8,
    pub members_needed: u64,
    /// Share of gyms of `members_needed` members with a true 10-point lift told "outreach works".
    pub power_at_needed: f64,
    /// Where the simulated power crosses 80% (linear between the sizes tried).
    pub members_for_80: f64,
}

impl Power {
    /// Simulated size over the figure.
    pub fn ratio(&self) -> f64 {
        self.members_for_80 / self.members_needed as f64
    }
}

/// Everything the simulation found.
#[derive(Clone, Debug)]
pub struct Figures {
    pub gyms: usize,
    /// Share of gyms whose 95% interval covers their true difference.
    pub coverage: f64,
    pub null_gyms: usize,
    /// Share of gyms with no true effect told "outreach works".
    pub false_lift: f64,
    pub power: Vec<Power>,
    pub pools: usize,
    pub pooled_coverage: f64,
    pub null_pools: usize,
    pub pooled_false_lift: f64,
}

fn share(hits: usize, of: usize) -> f64 {
    hits as f64 / of.max(1) as f64
}

/// Runs the simulation at `scale` from `seed`.
pub fn simulate(scale: Scale, seed: u64) -> Figures {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut ids = Ids::new(2_000);
    let effects = [0.0, 0.05, 0.10, 0.15];

    let (mut judged, mut covered) = (0, 0);
    for i in 0..scale.gyms {
        let effect = effects[i % effects.len()];
        let gym = Gym::draw(&mut rng, effect);
        if let Some([low, high]) = judge(gym, &mut ids, &mut rng).and_then(|l| l.ci95) {
            judged += 1;
            covered += usize::from(low <= effect && effect <= high);
        }
    }
    let (mut null_gyms, mut false_lift) = (0, 0);
    for _ in 0..scale.gyms {
        let gym = Gym::draw(&mut rng, 0.0);
        if let Some(l) = judge(gym, &mut ids, &mut rng) {
            null_gyms += 1;
            false_lift += usize::from(says_lift(&l));
        }
    }

    let mut power = Vec::new();
    for (baseline, holdout_percent) in [(0.2, 10), (0.2, 20), (0.4, 10), (0.4, 20)] {
        let ratio = f64::from(100 - holdout_percent) / f64::from(holdout_percent);
        let needed = members_needed(baseline, DETECTABLE_LIFT, ratio);
        let factors = [0.7, 0.85, 1.0, 1.15, 1.3];
        let powers: Vec<f64> = factors
            .iter()
            .map(|f| {
                let gym = Gym {
                    members: (needed as f64 * f).round() as u64,
                    holdout_percent,
                    baseline,
                    effect: DETECTABLE_LIFT,
                };
                let told = (0..scale.power_gyms)
                    .filter(|_| judge(gym, &mut ids, &mut rng).is_some_and(|l| says_lift(&l)))
                    .count();
                share(told, scale.power_gyms)
            })
            .collect();
        let crossing = factors
            .windows(2)
            .zip(powers.windows(2))
            .find(|(_, p)| p[0] < 0.8 && p[1] >= 0.8)
            .map(|(f, p)| f[0] + (f[1] - f[0]) * (0.8 - p[0]) / (p[1] - p[0]))
            .unwrap_or(if powers[0] >= 0.8 { factors[0] } else { factors[factors.len() - 1] });
        power.push(Power {
            baseline,
            holdout_percent,
            members_needed: needed,
            power_at_needed: powers[2],
            members_for_80: crossing * needed as f64,
        });
    }

    let (mut pools, mut pooled_covered, mut null_pools, mut pooled_false) = (0, 0, 0, 0);
    for p in 0..scale.pools {
        let effect = [0.0, 0.05, 0.10][p % 3];
        let size = rng.random_range(3..=8);
        let lifts: Vec<Vec<TypeLift>> = (0..size)
            .map(|_| judge(Gym::draw(&mut rng, effect), &mut ids, &mut rng).into_iter().collect())
            .collect();
        let names: Vec<String> = (0..size).map(|g| format!("gym{g}")).collect();
        let gyms: Vec<GymLift<'_>> = lifts
            .iter()
            .zip(&names)
            .map(|(groups, name)| GymLift {
                business_type: "crossfit_gym",
                contributor: name,
                groups,
            })
            .collect();
        let Some(found) = pooled("2026-06", &gyms).into_iter().next() else {
            continue;
        };
        let [low, high] = found.ci95;
        pools += 1;
        pooled_covered += usize::from(low <= effect && effect <= high);
        if effect == 0.0 {
            null_pools += 1;
            pooled_false += usize::from(low > 0.0);
        }
    }

    Figures {
        gyms: judged,
        coverage: share(covered, judged),
        null_gyms,
        false_lift: share(false_lift, null_gyms),
        power,
        pools,
        pooled_coverage: share(pooled_covered, pools),
        null_pools,
        pooled_false_lift: share(pooled_false, null_pools),
    }
}

/// The figures as `make bench` prints them, each beside its bound.
pub fn report(f: &Figures) -> String {
    let ok = |good: bool| if good { "ok" } else { "OUT OF BOUNDS" };
    let mut out = format!(
        "lift simulation: seeded gyms of 100–2,000 members, 10% or 20% held out, known true effects\n\
         {:<78} {:>8}  {}\n{:<78} {:>8}  {}\n",
        format!("95% interval covers the true difference ({} gyms; 94–96%)", f.gyms),
        format!("{:.1}%", f.coverage * 100.0),
        ok((0.94..=0.96).contains(&f.coverage)),
        format!("\"outreach works\" with no true effect ({} gyms; at most 5%)", f.null_gyms),
        format!("{:.1}%", f.false_lift * 100.0),
        ok(f.false_lift <= 0.05),
    );
    for p in &f.power {
        out += &format!(
            "{:<78} {:>8}  {}\n",
            format!(
                "members needed at {:.0}% back, {}% held out: {}; 80% power simulated at",
                p.baseline * 100.0,
                p.holdout_percent,
                p.members_needed
            ),
            format!("{:.0}", p.members_for_80),
            ok((0.8..=1.2).contains(&p.ratio())),
        );
        out += &format!(
            "{:<78} {:>8}\n",
            "  power at the members-needed figure (80% planned)",
            format!("{:.1}%", p.power_at_needed * 100.0)
        );
    }
    out += &format!(
        "{:<78} {:>8}  {}\n{:<78} {:>8}  {}\n",
        format!(
            "pooled: 95% interval covers the true difference ({} pools of 3–8 gyms; 94–96%)",
            f.pools
        ),
        format!("{:.1}%", f.pooled_coverage * 100.0),
        ok((0.94..=0.96).contains(&f.pooled_coverage)),
        format!("pooled: a lift with no true effect ({} pools; at most 5%)", f.null_pools),
        format!("{:.1}%", f.pooled_false_lift * 100.0),
        ok(f.pooled_false_lift <= 0.05),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three standard errors of a share `p` over `n` draws: the test's draw is smaller than
    /// the bench's, and its bounds are the widened by that much.
    fn slack(p: f64, n: usize) -> f64 {
        3.0 * (p * (1.0 - p) / n.max(1) as f64).sqrt()
    }

    /// The interval covers the truth about 95% of the time, a gym with no effect is rarely
    /// told it works, the members-needed figure is what a simulated gym needs, and the pooled
    /// lift across gyms holds the same — all judged by the product's own lift.
    #[test]
    fn the_lifts_interval_holds_over_seeded_gyms() {
        let f = simulate(TEST, 44);
        let cover = slack(0.95, f.gyms);
        assert!((f.coverage - 0.95).abs() <= 0.01 + cover, "{}", report(&f));
        assert!(f.false_lift <= 0.05 + slack(0.05, f.null_gyms), "{}", report(&f));
        for p in &f.power {
            assert!((0.7..=1.3).contains(&p.ratio()), "{p:?}\n{}", report(&f));
        }
        assert!((f.pooled_coverage - 0.95).abs() <= 0.01 + slack(0.95, f.pools), "{}", report(&f));
        assert!(f.pooled_false_lift <= 0.05 + slack(0.05, f.null_pools), "{}", report(&f));
    }
}

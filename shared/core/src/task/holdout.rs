//! Which group a task's member was in when Openloop opened the task itself: contacted, or held
//! out (sent nothing, so the owner can see what the outreach caused). The group is decided
//! once, at creation, from the member's bucket, and kept on the task and its tally.
//!
//! A member's bucket (0–9999) is an HMAC-SHA256 of their id under the account's holdout salt:
//! the same member lands in the same bucket on every task until the owner reshuffles (a new
//! salt), and nobody without the salt can tell or steer who is held out.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::kernel::ids::MemberId;

/// The buckets a member can fall in: `0..BUCKETS`.
pub const BUCKETS: u32 = 10_000;

/// The group of a task whose creation went through the holdout draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// Openloop works the task as usual.
    Contacted,
    /// Nothing is sent and no AI call is made; the goal's signals are watched the same way.
    HeldOut,
}

impl Arm {
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Contacted => "contacted",
            Arm::HeldOut => "held_out",
        }
    }
}

/// What the draw said for a task: the member's bucket and the group it put them in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holdout {
    pub arm: Arm,
    pub bucket: u32,
    /// Which salt drew it (0 until the owner first reshuffles).
    #[serde(default)]
    pub generation: u32,
}

/// The member's bucket (0–9999) under `salt`.
pub fn bucket(salt: &[u8], member: &MemberId) -> u32 {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(salt).unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
    mac.update(b"holdout-bucket\0");
    mac.update(member.as_str().as_bytes());
    let digest = mac.finalize().into_bytes();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // 2^64 is not a multiple of 10,000; the bias is below 1e-15 and does not matter here.
    (u64::from_be_bytes(first) % u64::from(BUCKETS)) as u32
}

/// The group of a member in `bucket` when `percent` of members are held out: the lowest
/// buckets are the held-out ones, so raising the percentage keeps everyone held out so far.
pub fn arm(bucket: u32, percent: u8) -> Arm {
    if bucket < u32::from(percent.min(100)) * (BUCKETS / 100) {
        Arm::HeldOut
    } else {
        Arm::Contacted
    }
}

/// Whether a task of `task_type` that closed with `outcome` reached its goal, as the lift and
/// the scorecard's groups count it: an outcome the goal's signal gives, a late win, or a
/// return before any outreach.
pub fn succeeded(task_type: &str, outcome: Option<&str>) -> bool {
    let Some(code) = outcome else { return false };
    code == crate::task::attribution::LATE_WIN
        || code == "self_resolved"
        || crate::task::outcome::completing_signals(task_type).any(|s| s.outcome == Some(code))
}

/// Until when a held-out task of `def` opened at `created` watches its goal's signals while
/// open: as long as a contacted task of its type can stay open without an answer — its time
/// budget, then its cadence's dormant watch, if any. After that it closes unanswered, and
/// attribution watches it for a late win like any task closed unanswered, so both groups are
/// measured over the same window.
pub fn open_until(def: &crate::task::task_type::TaskTypeDef, created: jiff::Timestamp) -> jiff::Timestamp {
    created + conversion_window(def)
}

/// The type's fixed conversion window, the same for both groups: a task succeeded for the
/// lift when its goal showed within this long of its assignment (its time budget, then its
/// cadence's dormant watch, as long as a held-out task of the type stays open).
pub fn conversion_window(def: &crate::task::task_type::TaskTypeDef) -> jiff::SignedDuration {
    let dormant = match def.cadence.on_exhaustion {
        crate::task::cadence::OnExhaustion::Dormant { max_days, .. } => max_days,
        _ => 0,
    };
    jiff::SignedDuration::from_hours(24 * i64::from(def.budget.max_days + dormant))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(i: usize) -> MemberId {
        MemberId::parse(&format!("m_{i}")).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_members_bucket_is_sticky_under_one_salt_and_moves_under_another() {
        let salt = b"salt one";
        let moved = (0..200)
            .filter(|i| {
                let m = member(*i);
                assert_eq!(bucket(salt, &m), bucket(salt, &m), "the same bucket every time");
                assert!(bucket(salt, &m) < BUCKETS);
                bucket(salt, &m) != bucket(b"salt two", &m)
            })
            .count();
        assert!(moved > 190, "a new salt reshuffles nearly everyone: {moved}");
    }

    #[test]
    fn the_buckets_are_spread_evenly_so_a_percentage_holds_out_about_that_share() {
        let held = (0..10_000)
            .filter(|i| arm(bucket(b"an account's salt", &member(*i)), 20) == Arm::HeldOut)
            .count();
        // Binomial(10,000, 0.2): the standard deviation is 40.
        assert!((1_850..=2_150).contains(&held), "{held} of 10,000 held out at 20%");
        assert_eq!(arm(0, 0), Arm::Contacted, "0% holds out nobody");
        assert_eq!(arm(1_999, 20), Arm::HeldOut);
        assert_eq!(arm(2_000, 20), Arm::Contacted);
        assert_eq!(arm(999, 10), Arm::HeldOut, "10% is a subset of 20%");
    }
}

//! Which version of a message experiment a task's member was given (CONTRACT.md "Honest
//! lift", experiments): the current prompt or the proposed one, decided once at creation from
//! a keyed hash of the experiment and the member — the same member gets the same version on
//! every task of the experiment — and kept on the task and its tally.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::kernel::ids::MemberId;

/// The two versions an experiment compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// The prompt as it was before the suggestion: its change left out.
    Current,
    /// The prompt with the suggestion's change.
    Proposed,
}

impl Variant {
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Current => "current",
            Variant::Proposed => "proposed",
        }
    }
}

/// A task's place in an experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExperimentArm {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub experiment_id: ulid::Ulid,
    pub variant: Variant,
}

/// The version `member` gets in `experiment`: an HMAC-SHA256 of both under `key` (a secret of
/// the account's own), its first bit choosing — half and half, sticky, and not steerable by
/// anyone without the key.
pub fn variant(key: &[u8], experiment: ulid::Ulid, member: &MemberId) -> Variant {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
    mac.update(b"experiment-variant\0");
    mac.update(experiment.to_string().as_bytes());
    mac.update(b"\0");
    mac.update(member.as_str().as_bytes());
    if mac.finalize().into_bytes()[0] & 1 == 0 {
        Variant::Current
    } else {
        Variant::Proposed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_keeps_their_version_and_members_split_about_half_and_half() {
        let experiment = ulid::Ulid::from_parts(1, 7);
        let member = |i: usize| MemberId::parse(&format!("m_{i}")).unwrap_or_else(|e| panic!("{e}"));
        let proposed = (0..2_000)
            .filter(|i| variant(b"key", experiment, &member(*i)) == Variant::Proposed)
            .count();
        assert!((900..1_100).contains(&proposed), "{proposed} of 2000");
        assert_eq!(variant(b"key", experiment, &member(5)), variant(b"key", experiment, &member(5)));
        // Another experiment draws afresh.
        let other = ulid::Ulid::from_parts(2, 7);
        let same = (0..200)
            .filter(|i| variant(b"key", experiment, &member(*i)) == variant(b"key", other, &member(*i)))
            .count();
        assert!((70..130).contains(&same), "{same} of 200");
    }
}

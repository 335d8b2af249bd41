//! The lift across gyms like this one, as an account keeps it: per task type, the pooled
//! contacted and held-out success counts of at least three gyms of its business type that
//! share their learning, the difference with its 95% interval, and the sentence the owner
//! reads. Written by the monthly cross-business evaluation (`learning/pooled.rs`); counts
//! only — no gym, member or message is named.

use serde::{Deserialize, Serialize};

/// One pooled group: members, and how many reached the goal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PooledGroup {
    pub n: u64,
    pub succeeded: u64,
    pub rate: f64,
}

/// A task type's lift across the gyms of one business type, in one month.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PooledLift {
    pub task_type: String,
    /// The business type tag (of the fixed list) the gyms share.
    pub business_type: String,
    /// `YYYY-MM`: the month of the evaluation that pooled the gyms' lifts.
    pub month: String,
    /// Contributing gyms (each with contacted and held-out members of the type judged).
    pub gyms: u64,
    pub contacted: PooledGroup,
    pub held_out: PooledGroup,
    /// Contacted rate minus held-out rate within each gym, pooled (Mantel–Haenszel).
    pub difference: f64,
    /// Its 95% interval.
    pub ci95: [f64; 2],
    /// "across N gyms like yours, outreach of this type adds X points (95% interval …)".
    pub summary: String,
}

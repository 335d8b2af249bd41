//! The offline heuristic agent: reading replies, judging progress and planning without a
//! model. Being split into files by what changes together.

mod completion;
mod outcomes;
mod planner;
mod reply;

pub use completion::evaluate_completion;
pub use outcomes::verbal_commitment_code;
pub use planner::plan_next;
pub use reply::*;

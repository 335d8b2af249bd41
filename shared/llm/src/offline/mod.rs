//! The offline heuristic agent: reading replies, judging progress and planning without a
//! model. Being split into files by what changes together; for now all of it is in [`reply`].

mod reply;

pub use reply::*;

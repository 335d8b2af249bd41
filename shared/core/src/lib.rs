//! # openloop-core — the domain
//!
//! A task is a goal, a hard budget and a conversation. This crate decides everything about
//! tasks — which states they may move between, what a task type promises, when a follow-up is
//! due, whether a send is allowed — and leaves doing it to adapters behind the ports in
//! [`ports`]. It never reads the clock (every operation is handed `now`) and never touches the
//! network, so all of it is tested without AWS.
//!
//! The domain is in folders named for it, each using only the ones below it (no cycle; the
//! test `folder_dependencies::folders_depend_one_way` keeps it so):
//! - [`learning`]: the learning record of closed tasks and its cross-tenant view.
//! - [`rails`]: the confidence gate, the ramp, the send gate, the stale guard, anomalies, the
//!   risk scan's judgment — and [`rails::step`], a worker's step decided from what it read.
//! - [`conversation`]: mail, a member's reply as it arrives, the stop rule,
//!   [`conversation::reply`] (a reply decided), tokens, the system prompt and skills.
//! - [`owner`]: the account and its settings, notices and digests, metrics, the scorecard.
//! - [`task`]: the task model and its eight states; [`task::transition`], the one function
//!   that changes a status; [`task::reason`], the decision log's codes; task types, cadences,
//!   subtasks, actions, creation (flood) limits, goal signals and attribution.
//! - [`members`]: member events, facts and the send ledger, the connector's data.
//! - [`kernel`]: ids, errors, text checks, every numeric limit, the retry policy.
//!
//! Above them: [`engine`], the operations the functions call (create, approve, execute,
//! follow up, tick…), each loading through the [`ports`], asking the domain, and committing
//! what it decided; [`memory`], the in-memory store; [`contract`], CONTRACT.md's shapes.
//! No domain folder uses these.

pub mod contract;
pub mod conversation;
pub mod engine;
pub mod kernel;
pub mod learning;
pub mod members;
pub mod memory;
pub mod owner;
pub mod ports;
pub mod rails;
pub mod task;

#[cfg(any(test, feature = "testkit"))]
pub mod conformance;

pub use jiff::Timestamp;

#[cfg(any(test, feature = "testkit"))]
pub mod testing;

#[cfg(test)]
mod folder_dependencies;

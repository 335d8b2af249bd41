//! # openloop-core — the domain
//!
//! A task is a goal, a hard budget and a conversation. This crate decides everything about
//! tasks — which states they may move between, what a task type promises, when a follow-up is
//! due, whether a send is allowed — and leaves doing it to adapters behind the ports in
//! [`ports`]. It never reads the clock (every operation is handed `now`) and never touches the
//! network, so all of it is tested without AWS.
//!
//! Where to look:
//! - [`task`]: the task model, its eight states and the valid-transition table.
//! - [`transition`]: the one function that changes a task's status and explains why.
//! - [`reason`]: the reason codes of the decision log, one enum.
//! - [`task_type`] and [`cadence`]: task types and follow-up cadences as data.
//! - [`gate`]: the confidence gate that decides review vs auto-execution.
//! - [`limits`]: every numeric safety limit and the checks that use them.
//! - [`send_gate`]: the rails that defer a send — window, the member weekly cap, daily caps.
//! - [`step`]: a worker's step decided — skip, defer, move, read, send — from what it read.
//! - [`reply`]: a member's reply (or the owner's guidance) decided — stop, answer, wait, close,
//!   escalate — from the agent's judgment and the task's budgets.
//! - [`engine`]: the operations the functions call (create, approve, execute, follow up, tick…);
//!   each loads through the ports, asks the pure modules, and commits what they decided.
//! - [`ports`]: the traits adapters implement; [`memory`] is the in-memory store.
//! - [`prompt`] and [`skills`]: the six-layer system prompt every AI call is given.
//! - [`inbound`] and [`opt_out`]: a member's reply as it arrives, and the hard stop rule.

pub mod account;
pub mod action;
pub mod alert;
pub mod annotation;
pub mod anomaly;
pub mod attribution;
pub mod autonomy;
pub mod business_memory;
pub mod cadence;
pub mod connection;
pub mod connector;
pub mod contract;
pub mod engine;
pub mod error;
pub mod event;
pub mod flood;
pub mod gate;
pub mod ids;
pub mod inbound;
pub mod interaction;
pub mod learning;
pub mod limits;
pub mod mail;
pub mod member;
pub mod membership;
pub mod memory;
pub mod metrics;
pub mod opt_out;
pub mod outcome;
pub mod owner_notice;
pub mod ports;
pub mod priority_rules;
pub mod prompt;
pub mod reason;
pub mod recurring;
pub mod reply;
pub mod reply_text;
pub mod retry;
pub mod risk;
pub mod scorecard;
pub mod send_gate;
pub mod skills;
pub mod source;
pub mod stale_guard;
pub mod step;
pub mod subtasks;
pub mod task;
pub mod task_type;
pub mod text;
pub mod token;
pub mod transition;
pub mod work;

#[cfg(any(test, feature = "testkit"))]
pub mod conformance;

pub use jiff::Timestamp;

#[cfg(any(test, feature = "testkit"))]
pub mod testing;

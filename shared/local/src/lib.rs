//! # openloop-local — the local runtime
//!
//! Stands in for what AWS provides around the functions: it serves the HTTP functions' very
//! routers (API Gateway), hands queued messages to the very consumer handlers as soon as they
//! are sent (SQS event sources; no long poll), fires the schedules (EventBridge — the emulator
//! never does), and owns the test clock. Plus the local-only endpoints of CONTRACT.md:
//! `/health`, `/_local/clock`, `/_local/run`, `/_local/outbox` (texts too: `?channel=sms`),
//! `/_local/inbound-sms`. Without `OPENLOOP_PUSHPRESS_BASE_URL`, `make run` serves a stand-in
//! PushPress ([`pushpress`]) for gyms to connect to. Nothing here runs in Lambda.
//!
//! Its ports are the AWS emulator's ([`Ports::Emulator`], the default) or all in memory
//! ([`Ports::Memory`]: the same routers and handlers, no emulator, nothing kept).

/// Where a running `make run` notes its URL, relative to the checkout (`target/`): `make demo`
/// finds the stack there when no `OPENLOOP_URL` names it.
pub const URL_FILE: &str = "target/openloop-local.url";

pub mod clock;
mod evaluation;
pub mod function;
pub mod kept;
pub mod outbox;
pub mod pushpress;
pub mod queues;
mod runtime;
mod schedule;
pub mod texts;

pub use runtime::{Options, Ports, Running, start};

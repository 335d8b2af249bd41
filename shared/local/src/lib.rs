//! # openloop-local — the local runtime
//!
//! Stands in for what AWS provides around the functions: it serves the HTTP functions' very
//! routers (API Gateway), long-polls the queues into the very consumer handlers (SQS event
//! sources), fires the schedules (EventBridge — the emulator never does), and owns the test
//! clock. Plus the local-only endpoints of CONTRACT.md: `/health`, `/_local/clock`,
//! `/_local/run`, `/_local/outbox`. Nothing here runs in Lambda.

pub mod clock;
pub mod outbox;
mod runtime;
mod schedule;

pub use runtime::{Options, Running, start};

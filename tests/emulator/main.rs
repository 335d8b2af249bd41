//! Tests against the AWS emulator (moto), started by `make test`. One binary, every test
//! isolated by its own table/queue names and accounts.

mod actions;
mod analysis;
mod categories;
mod concurrency;
mod connector_keys;
mod conversations;
mod fixtures;
mod gates;
mod mail_events;
mod observability;
mod outcomes;
mod owner_notices;
mod payment_recovery;
mod rails;
mod refusals;
mod ses_failure;
mod store_conformance;
mod stress;
mod walkthroughs;

pub use openloop_tests::morning;

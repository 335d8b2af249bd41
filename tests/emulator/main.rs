//! Tests that need AWS semantics, against the emulator (moto) that `make test` starts: the
//! DynamoDB store's conformance, races and duplicate deliveries on conditional writes and
//! transactions, the stress run, SES refusals, the SNS/S3 inbound-mail paths, and one
//! end-to-end walkthrough of the local runtime on the emulator. Every test is isolated by its
//! own table/queue names and accounts. Behaviour through the contract is in `tests/stack`.

mod actions;
mod backfill;
mod concurrency;
mod credentials;
mod event_bus;
mod faults;
mod loop_fixtures;
mod loops;
mod loops_rest;
mod loops_step;
mod lost_answers;
mod mail_events;
mod member_events;
mod member_open_tasks;
mod rails;
mod restart;
mod roles;
mod sealed_secrets;
mod sending_domains;
mod ses_failure;
mod step_cost;
mod store_conformance;
mod stress;
mod walkthroughs;
mod webhooks;

pub use openloop_tests::morning;

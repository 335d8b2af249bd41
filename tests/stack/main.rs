//! Behaviour through CONTRACT.md on the local runtime with every port in memory — the same
//! routers, handlers and test clock as `make run`, no emulator. What needs AWS semantics is in
//! `tests/emulator`.

mod actions;
mod analysis;
mod categories;
mod connector_keys;
mod contract_audit;
mod conversations;
mod dashboard;
mod dashboard_browser;
mod dashboard_browser_day;
mod dashboard_learning;
mod deliverability;
mod feedback;
mod fixtures;
mod gates;
mod good_by_default;
mod hostile;
mod learning;
mod lift;
mod local_runtime;
mod loops;
mod loops_rest;
mod mail_kinds;
mod message_templates;
mod model_prompts;
mod numbers;
mod observability;
mod outcomes;
mod owner_notices;
mod owners_day;
mod payment_recovery;
mod pushpress_connect;
mod pushpress_webhooks;
mod quoted_replies;
mod rails;
mod refusals;
mod walls;

pub use openloop_tests::morning;

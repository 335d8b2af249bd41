//! Behaviour through CONTRACT.md on the local runtime with every port in memory — the same
//! routers, handlers and test clock as `make run`, no emulator. What needs AWS semantics is in
//! `tests/emulator`.

mod actions;
mod analysis;
mod categories;
mod connector_keys;
mod contract_audit;
mod conversations;
mod credentials;
mod dashboard;
mod dashboard_browser;
mod dashboard_browser_day;
mod dashboard_browser_plans;
mod dashboard_learning;
mod dashboard_webhooks;
mod day_checks;
mod day_settings;
mod deliverability;
mod experiments;
mod experiments_browser;
mod feedback;
mod fixtures;
mod gates;
mod good_by_default;
mod hostile;
mod learning;
mod learning_outcomes;
mod lift;
mod local_pushpress;
mod local_runtime;
mod loops;
mod loops_rest;
mod loops_step;
mod mail_kinds;
mod message_templates;
mod model_prompts;
mod numbers;
mod observability;
mod openapi;
mod outcomes;
mod owner_day_one;
mod owner_notices;
mod owners_day;
mod payment_recovery;
mod plans;
mod pushpress_connect;
mod pushpress_webhooks;
mod quoted_replies;
mod rails;
mod refusals;
mod scale;
mod texts;
mod walls;
mod webhook_endpoints;

pub use openloop_tests::morning;

//! # openloop-edge — where events come in
//!
//! What every entry point shares, so a function's handler stays a dozen lines:
//! - [`config`]: the composition root — [`config::Config`] from the environment, the AWS
//!   clients, and the [`openloop_core::engine::Engine`] assembled from the adapters
//!   (`openloop-aws`, `openloop-pushpress`) with the given clock and agent;
//! - [`http`]: the HTTP functions' error type ([`http::ApiError`]: a domain error's HTTP status
//!   and CONTRACT.md's error body), strict JSON bodies, bearer tokens;
//! - [`apigw`]: the HTTP functions in Lambda — API Gateway events to the axum router and back;
//! - [`consumer`]: SQS batches, record by record, with partial batch failures;
//! - [`telemetry`]: logging; [`emf`]: CloudWatch metrics as log lines;
//! - [`webhook_transport`]: outbound webhooks over HTTP, every resolved address checked.
//!
//! The functions under `functions/` and the local runtime depend on this crate; the domain
//! and the adapters never do.

pub mod apigw;
pub mod config;
pub mod consumer;
pub mod emf;
pub mod http;
pub mod json_errors;
pub mod runtime;
pub mod sign_in;
pub mod telemetry;
pub mod webhook_transport;

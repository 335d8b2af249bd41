//! # openloop-aws — the AWS adapters
//!
//! Implementations of the core's ports on AWS: [`dynamo::DynamoStore`] (the single table),
//! [`sqs::SqsQueue`], [`bus::EventBridgeBus`] and [`ses::SesMailer`], the PushPress connector
//! ([`pushpress::PushPress`], over HTTP), plus [`config::Config`]
//! (everything read from the environment) and [`provision`] (idempotent creation of the
//! resources for the emulator; AWS itself is provisioned by `infra/template.yaml`).
//!
//! Only endpoints differ between the emulator and AWS (`AWS_ENDPOINT_URL`).

pub mod bus;
pub mod config;
pub mod consumer;
pub mod dynamo;
pub mod emf;
pub mod http;
pub mod keys;
pub mod provision;
pub mod pushpress;
pub mod ses;
pub mod sns;
pub mod sqs;
pub mod stored_mail;
pub mod telemetry;

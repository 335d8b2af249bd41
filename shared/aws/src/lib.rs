//! # openloop-aws — the AWS adapters
//!
//! Implementations of the core's ports on AWS: [`dynamo::DynamoStore`] (the single table),
//! [`sqs::SqsQueue`], [`bus::EventBridgeBus`], [`ses::SesMailer`] and
//! [`stored_mail::S3StoredMail`]; the gyms' secrets sealed with KMS ([`kms::KmsKeyring`]) and
//! the platform's own read at start-up ([`secrets::PlatformSecrets`]), both over signed JSON
//! calls of our own ([`aws_json`]); what SES and SNS deliver ([`sns`]: the envelope's signature,
//! [`mail_events`]: SES notifications read into the core's [`MailEvent`]); the SDK
//! [`clients::Clients`]; and [`provision`] (idempotent creation of the resources for the
//! emulator; AWS itself is provisioned by `infra/template.yaml`).
//!
//! No HTTP framework and no Lambda event types here: the entry points (HTTP, SQS consumers,
//! configuration from the environment) are `openloop-edge`'s, the PushPress connector is
//! `openloop-pushpress`. Only endpoints differ between the emulator and AWS
//! (`AWS_ENDPOINT_URL`).
//!
//! [`MailEvent`]: openloop_core::engine::MailEvent

pub mod aws_json;
pub mod bedrock;
pub mod bus;
pub mod clients;
pub mod dns;
pub mod dynamo;
pub mod keys;
pub mod kms;
pub mod mail_events;
pub mod provision;
pub mod s3;
pub mod sdk_http;
pub mod secrets;
pub mod sending_domains;
pub mod ses;
pub mod sms;
pub mod sns;
pub mod sqs;
pub mod stored_mail;
#[cfg(test)]
mod test_peer;
pub mod tls;

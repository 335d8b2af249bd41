//! The AWS SDK clients every adapter is built on, made once per process for a region and, in
//! the emulator, an endpoint (`AWS_ENDPOINT_URL`).
//!
//! Two ways in: [`Clients::load`], the SDK's whole default chain (profiles, SSO, web identity,
//! instance metadata), for the local runtime, the admin CLI and the tests; and
//! [`Clients::in_lambda`], the credentials the Lambda runtime hands a function and nothing else,
//! so the chain's code (STS among it) is not linked into the functions' binaries. S3 has no SDK
//! client here: [`Clients::bucket`] speaks to a bucket with signed requests of our own.

use std::sync::Arc;
use std::time::Duration;

use aws_config::meta::credentials::CredentialsProviderChain;
use aws_config::provider_config::ProviderConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::config::SharedCredentialsProvider;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// In Lambda the credentials come from the function's role, never from a default.
fn in_lambda() -> bool {
    var("AWS_LAMBDA_FUNCTION_NAME").is_some()
}

/// The SDK's connect timeout, as `aws_config`'s defaults set it.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_millis(3100);

/// How long one DynamoDB request may take before the SDK gives it up and tries again (the
/// SDK sets no bound of its own). DynamoDB answers in milliseconds; a request still
/// unanswered after this is a stalled connection, and a retry on a fresh one is better than
/// a function waiting out its own timeout. The store recognises its own earlier attempt when a
/// retried write meets it (`crate::dynamo`'s write tokens), so a request given up that did land is
/// not mistaken for someone else's.
pub const DYNAMODB_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(4);

/// The bound on one DynamoDB operation, its retries and their back-off included: well inside
/// the shortest function timeout (30 s), so a function answers (or fails its message back to
/// the queue) instead of being cut off mid-step.
pub const DYNAMODB_OPERATION_TIMEOUT: Duration = Duration::from_secs(12);

/// The DynamoDB client's timeouts: the connect timeout, [`DYNAMODB_ATTEMPT_TIMEOUT`] and
/// [`DYNAMODB_OPERATION_TIMEOUT`].
pub fn dynamodb_timeouts(attempt: Duration, operation: Duration) -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .operation_attempt_timeout(attempt)
        .operation_timeout(operation)
        .build()
}

/// The shared configuration of [`Clients::in_lambda`], for the given credentials.
fn lambda_config(region: &str, endpoint: Option<&str>, credentials: SharedCredentialsProvider) -> SdkConfig {
    let mut shared = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_owned()))
        .credentials_provider(credentials)
        .http_client(crate::sdk_http::client())
        .stalled_stream_protection(crate::sdk_http::stalled_stream_protection())
        .retry_config(RetryConfig::standard())
        .timeout_config(TimeoutConfig::builder().connect_timeout(CONNECT_TIMEOUT).build());
    if let Some(endpoint) = endpoint {
        shared = shared.endpoint_url(endpoint);
    }
    shared.build()
}

/// Credentials of the access key a function names when asked ([`Clients::signing_as`]).
pub(crate) struct NamedKey(pub(crate) Arc<dyn Fn() -> String + Send + Sync>);

impl std::fmt::Debug for NamedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NamedKey")
    }
}

impl aws_credential_types::provider::ProvideCredentials for NamedKey {
    fn provide_credentials<'a>(&'a self) -> aws_credential_types::provider::future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        aws_credential_types::provider::future::ProvideCredentials::ready(Ok(aws_sdk_dynamodb::config::Credentials::new(
            (self.0)(),
            "local",
            None,
            None,
            "openloop-local",
        )))
    }
}

/// The SDK clients, built once per process.
#[derive(Clone)]
pub struct Clients {
    pub dynamodb: aws_sdk_dynamodb::Client,
    /// What [`Clients::bucket`] and the services spoken with requests of our own are made from.
    shared: SdkConfig,
}

impl Clients {
    /// `endpoint` is an emulator's (`AWS_ENDPOINT_URL`), if any. Against an emulator without
    /// credentials in the environment, dummy ones are used (the emulator accepts any).
    pub async fn load(region: &str, endpoint: Option<&str>) -> Self {
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .region(Region::new(region.to_owned()))
            .http_client(crate::sdk_http::client())
            .stalled_stream_protection(crate::sdk_http::stalled_stream_protection());
        if let Some(endpoint) = endpoint {
            loader = loader.endpoint_url(endpoint);
            if var("AWS_ACCESS_KEY_ID").is_none() && !in_lambda() {
                loader = loader.credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
                    "test",
                    "test",
                    None,
                    None,
                    "openloop-local",
                ));
            }
        }
        Self::from_shared(loader.load().await)
    }

    /// A Lambda function's clients: the role's credentials from the environment the runtime
    /// sets (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), or from a
    /// container credentials endpoint where the runtime offers one instead; the SDK's standard
    /// retries and connect timeout, as [`Clients::load`] has them. Nothing is read from disk.
    pub fn in_lambda(region: &str, endpoint: Option<&str>) -> Self {
        let credentials = CredentialsProviderChain::first_try(
            "Environment",
            aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
        )
        .or_else(
            "EcsContainer",
            aws_config::ecs::EcsCredentialsProvider::builder()
                .configure(&ProviderConfig::without_region().with_http_client(crate::sdk_http::client()))
                .build(),
        );
        Self::from_shared(lambda_config(region, endpoint, SharedCredentialsProvider::new(credentials)))
    }

    /// Clients for an emulator at `endpoint` whose every request is signed with an access key
    /// `key` names at that moment (nothing cached): the local runtime's, whose key names the
    /// function at work, as each Lambda function signs with its own role's.
    pub fn signing_as(region: &str, endpoint: &str, key: Arc<dyn Fn() -> String + Send + Sync>) -> Self {
        let mut shared = lambda_config(region, Some(endpoint), SharedCredentialsProvider::new(NamedKey(key))).into_builder();
        shared.set_identity_cache(Some(aws_config::identity::IdentityCache::no_cache()));
        Self::from_shared(shared.build())
    }

    /// The clients on `shared`; DynamoDB's with its own timeouts (only its: SQS's long polls
    /// in the local runtime wait longer than a DynamoDB request may).
    fn from_shared(shared: SdkConfig) -> Self {
        let dynamodb = aws_sdk_dynamodb::config::Builder::from(&shared)
            .timeout_config(dynamodb_timeouts(DYNAMODB_ATTEMPT_TIMEOUT, DYNAMODB_OPERATION_TIMEOUT))
            .build();
        Self {
            dynamodb: aws_sdk_dynamodb::Client::from_conf(dynamodb),
            shared,
        }
    }

    /// These clients with DynamoDB's timeouts set to `attempt` and `operation`: for tools
    /// that send an emulator requests far larger and slower than a function's (a bench's
    /// backlog of thousands of items), never for a function.
    pub fn with_dynamodb_timeouts(self, attempt: Duration, operation: Duration) -> Self {
        let config = self
            .dynamodb
            .config()
            .to_builder()
            .timeout_config(dynamodb_timeouts(attempt, operation))
            .build();
        Self {
            dynamodb: aws_sdk_dynamodb::Client::from_conf(config),
            shared: self.shared,
        }
    }

    /// The shared SDK configuration (region, endpoint, credentials, HTTP client) the clients
    /// are made from, for a client made elsewhere (Bedrock's, in `openloop-edge`).
    pub fn sdk_config(&self) -> &SdkConfig {
        &self.shared
    }

    /// The SES v2 mailer ([`crate::ses`]: a mail is sent at most once).
    pub fn mailer(&self, region: impl Into<String>, configuration_set: Option<String>) -> crate::ses::SesMailer {
        crate::ses::SesMailer::new(self.shared.clone(), region, configuration_set)
    }

    /// A gym's own sending domains as SES v2 identities ([`crate::sending_domains`]).
    pub fn sending_domains(&self, region: impl Into<String>) -> crate::sending_domains::SesSendingDomains {
        crate::sending_domains::SesSendingDomains::new(self.shared.clone(), region)
    }

    /// The SQS queues at `urls` ([`crate::sqs`]: sends by signed requests of our own).
    pub fn queues(&self, urls: std::collections::HashMap<openloop_core::task::work::QueueName, String>) -> crate::sqs::SqsQueue {
        crate::sqs::SqsQueue::new(self.shared.clone(), urls)
    }

    /// The SQS SDK client, for what only the local runtime, provisioning and the tests do
    /// (make queues, receive and delete): never made in a function, so never in its binary.
    pub fn sqs(&self) -> aws_sdk_sqs::Client {
        aws_sdk_sqs::Client::new(&self.shared)
    }

    /// The EventBridge bus `name` ([`crate::bus`]).
    pub fn event_bus(&self, name: impl Into<String>) -> crate::bus::EventBridgeBus {
        crate::bus::EventBridgeBus::new(self.shared.clone(), name)
    }

    /// EventBridge's API itself, for provisioning ([`crate::provision`]).
    pub(crate) fn eventbridge(&self) -> crate::aws_json::JsonService {
        crate::bus::eventbridge(self.shared.clone())
    }

    /// AWS End User Messaging SMS ([`crate::sms`]): a text is sent at most once.
    pub fn sms(&self) -> crate::sms::EndUserMessagingSms {
        crate::sms::EndUserMessagingSms::new(self.shared.clone())
    }

    /// KMS sealing with `key_id` ([`crate::kms`]).
    pub fn kms_keyring(&self, key_id: impl Into<String>) -> crate::kms::KmsKeyring {
        crate::kms::KmsKeyring::new(self.shared.clone(), key_id)
    }

    /// The platform's secrets ([`crate::secrets`]).
    pub fn platform_secrets(&self) -> crate::secrets::PlatformSecrets {
        crate::secrets::PlatformSecrets::new(self.shared.clone())
    }

    /// Stored inbound mail in `bucket`, read with S3 GETs of our own (see [`crate::s3`]).
    pub fn stored_mail(&self, bucket: impl Into<String>) -> crate::stored_mail::S3StoredMail {
        crate::stored_mail::S3StoredMail::new(self.bucket(bucket))
    }

    /// The S3 bucket `name`, spoken to with signed requests of our own (no I/O until used):
    /// path-style against an emulator, where `{bucket}.127.0.0.1` does not resolve.
    pub fn bucket(&self, name: impl Into<String>) -> crate::s3::S3Bucket {
        crate::s3::S3Bucket::new(self.shared.clone(), name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every client's stalled-stream protection is off (`sdk_http::stalled_stream_protection`):
    /// with it on, the reqwest adapter's calls slower than 5 s failed as stalled uploads.
    #[tokio::test]
    async fn no_client_watches_for_stalled_streams() {
        let credentials = aws_sdk_dynamodb::config::Credentials::new("AKID", "secret", None, None, "test");
        let lambda = Clients::from_shared(lambda_config("eu-west-1", None, SharedCredentialsProvider::new(credentials)));
        let local = Clients::load("eu-west-1", Some("http://127.0.0.1:9")).await;
        for clients in [lambda, local] {
            let off = |config: Option<&aws_sdk_dynamodb::config::StalledStreamProtectionConfig>| config.is_some_and(|c| !c.is_enabled());
            assert!(off(clients.dynamodb.config().stalled_stream_protection()), "dynamodb");
            assert!(off(clients.sqs().config().stalled_stream_protection()), "sqs");
        }
    }

    #[tokio::test]
    async fn a_functions_clients_sign_with_the_runtimes_credentials_and_reach_the_endpoint() {
        let (endpoint, server) = crate::test_peer::one_exchange(
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: 2\r\n\r\n{}".into(),
        );
        let credentials = aws_sdk_dynamodb::config::Credentials::new("AKIDLAMBDA", "secret", Some("session".into()), None, "test");
        let clients = Clients::from_shared(lambda_config(
            "eu-west-1",
            Some(&endpoint),
            SharedCredentialsProvider::new(credentials),
        ));
        let got = clients
            .dynamodb
            .get_item()
            .table_name("openloop")
            .key("pk", aws_sdk_dynamodb::types::AttributeValue::S("SYSTEM".into()))
            .key("sk", aws_sdk_dynamodb::types::AttributeValue::S("CONFIG".into()))
            .send()
            .await
            .expect("the fake table answers");
        assert!(got.item().is_none());
        let request = server.join().expect("server").to_ascii_lowercase();
        assert!(request.starts_with("post / http/1.1"), "{request}");
        assert!(request.contains("x-amz-target: dynamodb_20120810.getitem"), "{request}");
        assert!(
            request.contains("credential=akidlambda/") && request.contains("/eu-west-1/dynamodb/aws4_request"),
            "signed with the runtime's key for the region: {request}"
        );
        assert!(request.contains("x-amz-security-token: session"), "{request}");
    }

    /// Issue 47: a DynamoDB request that hangs is given up and tried again, and the whole
    /// operation is bounded inside the shortest function timeout; SQS (long polls, locally)
    /// keeps the connect timeout only.
    #[tokio::test]
    async fn a_dynamodb_request_is_given_up_after_its_attempt_timeout_and_the_operation_is_bounded() {
        for clients in [
            Clients::in_lambda("us-east-1", Some("http://127.0.0.1:9")),
            Clients::load("us-east-1", Some("http://127.0.0.1:9")).await,
        ] {
            let config = clients.dynamodb.config();
            let timeouts = config.timeout_config().expect("timeouts");
            assert_eq!(timeouts.operation_attempt_timeout(), Some(DYNAMODB_ATTEMPT_TIMEOUT));
            assert_eq!(timeouts.operation_timeout(), Some(DYNAMODB_OPERATION_TIMEOUT));
            assert_eq!(timeouts.connect_timeout(), Some(CONNECT_TIMEOUT));
            assert!(DYNAMODB_OPERATION_TIMEOUT < Duration::from_secs(30), "inside a function's timeout");
            let sqs = clients.sqs();
            let sqs_timeouts = sqs.config().timeout_config().expect("sqs timeouts");
            assert_eq!(sqs_timeouts.operation_attempt_timeout(), None, "a long poll is not cut off");
        }
    }
}

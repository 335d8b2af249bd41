//! The AWS SDK clients every adapter is built on, made once per process for a region and, in
//! the emulator, an endpoint (`AWS_ENDPOINT_URL`).

use aws_config::BehaviorVersion;
use aws_sdk_sesv2::config::retry::RetryConfig;

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// In Lambda the credentials come from the function's role, never from a default.
fn in_lambda() -> bool {
    var("AWS_LAMBDA_FUNCTION_NAME").is_some()
}

/// The SDK clients, built once per process.
#[derive(Clone)]
pub struct Clients {
    pub dynamodb: aws_sdk_dynamodb::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub eventbridge: aws_sdk_eventbridge::Client,
    pub sesv2: aws_sdk_sesv2::Client,
    pub s3: aws_sdk_s3::Client,
    /// AWS End User Messaging SMS (retries off, like SES: a text is sent at most once).
    pub sms: aws_sdk_pinpointsmsvoicev2::Client,
}

impl Clients {
    /// `endpoint` is an emulator's (`AWS_ENDPOINT_URL`), if any. Against an emulator without
    /// credentials in the environment, dummy ones are used (the emulator accepts any).
    pub async fn load(region: &str, endpoint: Option<&str>) -> Self {
        let mut loader = aws_config::defaults(BehaviorVersion::latest()).region(aws_config::Region::new(region.to_owned()));
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
        let shared = loader.load().await;
        // Never let the SDK resend an e-mail on its own: a retry after a timeout may deliver twice.
        let ses = aws_sdk_sesv2::config::Builder::from(&shared)
            .retry_config(RetryConfig::disabled())
            .build();
        // Path-style addressing against an emulator: `{bucket}.127.0.0.1` does not resolve.
        let s3 = aws_sdk_s3::config::Builder::from(&shared)
            .force_path_style(endpoint.is_some())
            .build();
        let sms = aws_sdk_pinpointsmsvoicev2::config::Builder::from(&shared)
            .retry_config(aws_sdk_pinpointsmsvoicev2::config::retry::RetryConfig::disabled())
            .build();
        Self {
            sms: aws_sdk_pinpointsmsvoicev2::Client::from_conf(sms),
            s3: aws_sdk_s3::Client::from_conf(s3),
            dynamodb: aws_sdk_dynamodb::Client::new(&shared),
            sqs: aws_sdk_sqs::Client::new(&shared),
            eventbridge: aws_sdk_eventbridge::Client::new(&shared),
            sesv2: aws_sdk_sesv2::Client::from_conf(ses),
        }
    }
}

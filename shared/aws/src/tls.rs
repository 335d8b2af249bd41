//! TLS for every outbound HTTPS call: rustls with ring's crypto. reqwest is built without a
//! crypto provider of its own and takes the process's, which [`install`] sets once; the AWS
//! SDK's client is given the same crypto ([`sdk_http_client`]). aws-lc, the SDK's default,
//! would add a megabyte of C to every Lambda binary.

/// Makes ring the process's rustls crypto provider; later calls (and an earlier install) keep
/// the one in place.
pub fn install() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A reqwest client builder, after [`install`]: how every reqwest client in Openloop starts.
pub fn http_client() -> reqwest::ClientBuilder {
    install();
    reqwest::Client::builder()
}

/// A reqwest client with reqwest's defaults, after [`install`].
pub fn client() -> reqwest::Client {
    install();
    reqwest::Client::new()
}

/// The AWS SDK's HTTP client: hyper with rustls on ring, the trusted roots the platform's.
pub fn sdk_http_client() -> aws_sdk_dynamodb::config::SharedHttpClient {
    use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
    aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https()
}

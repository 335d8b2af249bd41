//! TLS for every outbound HTTPS call: rustls with ring's crypto. reqwest is built without a
//! crypto provider of its own and takes the process's, which [`install`] sets once; the AWS
//! SDK's calls go through reqwest too (`crate::sdk_http`). aws-lc, the SDK's default, would
//! add a megabyte of C to every Lambda binary.

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

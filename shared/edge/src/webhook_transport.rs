//! Outbound webhooks over HTTP (reqwest): the `WebhookTransport` the engine posts deliveries
//! through. Every address a host resolves to is checked against the deployment's
//! `AddressPolicy` by the client's own resolver, so the check holds for the connection made
//! (no second lookup an attacker's DNS could answer differently); an IP literal is checked
//! before the request. Redirects are not followed and no proxy is used.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use openloop_core::kernel::error::InvalidInput;
use openloop_core::owner::webhook_address::AddressPolicy;
use openloop_core::ports::{TransportError, WebhookTransport};

/// How long one delivery may take.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Posts deliveries; refuses addresses the policy forbids, on resolution.
pub struct HttpWebhookTransport {
    policy: AddressPolicy,
    client: reqwest::Client,
}

impl HttpWebhookTransport {
    /// `local`: the local runtime's rule (http to loopback, any network).
    pub fn new(local: bool) -> Self {
        let policy = AddressPolicy { local };
        let client = openloop_aws::tls::http_client()
            .dns_resolver(Arc::new(CheckedResolver { policy }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(DELIVERY_TIMEOUT)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        Self { policy, client }
    }

    /// Every address of the URL's host, each allowed (the text checked first).
    async fn resolve(&self, url: &str) -> Result<Vec<SocketAddr>, InvalidInput> {
        let target = self.policy.check_url(url)?;
        if let Some(ip) = target.ip() {
            return Ok(vec![SocketAddr::new(ip, target.port)]);
        }
        checked_lookup(self.policy, &target.host, target.port).await
    }
}

async fn checked_lookup(policy: AddressPolicy, host: &str, port: u16) -> Result<Vec<SocketAddr>, InvalidInput> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| InvalidInput::new("webhook_address_refused", format!("{host} does not resolve")))?
        .collect();
    if addrs.is_empty() {
        return Err(InvalidInput::new("webhook_address_refused", format!("{host} does not resolve")));
    }
    for addr in &addrs {
        policy.check_ip(addr.ip())?;
    }
    Ok(addrs)
}

/// The client's resolver: the system's, with every answer checked.
struct CheckedResolver {
    policy: AddressPolicy,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = checked_lookup(policy, &host, 0)
                .await
                .map_err(|e| Box::new(Refusal(e.message)) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[derive(Debug)]
struct Refusal(String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

#[async_trait]
impl WebhookTransport for HttpWebhookTransport {
    async fn check_address(&self, url: &str) -> Result<(), InvalidInput> {
        self.resolve(url).await.map(|_| ())
    }

    async fn post(&self, url: &str, headers: &[(String, String)], body: &str) -> Result<u16, TransportError> {
        // Checked here (an IP literal never reaches the resolver), and again by the client's
        // resolver for the connection it makes.
        let target = self.policy.check_url(url).map_err(|e| TransportError::Refused(e.message))?;
        self.resolve(url).await.map_err(|e| TransportError::Refused(e.message))?;
        let mut request = self.client.post(url).body(body.to_owned());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(response) => Ok(response.status().as_u16()),
            Err(e) => {
                let refused = std::iter::successors(std::error::Error::source(&e), |e| e.source())
                    .find_map(|e| e.downcast_ref::<Refusal>().map(|r| r.0.clone()));
                match refused {
                    Some(why) => Err(TransportError::Refused(why)),
                    None if e.is_timeout() => Err(TransportError::Unreachable(format!("{} did not answer in time", target.host))),
                    None => Err(TransportError::Unreachable(format!("{} could not be reached", target.host))),
                }
            }
        }
    }
}

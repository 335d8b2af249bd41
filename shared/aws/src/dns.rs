//! [`DnsTxt`] over DNS-over-HTTPS (RFC 8484's JSON form, as Cloudflare and Google serve it):
//! `GET {url}?name={name}&type=TXT` with `accept: application/dns-json`. Chosen over a resolver
//! crate because reqwest is already built for this crate (a full resolver would be a new
//! dependency tree for one lookup a day per domain), and a Lambda's own resolver may cache an
//! owner's freshly published record for its TTL. The endpoint is `OPENLOOP_DNS_URL`
//! (default Cloudflare's).

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;

use openloop_core::ports::{DnsTxt, SendingDomainError};

pub const DEFAULT_DNS_URL: &str = "https://cloudflare-dns.com/dns-query";

/// DNS record type 16: TXT.
const TXT: u16 = 16;

#[derive(Clone)]
pub struct DnsOverHttps {
    http: reqwest::Client,
    url: String,
}

impl DnsOverHttps {
    /// At `url` (`None`: [`DEFAULT_DNS_URL`]).
    pub fn new(url: Option<String>) -> Self {
        let http = crate::tls::http_client()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        Self {
            http,
            url: url.filter(|u| !u.trim().is_empty()).unwrap_or_else(|| DEFAULT_DNS_URL.to_owned()),
        }
    }
}

#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "type")]
    kind: u16,
    data: String,
}

#[derive(Deserialize)]
struct Response {
    #[serde(rename = "Status")]
    status: u16,
    #[serde(rename = "Answer", default)]
    answer: Vec<Answer>,
}

/// The TXT strings of a DoH JSON answer: each record's quoted strings joined (a long TXT
/// value comes as several); NXDOMAIN (status 3) is no records; other failures are errors.
pub fn txt_of(body: &str) -> Result<Vec<String>, SendingDomainError> {
    let response: Response = serde_json::from_str(body).map_err(|e| SendingDomainError(format!("DNS answer not understood: {e}")))?;
    match response.status {
        0 => {}
        3 => return Ok(Vec::new()),
        other => return Err(SendingDomainError(format!("DNS lookup failed (rcode {other})"))),
    }
    Ok(response
        .answer
        .into_iter()
        .filter(|a| a.kind == TXT)
        .map(|a| join_strings(&a.data))
        .collect())
}

/// `"a" "b"` → `ab`; an unquoted value as it is.
fn join_strings(data: &str) -> String {
    let data = data.trim();
    if !data.starts_with('"') {
        return data.to_owned();
    }
    data.split('"').skip(1).step_by(2).collect()
}

#[async_trait]
impl DnsTxt for DnsOverHttps {
    async fn txt(&self, name: &str) -> Result<Vec<String>, SendingDomainError> {
        let url = reqwest::Url::parse_with_params(&self.url, &[("name", name), ("type", "TXT")])
            .map_err(|e| SendingDomainError(format!("DNS endpoint {}: {e}", self.url)))?;
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/dns-json")
            .send()
            .await
            .map_err(|e| SendingDomainError(format!("DNS lookup failed: {e}")))?;
        if !response.status().is_success() {
            return Err(SendingDomainError(format!("DNS lookup failed: HTTP {}", response.status())));
        }
        let body = response
            .text()
            .await
            .map_err(|e| SendingDomainError(format!("DNS lookup failed: {e}")))?;
        txt_of(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doh_answer_gives_its_txt_strings_and_nxdomain_none() {
        let body = r#"{"Status":0,"Answer":[
            {"name":"_openloop-verify.gym.com","type":16,"TTL":300,"data":"\"openloop-verify=abc\""},
            {"name":"_openloop-verify.gym.com","type":16,"TTL":300,"data":"\"v=spf1 \" \"-all\""},
            {"name":"gym.com","type":5,"TTL":300,"data":"other.com."}]}"#;
        assert_eq!(
            txt_of(body).expect("answer"),
            vec!["openloop-verify=abc".to_owned(), "v=spf1 -all".to_owned()]
        );
        assert_eq!(txt_of(r#"{"Status":3}"#).expect("nxdomain"), Vec::<String>::new());
        assert!(txt_of(r#"{"Status":2}"#).is_err(), "SERVFAIL is not 'no record'");
        assert!(txt_of("<html>").is_err());
    }
}

//! The PushPress connector over HTTP (spec §34): the member as PushPress sees them now, for
//! the stale guard.
//!
//! Two reads per member, each `GET` with the headers `API-KEY: {key}` and `company-id:
//! {account id}`:
//! - `{base}/customers/{member_id}` → `{"status": "lead|active|cancelled|frozen",
//!   "status_changed_at"?, "email"?, "last_checkin_at"?, "payment_status"?: "current|failing",
//!   "last_payment_succeeded_at"?, "last_payment_failed_at"?}` (times RFC 3339); `404`: the
//!   member is unknown to PushPress.
//! - `{base}/customers/{member_id}/checkins?since={RFC 3339}` → `{"data": [{"checked_in_at"}]}`.
//!
//! The changes automation actions make (spec §15), each sent with an `Idempotency-Key` (the
//! action's key, so a retried request is applied once) and a JSON body; the answer's JSON, if
//! any, is kept in the action log, and `404` means PushPress does not know the member:
//! - tag: `POST {base}/customers/{id}/tags {"tag"}`; untag: `DELETE {base}/customers/{id}/tags/{tag}`
//! - status: `PATCH {base}/customers/{id} {"status"}`
//! - note: `POST {base}/customers/{id}/notes {"note"}`
//! - staff to-do: `POST {base}/tasks {"customer_id", "title"}`
//!
//! Each request has a timeout and is retried on 429, 5xx, timeouts and refused connections
//! (at most [`CONNECTOR_ATTEMPTS`] attempts, backoff doubling from [`CONNECTOR_RETRY_BACKOFF`],
//! a short `retry-after` honoured, a long one ends the call). Other 4xx and malformed bodies
//! fail at once. The API key is a [`SecretString`]: never in a log, a `Debug` print or an
//! error (bodies quoted in errors are scrubbed of it).

use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use reqwest::{StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use openloop_core::connector::{Connector, ConnectorError, ConnectorMember, MemberChange};
use openloop_core::event::MemberStatus;
use openloop_core::ids::{AccountId, Email, MemberId};
use openloop_core::limits::{CONNECTOR_ATTEMPTS, CONNECTOR_MAX_RETRY_AFTER, CONNECTOR_RETRY_BACKOFF, CONNECTOR_TIMEOUT};

/// Where PushPress is and how to call it. `Debug` shows the key redacted.
#[derive(Clone, Debug)]
pub struct PushPressConfig {
    pub base_url: Url,
    pub api_key: SecretString,
    pub timeout: Duration,
    pub max_attempts: u32,
    pub backoff: Duration,
    pub max_retry_after: Duration,
}

impl PushPressConfig {
    /// The limits' defaults for `base_url`.
    pub fn new(base_url: &str, api_key: SecretString) -> Result<Self, String> {
        let base_url = Url::parse(base_url).map_err(|e| format!("not a URL ({e})"))?;
        if base_url.cannot_be_a_base() {
            return Err("not a base URL".into());
        }
        Ok(Self {
            base_url,
            api_key,
            timeout: CONNECTOR_TIMEOUT,
            max_attempts: CONNECTOR_ATTEMPTS,
            backoff: CONNECTOR_RETRY_BACKOFF,
            max_retry_after: CONNECTOR_MAX_RETRY_AFTER,
        })
    }
}

/// The [`Connector`] over PushPress's HTTP API.
#[derive(Clone, Debug)]
pub struct PushPress {
    config: PushPressConfig,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct CustomerBody {
    status: Option<MemberStatus>,
    #[serde(default)]
    status_changed_at: Option<Timestamp>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    last_checkin_at: Option<Timestamp>,
    #[serde(default)]
    payment_status: Option<PaymentStatus>,
    #[serde(default)]
    last_payment_succeeded_at: Option<Timestamp>,
    #[serde(default)]
    last_payment_failed_at: Option<Timestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum PaymentStatus {
    Current,
    Failing,
}

#[derive(Deserialize)]
struct CheckinsBody {
    data: Vec<CheckinBody>,
}

#[derive(Deserialize)]
struct CheckinBody {
    checked_in_at: Timestamp,
}

/// One HTTP request to PushPress.
struct Request<'a> {
    method: reqwest::Method,
    url: Url,
    body: Option<&'a serde_json::Value>,
    /// Sent as `Idempotency-Key` on changes, so a retried request is applied once.
    idempotency_key: Option<&'a str>,
}

impl Request<'_> {
    fn get(url: Url) -> Self {
        Request {
            method: reqwest::Method::GET,
            url,
            body: None,
            idempotency_key: None,
        }
    }
}

enum Attempt {
    Transient { why: String, retry_after: Option<Duration> },
    Fatal(ConnectorError),
}

impl PushPress {
    pub fn new(config: PushPressConfig) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("could not build the HTTP client: {e}"))?;
        Ok(Self { config, http })
    }

    fn url(&self, segments: &[&str]) -> Result<Url, ConnectorError> {
        let mut url = self.config.base_url.clone();
        url.path_segments_mut()
            .map_err(|()| ConnectorError::Refused("the base URL cannot take a path".into()))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    /// One GET with retries: the body, `None` on 404, or why there is none.
    async fn get<T: DeserializeOwned>(&self, account: AccountId, url: Url) -> Result<Option<T>, ConnectorError> {
        match self.call(account, Request::get(url)).await? {
            Some(bytes) => serde_json::from_slice::<T>(&bytes)
                .map(Some)
                .map_err(|e| ConnectorError::Malformed(e.to_string())),
            None => Ok(None),
        }
    }

    /// One request with retries: the body's bytes, `None` on 404, or why there is none.
    async fn call(&self, account: AccountId, request: Request<'_>) -> Result<Option<Vec<u8>>, ConnectorError> {
        let c = &self.config;
        let attempts = c.max_attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            let wait = match self.attempt(account, &request).await {
                Ok(body) => return Ok(body),
                Err(Attempt::Fatal(e)) => return Err(e),
                Err(Attempt::Transient { why, retry_after }) => {
                    let backoff = c.backoff.saturating_mul(2u32.saturating_pow(attempt - 1));
                    last = self.redact(&why);
                    match retry_after {
                        Some(asked) if asked > c.max_retry_after => {
                            return Err(ConnectorError::Unavailable(format!(
                                "{last}; asked to wait {}s, longer than we wait",
                                asked.as_secs()
                            )));
                        }
                        Some(asked) => asked.max(backoff),
                        None => backoff,
                    }
                }
            };
            if attempt < attempts {
                tracing::warn!(connector = "pushpress", attempt, failure = %last, wait_ms = wait.as_millis() as u64, "connector call failed; retrying");
                tokio::time::sleep(wait).await;
            }
        }
        Err(ConnectorError::Unavailable(format!("gave up after {attempts} attempts: {last}")))
    }

    async fn attempt(&self, account: AccountId, request: &Request<'_>) -> Result<Option<Vec<u8>>, Attempt> {
        let c = &self.config;
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.clone())
            .header("API-KEY", c.api_key.expose_secret())
            .header("company-id", account.to_string())
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(c.timeout);
        if let Some(key) = request.idempotency_key {
            builder = builder.header("Idempotency-Key", key);
        }
        if let Some(body) = request.body {
            builder = builder.json(body);
        }
        let response = match builder.send().await {
            Ok(r) => r,
            Err(e) => return Err(transport_failure(&e)),
        };
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = response.text().await.unwrap_or_default();
            let why = self.redact(&format!("PushPress answered {status}: {}", excerpt(&body)));
            return Err(if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
                Attempt::Transient { why, retry_after }
            } else {
                Attempt::Fatal(ConnectorError::Refused(why))
            });
        }
        match response.bytes().await {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(e) => Err(transport_failure(&e)),
        }
    }

    fn redact(&self, text: &str) -> String {
        let key = self.config.api_key.expose_secret();
        if key.is_empty() {
            text.to_owned()
        } else {
            text.replace(key, "[redacted]")
        }
    }
}

fn transport_failure(e: &reqwest::Error) -> Attempt {
    let why = if e.is_timeout() {
        format!("timed out: {e}")
    } else {
        format!("request failed: {e}")
    };
    if e.is_timeout() || e.is_connect() || e.is_request() || e.is_body() {
        Attempt::Transient { why, retry_after: None }
    } else {
        Attempt::Fatal(ConnectorError::Unavailable(why))
    }
}

fn excerpt(body: &str) -> String {
    const MAX: usize = 200;
    let body = body.trim();
    match body.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_owned(),
    }
}

#[async_trait]
impl Connector for PushPress {
    fn name(&self) -> &'static str {
        "pushpress"
    }

    async fn member(&self, account: AccountId, member: &MemberId, since: Timestamp) -> Result<Option<ConnectorMember>, ConnectorError> {
        let Some(customer) = self
            .get::<CustomerBody>(account, self.url(&["customers", member.as_str()])?)
            .await?
        else {
            return Ok(None);
        };
        let mut url = self.url(&["customers", member.as_str(), "checkins"])?;
        url.query_pairs_mut().append_pair("since", &since.to_string());
        let checkins = self
            .get::<CheckinsBody>(account, url)
            .await?
            .map(|b| b.data.into_iter().map(|c| c.checked_in_at).collect())
            .unwrap_or_default();
        Ok(Some(ConnectorMember {
            status: customer.status,
            status_changed_at: customer.status_changed_at,
            email: customer.email.as_deref().and_then(|e| Email::parse(e).ok()),
            last_checkin_at: customer.last_checkin_at,
            checkins,
            payment_failing: customer.payment_status.map(|p| matches!(p, PaymentStatus::Failing)),
            last_payment_succeeded_at: customer.last_payment_succeeded_at,
            last_payment_failed_at: customer.last_payment_failed_at,
        }))
    }

    async fn apply(
        &self,
        account: AccountId,
        member: &MemberId,
        change: &MemberChange,
        key: &str,
    ) -> Result<serde_json::Value, ConnectorError> {
        use reqwest::Method;
        let customer = member.as_str();
        let (method, url, body) = match change {
            MemberChange::AddTag(tag) => (Method::POST, self.url(&["customers", customer, "tags"])?, json!({ "tag": tag })),
            MemberChange::RemoveTag(tag) => (Method::DELETE, self.url(&["customers", customer, "tags", tag])?, json!({})),
            MemberChange::Status(status) => (Method::PATCH, self.url(&["customers", customer])?, json!({ "status": status })),
            MemberChange::AppendNote(note) => (Method::POST, self.url(&["customers", customer, "notes"])?, json!({ "note": note })),
            MemberChange::StaffTask(title) => (
                Method::POST,
                self.url(&["tasks"])?,
                json!({ "customer_id": customer, "title": title }),
            ),
        };
        let request = Request {
            method,
            url,
            body: Some(&body),
            idempotency_key: Some(key),
        };
        match self.call(account, request).await? {
            None => Err(ConnectorError::Refused(format!("PushPress does not know member {member}"))),
            Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(serde_json::Value::Null),
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| ConnectorError::Malformed(e.to_string())),
        }
    }
}

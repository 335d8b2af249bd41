//! The PushPress connector over HTTP (spec §34): the member as PushPress sees them now, for
//! the stale guard.
//!
//! Two reads per member, each `GET` with the headers `API-KEY: {key}` and `company-id:
//! {company}` — the account's own key and company when it has them
//! ([`openloop_core::members::connector::ConnectorCredentials`]), else the process-wide key (if one is
//! configured) with the account's id as the company:
//! - `{base}/customers/{member_id}` → `{"status": "lead|active|cancelled|frozen",
//!   "status_changed_at"?, "email"?, "last_checkin_at"?, "payment_status"?: "current|failing",
//!   "last_payment_succeeded_at"?, "last_payment_failed_at"?}` (times RFC 3339); `404`: the
//!   member is unknown to PushPress.
//! - `{base}/customers/{member_id}/checkins?since={RFC 3339}` → `{"data": [{"checked_in_at"}]}`.
//!
//! The changes automation actions make (spec §15), with the same key and company, each sent
//! with an `Idempotency-Key` (the action's key, so a retried request is applied once) and a
//! JSON body; the answer's JSON, if any, is kept in the action log, and `404` means PushPress
//! does not know the member:
//! - tag: `POST {base}/customers/{id}/tags {"tag"}`; untag: `DELETE {base}/customers/{id}/tags/{tag}`
//! - status: `PATCH {base}/customers/{id} {"status"}`
//! - note: `POST {base}/customers/{id}/notes {"note"}`
//! - staff to-do: `POST {base}/tasks {"customer_id", "title"}`
//!
//! Each request has a timeout and is retried on 429, 5xx, timeouts and refused connections
//! (the shared [`RetryPolicy`]: at most [`CONNECTOR_ATTEMPTS`] attempts, backoff doubling from
//! [`CONNECTOR_RETRY_BACKOFF`], a short `retry-after` honoured, a long one ends the call).
//! Other 4xx and malformed bodies fail at once. Every key is a secret: never in a log, a
//! `Debug` print or an error (bodies quoted in errors are scrubbed of them).

use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use reqwest::{StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use openloop_core::kernel::ids::{AccountId, Email, MemberId};
use openloop_core::kernel::limits::{
    CONNECTOR_ATTEMPTS, CONNECTOR_ERROR_EXCERPT_CHARS, CONNECTOR_MAX_RETRY_AFTER, CONNECTOR_RETRY_BACKOFF, CONNECTOR_TIMEOUT,
};
use openloop_core::kernel::retry::{Attempt, GaveUp, RetryPolicy, excerpt, retry_after};
use openloop_core::members::connector::{Connector, ConnectorCredentials, ConnectorError, ConnectorMember, MemberChange};
use openloop_core::members::event::MemberStatus;

/// Where PushPress is and how to call it. `Debug` shows the key redacted.
#[derive(Clone, Debug)]
pub struct PushPressConfig {
    pub base_url: Url,
    /// The process-wide key, for accounts without their own; none: only accounts that
    /// brought a key are connected.
    pub api_key: Option<SecretString>,
    pub timeout: Duration,
    pub max_attempts: u32,
    pub backoff: Duration,
    pub max_retry_after: Duration,
}

impl PushPressConfig {
    /// The limits' defaults for `base_url`.
    pub fn new(base_url: &str, api_key: Option<SecretString>) -> Result<Self, String> {
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

/// What one call sends: the key and the company it names.
struct Access<'a> {
    key: &'a str,
    company: String,
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

    /// The key and company of a call for `account`: its own credentials, else the
    /// process-wide key under the account's id.
    fn access<'a>(&'a self, account: AccountId, credentials: Option<&'a ConnectorCredentials>) -> Result<Access<'a>, ConnectorError> {
        if let Some(own) = credentials {
            return Ok(Access {
                key: own.expose_api_key(),
                company: own.company_id().map_or_else(|| account.to_string(), str::to_owned),
            });
        }
        match &self.config.api_key {
            Some(key) => Ok(Access {
                key: key.expose_secret(),
                company: account.to_string(),
            }),
            None => Err(ConnectorError::Refused("no PushPress API key for this account".into())),
        }
    }

    /// One GET with retries: the body, `None` on 404, or why there is none.
    async fn get<T: DeserializeOwned>(&self, access: &Access<'_>, url: Url) -> Result<Option<T>, ConnectorError> {
        match self.call(access, &Request::get(url)).await? {
            Some(bytes) => serde_json::from_slice::<T>(&bytes)
                .map(Some)
                .map_err(|e| ConnectorError::Malformed(e.to_string())),
            None => Ok(None),
        }
    }

    /// One request with retries: the body's bytes, `None` on 404, or why there is none.
    async fn call(&self, access: &Access<'_>, request: &Request<'_>) -> Result<Option<Vec<u8>>, ConnectorError> {
        let c = &self.config;
        let policy = RetryPolicy {
            max_attempts: c.max_attempts,
            backoff: c.backoff,
            max_retry_after: c.max_retry_after,
        };
        let retried = policy
            .run(
                || self.attempt(access, request),
                tokio::time::sleep,
                |attempt, why, wait| {
                    tracing::warn!(connector = "pushpress", attempt, failure = %self.redact(access, why), wait_ms = wait.as_millis() as u64, "connector call failed; retrying");
                },
            )
            .await;
        retried.map_err(|gave_up| match gave_up {
            GaveUp::Fatal(e) => e,
            GaveUp::WaitTooLong { why, asked } => ConnectorError::Unavailable(format!(
                "{}; asked to wait {}s, longer than we wait",
                self.redact(access, &why),
                asked.as_secs()
            )),
            GaveUp::Exhausted { attempts, last } => {
                ConnectorError::Unavailable(format!("gave up after {attempts} attempts: {}", self.redact(access, &last)))
            }
        })
    }

    async fn attempt(&self, access: &Access<'_>, request: &Request<'_>) -> Result<Option<Vec<u8>>, Attempt<ConnectorError>> {
        let c = &self.config;
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.clone())
            .header("API-KEY", access.key)
            .header("company-id", access.company.as_str())
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
            let retry_after = retry_after(response.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok()));
            let body = response.text().await.unwrap_or_default();
            let why = self.redact(
                access,
                &format!("PushPress answered {status}: {}", excerpt(&body, CONNECTOR_ERROR_EXCERPT_CHARS)),
            );
            return Err(Attempt::failed_status(status.as_u16(), why, retry_after, ConnectorError::Refused));
        }
        match response.bytes().await {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(e) => Err(transport_failure(&e)),
        }
    }

    /// Cut every key this call may know — the account's and the process-wide one — out of a
    /// text that quotes PushPress.
    fn redact(&self, access: &Access<'_>, text: &str) -> String {
        let process = self.config.api_key.as_ref().map(ExposeSecret::expose_secret);
        [Some(access.key), process]
            .into_iter()
            .flatten()
            .filter(|key| !key.is_empty())
            .fold(text.to_owned(), |text, key| text.replace(key, "[redacted]"))
    }
}

fn transport_failure(e: &reqwest::Error) -> Attempt<ConnectorError> {
    Attempt::no_answer(
        e.is_timeout(),
        e.is_connect() || e.is_request() || e.is_body(),
        e,
        ConnectorError::Unavailable,
    )
}

#[async_trait]
impl Connector for PushPress {
    fn name(&self) -> &'static str {
        "pushpress"
    }

    fn serves(&self, credentials: Option<&ConnectorCredentials>) -> bool {
        credentials.is_some() || self.config.api_key.is_some()
    }

    async fn member(
        &self,
        account: AccountId,
        credentials: Option<&ConnectorCredentials>,
        member: &MemberId,
        since: Timestamp,
    ) -> Result<Option<ConnectorMember>, ConnectorError> {
        let access = self.access(account, credentials)?;
        let Some(customer) = self
            .get::<CustomerBody>(&access, self.url(&["customers", member.as_str()])?)
            .await?
        else {
            return Ok(None);
        };
        let mut url = self.url(&["customers", member.as_str(), "checkins"])?;
        url.query_pairs_mut().append_pair("since", &since.to_string());
        let checkins = self
            .get::<CheckinsBody>(&access, url)
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
        credentials: Option<&ConnectorCredentials>,
        member: &MemberId,
        change: &MemberChange,
        key: &str,
    ) -> Result<serde_json::Value, ConnectorError> {
        use reqwest::Method;
        let access = self.access(account, credentials)?;
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
        match self.call(&access, &request).await? {
            None => Err(ConnectorError::Refused(format!("PushPress does not know member {member}"))),
            Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(serde_json::Value::Null),
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| ConnectorError::Malformed(e.to_string())),
        }
    }
}

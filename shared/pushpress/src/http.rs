//! One request to PushPress: the key and company headers, a timeout, and retries of what is
//! worth retrying (429, 5xx, timeouts, refused connections) with a doubling backoff that
//! honours `Retry-After` in either of its forms (seconds or an HTTP date). Other 4xx and
//! malformed bodies fail at once. Keys never reach a log or an error: every text that quotes
//! PushPress is scrubbed of them.

use std::time::Duration;

use reqwest::{Method, StatusCode, Url};
use secrecy::ExposeSecret;
use serde::de::DeserializeOwned;

use openloop_core::kernel::limits::CONNECTOR_ERROR_EXCERPT_CHARS;
use openloop_core::kernel::retry::{Attempt, GaveUp, RetryPolicy, excerpt};
use openloop_core::members::connector::ConnectorError;

use crate::PushPress;

/// What one call sends: the key, and the company when the key needs one named.
pub(crate) struct Access<'a> {
    pub key: &'a str,
    pub company: Option<&'a str>,
}

/// One HTTP request.
pub(crate) struct Request<'a> {
    pub method: Method,
    pub url: Url,
    pub body: Option<&'a serde_json::Value>,
}

impl Request<'_> {
    pub fn get(url: Url) -> Self {
        Request {
            method: Method::GET,
            url,
            body: None,
        }
    }
}

impl PushPress {
    /// `{base}/{segments…}` with `query`.
    pub(crate) fn url(&self, segments: &[&str], query: &[(&str, String)]) -> Result<Url, ConnectorError> {
        let mut url = self.config.base_url.clone();
        url.path_segments_mut()
            .map_err(|()| ConnectorError::Refused("the base URL cannot take a path".into()))?
            .pop_if_empty()
            .extend(segments);
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in query {
                pairs.append_pair(name, value);
            }
        }
        Ok(url)
    }

    /// One GET with retries: the body, `None` on 404, or why there is none.
    pub(crate) async fn get<T: DeserializeOwned>(&self, access: &Access<'_>, url: Url) -> Result<Option<T>, ConnectorError> {
        match self.call(access, &Request::get(url)).await? {
            Some(bytes) => serde_json::from_slice::<T>(&bytes)
                .map(Some)
                .map_err(|e| ConnectorError::Malformed(e.to_string())),
            None => Ok(None),
        }
    }

    /// One request with retries: the body's bytes, `None` on 404, or why there is none.
    pub(crate) async fn call(&self, access: &Access<'_>, request: &Request<'_>) -> Result<Option<Vec<u8>>, ConnectorError> {
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
                    tracing::warn!(connector = "pushpress", attempt, failure = %self.redact(access, why), wait_ms = wait.as_millis() as u64, "PushPress call failed; retrying");
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
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.clone())
            .header("API-KEY", access.key)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.config.timeout);
        if let Some(company) = access.company {
            builder = builder.header("company-id", company);
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
                &format!(
                    "PushPress answered {status}: {}",
                    excerpt(&message(&body), CONNECTOR_ERROR_EXCERPT_CHARS)
                ),
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
    pub(crate) fn redact(&self, access: &Access<'_>, text: &str) -> String {
        let process = self.config.api_key.as_ref().map(ExposeSecret::expose_secret);
        [Some(access.key), process]
            .into_iter()
            .flatten()
            .filter(|key| !key.is_empty())
            .fold(text.to_owned(), |text, key| text.replace(key, "[redacted]"))
    }
}

/// PushPress's error bodies are `{"message"?, …}` where typed, else anything: the message if
/// there is one, the text otherwise.
fn message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_else(|| body.to_owned())
}

/// `Retry-After` as seconds or as an HTTP date (how long until then, by the wall clock: the
/// date is PushPress's, so the test clock has nothing to say about it).
pub(crate) fn retry_after(header: Option<&str>) -> Option<Duration> {
    let value = header?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let wait = at.duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

fn transport_failure(e: &reqwest::Error) -> Attempt<ConnectorError> {
    Attempt::no_answer(
        e.is_timeout(),
        e.is_connect() || e.is_request() || e.is_body(),
        e,
        ConnectorError::Unavailable,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(retry_after(Some("7")), Some(Duration::from_secs(7)));
        let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30);
        let date = jiff::fmt::rfc2822::to_string(&soon.to_zoned(jiff::tz::TimeZone::UTC)).expect("date");
        let wait = retry_after(Some(&date)).expect("a date");
        assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(30), "{wait:?}");
        assert_eq!(
            retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            Some(Duration::ZERO),
            "a date past"
        );
        assert_eq!(retry_after(Some("soon")), None);
    }
}

//! AWS's JSON protocols (awsJson 1.0 and 1.1, and REST-JSON), spoken with SigV4-signed requests
//! of our own over reqwest, for the calls that do not earn an SDK client in every binary (a
//! service crate is its endpoint rules, serializers and error types — hundreds of KB against the
//! 8 MB budget): KMS's `GenerateDataKey` and `Decrypt` ([`crate::kms`]), Secrets Manager's
//! `GetSecretValue` and SSM's `GetParameter` ([`crate::secrets`]), EventBridge's `PutEvents`
//! ([`crate::bus`]), End User Messaging's `SendTextMessage` ([`crate::sms`]), SQS's
//! `SendMessageBatch` ([`crate::sqs`]) — one `POST /` with `X-Amz-Target: {prefix}.{op}` — and
//! SES v2's sends and identities ([`crate::ses`], [`crate::sending_domains`]: a method on a
//! path). Credentials come from the clients' provider on every request (in Lambda, the
//! environment). DynamoDB keeps its SDK client (its transactions and conditions are most of
//! the store).

use std::time::SystemTime;

use aws_config::SdkConfig;
use aws_sdk_dynamodb::config::ProvideCredentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use serde_json::Value;

/// A service's refusal: its HTTP status, the `__type` of its JSON error and the error's
/// `message` (never the rest of its body). Shown, it is the code and status alone.
#[derive(Debug)]
pub struct AwsRefusal {
    pub status: u16,
    pub code: String,
    pub message: Option<String>,
}

/// No answer came: `sent` says whether the request may have reached the service (anything but a
/// connection never made), `why` what happened.
#[derive(Debug)]
pub struct NoAnswer {
    pub sent: bool,
    pub why: String,
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

impl std::error::Error for NoAnswer {}

/// A send's answer, for the engine: the service's JSON when it accepted; otherwise what
/// [`refused_send`] and [`unanswered_send`] make of it.
pub(crate) fn sent(
    answer: Result<Result<Value, AwsRefusal>, NoAnswer>,
    before_sending: &[&str],
) -> Result<Value, openloop_core::ports::SendError> {
    answer.map_err(unanswered_send)?.map_err(|e| refused_send(e, before_sending))
}

/// A send's refusal, for the engine: one the service states before it accepts
/// (`before_sending`) sent nothing; any other may have.
pub(crate) fn refused_send(e: AwsRefusal, before_sending: &[&str]) -> openloop_core::ports::SendError {
    let text = format!("{}: {}", e.code, e.message.as_deref().unwrap_or_default());
    if before_sending.contains(&e.code.as_str()) {
        openloop_core::ports::SendError::Rejected(text)
    } else {
        openloop_core::ports::SendError::Ambiguous(text)
    }
}

/// A send with no answer, for the engine: a connection never made sent nothing; anything after
/// it may have sent.
pub(crate) fn unanswered_send(e: NoAnswer) -> openloop_core::ports::SendError {
    if e.sent {
        openloop_core::ports::SendError::Ambiguous(e.why)
    } else {
        openloop_core::ports::SendError::Rejected(format!("not sent: {}", e.why))
    }
}

impl std::fmt::Display for AwsRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.code, self.status)
    }
}

/// How long a call waits for its whole answer: these services answer in milliseconds, and a
/// call that hangs would otherwise hold its function until the function's own timeout. A call
/// cut off after sending is an unknown outcome ([`NoAnswer::sent`]).
const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// The one HTTP client every [`JsonService`] of the process shares (one connection pool, one
/// TLS configuration built once at start-up, not one per service).
fn shared_http() -> reqwest::Client {
    static HTTP: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    HTTP.get_or_init(|| {
        crate::tls::http_client()
            .connect_timeout(crate::clients::CONNECT_TIMEOUT)
            .timeout(ANSWER_TIMEOUT)
            .build()
            .unwrap_or_default()
    })
    .clone()
}

/// One JSON service: its signing name, its host's first label (the signing name but for SES,
/// `email`), and its protocol: awsJson (1.0 or 1.1, one `POST /` with a target) or REST-JSON
/// (a method on a path).
#[derive(Clone)]
pub struct JsonService {
    http: reqwest::Client,
    shared: SdkConfig,
    service: &'static str,
    host: &'static str,
    target_prefix: &'static str,
    content_type: &'static str,
}

impl JsonService {
    /// The access key the calls are signed with now (empty without credentials): whose
    /// permission a call is asked under.
    pub(crate) async fn signer(&self) -> String {
        match self.shared.credentials_provider() {
            Some(provider) => provider
                .provide_credentials()
                .await
                .map(|c| c.access_key_id().to_owned())
                .unwrap_or_default(),
            None => String::new(),
        }
    }

    /// An awsJson 1.1 service (KMS, Secrets Manager, SSM, EventBridge).
    pub fn new(shared: SdkConfig, service: &'static str, target_prefix: &'static str) -> Self {
        Self {
            http: shared_http(),
            shared,
            service,
            host: service,
            target_prefix,
            content_type: "application/x-amz-json-1.1",
        }
    }

    /// An awsJson 1.0 service (End User Messaging SMS, SQS).
    pub fn json_1_0(shared: SdkConfig, service: &'static str, target_prefix: &'static str) -> Self {
        Self {
            content_type: "application/x-amz-json-1.0",
            ..Self::new(shared, service, target_prefix)
        }
    }

    /// A REST-JSON service signed as `service` at `{host}.{region}.amazonaws.com` (SES v2:
    /// `ses` at `email`), called with [`Self::rest`].
    pub fn rest_json(shared: SdkConfig, service: &'static str, host: &'static str) -> Self {
        Self {
            host,
            content_type: "application/json",
            ..Self::new(shared, service, "")
        }
    }

    fn region(&self) -> &str {
        self.shared.region().map_or("us-east-1", |r| r.as_ref())
    }

    /// The emulator's address (`AWS_ENDPOINT_URL`), else the service's regional endpoint; no
    /// trailing `/`.
    fn base(&self) -> String {
        match self.shared.endpoint_url() {
            Some(endpoint) => endpoint.trim_end_matches('/').to_owned(),
            None => format!("https://{}.{}.amazonaws.com", self.host, self.region()),
        }
    }

    /// `operation` with `body`: its JSON answer, or the service's refusal (`Ok(Err(_))`);
    /// `Err` when no answer came. Sent once: what may be retried is the caller's to say
    /// ([`Self::call_retried`]).
    pub async fn call(&self, operation: &str, body: &Value) -> Result<Result<Value, AwsRefusal>, NoAnswer> {
        let target = format!("{}.{operation}", self.target_prefix);
        let body = serde_json::to_vec(body).map_err(|e| NoAnswer {
            sent: false,
            why: e.to_string(),
        })?;
        self.exchange("POST", &format!("{}/", self.base()), Some(&target), body).await
    }

    /// REST-JSON: `method` on `path` (from its first `/`, segments already encoded) with
    /// `body` as JSON, or none.
    pub async fn rest(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Result<Value, AwsRefusal>, NoAnswer> {
        let body = match body {
            Some(body) => serde_json::to_vec(body).map_err(|e| NoAnswer {
                sent: false,
                why: e.to_string(),
            })?,
            None => Vec::new(),
        };
        self.exchange(method, &format!("{}{path}", self.base()), None, body).await
    }

    /// One signed request and its answer read.
    async fn exchange(&self, method: &str, url: &str, target: Option<&str>, body: Vec<u8>) -> Result<Result<Value, AwsRefusal>, NoAnswer> {
        let unsent = |why: String| NoAnswer { sent: false, why };
        let mut headers = vec![("content-type", self.content_type)];
        if let Some(target) = target {
            headers.push(("x-amz-target", target));
        }
        let request = signed(
            method,
            url,
            &headers,
            &body,
            &identity(&self.shared).await.map_err(unsent)?,
            self.region(),
            self.service,
            SystemTime::now(),
        )
        .map_err(unsent)?;
        let request = reqwest::Request::try_from(request.map(|()| reqwest::Body::from(body))).map_err(|e| unsent(e.to_string()))?;
        let response = self.http.execute(request).await.map_err(|e| NoAnswer {
            sent: !e.is_connect(),
            why: format!("{}: {e}", self.service),
        })?;
        let status = response.status().as_u16();
        // REST-JSON names its error in a header (`Code:namespace`), the awsJson protocols in
        // the body's `__type` (`namespace#Code`).
        let error_type = response
            .headers()
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .map(|t| t.split(':').next().unwrap_or(t).to_owned());
        let text = response.text().await.map_err(|e| NoAnswer {
            sent: true,
            why: format!("{}: {e}", self.service),
        })?;
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(Ok(json));
        }
        let code = error_type
            .filter(|t| !t.is_empty())
            .or_else(|| {
                ["__type", "code", "Code"]
                    .iter()
                    .find_map(|k| json.get(*k).and_then(Value::as_str))
                    .map(|t| t.rsplit('#').next().unwrap_or(t).to_owned())
            })
            .unwrap_or_else(|| status.to_string());
        let message = ["message", "Message"]
            .iter()
            .find_map(|k| json.get(*k).and_then(Value::as_str))
            .map(str::to_owned);
        Ok(Err(AwsRefusal { status, code, message }))
    }

    /// [`Self::call`] for an operation that may be sent again (a read, or one the SDK's
    /// standard mode retries): up to three attempts in all when no answer came, the service
    /// throttled, or it failed on its side (5xx), 50 then 200 ms apart.
    pub async fn call_retried(&self, operation: &str, body: &Value) -> Result<Result<Value, AwsRefusal>, NoAnswer> {
        let mut attempt = 0;
        loop {
            let answer = self.call(operation, body).await;
            let transient = match &answer {
                Err(_) => true,
                Ok(Err(refused)) => refused.status >= 500 || refused.code.contains("Throttl") || refused.status == 429,
                Ok(Ok(_)) => false,
            };
            attempt += 1;
            if !transient || attempt == 3 {
                return answer;
            }
            tokio::time::sleep(std::time::Duration::from_millis(if attempt == 1 { 50 } else { 200 })).await;
        }
    }
}

/// The credentials the clients' provider gives now (in Lambda, the function's role).
pub(crate) async fn identity(shared: &SdkConfig) -> Result<Identity, String> {
    let provider = shared.credentials_provider().ok_or("no AWS credentials configured")?;
    let credentials = provider.provide_credentials().await.map_err(|e| format!("AWS credentials: {e}"))?;
    Ok(credentials.into())
}

/// A signed `method` of `body` to `url` for `service`, with `headers` (lower-case names) signed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn signed(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    identity: &Identity,
    region: &str,
    service: &str,
    time: SystemTime,
) -> Result<http::Request<()>, String> {
    let params = v4::SigningParams::builder()
        .identity(identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let signable = SignableRequest::new(method, url, headers.iter().copied(), SignableBody::Bytes(body)).map_err(|e| e.to_string())?;
    let (instructions, _) = sign(signable, &params).map_err(|e| e.to_string())?.into_parts();
    let mut request = http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut request = request.body(()).map_err(|e| e.to_string())?;
    instructions.apply_to_request_http1x(&mut request);
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openloop_core::ports::SendError;

    /// A send with no answer: a connection never made sent nothing (retried later); anything
    /// after it may have reached the member (never sent again).
    #[test]
    fn a_send_without_an_answer_is_unsent_only_when_it_never_connected() {
        let unsent = unanswered_send(NoAnswer {
            sent: false,
            why: "connection refused".into(),
        });
        assert!(
            matches!(unsent, SendError::Rejected(ref t) if t == "not sent: connection refused"),
            "{unsent:?}"
        );
        let lost = unanswered_send(NoAnswer {
            sent: true,
            why: "timed out".into(),
        });
        assert!(matches!(lost, SendError::Ambiguous(_)), "{lost:?}");
    }
}

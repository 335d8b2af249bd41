//! Bedrock Runtime's `Converse` (`POST /model/{modelId}/converse`), one SigV4-signed request of
//! our own over the SDK's reqwest client, as [`crate::aws_json`] speaks KMS and Secrets Manager:
//! Bedrock's SDK crate would be most of a megabyte in every binary for one call. The JSON is
//! `openloop_llm::bedrock`'s (the composition root joins the two); this is the signed request and
//! its answer. Credentials come from the clients' provider on every request (in Lambda, the
//! function's role).

use std::time::SystemTime;

use aws_config::SdkConfig;
use serde_json::Value;

/// What Bedrock answered: its status, `Retry-After` and `X-Amzn-ErrorType` if they came, and
/// the body.
pub struct Answered {
    pub status: u16,
    pub retry_after: Option<String>,
    pub error_type: Option<String>,
    pub body: String,
}

/// No answer came: whether it timed out, and why.
pub struct NoAnswer {
    pub timed_out: bool,
    pub why: String,
}

/// Bedrock Runtime in the clients' region, or at `endpoint` (a local server) when one is named.
#[derive(Clone)]
pub struct BedrockRuntime {
    http: reqwest::Client,
    shared: SdkConfig,
    endpoint: Option<String>,
}

impl std::fmt::Debug for BedrockRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockRuntime").field("endpoint", &self.url("…")).finish()
    }
}

impl BedrockRuntime {
    pub fn new(shared: SdkConfig, endpoint: &str) -> Self {
        Self {
            http: crate::tls::client(),
            shared,
            endpoint: (!endpoint.is_empty()).then(|| endpoint.trim_end_matches('/').to_owned()),
        }
    }

    fn region(&self) -> &str {
        self.shared.region().map_or("us-east-1", |r| r.as_ref())
    }

    /// The model's Converse URL; its id percent-encoded as one path segment (a `:` in a
    /// version, a `/` in an ARN).
    fn url(&self, model: &str) -> String {
        let base = self
            .endpoint
            .clone()
            .unwrap_or_else(|| format!("https://bedrock-runtime.{}.amazonaws.com", self.region()));
        let id: String = model
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => char::from(b).to_string(),
                other => format!("%{other:02X}"),
            })
            .collect();
        format!("{base}/model/{id}/converse")
    }
}

impl BedrockRuntime {
    /// One signed Converse request for `model` with `body`.
    pub async fn converse(&self, model: &str, body: &Value) -> Result<Answered, NoAnswer> {
        let refused = |why: String| NoAnswer { timed_out: false, why };
        let body = serde_json::to_vec(body).map_err(|e| refused(e.to_string()))?;
        let identity = crate::aws_json::identity(&self.shared).await.map_err(refused)?;
        let headers = [("content-type", "application/json"), ("accept", "application/json")];
        let request = crate::aws_json::signed(
            "POST",
            &self.url(model),
            &headers,
            &body,
            &identity,
            self.region(),
            "bedrock",
            SystemTime::now(),
        )
        .map_err(refused)?;
        let request = reqwest::Request::try_from(request.map(|()| reqwest::Body::from(body))).map_err(|e| refused(e.to_string()))?;
        let response = self.http.execute(request).await.map_err(|e| NoAnswer {
            timed_out: e.is_timeout(),
            why: if e.is_timeout() {
                "timed out".into()
            } else {
                "could not connect".into()
            },
        })?;
        let status = response.status().as_u16();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (retry_after, error_type) = (header("retry-after"), header("x-amzn-errortype"));
        let body = response.text().await.map_err(|e| NoAnswer {
            timed_out: e.is_timeout(),
            why: format!("the answer was cut off: {e}"),
        })?;
        Ok(Answered {
            status,
            retry_after,
            error_type,
            body,
        })
    }
}

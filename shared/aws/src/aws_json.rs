//! AWS's JSON 1.1 protocol, spoken with SigV4-signed requests of our own over the SDK's reqwest
//! client, for the few calls that do not earn an SDK client in every binary (a service crate is
//! its endpoint rules, serializers and error types — hundreds of KB against the 8 MB budget):
//! KMS's `GenerateDataKey` and `Decrypt` ([`crate::kms`]), Secrets Manager's `GetSecretValue` and
//! SSM's `GetParameter` ([`crate::secrets`]). One `POST /` with `X-Amz-Target: {prefix}.{op}`.
//! Credentials come from the clients' provider on every request (in Lambda, the environment).

use std::time::SystemTime;

use aws_config::SdkConfig;
use aws_sdk_dynamodb::config::ProvideCredentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use serde_json::Value;

/// A service's refusal: its HTTP status and the `__type` of its JSON error (never its body).
#[derive(Debug)]
pub struct AwsRefusal {
    pub status: u16,
    pub code: String,
}

impl std::fmt::Display for AwsRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.code, self.status)
    }
}

/// One JSON 1.1 service: its signing name (also its host's first label) and target prefix.
#[derive(Clone)]
pub struct JsonService {
    http: reqwest::Client,
    shared: SdkConfig,
    service: &'static str,
    target_prefix: &'static str,
}

impl JsonService {
    pub fn new(shared: SdkConfig, service: &'static str, target_prefix: &'static str) -> Self {
        Self {
            http: crate::tls::client(),
            shared,
            service,
            target_prefix,
        }
    }

    fn region(&self) -> &str {
        self.shared.region().map_or("us-east-1", |r| r.as_ref())
    }

    /// The emulator's address (`AWS_ENDPOINT_URL`), else the service's regional endpoint.
    fn url(&self) -> String {
        match self.shared.endpoint_url() {
            Some(endpoint) => format!("{}/", endpoint.trim_end_matches('/')),
            None => format!("https://{}.{}.amazonaws.com/", self.service, self.region()),
        }
    }

    async fn identity(&self) -> Result<Identity, String> {
        let provider = self.shared.credentials_provider().ok_or("no AWS credentials configured")?;
        let credentials = provider.provide_credentials().await.map_err(|e| format!("AWS credentials: {e}"))?;
        Ok(credentials.into())
    }

    /// `operation` with `body`: its JSON answer, or the service's refusal (`Ok(Err(_))`);
    /// `Err` when no answer came.
    pub async fn call(&self, operation: &str, body: &Value) -> Result<Result<Value, AwsRefusal>, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let target = format!("{}.{operation}", self.target_prefix);
        let headers = [("content-type", "application/x-amz-json-1.1"), ("x-amz-target", target.as_str())];
        let request = signed(
            &self.url(),
            &headers,
            &body,
            &self.identity().await?,
            self.region(),
            self.service,
            SystemTime::now(),
        )?;
        let request = reqwest::Request::try_from(request.map(|()| reqwest::Body::from(body))).map_err(|e| e.to_string())?;
        let response = self.http.execute(request).await.map_err(|e| format!("{}: {e}", self.service))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| format!("{}: {e}", self.service))?;
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(Ok(json));
        }
        let code = json
            .get("__type")
            .and_then(Value::as_str)
            .map(|t| t.rsplit('#').next().unwrap_or(t).to_owned())
            .unwrap_or_else(|| status.to_string());
        Ok(Err(AwsRefusal { status, code }))
    }
}

/// A signed `POST` of `body` to `url` for `service`, with `headers` (lower-case names) signed.
pub(crate) fn signed(
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
    let signable = SignableRequest::new("POST", url, headers.iter().copied(), SignableBody::Bytes(body)).map_err(|e| e.to_string())?;
    let (instructions, _) = sign(signable, &params).map_err(|e| e.to_string())?.into_parts();
    let mut request = http::Request::builder().method("POST").uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut request = request.body(()).map_err(|e| e.to_string())?;
    instructions.apply_to_request_http1x(&mut request);
    Ok(request)
}

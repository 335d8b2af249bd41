//! A fake Amazon Bedrock Runtime on a loopback port that speaks the Converse API's wire format
//! (`POST /model/{modelId}/converse`, a JSON body of `messages`, `system`, `inferenceConfig`;
//! an answer of `output.message.content[].text`, `stopReason`, `usage`, `metrics`) and checks
//! every request's SigV4 signature as Bedrock does: it recomputes the signature from the request
//! it received (method, path, the signed headers, the body's hash) with the known test
//! credentials, for the `bedrock` service in [`REGION`], and refuses a request that is unsigned,
//! signed by another key, for another service or region, or altered (`403
//! InvalidSignatureException`/`UnrecognizedClientException`). Beside the Anthropic and OpenAI
//! fakes of `shared/llm/tests/model_stub.rs`, scripted the same way: one answer per request, in
//! order.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The test credentials the fake knows (a session's, as a Lambda role's are).
pub const ACCESS_KEY: &str = "AKIDBEDROCKTEST";
pub const SECRET_KEY: &str = "bedrock/test/secret/key/EXAMPLEKEY";
pub const SESSION_TOKEN: &str = "bedrock-test-session-token";
pub const REGION: &str = "us-east-1";

/// One scripted answer: a status, a JSON body and the error type header an AWS service sends.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub error_type: Option<String>,
    pub retry_after: Option<String>,
}

impl Answer {
    /// A Converse answer whose one text block is `text`, stopped at the end of its turn.
    pub fn text(text: &str) -> Self {
        Self::stopped(text, "end_turn")
    }

    /// A Converse answer of `text` that stopped for `stop_reason`.
    pub fn stopped(text: &str, stop_reason: &str) -> Self {
        Self::body(json!({
            "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": stop_reason,
            "usage": {"inputTokens": 812, "outputTokens": 64, "totalTokens": 876},
            "metrics": {"latencyMs": 420},
        }))
    }

    pub fn body(body: Value) -> Self {
        Self {
            status: 200,
            body: body.to_string(),
            error_type: None,
            retry_after: None,
        }
    }

    /// A refusal as Bedrock sends one: `status`, `x-amzn-errortype: {error_type}` and a message.
    pub fn error(status: u16, error_type: &str, message: &str) -> Self {
        Self {
            status,
            body: json!({"message": message}).to_string(),
            error_type: Some(error_type.to_owned()),
            retry_after: None,
        }
    }

    /// A 200 whose body is `raw`, whatever it is.
    pub fn raw(raw: &str) -> Self {
        Self {
            status: 200,
            body: raw.to_owned(),
            error_type: None,
            retry_after: None,
        }
    }

    pub fn with_retry_after(mut self, seconds: &str) -> Self {
        self.retry_after = Some(seconds.to_owned());
        self
    }
}

/// A request as the fake received it, once its signature checked out.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The model id of the path, decoded (`anthropic.claude-3-5-haiku-20241022-v1:0`).
    pub model_id: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct State {
    answers: VecDeque<Answer>,
    seen: Vec<Seen>,
    refused: Vec<String>,
}

pub struct FakeBedrock {
    /// `http://127.0.0.1:{port}`: the endpoint the client is given.
    pub url: String,
    state: Arc<Mutex<State>>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeBedrock {
    /// Listening, answering `answers` in order (a request past them is a 500).
    pub async fn start(answers: Vec<Answer>) -> Self {
        let state = Arc::new(Mutex::new(State {
            answers: answers.into(),
            ..State::default()
        }));
        let kept = state.clone();
        let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = kept.clone();
            async move { answer(&state, &method, &uri, &headers, &body) }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let url = format!("http://{}", listener.local_addr().unwrap_or_else(|e| panic!("{e}")));
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, state, server }
    }

    /// The requests whose signature checked out, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).seen.clone()
    }

    /// Why each refused request was refused, in order.
    pub fn refused(&self) -> Vec<String> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).refused.clone()
    }
}

impl Drop for FakeBedrock {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn respond(answer: &Answer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, [("content-type", "application/json")], answer.body.clone()).into_response();
    let headers = response.headers_mut();
    if let Some(kind) = answer.error_type.as_deref().and_then(|k| k.parse().ok()) {
        headers.insert("x-amzn-errortype", kind);
    }
    if let Some(wait) = answer.retry_after.as_deref().and_then(|w| w.parse().ok()) {
        headers.insert("retry-after", wait);
    }
    headers.insert("x-amzn-requestid", axum::http::HeaderValue::from_static("fake-bedrock-request"));
    response
}

fn answer(state: &Mutex<State>, method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Response {
    let refuse = |code: &str, why: String| {
        state.lock().unwrap_or_else(|e| e.into_inner()).refused.push(why.clone());
        respond(&Answer::error(403, code, &why))
    };
    let path = uri.path();
    let Some(model) = path.strip_prefix("/model/").and_then(|p| p.strip_suffix("/converse")) else {
        return respond(&Answer::error(
            404,
            "UnknownOperationException",
            &format!("no operation at {method} {path}"),
        ));
    };
    if method != Method::POST {
        return respond(&Answer::error(404, "UnknownOperationException", "Converse is a POST"));
    }
    if let Err(why) = check_signature(method, uri, headers, body) {
        let code = if why.starts_with("unknown access key") {
            "UnrecognizedClientException"
        } else {
            "InvalidSignatureException"
        };
        return refuse(code, why);
    }
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return respond(&Answer::error(400, "ValidationException", "the body is not JSON"));
    };
    if request["messages"].as_array().is_none_or(|m| m.is_empty()) {
        return respond(&Answer::error(400, "ValidationException", "messages is required"));
    }
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    s.seen.push(Seen {
        model_id: percent_decode(model),
        headers: headers.clone(),
        body: request,
    });
    let next = s
        .answers
        .pop_front()
        .unwrap_or_else(|| Answer::error(500, "InternalServerException", "no answer scripted"));
    respond(&next)
}

/// `%XX` sequences decoded (the model id's `:` travels as `%3A`).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The request's SigV4 signature, recomputed from what was received with the known
/// credentials, against the one it carries.
pub fn check_signature(method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Result<(), String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let authorization = header("authorization").ok_or("unsigned: no Authorization header")?;
    let fields = authorization
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("not a SigV4 (AWS4-HMAC-SHA256) signature")?;
    let field = |name: &str| {
        fields
            .split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(name).and_then(|f| f.strip_prefix('=')))
            .ok_or_else(|| format!("no {name} in the Authorization header"))
    };
    let credential = field("Credential")?;
    let signed_headers = field("SignedHeaders")?;
    let signature = field("Signature")?;
    let scope: Vec<&str> = credential.split('/').collect();
    let [access_key, _date, region, service, terminal] = scope.as_slice() else {
        return Err(format!("a malformed credential scope: {credential}"));
    };
    if *access_key != ACCESS_KEY {
        return Err(format!("unknown access key {access_key}"));
    }
    if (*region, *service, *terminal) != (REGION, "bedrock", "aws4_request") {
        return Err(format!("signed for {service} in {region}, not bedrock in {REGION}"));
    }
    if header("x-amz-security-token") != Some(SESSION_TOKEN) {
        return Err("the session token is missing or not the session's".into());
    }
    let date = header("x-amz-date").ok_or("no x-amz-date")?;
    let time = jiff::fmt::strtime::parse("%Y%m%dT%H%M%SZ", date)
        .and_then(|t| t.to_datetime())
        .and_then(|t| t.to_zoned(jiff::tz::TimeZone::UTC))
        .map_err(|e| format!("x-amz-date {date:?}: {e}"))?;
    let time = SystemTime::from(time.timestamp());
    let names: Vec<&str> = signed_headers.split(';').collect();
    for needed in ["host", "x-amz-date", "x-amz-security-token"] {
        if !names.contains(&needed) {
            return Err(format!("{needed} is not signed"));
        }
    }
    let values: Vec<(&str, &str)> = names
        .iter()
        .map(|name| Ok((*name, header(name).ok_or_else(|| format!("signed header {name} is missing"))?)))
        .collect::<Result<_, String>>()?;
    let host = header("host").ok_or("no host")?;
    let url = format!("http://{host}{}", uri.path_and_query().map_or("/", |p| p.as_str()));
    let identity: aws_smithy_runtime_api::client::identity::Identity =
        aws_sdk_dynamodb::config::Credentials::new(ACCESS_KEY, SECRET_KEY, Some(SESSION_TOKEN.into()), None, "fake-bedrock").into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(REGION)
        .name("bedrock")
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let signable =
        SignableRequest::new(method.as_str(), &url, values.iter().copied(), SignableBody::Bytes(body)).map_err(|e| e.to_string())?;
    let (_, expected) = sign(signable, &params).map_err(|e| e.to_string())?.into_parts();
    if expected != signature {
        return Err("the signature does not match the request (altered, or another secret key)".into());
    }
    Ok(())
}

//! What each function asks of AWS, read as IAM reads it: a proxy in front of the emulator that
//! takes every request's signer from its SigV4 credential (the local runtime signs each
//! function's calls with a key naming it, `openloop_local::function`) and its IAM actions
//! and resource from the request itself, then passes it on. A transaction is the actions of
//! its items, as IAM authorizes it; a batch of queue messages is `sqs:SendMessage`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::fault_proxy::Upstream;

/// One action a function was seen to ask for, on a resource as the template names it:
/// `table`, `index/GSI1`, a queue's logical name (`SignalsQueue`), `bus`, `key`, `bucket`,
/// or `*` for the services whose grants name no resource of the stack's own.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Asked {
    pub function: String,
    pub action: String,
    pub resource: String,
}

/// Not an IAM action: a write of an item that holds a gym's secret (an account, an endpoint).
/// The store seals an open secret on that write (`kms:GenerateDataKey`), so a function seen
/// writing one needs the grant even when every secret it met was sealed already.
pub const WROTE_A_SECRET: &str = "openloop:WroteAnItemHoldingASecret";

/// The proxy's address and what it has seen.
pub struct SignedCalls {
    pub url: String,
    seen: Arc<Mutex<BTreeSet<Asked>>>,
}

impl SignedCalls {
    /// Serve the proxy on a loopback port, passing every request on to `upstream`.
    pub async fn start(upstream: String) -> Self {
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let state = Proxy {
            upstream,
            client: openloop_aws::tls::client(),
            seen: seen.clone(),
        };
        let app = axum::Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let url = format!("http://{}", listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}")));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, seen }
    }

    /// Everything asked so far.
    pub fn seen(&self) -> BTreeSet<Asked> {
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    client: reqwest::Client,
    seen: Arc<Mutex<BTreeSet<Asked>>>,
}

async fn forward(State(proxy): State<Proxy>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let (signer, service) = signer(&headers);
    let function = signer.strip_prefix("local-").unwrap_or(&signer).to_owned();
    let target = headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    {
        let mut seen = proxy.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (action, resource) in actions(&service, target, &method, uri.path(), &json) {
            seen.insert(Asked {
                function: function.clone(),
                action,
                resource,
            });
        }
    }
    match Upstream::ask(&proxy.client, &proxy.upstream, method, &uri, &headers, body).await {
        Some(answer) => answer.answer(),
        None => (StatusCode::BAD_GATEWAY, "the emulator did not answer").into_response(),
    }
}

/// The access key and the service of a request's SigV4 credential
/// (`Credential=KEY/DATE/REGION/SERVICE/aws4_request`).
fn signer(headers: &HeaderMap) -> (String, String) {
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let credential = authorization
        .split("Credential=")
        .nth(1)
        .and_then(|c| c.split([',', ' ']).next())
        .unwrap_or_default();
    let parts: Vec<&str> = credential.split('/').collect();
    match parts.as_slice() {
        [key, _, _, service, ..] => ((*key).to_owned(), (*service).to_owned()),
        _ => ("unsigned".into(), "unknown".into()),
    }
}

/// The IAM actions a request asks for, each with its resource.
fn actions(service: &str, target: &str, method: &Method, path: &str, body: &Value) -> Vec<(String, String)> {
    let operation = target.rsplit('.').next().unwrap_or_default();
    let one = |action: &str, resource: &str| vec![(format!("{service}:{action}"), resource.to_owned())];
    match service {
        "dynamodb" => dynamodb(operation, body),
        "sqs" => {
            let queue = body["QueueUrl"].as_str().unwrap_or_default();
            let action = if operation == "SendMessageBatch" {
                "SendMessage"
            } else {
                operation
            };
            one(action, &queue_resource(queue))
        }
        "events" => one(operation, "bus"),
        "kms" => one(operation, "key"),
        "ses" => ses(method, path, body),
        "s3" => {
            let action = match *method {
                Method::GET | Method::HEAD => "GetObject",
                Method::DELETE => "DeleteObject",
                Method::PUT => "PutObject",
                _ => "?",
            };
            one(action, "bucket")
        }
        _ => one(if operation.is_empty() { method.as_str() } else { operation }, "*"),
    }
}

fn dynamodb(operation: &str, body: &Value) -> Vec<(String, String)> {
    let mut asked = dynamodb_actions(operation, body);
    let puts: Vec<&Value> = match operation {
        "PutItem" => vec![&body["Item"]],
        "TransactWriteItems" => body["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|entry| &entry["Put"]["Item"])
            .collect(),
        _ => vec![],
    };
    let holds_a_secret =
        |item: &Value| ["account", "webhook_endpoint"].contains(&item[openloop_aws::keys::KIND]["S"].as_str().unwrap_or_default());
    if puts.into_iter().any(holds_a_secret) {
        asked.push((WROTE_A_SECRET.to_owned(), "table".to_owned()));
    }
    asked
}

fn dynamodb_actions(operation: &str, body: &Value) -> Vec<(String, String)> {
    let item = |action: &str| (format!("dynamodb:{action}"), "table".to_owned());
    match operation {
        "TransactWriteItems" => body["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let kind = entry.as_object()?.keys().next()?.clone();
                Some(item(match kind.as_str() {
                    "Put" => "PutItem",
                    "Update" => "UpdateItem",
                    "Delete" => "DeleteItem",
                    "ConditionCheck" => "ConditionCheckItem",
                    _ => "?",
                }))
            })
            .collect(),
        "TransactGetItems" => vec![item("GetItem")],
        "Query" | "Scan" => {
            let resource = body["IndexName"]
                .as_str()
                .map_or_else(|| "table".to_owned(), |index| format!("index/{index}"));
            vec![(format!("dynamodb:{operation}"), resource)]
        }
        other => vec![item(other)],
    }
}

/// A queue's logical name in the template, from its URL (`…/{prefix}-signals`).
fn queue_resource(url: &str) -> String {
    let name = url.rsplit('/').next().unwrap_or_default();
    openloop_core::task::work::QueueName::ALL
        .into_iter()
        .find(|q| name.ends_with(&format!("-{}", q.as_str())))
        .map_or_else(
            || format!("queue {name}"),
            |q| {
                let word = q.as_str();
                format!("{}{}Queue", word[..1].to_ascii_uppercase(), &word[1..])
            },
        )
}

/// SES v2's REST calls. A mail sent as raw MIME is authorized as `ses:SendRawEmail` too.
fn ses(method: &Method, path: &str, body: &Value) -> Vec<(String, String)> {
    let segments: Vec<&str> = path.trim_start_matches("/v2/email/").split('/').collect();
    let actions: &[&str] = match (method.as_str(), segments.as_slice()) {
        ("POST", ["outbound-emails"]) if body["Content"]["Raw"].is_object() => &["SendEmail", "SendRawEmail"],
        ("POST", ["outbound-emails"]) => &["SendEmail"],
        ("POST", ["identities"]) => &["CreateEmailIdentity"],
        ("GET", ["identities", _]) => &["GetEmailIdentity"],
        ("DELETE", ["identities", _]) => &["DeleteEmailIdentity"],
        ("PUT", ["identities", _, "mail-from"]) => &["PutEmailIdentityMailFromAttributes"],
        _ => &["?"],
    };
    actions.iter().map(|a| (format!("ses:{a}"), "*".to_owned())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_as_the_iam_actions_it_needs() {
        let transaction = serde_json::json!({"TransactItems": [{"Put": {}}, {"ConditionCheck": {}}, {"Update": {}}]});
        assert_eq!(
            actions("dynamodb", "DynamoDB_20120810.TransactWriteItems", &Method::POST, "/", &transaction),
            [
                ("dynamodb:PutItem".into(), "table".into()),
                ("dynamodb:ConditionCheckItem".into(), "table".into()),
                ("dynamodb:UpdateItem".into(), "table".into())
            ]
        );
        let query = serde_json::json!({"TableName": "t", "IndexName": "GSI1"});
        assert_eq!(
            actions("dynamodb", "DynamoDB_20120810.Query", &Method::POST, "/", &query),
            [("dynamodb:Query".to_owned(), "index/GSI1".to_owned())]
        );
        let batch = serde_json::json!({"QueueUrl": "http://127.0.0.1/000000000000/tx-deliveries"});
        assert_eq!(
            actions("sqs", "AmazonSQS.SendMessageBatch", &Method::POST, "/", &batch),
            [("sqs:SendMessage".to_owned(), "DeliveriesQueue".to_owned())]
        );
        let raw = serde_json::json!({"Content": {"Raw": {"Data": "x"}}});
        assert_eq!(actions("ses", "", &Method::POST, "/v2/email/outbound-emails", &raw).len(), 2);
        assert_eq!(
            actions("ses", "", &Method::DELETE, "/v2/email/identities/gym.example", &Value::Null),
            [("ses:DeleteEmailIdentity".to_owned(), "*".to_owned())]
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=local-tick/20261207/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(signer(&headers), ("local-tick".to_owned(), "dynamodb".to_owned()));
    }
}

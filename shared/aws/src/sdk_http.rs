//! The AWS SDK's HTTP client: reqwest, the one HTTP client every other outbound call uses.
//!
//! The SDK's own client (hyper with HTTP/2 and a second TLS setup) would add some 0.4 MB to
//! every Lambda binary. This one keeps what the SDK asks of a client: the connect and read
//! timeouts of each client's settings (one pooled reqwest client per pair, made once), and
//! transport failures in the SDK's kinds, so its retries and our send classification read
//! them as before — a refused connection never reached the service (`io`, never connected),
//! a timeout is a timeout, any other transport failure `io`. Request bodies are the SDK's
//! in-memory ones (every operation Openloop calls); a streaming body is refused, not sent.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;

/// The SDK's stalled-stream protection, off: it watches the request body being polled, and
/// this client sends the body from memory without polling it, so a call slower than the
/// protection's grace period (5 s) failed as a stalled upload. A stalled answer is bounded by
/// the read timeout, where the client's settings give one.
pub fn stalled_stream_protection() -> aws_sdk_dynamodb::config::StalledStreamProtectionConfig {
    aws_sdk_dynamodb::config::StalledStreamProtectionConfig::disabled()
}

/// The client every SDK configuration of Openloop is given.
pub fn client() -> SharedHttpClient {
    SharedHttpClient::new(ReqwestClient::default())
}

type Timeouts = (Option<Duration>, Option<Duration>);

#[derive(Debug, Default)]
struct ReqwestClient {
    connectors: Mutex<HashMap<Timeouts, SharedHttpConnector>>,
}

impl HttpClient for ReqwestClient {
    fn http_connector(&self, settings: &HttpConnectorSettings, _: &RuntimeComponents) -> SharedHttpConnector {
        let timeouts = (settings.connect_timeout(), settings.read_timeout());
        let mut connectors = self.connectors.lock().unwrap_or_else(PoisonError::into_inner);
        connectors
            .entry(timeouts)
            .or_insert_with(|| SharedHttpConnector::new(Connector::with(timeouts)))
            .clone()
    }
}

#[derive(Debug, Clone)]
struct Connector {
    /// The client, or why it could not be built (each call then fails with it).
    client: Result<reqwest::Client, String>,
}

impl Connector {
    fn with((connect, read): Timeouts) -> Self {
        let mut builder = crate::tls::http_client();
        if let Some(timeout) = connect {
            builder = builder.connect_timeout(timeout);
        }
        if let Some(timeout) = read {
            builder = builder.read_timeout(timeout);
        }
        Self {
            client: builder
                .build()
                .map_err(|e| format!("the SDK's HTTP client could not be built: {e}")),
        }
    }
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let client = self.client.clone();
        HttpConnectorFuture::new(async move {
            let client = client.map_err(|e| ConnectorError::user(e.into()))?;
            let request = request.try_into_http1x().map_err(|e| ConnectorError::user(e.into()))?;
            let (parts, body) = request.into_parts();
            let body = body
                .bytes()
                .ok_or_else(|| ConnectorError::user("a streaming request body (this client sends bodies held in memory only)".into()))?
                .to_vec();
            let request = reqwest::Request::try_from(http::Request::from_parts(parts, body)).map_err(|e| ConnectorError::user(e.into()))?;
            let response = client.execute(request).await.map_err(transport)?;
            let (status, headers) = (response.status(), response.headers().clone());
            let body = response.bytes().await.map_err(transport)?;
            let mut answer = http::Response::new(SdkBody::from(body));
            *answer.status_mut() = status;
            *answer.headers_mut() = headers;
            HttpResponse::try_from(answer).map_err(|e| ConnectorError::other(e.into(), None))
        })
    }
}

/// A reqwest failure in the SDK's kinds.
fn transport(e: reqwest::Error) -> ConnectorError {
    if e.is_timeout() {
        ConnectorError::timeout(e.into())
    } else if e.is_connect() {
        ConnectorError::io(e.into()).never_connected()
    } else {
        ConnectorError::io(e.into())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    fn request(uri: &str, body: SdkBody) -> HttpRequest {
        let mut request = HttpRequest::new(body);
        request.set_uri(uri).expect("a uri");
        request.headers_mut().insert("x-amz-target", "DynamoDB_20120810.GetItem");
        request
    }

    fn connector() -> Connector {
        Connector::with((Some(Duration::from_secs(5)), Some(Duration::from_secs(5))))
    }

    #[tokio::test]
    async fn a_request_goes_out_as_sent_and_the_answer_comes_back_whole() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().expect("a request");
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !String::from_utf8_lossy(&seen).contains("{\"Key\":1}") {
                let n = socket.read(&mut buf).expect("read");
                assert!(n > 0, "the request ended early");
                seen.extend_from_slice(&buf[..n]);
            }
            let body = "{\"Item\":{}}";
            write!(
                socket,
                "HTTP/1.1 400 Bad Request\r\nx-amzn-requestid: r1\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .expect("write");
            String::from_utf8_lossy(&seen).into_owned()
        });
        let response = connector()
            .call(request(&format!("http://{addr}/"), SdkBody::from("{\"Key\":1}")))
            .await
            .expect("an answer");
        let seen = server.join().expect("the server");
        assert!(seen.starts_with("GET / HTTP/1.1"), "{seen}");
        assert!(
            seen.to_ascii_lowercase().contains("x-amz-target: dynamodb_20120810.getitem"),
            "{seen}"
        );
        assert_eq!(response.status().as_u16(), 400);
        assert_eq!(response.headers().get("x-amzn-requestid"), Some("r1"));
        assert_eq!(response.body().bytes(), Some(&b"{\"Item\":{}}"[..]));
    }

    #[tokio::test]
    async fn a_refused_connection_is_an_io_failure_that_never_reached_the_service() {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr");
        let error = connector()
            .call(request(&format!("http://{addr}/"), SdkBody::from("{}")))
            .await
            .expect_err("nothing listens");
        assert!(error.is_io() && !error.is_timeout(), "{error:?}");
        assert!(format!("{error:?}").contains("NeverConnected"), "{error:?}");
    }

    #[tokio::test]
    async fn a_streaming_body_is_refused_before_anything_is_sent() {
        // A body that is not held in memory (here one already taken, as a stream's would be).
        let error = connector()
            .call(request("http://127.0.0.1:9/", SdkBody::taken()))
            .await
            .expect_err("refused");
        assert!(error.is_user(), "{error:?}");
    }
}

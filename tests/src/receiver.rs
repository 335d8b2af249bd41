//! A webhook receiver on a loopback port, for the outbound webhooks' tests: it keeps every
//! delivery (headers and body) and answers the status it is told to.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};

/// One delivery as received.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Delivery {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("a JSON body: {e}"))
    }

    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("a {name} header"))
            .to_owned()
    }
}

pub struct Receiver {
    /// `http://127.0.0.1:{port}/hook`.
    pub url: String,
    deliveries: Arc<Mutex<Vec<Delivery>>>,
    status: Arc<AtomicU16>,
    server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Listening, answering `status` until told otherwise.
    pub async fn start(status: u16) -> Self {
        let deliveries = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(AtomicU16::new(status));
        let (kept, told) = (deliveries.clone(), answer.clone());
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (kept, told) = (kept.clone(), told.clone());
                async move {
                    kept.lock().unwrap_or_else(|e| e.into_inner()).push(Delivery { headers, body });
                    StatusCode::from_u16(told.load(Ordering::SeqCst)).unwrap_or(StatusCode::OK)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let url = format!("http://{}/hook", listener.local_addr().unwrap_or_else(|e| panic!("{e}")));
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            deliveries,
            status: answer,
            server,
        }
    }

    pub fn deliveries(&self) -> Vec<Delivery> {
        self.deliveries.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn answer(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

//! A fake AWS End User Messaging SMS: the emulator has no `PinpointSMSVoiceV2` API, so the
//! local runtime serves the part Openloop calls — `SendTextMessage`, over its awsJson1_0
//! protocol (`POST /`, `X-Amz-Target: PinpointSMSVoiceV2.SendTextMessage`) — on a port of its
//! own, and the engine's real adapter (`openloop_aws::sms`) talks to it. What it accepted is
//! `GET /_local/outbox?channel=sms`: `to, body, segments, sent_at` (the test clock's time).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use openloop_core::ports::Clock;

/// One text the fake service accepted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SentText {
    pub to: String,
    pub from: String,
    pub body: String,
    pub segments: u32,
    pub sent_at: String,
    pub message_id: String,
}

/// The fake service's state: what it accepted, oldest first.
pub struct FakeSms {
    clock: Arc<dyn Clock>,
    sent: Mutex<Vec<SentText>>,
    /// The access keys the texts were signed with: which function sent them
    /// ([`crate::function`]), as the SMS service would authorize it.
    signers: Mutex<std::collections::BTreeSet<String>>,
    /// Where each text is kept too, on the emulator ([`crate::kept`]).
    kept: Option<Arc<crate::kept::Kept>>,
}

/// The request members `SendTextMessage` takes that the fake reads.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SendTextMessage {
    destination_phone_number: String,
    origination_identity: String,
    #[serde(default)]
    message_body: String,
}

impl FakeSms {
    pub fn new(clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(Self {
            clock,
            sent: Mutex::new(Vec::new()),
            signers: Mutex::default(),
            kept: None,
        })
    }

    /// [`Self::new`], keeping each text in `kept` as well, and holding the texts a runtime
    /// before this one kept.
    pub(crate) async fn kept_in(clock: Arc<dyn Clock>, kept: Arc<crate::kept::Kept>) -> Result<Arc<Self>, String> {
        Ok(Arc::new(Self {
            clock,
            sent: Mutex::new(kept.texts().await?),
            signers: Mutex::default(),
            kept: Some(kept),
        }))
    }

    /// Every access key a text was signed with (`local-execute`, …).
    pub fn signers(&self) -> std::collections::BTreeSet<String> {
        self.signers.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The texts accepted, oldest first; only those to `to` if given.
    pub fn read(&self, to: Option<&str>, after: usize) -> Vec<SentText> {
        let sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.iter()
            .filter(|t| to.is_none_or(|to| t.to == to))
            .skip(after)
            .cloned()
            .collect()
    }

    /// Serve the protocol on `127.0.0.1:0`; the base URL to point the SDK client at.
    pub async fn serve(self: &Arc<Self>) -> Result<(String, tokio::task::JoinHandle<()>), std::io::Error> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let app = Router::new().route("/", axum::routing::post(handle)).with_state(self.clone());
        let server = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the fake SMS service stopped");
            }
        });
        Ok((url, server))
    }
}

fn aws_error(kind: &str, message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [("content-type", "application/x-amz-json-1.0")],
        serde_json::json!({"__type": kind, "message": message}).to_string(),
    )
        .into_response()
}

async fn handle(State(fake): State<Arc<FakeSms>>, headers: HeaderMap, body: Bytes) -> Response {
    let target = headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if target != "PinpointSMSVoiceV2.SendTextMessage" {
        return aws_error("UnknownOperationException", &format!("{target} is not served here"));
    }
    let Ok(request) = serde_json::from_slice::<SendTextMessage>(&body) else {
        return aws_error("ValidationException", "DestinationPhoneNumber and OriginationIdentity are required");
    };
    if !openloop_core::kernel::text::is_e164(&request.destination_phone_number) || request.message_body.is_empty() {
        return aws_error(
            "ValidationException",
            "DestinationPhoneNumber must be E.164 and MessageBody not empty",
        );
    }
    let signer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.split("Credential=").nth(1))
        .and_then(|c| c.split('/').next())
        .unwrap_or("unsigned")
        .to_owned();
    fake.signers.lock().unwrap_or_else(|e| e.into_inner()).insert(signer);
    let message_id = ulid::Ulid::new().to_string().to_ascii_lowercase();
    let text = SentText {
        segments: openloop_core::conversation::sms::segments(&request.message_body),
        to: request.destination_phone_number,
        from: request.origination_identity,
        body: request.message_body,
        sent_at: fake.clock.now().to_string(),
        message_id: message_id.clone(),
    };
    if let Some(kept) = &fake.kept
        && let Err(e) = kept.keep_text(&text).await
    {
        tracing::error!(error = %e, "a text accepted was not kept for a restart");
    }
    fake.sent.lock().unwrap_or_else(|e| e.into_inner()).push(text);
    (
        StatusCode::OK,
        [("content-type", "application/x-amz-json-1.0")],
        serde_json::json!({"MessageId": message_id}).to_string(),
    )
        .into_response()
}

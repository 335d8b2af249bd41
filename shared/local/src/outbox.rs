//! `GET /_local/outbox`: every e-mail the emulator's SES accepted, oldest first, parsed from
//! the raw MIME (moto keeps it under `ses.RawMessage[]` at `/moto-api/data.json`).

use mail_parser::{HeaderValue, MessageParser};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct OutboxMail {
    /// The recipients, comma-separated (one, for our mail).
    pub to: String,
    pub from: Option<String>,
    pub subject: Option<String>,
    pub text: Option<String>,
    pub message_id: Option<String>,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub reply_to: Option<String>,
    pub list_unsubscribe: Option<String>,
    pub list_unsubscribe_post: Option<String>,
    pub sent_at: Option<String>,
    pub ses_message_id: Option<String>,
}

fn ids(value: &HeaderValue) -> Vec<String> {
    match value {
        HeaderValue::Text(t) => vec![t.to_string()],
        HeaderValue::TextList(list) => list.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Parse one raw message.
pub fn parse(raw: &[u8], ses_id: Option<String>) -> Option<OutboxMail> {
    let message = MessageParser::default().parse(raw)?;
    let first = |a: Option<&mail_parser::Address>| a.and_then(|a| a.first()).and_then(|a| a.address()).map(str::to_owned);
    Some(OutboxMail {
        to: message
            .to()
            .map(|a| a.iter().filter_map(|a| a.address().map(str::to_owned)).collect())
            .unwrap_or_default(),
        from: first(message.from()),
        subject: message.subject().map(str::to_owned),
        text: message.body_text(0).map(|t| t.replace("\r\n", "\n")),
        message_id: message.message_id().map(str::to_owned),
        in_reply_to: ids(message.in_reply_to()).into_iter().next(),
        references: ids(message.references()),
        reply_to: first(message.reply_to()),
        list_unsubscribe: message.header_raw("List-Unsubscribe").map(|v| v.trim().to_owned()),
        list_unsubscribe_post: message.header_raw("List-Unsubscribe-Post").map(|v| v.trim().to_owned()),
        sent_at: message
            .date()
            .and_then(|d| jiff::Timestamp::from_second(d.to_timestamp()).ok())
            .map(|t| t.to_string()),
        ses_message_id: ses_id,
    })
}

/// Read the emulator's sent mail. moto serialises its whole state for this call, and a write
/// landing meanwhile can spoil the answer (a 500 or a cut body): such a read is tried again.
pub async fn fetch(http: &reqwest::Client, endpoint: &str) -> Result<Vec<OutboxMail>, String> {
    let mut last = String::new();
    for attempt in 0..5u64 {
        match fetch_once(http, endpoint).await {
            Ok(mail) => return Ok(mail),
            Err(e) => last = e,
        }
        tokio::time::sleep(std::time::Duration::from_millis(100 * (attempt + 1))).await;
    }
    Err(last)
}

async fn fetch_once(http: &reqwest::Client, endpoint: &str) -> Result<Vec<OutboxMail>, String> {
    let url = format!("{}/moto-api/data.json", endpoint.trim_end_matches('/'));
    let data: serde_json::Value = http
        .get(&url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .error_for_status()
        .map_err(|e| format!("{url}: {e}"))?
        .json()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let raw = data
        .pointer("/ses/RawMessage")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    Ok(raw
        .iter()
        .filter_map(|entry| {
            let bytes = entry.get("raw_data")?.as_str()?.as_bytes().to_vec();
            parse(&bytes, entry.get("id").and_then(|v| v.as_str()).map(str::to_owned))
        })
        .collect())
}

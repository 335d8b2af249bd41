//! The text-message provider, like the mailer (AWS End User Messaging SMS in `openloop-aws`;
//! locally the same adapter at a fake server of its protocol).

use async_trait::async_trait;
use jiff::Timestamp;

use super::{Delivered, SendError};

/// One text as it leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboundText {
    /// The member's (or owner's) phone, E.164.
    pub to: String,
    /// The origination identity (`sms.origination_identity`).
    pub from: String,
    pub body: String,
    pub segments: u32,
    /// The engine's clock at sending.
    pub sent_at: Timestamp,
}

#[async_trait]
pub trait SmsSender: Send + Sync {
    /// Send one text. `Rejected`: not sent, safe to retry later; `Ambiguous`: unknown.
    async fn send_text(&self, text: &OutboundText) -> Result<Delivered, SendError>;
}

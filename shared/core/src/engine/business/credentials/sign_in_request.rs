//! "Email me a sign-in link", asked and answered apart. The page answers at once after queuing
//! one message, whatever the address (the same work, the same time); the signals consumer
//! then looks the address up and mails the links (`Engine::mail_sign_in_links`).

use jiff::SignedDuration;
use serde::{Deserialize, Serialize};

use super::super::{Engine, SignInToken};
use crate::kernel::ids::Email;
use crate::task::error::EngineError;
use crate::task::work::QueueName;

/// A message on the signals queue: mail `sign_in_link_for` its links, if it owns accounts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignInRequest {
    pub sign_in_link_for: Email,
    /// Who asked (their network address), for the per-requester allowance.
    pub requester: String,
}

impl Engine {
    /// Queue the ask; nothing is read, so a known and an unknown address take the same calls.
    pub async fn request_sign_in_link(&self, email: &Email, requester: &str) -> Result<(), EngineError> {
        let request = SignInRequest {
            sign_in_link_for: email.clone(),
            requester: requester.chars().take(100).collect(),
        };
        let body = serde_json::to_string(&request).map_err(|e| EngineError::Dependency(e.to_string()))?;
        self.queue
            .send(QueueName::Signals, vec![(body, SignedDuration::ZERO)])
            .await
            .map_err(|e| EngineError::Dependency(e.to_string()))
    }

    /// The consumer's part: mail the links asked for (`mint` makes each token).
    pub async fn answer_sign_in_request(
        &self,
        request: &SignInRequest,
        mint: impl FnMut() -> Option<SignInToken> + Send,
    ) -> Result<usize, EngineError> {
        self.mail_sign_in_links(&request.sign_in_link_for, &request.requester, mint).await
    }
}

//! Rotating an account's credentials: the owner API token and the inbound webhook secret.
//! The owner gets a new one at once; the old one keeps working for [`ROTATION_OVERLAP`] so
//! whatever uses it can be moved over, then stops. Only hashes of API tokens are stored.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::account::WebhookSecret;

/// How long a rotated-out token or secret still works.
pub const ROTATION_OVERLAP: SignedDuration = SignedDuration::from_hours(24);

/// A secret on its way out: accepted until `until`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetiringSecret {
    pub secret: WebhookSecret,
    pub until: Timestamp,
}

/// What an account keeps about its credentials besides the current webhook secret.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Credentials {
    /// The hash of the current API token (accounts made before rotation existed have none
    /// until their first rotation through the API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_token_hash: Option<String>,
    /// The webhook secret rotated out, still accepted until its time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retiring_webhook_secret: Option<RetiringSecret>,
    /// The key the holdout draw and the learning pseudonym are derived from: the account's
    /// first webhook secret, kept when it is rotated so neither changes with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_key: Option<WebhookSecret>,
}

/// How an API token is held: its account and, once rotated out, when it stops working.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenHolder {
    pub account_id: crate::kernel::ids::AccountId,
    pub retires_at: Option<Timestamp>,
}

impl TokenHolder {
    /// Whether the token signs in at `now`.
    pub fn works_at(&self, now: Timestamp) -> bool {
        self.retires_at.is_none_or(|t| now < t)
    }
}

/// `POST /api/v1/settings/api-token/rotate`: the new token, shown this once.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiTokenRotated {
    pub api_token: String,
    /// Until when the previous token still works.
    pub previous_token_expires_at: Timestamp,
}

/// `POST /api/v1/settings/webhook-secret/rotate`: the new secret, shown this once.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookSecretRotated {
    pub webhook_secret: String,
    /// Until when deliveries signed with the previous secret are still accepted.
    pub previous_secret_expires_at: Timestamp,
}

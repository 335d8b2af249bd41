//! The owner's text-message settings: texts on or off, the
//! origination identity they leave from (a phone number, pool or sender id of AWS End User
//! Messaging SMS), the account's daily limit of texts, and the segments one text may take.

use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::AccountId;

pub const DEFAULT_DAILY_LIMIT: u32 = 50;
/// Segments a text may use unless the owner allows more.
pub const DEFAULT_MAX_SEGMENTS: u32 = 2;
/// The most segments an owner may allow.
pub const MAX_SEGMENTS: u32 = 6;
pub const MAX_DAILY_LIMIT: u32 = 10_000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SmsSettings {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default)]
    pub origination_identity: Option<String>,
    #[serde(default = "default_daily_limit")]
    pub daily_limit: u32,
    /// Segments one text may take (GSM-7: 153 characters each beyond the first 160).
    #[serde(default = "default_max_segments")]
    pub max_segments: u32,
}

fn default_daily_limit() -> u32 {
    DEFAULT_DAILY_LIMIT
}

fn default_max_segments() -> u32 {
    DEFAULT_MAX_SEGMENTS
}

impl Default for SmsSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            origination_identity: None,
            daily_limit: DEFAULT_DAILY_LIMIT,
            max_segments: default_max_segments(),
        }
    }
}

impl SmsSettings {
    /// The identity texts leave from, when texts are on.
    pub fn sending_from(&self) -> Option<&str> {
        self.origination_identity.as_deref().filter(|_| self.enabled)
    }

    pub fn validate(&self) -> Result<(), InvalidInput> {
        let invalid = |m: String| Err(InvalidInput::new("invalid_sms", m));
        if let Some(id) = &self.origination_identity
            && (id.is_empty()
                || id.len() > crate::kernel::limits::MAX_ORIGINATION_CHARS
                || !id.chars().all(|c| c.is_ascii_alphanumeric() || "+-_:/.".contains(c)))
        {
            return invalid("sms.origination_identity is a phone number (E.164), pool id, sender id or ARN".into());
        }
        if self.enabled && self.origination_identity.is_none() {
            return invalid("sms.enabled needs sms.origination_identity, the number texts leave from".into());
        }
        if self.daily_limit > MAX_DAILY_LIMIT {
            return invalid(format!("sms.daily_limit must be at most {MAX_DAILY_LIMIT}"));
        }
        if !(1..=MAX_SEGMENTS).contains(&self.max_segments) {
            return invalid(format!("sms.max_segments must be 1-{MAX_SEGMENTS}"));
        }
        Ok(())
    }
}

/// Which account texts from an origination identity (a number, pool or sender id): the first
/// account to name it claims it (one conditional write, [`crate::ports::DeliverabilityStore::claim_number`])
/// and holds it until it names another or none; another account naming it is refused
/// (`sms_number_taken`, 409), so no two gyms text — or read members' answers — as one number.
/// Unlike a sending domain there is nothing a gym can publish to prove a number is its own, so
/// a claim is never taken over: the operator frees a number named by the wrong gym.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberClaim {
    /// The identity as [`number_key`] folds it.
    pub number: String,
    pub account: AccountId,
    pub claimed_at: jiff::Timestamp,
}

/// The one spelling an origination identity is claimed under: trimmed and lowercased (an ARN
/// or a sender id named in another case is the same identity).
pub fn number_key(identity: &str) -> String {
    identity.trim().to_ascii_lowercase()
}

/// A change of some of the text settings (`PUT /api/v1/settings` takes any subset).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SmsPatch {
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "crate::kernel::texts::OriginationIdentity::de_present")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::OriginationIdentity::optional_schema))]
    pub origination_identity: Option<Option<String>>,
    pub daily_limit: Option<u32>,
    pub max_segments: Option<u32>,
}

impl SmsPatch {
    pub fn apply(&self, mut s: SmsSettings) -> SmsSettings {
        if let Some(v) = self.enabled {
            s.enabled = v;
        }
        if let Some(v) = &self.origination_identity {
            s.origination_identity = v.as_ref().map(|v| v.trim().to_owned());
        }
        if let Some(v) = self.daily_limit {
            s.daily_limit = v;
        }
        if let Some(v) = self.max_segments {
            s.max_segments = v;
        }
        s
    }
}

/// The owner's phone, checked: E.164.
pub fn validate_owner_phone(phone: Option<&str>) -> Result<(), InvalidInput> {
    match phone {
        Some(p) if !crate::kernel::text::is_e164(p) => Err(InvalidInput::new(
            "invalid_owner_phone",
            "owner_phone must be E.164, such as +15555550100",
        )),
        _ => Ok(()),
    }
}

/// An account's texts and the segments they took, over a day or a range of days: what the
/// daily limit caps, the scorecard shows and the cost model prices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextCounts {
    pub texts: u32,
    pub segments: u32,
}

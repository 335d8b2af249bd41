//! An account is one business (a gym): its settings, limits, profile and kill switch.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::error::InvalidInput;
use crate::ids::AccountId;
use crate::limits;

/// How much the agent may do alone (spec §6.2, §7.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    /// Everything goes to the owner first.
    Manual,
    /// Confident tasks without escalation triggers run on their own.
    LimitedAuto,
}

/// How the business presents itself in mail.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub owner_first_name: Option<String>,
    #[serde(default)]
    pub sign_off: Option<String>,
}

/// The owner-editable settings (CONTRACT.md `GET/PUT /api/v1/settings`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub execution_mode: ExecutionMode,
    pub member_weekly_limit: u32,
    pub daily_send_limit: u32,
    pub timezone: String,
    pub send_window_start: u8,
    pub send_window_end: u8,
    pub onboarded_at: Option<Timestamp>,
    pub avg_membership_price: f64,
    pub profile: Profile,
}

impl Settings {
    pub fn defaults(timezone: String) -> Self {
        Self {
            execution_mode: ExecutionMode::Manual,
            member_weekly_limit: limits::DEFAULT_MEMBER_WEEKLY_LIMIT,
            daily_send_limit: limits::DEFAULT_DAILY_SEND_LIMIT,
            timezone,
            send_window_start: limits::DEFAULT_SEND_WINDOW_START,
            send_window_end: limits::DEFAULT_SEND_WINDOW_END,
            onboarded_at: None,
            avg_membership_price: limits::DEFAULT_AVG_MEMBERSHIP_PRICE,
            profile: Profile::default(),
        }
    }

    /// Reject settings the engine could not honour; nothing is stored if this fails.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        parse_timezone(&self.timezone)?;
        if self.send_window_start >= self.send_window_end || self.send_window_end > 24 {
            return Err(InvalidInput::new(
                "invalid_send_window",
                "send_window_start must be before send_window_end, both hours in 0..=24",
            ));
        }
        if self.member_weekly_limit > limits::MAX_MEMBER_WEEKLY_LIMIT {
            return Err(InvalidInput::new(
                "invalid_member_weekly_limit",
                format!("member_weekly_limit must be at most {}", limits::MAX_MEMBER_WEEKLY_LIMIT),
            ));
        }
        if self.daily_send_limit > limits::MAX_DAILY_SEND_LIMIT {
            return Err(InvalidInput::new(
                "invalid_daily_send_limit",
                format!("daily_send_limit must be at most {}", limits::MAX_DAILY_SEND_LIMIT),
            ));
        }
        if !(self.avg_membership_price.is_finite() && self.avg_membership_price >= 0.0) {
            return Err(InvalidInput::new(
                "invalid_avg_membership_price",
                "avg_membership_price must be a non-negative number",
            ));
        }
        Ok(())
    }

    pub fn time_zone(&self) -> TimeZone {
        parse_timezone(&self.timezone).unwrap_or(TimeZone::UTC)
    }
}

/// An IANA time zone name, checked against the bundled database.
pub fn parse_timezone(name: &str) -> Result<TimeZone, InvalidInput> {
    TimeZone::get(name).map_err(|_| {
        InvalidInput::new(
            "invalid_timezone",
            format!("{name:?} is not an IANA time zone (e.g. America/New_York)"),
        )
    })
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
    pub settings: Settings,
    /// Standard Webhooks secret (`whsec_…`), used to verify the connector's webhooks.
    pub webhook_secret: WebhookSecret,
    /// The per-account kill switch: nothing is sent while set.
    pub paused: bool,
    pub created_at: Timestamp,
    pub version: u64,
}

impl Account {
    pub fn sender_name(&self) -> &str {
        self.settings.profile.display_name.as_deref().unwrap_or(&self.name)
    }
}

/// A webhook signing secret: stored and compared, never printed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

impl From<&str> for WebhookSecret {
    fn from(secret: &str) -> Self {
        Self::new(secret)
    }
}

/// The platform-wide switch (spec §7.14).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemConfig {
    pub global_pause: bool,
    pub updated_at: Option<Timestamp>,
}

//! A member's consent to text messages: yes or no, where it came
//! from and when. No text goes to a member without a "yes"; a member's STOP is a "no" from
//! them, their START a "yes". Kept on the member's facts, so the send snapshot carries it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;

/// The sources' names.
pub fn source_names() -> Vec<&'static str> {
    vec!["imported", "owner", "member"]
}

crate::kernel::bounded::bounded_text! {
    /// Where a consent came from: `imported`, `owner` or `member`.
    pub SourceName = crate::kernel::bounded::TextRule::line(16, "invalid_consent").one_of(source_names);
}

/// Where a consent record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ConsentSource {
    /// Brought over from the gym's member system.
    Imported,
    /// Entered by the owner (a signed form, a front-desk "yes").
    Owner,
    /// The member's own words: a "yes", a START, or a STOP.
    Member,
}

impl ConsentSource {
    pub fn parse(raw: &str) -> Result<Self, InvalidInput> {
        match raw {
            "imported" => Ok(Self::Imported),
            "owner" => Ok(Self::Owner),
            "member" => Ok(Self::Member),
            other => Err(InvalidInput::new(
                "invalid_consent",
                format!("source {other:?} is not one of imported, owner, member"),
            )),
        }
    }
}

/// One member's answer about texts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SmsConsent {
    pub sms: bool,
    pub source: ConsentSource,
    pub at: Timestamp,
}

impl SmsConsent {
    /// Whether a text may go to the member.
    pub fn allows_texts(consent: Option<&SmsConsent>) -> bool {
        consent.is_some_and(|c| c.sms)
    }
}

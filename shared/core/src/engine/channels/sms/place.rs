//! Where a member is, as far as texts go, as the owner sees and sets it: the time zone and US
//! state on their consent record (`POST /api/v1/members/{id}/consent`, optional
//! `time_zone` and `state`), and the hours their texts keep (`rails/quiet_hours.rs`) shown
//! with their consent and on `GET /api/v1/members/{id}`.

use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::members::consent::SmsConsent;
use crate::members::member::MemberFacts;
use crate::owner::account::{Settings, parse_timezone};
use crate::rails::quiet_hours::{self, ZoneSource};
use crate::rails::texting;

use crate::kernel::limits::MAX_TIMEZONE_CHARS as MAX_TIME_ZONE_CHARS;

/// The member's place as the owner asked to change it, checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PlaceChange {
    /// `Some(None)` clears; `None` keeps.
    pub time_zone: Option<Option<String>>,
    pub state: Option<Option<String>>,
}

impl PlaceChange {
    /// Check what the owner sent: an IANA time zone (as the bundled database names it) and a
    /// US state's or territory's code or name (kept as its code).
    pub fn parse(time_zone: Option<Option<String>>, state: Option<Option<String>>) -> Result<Self, InvalidInput> {
        let time_zone = match time_zone {
            Some(Some(raw)) => {
                let raw = raw.trim();
                if raw.chars().count() > MAX_TIME_ZONE_CHARS {
                    return Err(InvalidInput::new(
                        "invalid_timezone",
                        format!("time_zone must be at most {MAX_TIME_ZONE_CHARS} characters"),
                    ));
                }
                let zone = parse_timezone(raw)?;
                Some(Some(zone.iana_name().unwrap_or(raw).to_owned()))
            }
            other => other,
        };
        let state = match state {
            Some(Some(raw)) => {
                let code = quiet_hours::state_code(&raw).ok_or_else(|| {
                    InvalidInput::new(
                        "invalid_consent",
                        "state must be a US state's or territory's two-letter code or name, such as \"FL\" or \"Florida\"",
                    )
                })?;
                Some(Some(code.to_owned()))
            }
            other => other,
        };
        Ok(Self { time_zone, state })
    }

    pub fn apply(&self, facts: &mut MemberFacts) {
        if let Some(zone) = &self.time_zone {
            facts.time_zone = zone.clone();
        }
        if let Some(state) = &self.state {
            facts.state = state.clone();
        }
    }
}

/// Where texts find the member and when they may go, as the owner API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TextPlaceView {
    /// The time zone the member's texts keep their hours in.
    pub time_zone: String,
    /// `member` (set for them), `state` (their state's), or `gym` (nothing known of them).
    pub time_zone_source: ZoneSource,
    /// Their US state's two-letter code: the one set for them, else their PushPress address's.
    pub state: Option<String>,
    /// When texts may reach them, in their time zone ("8:00–21:00", narrower in some states).
    pub text_hours: String,
    /// The most texts about one subject in 24 hours, where their state sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texts_per_24h: Option<u32>,
}

impl TextPlaceView {
    pub fn of(settings: &Settings, facts: Option<&MemberFacts>) -> Self {
        let place = texting::member_place(settings, facts);
        Self {
            time_zone: place.time_zone_name(),
            time_zone_source: place.zone_source,
            state: place.state.map(|s| s.code.clone()),
            text_hours: place.hours_in_words(),
            texts_per_24h: place.state.and_then(|s| s.per_24h),
        }
    }
}

/// A member's texts as `GET /api/v1/members/{id}` shows them: their consent (none: never
/// asked), whether they have a phone, and their place.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemberTexts {
    pub consent: Option<SmsConsent>,
    pub has_phone: bool,
    #[serde(flatten)]
    pub place: TextPlaceView,
}

impl MemberTexts {
    pub fn of(settings: &Settings, facts: &MemberFacts) -> Self {
        Self {
            consent: facts.sms_consent.clone(),
            has_phone: facts.phone.is_some(),
            place: TextPlaceView::of(settings, Some(facts)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_change_keeps_clears_or_sets_each_field_and_refuses_what_is_not_a_place() {
        let mut facts = MemberFacts::new(crate::kernel::ids::MemberId::parse("m_1").expect("id"));
        facts.time_zone = Some("America/Denver".into());
        facts.state = Some("CO".into());
        PlaceChange::parse(None, Some(Some("florida".into())))
            .expect("valid")
            .apply(&mut facts);
        assert_eq!(
            (facts.time_zone.as_deref(), facts.state.as_deref()),
            (Some("America/Denver"), Some("FL"))
        );
        PlaceChange::parse(Some(None), None).expect("valid").apply(&mut facts);
        assert_eq!((facts.time_zone.as_deref(), facts.state.as_deref()), (None, Some("FL")));
        let bad_zone = PlaceChange::parse(Some(Some("Mars/Olympus".into())), None).expect_err("no such zone");
        assert_eq!(bad_zone.code, "invalid_timezone");
        let long = PlaceChange::parse(Some(Some("A".repeat(65))), None).expect_err("too long");
        assert_eq!(long.code, "invalid_timezone");
        let bad_state = PlaceChange::parse(None, Some(Some("Ontario".into()))).expect_err("not a state");
        assert_eq!(bad_state.code, "invalid_consent");
    }
}

//! Identifiers. Ours are ULIDs (sortable by creation time); the connector's member ids are
//! opaque strings. Newtypes keep one kind of id from being passed where another is expected.

use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use ulid::Ulid;

use crate::kernel::error::InvalidInput;

/// A ULID as the document says it: 26 characters of Crockford's base 32.
#[cfg(feature = "openapi")]
pub fn ulid_schema(description: &str) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .description(Some(description))
        .min_length(Some(26))
        .max_length(Some(26))
        .pattern(Some("^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$"))
        .into()
}

macro_rules! ulid_id {
    ($name:ident, $what:literal) => {
        #[doc = concat!("The ULID of ", $what, ".")]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Ulid);

        /// `AccountId(01J…)`: the id as the API and the dashboard write it, in logs and
        /// assertions alike (not the ULID's 128-bit integer).
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }

        impl $name {
            /// A new id whose time part is `now` (ids sort by creation time).
            pub fn generate(now: Timestamp) -> Self {
                Self(new_ulid(now))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                ulid_schema(concat!("The ULID of ", $what, "."))
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
        }

        impl FromStr for $name {
            type Err = InvalidInput;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ulid::from_string(s).map(Self).map_err(|_| {
                    InvalidInput::new(
                        concat!("invalid_", stringify!($name)),
                        format!("{s:?} is not a valid {} (expected a ULID)", $what),
                    )
                })
            }
        }
    };
}

ulid_id!(AccountId, "an account");
ulid_id!(TaskId, "a task");

/// A ULID for `now`, monotonic within this process so entries written in the same
/// millisecond keep the order they were made in.
pub fn new_ulid(now: Timestamp) -> Ulid {
    static GENERATOR: Mutex<Option<ulid::Generator>> = Mutex::new(None);
    let at = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(now.as_millisecond()).unwrap_or(0));
    let mut guard = GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
    let generator = guard.get_or_insert_with(ulid::Generator::new);
    generator.generate_from_datetime(at).unwrap_or_else(|_| Ulid::from_datetime(at))
}

/// The connector's id for a member (PushPress gives its own, e.g. `m_1`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct MemberId(String);

/// What a member id may be: what [`MemberId::parse`] keeps, as the OpenAPI document says it
/// (the test `member_ids_keep_their_documented_rule` holds the two together).
pub const MEMBER_ID_RULE: crate::kernel::bounded::TextRule =
    crate::kernel::bounded::TextRule::line(crate::kernel::limits::MAX_MEMBER_ID_CHARS, "invalid_member_id")
        .min(1)
        .pattern("^[A-Za-z0-9_.:@-]+$");

/// Read as [`MemberId::parse`] reads it; a refusal keeps its code through serde.
impl<'de> Deserialize<'de> for MemberId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(|e| <D::Error as serde::de::Error>::custom(crate::kernel::bounded::refusal(&e)))
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for MemberId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        MEMBER_ID_RULE.schema("A member's id in the gym's system.")
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for MemberId {
    fn name() -> std::borrow::Cow<'static, str> {
        "MemberId".into()
    }
}

impl MemberId {
    pub fn parse(raw: &str) -> Result<Self, InvalidInput> {
        let ok = !raw.is_empty()
            && raw.len() <= crate::kernel::limits::MAX_MEMBER_ID_CHARS
            && raw.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:@".contains(c));
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(InvalidInput::new(
                "invalid_member_id",
                format!("{raw:?} is not a valid member id (1-128 of A-Z a-z 0-9 _ - . : @)"),
            ))
        }
    }
    /// A member id from outside (a webhook, PushPress, the owner API): as [`Self::parse`], and
    /// never one Openloop reserves for itself ([`RESERVED_MEMBER_IDS`]: `_account`, the whole
    /// business), which no delivery may write facts for or open a member's task on.
    pub fn parse_external(raw: &str) -> Result<Self, InvalidInput> {
        let id = Self::parse(raw)?;
        id.refuse_reserved()?;
        Ok(id)
    }

    /// `Err` for an id Openloop reserves for itself.
    pub fn refuse_reserved(&self) -> Result<(), InvalidInput> {
        if RESERVED_MEMBER_IDS.contains(&self.0.as_str()) {
            return Err(InvalidInput::new(
                "reserved_member_id",
                format!("{:?} is reserved by Openloop for the whole business, not a member", self.0),
            ));
        }
        Ok(())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Member ids Openloop keeps for itself: `_account` names the whole business (research, staff
/// to-dos about the gym; `owner::recurring::ACCOUNT_WIDE_MEMBER`).
pub const RESERVED_MEMBER_IDS: [&str; 1] = ["_account"];

impl TryFrom<String> for MemberId {
    type Error = InvalidInput;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}
impl From<MemberId> for String {
    fn from(value: MemberId) -> Self {
        value.0
    }
}
impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An e-mail address, parsed once and strictly at every entry point (webhooks, settings,
/// suppressions, the owner's address, inbound mail) and stored lower-case. The grammar is
/// RFC 5321/5322's, checked by the `email_address` crate (no display text, no domain literal,
/// a domain with at least two labels), narrowed to what we can safely put in a header and
/// hand to SES: ASCII only (no control, zero-width or full-width look-alikes) and no quoted
/// local part.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct Email(String);

/// Read as [`Email::parse`] reads it; a refusal keeps its code through serde.
impl<'de> Deserialize<'de> for Email {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(|e| <D::Error as serde::de::Error>::custom(crate::kernel::bounded::refusal(&e)))
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Email {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::kernel::texts::EmailAddress::field_schema()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Email {
    fn name() -> std::borrow::Cow<'static, str> {
        "Email".into()
    }
}

impl Email {
    pub fn parse(raw: &str) -> Result<Self, InvalidInput> {
        let s = raw.trim().to_ascii_lowercase();
        let options = email_address::Options {
            minimum_sub_domains: 2,
            allow_domain_literal: false,
            allow_display_text: false,
        };
        let plain = s.len() <= crate::kernel::limits::MAX_EMAIL_CHARS && s.bytes().all(|b| b.is_ascii_graphic() && b != b'"');
        if plain && email_address::EmailAddress::parse_with_options(&s, options).is_ok() {
            Ok(Self(s))
        } else {
            Err(InvalidInput::new("invalid_email", format!("{raw:?} is not a valid e-mail address")))
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}
impl TryFrom<String> for Email {
    type Error = InvalidInput;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}
impl From<Email> for String {
    fn from(value: Email) -> Self {
        value.0
    }
}
impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_debugs_as_it_is_written() {
        let id: AccountId = "01JD8X0000000000000000000A".parse().expect("a ULID");
        assert_eq!(format!("{id:?}"), "AccountId(01JD8X0000000000000000000A)");
        assert_eq!(id.to_string(), "01JD8X0000000000000000000A");
    }

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            Email::parse(" Sarah@Example.COM ").map(String::from).ok(),
            Some("sarah@example.com".into())
        );
        for good in ["sarah.lee+gym@example.co.uk", "o'brien@example.com", "a_b-c@mail.example-gym.com"] {
            assert!(Email::parse(good).is_ok(), "{good:?} should be accepted");
        }
        for bad in [
            "",
            "sarah",
            "sarah@",
            "@example.com",
            "sa rah@example.com",
            "a@b",
            "a@b@c.com",
            "sarah\0@example.com",
            "sarah\u{7}@example.com",
            "sa\r\nrah@example.com",
            "sa\u{200b}rah@example.com",
            "ｓａｒａｈ@example.com",
            "sarah@ｅｘａｍｐｌｅ.com",
            ".sarah@example.com",
            "sarah.@example.com",
            "sa..rah@example.com",
            "sarah@-example.com",
            "sarah@example-.com",
            "sarah@example..com",
            "\"sa rah\"@example.com",
            "Sarah <sarah@example.com>",
            "sarah@[127.0.0.1]",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn ulids_made_in_the_same_millisecond_keep_their_order() {
        // Far in the future: the generator is monotonic across the process's tests.
        let now = Timestamp::from_second(4_000_000_000).unwrap_or(Timestamp::UNIX_EPOCH);
        let ids: Vec<_> = (0..50).map(|_| new_ulid(now)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids[0].timestamp_ms(), 4_000_000_000_000);
    }

    #[test]
    fn member_ids_reject_key_separators() {
        assert!(MemberId::parse("m_1").is_ok());
        assert!(MemberId::parse("m#1").is_err());
        assert!(MemberId::parse("").is_err());
    }

    #[test]
    fn member_ids_keep_their_documented_rule() {
        let long = "m".repeat(crate::kernel::limits::MAX_MEMBER_ID_CHARS + 1);
        for raw in ["m_1", "a.b:c@d-e", "", "m#1", "m 1", "m\n", "é", long.as_str()] {
            assert_eq!(
                MemberId::parse(raw).is_ok(),
                MEMBER_ID_RULE.check("member_id", raw).is_ok(),
                "{raw:?}"
            );
        }
    }
}

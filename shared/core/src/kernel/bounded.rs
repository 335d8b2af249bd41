//! One validation at the edge for text (numbers: `kernel::number`). Every string the owner API
//! takes is one of the types [`bounded_text!`] makes here: each names its rule once — its
//! length in characters, one line or free text, a pattern, a format or the values it may be —
//! and that rule is both what its `Deserialize` refuses and what its OpenAPI schema says
//! (`maxLength`, `pattern`, `format`, `enum`). A request type that holds one cannot be read with
//! a value out of its rule: the JSON body is refused with `422`, the rule's code, and a message
//! naming the field ([`refusal`] carries the code through serde to the entry point).

use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};

use crate::kernel::error::InvalidInput;

/// What a kind of text may be.
#[derive(Clone, Copy, Debug)]
pub struct TextRule {
    /// Fewest characters (after nothing is trimmed).
    pub min: usize,
    /// Most characters.
    pub max: usize,
    /// Free text: line breaks and tabs allowed. Otherwise one line, no control characters.
    pub lines: bool,
    /// A regular expression the whole value matches (the schema's `pattern`).
    pub pattern: Option<&'static str>,
    /// The schema's `format`, checked: `email`, `uri`, `date-time`, `date`.
    pub format: Option<&'static str>,
    /// The only values it may be (the schema's `enum`).
    pub one_of: Option<fn() -> Vec<&'static str>>,
    /// The code of a refusal.
    pub code: &'static str,
}

impl TextRule {
    /// One line of at most `max` characters.
    pub const fn line(max: usize, code: &'static str) -> Self {
        Self {
            min: 0,
            max,
            lines: false,
            pattern: None,
            format: None,
            one_of: None,
            code,
        }
    }

    /// Free text (line breaks allowed) of at most `max` characters.
    pub const fn text(max: usize, code: &'static str) -> Self {
        Self {
            lines: true,
            ..Self::line(max, code)
        }
    }

    pub const fn min(self, min: usize) -> Self {
        Self { min, ..self }
    }

    pub const fn pattern(self, pattern: &'static str) -> Self {
        Self {
            pattern: Some(pattern),
            ..self
        }
    }

    pub const fn format(self, format: &'static str) -> Self {
        Self {
            format: Some(format),
            ..self
        }
    }

    pub const fn one_of(self, values: fn() -> Vec<&'static str>) -> Self {
        Self {
            one_of: Some(values),
            ..self
        }
    }

    /// `value` kept to the rule, else refused with the rule's code and a message about `field`.
    pub fn check(&self, field: &str, value: &str) -> Result<(), InvalidInput> {
        let refuse = |what: String| Err(InvalidInput::new(self.code, format!("{field} {what}")));
        if let Some(values) = self.one_of {
            let values = values();
            if !values.contains(&value) {
                return refuse(format!("must be one of: {}", values.join(", ")));
            }
            return Ok(());
        }
        let chars = value.chars().count();
        if chars > self.max {
            return refuse(format!("must be at most {} characters ({chars} given)", self.max));
        }
        if chars < self.min {
            return refuse(if self.min == 1 {
                "must not be empty".to_owned()
            } else {
                format!("must be at least {} characters", self.min)
            });
        }
        let bad_char = |c: char| {
            if self.lines {
                c.is_control() && !matches!(c, '\n' | '\r' | '\t')
            } else {
                crate::kernel::text::breaks_a_line(c)
            }
        };
        if value.chars().any(bad_char) {
            return refuse(if self.lines {
                "must not hold control characters".to_owned()
            } else {
                "must be one line of text: no line breaks or control characters".to_owned()
            });
        }
        if let Some(pattern) = self.pattern
            && !matches(pattern, value)
        {
            return refuse(format!("must match {pattern}"));
        }
        match self.format {
            Some("email") if crate::kernel::ids::Email::parse(value).is_err() => refuse("must be an e-mail address".into()),
            Some("uri") if !is_url(value) => refuse("must be an absolute URL (https://…)".into()),
            Some("date-time") if value.parse::<jiff::Timestamp>().is_err() => {
                refuse("must be an RFC 3339 time (2030-01-31T09:00:00Z)".into())
            }
            Some("date") if value.parse::<jiff::civil::Date>().is_err() => refuse("must be a date (YYYY-MM-DD)".into()),
            _ => Ok(()),
        }
    }

    /// The rule as an OpenAPI schema of a string.
    #[cfg(feature = "openapi")]
    pub fn schema(&self, description: &str) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, Type};
        let mut schema = ObjectBuilder::new().schema_type(Type::String);
        if !description.is_empty() {
            schema = schema.description(Some(description.trim()));
        }
        if let Some(values) = self.one_of {
            return schema.enum_values(Some(values())).into();
        }
        schema = schema.max_length(Some(self.max));
        if self.min > 0 {
            schema = schema.min_length(Some(self.min));
        }
        // A rule's own pattern admits no control character; without one, the schema says what
        // `check` refuses of every text: control characters (free text: but for line breaks
        // and tabs), and in one line the line and paragraph separators too.
        schema = schema.pattern(Some(self.pattern.unwrap_or(if self.lines {
            FREE_TEXT_PATTERN
        } else {
            ONE_LINE_PATTERN
        })));
        if let Some(format) = self.format {
            schema = schema.format(Some(SchemaFormat::Custom(format.to_owned())));
        }
        schema.into()
    }
}

/// What the schema of free text without a pattern of its own says: no control character but
/// line breaks and tabs (what [`TextRule::check`] refuses).
pub const FREE_TEXT_PATTERN: &str = r"^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]*$";

/// What the schema of one line without a pattern of its own says: no control character, line
/// or paragraph separator ([`crate::kernel::text::breaks_a_line`]).
pub const ONE_LINE_PATTERN: &str = r"^[^\x00-\x1F\x7F-\x9F\u2028\u2029]*$";

/// Whether `value` matches the whole of `pattern` (each pattern compiled once).
fn matches(pattern: &'static str, value: &str) -> bool {
    static COMPILED: OnceLock<RwLock<BTreeMap<&'static str, regex_lite::Regex>>> = OnceLock::new();
    let compiled = COMPILED.get_or_init(Default::default);
    if let Some(re) = compiled.read().ok().and_then(|m| m.get(pattern).cloned()) {
        return re.is_match(value);
    }
    let Ok(re) = regex_lite::Regex::new(pattern) else {
        return false;
    };
    let found = re.is_match(value);
    if let Ok(mut map) = compiled.write() {
        map.insert(pattern, re);
    }
    found
}

/// An absolute URL: a scheme, `://`, something after it, no spaces (which schemes and hosts
/// are taken is the caller's rule, such as a webhook endpoint's address policy).
fn is_url(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    let scheme_ok =
        scheme.starts_with(|c: char| c.is_ascii_alphabetic()) && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    scheme_ok && !rest.is_empty() && !value.chars().any(char::is_whitespace)
}

const MARK: char = '\u{1f}';

/// A refusal as a serde error's text: the code travels beside the message, and the entry point
/// ([`parse_refusal`]) gives it back with the field's path.
pub fn refusal(e: &InvalidInput) -> String {
    format!("{MARK}{}{MARK}{}{MARK}", e.code, e.message)
}

/// The code and message of a [`refusal`] inside a serde error's text, if it is one.
pub fn parse_refusal(text: &str) -> Option<(&str, &str)> {
    let mut parts = text.split(MARK);
    let (_, code, message) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next()?;
    Some((code, message))
}

/// A string kept to a [`TextRule`]: `Deserialize` checks it, `ToSchema` describes it.
///
/// ```ignore
/// bounded_text! {
///     /// What a task is for, in the owner's words.
///     pub Goal = TextRule::text(limits::MAX_GOAL_CHARS, "invalid_goal").min(1);
/// }
/// ```
macro_rules! bounded_text {
    ($($(#[doc = $doc:literal])* $vis:vis $name:ident = $rule:expr;)*) => {$(
        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        $vis struct $name(String);

        impl $name {
            /// What it may be.
            pub const RULE: $crate::kernel::bounded::TextRule = $rule;

            /// `value` for `field`, kept to [`Self::RULE`].
            pub fn parse(field: &str, value: impl Into<String>) -> Result<Self, $crate::kernel::error::InvalidInput> {
                let value = value.into();
                Self::RULE.check(field, &value)?;
                Ok(Self(value))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        /// Deserializers for a `String` field kept to [`Self::RULE`]
        /// (`#[serde(deserialize_with = "Name::de")]`, `de_optional`, `de_list`…): the value is
        /// read as this type — refused with the rule's code, the field named — and kept as text.
        #[allow(dead_code)]
        impl $name {
            pub fn de<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
                <Self as serde::Deserialize>::deserialize(deserializer).map(Self::into_string)
            }

            pub fn de_optional<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
                <Option<Self> as serde::Deserialize>::deserialize(deserializer).map(|v| v.map(Self::into_string))
            }

            /// Present, even as `null` (with `#[serde(default)]`: absent is `None`, `null` is `Some(None)`).
            pub fn de_present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
                Self::de_optional(deserializer).map(Some)
            }

            pub fn de_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
                <Vec<Self> as serde::Deserialize>::deserialize(deserializer).map(|v| v.into_iter().map(Self::into_string).collect())
            }

            pub fn de_optional_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
                <Option<Vec<Self>> as serde::Deserialize>::deserialize(deserializer)
                    .map(|v| v.map(|v| v.into_iter().map(Self::into_string).collect()))
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <String as serde::Deserialize>::deserialize(deserializer)?;
                Self::parse("the value", value)
                    .map_err(|e| <D::Error as serde::de::Error>::custom($crate::kernel::bounded::refusal(&e)))
            }
        }

        #[cfg(feature = "openapi")]
        impl $name {
            /// Its schema, for a `String` field kept to the same rule elsewhere
            /// (`#[schema(schema_with = ...)]`).
            pub fn field_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                <Self as utoipa::PartialSchema>::schema()
            }

            /// Its schema or `null`, for an `Option<String>` field kept to the same rule elsewhere.
            pub fn optional_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                match <Self as utoipa::PartialSchema>::schema() {
                    utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(mut object)) => {
                        object.schema_type = utoipa::openapi::schema::SchemaType::from_iter([
                            utoipa::openapi::schema::Type::String,
                            utoipa::openapi::schema::Type::Null,
                        ]);
                        object.into()
                    }
                    other => other,
                }
            }

            /// A list of them, for a `Vec<String>` field kept to the same rule elsewhere.
            pub fn list_schema() -> utoipa::openapi::schema::Array {
                utoipa::openapi::schema::ArrayBuilder::new()
                    .items(<Self as utoipa::PartialSchema>::schema())
                    .build()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                Self::RULE.schema(concat!($($doc, "\n"),*))
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
        }
    )*};
}

pub(crate) use bounded_text;

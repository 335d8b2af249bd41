//! The member-data connector (PushPress) and what we do when it is down.
//!
//! Webhooks keep the member facts projected in the table; before a touch the stale guard can
//! also ask the connector for the member as they are *now* ([`Connector::member`]). Whether
//! a call is worth making is the account's [`ConnectorHealth`], kept in the table: every
//! failure pushes the next call out ([`crate::kernel::limits::connector_backoff`]), and after
//! [`crate::kernel::limits::CONNECTOR_DEGRADED_AFTER`] failures in a row the connector is degraded
//! (one alert, written by exactly one caller). The rule that matters: nothing is ever sent
//! on data we could not refresh — a touch whose fresh read fails, or whose connector is in its
//! backoff, is deferred until the connector may be asked again. Conversations already in
//! flight do not depend on it.

use async_trait::async_trait;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, Email, MemberId};
use crate::kernel::limits;
use crate::kernel::sealed::Secret;
use crate::members::event::MemberStatus;
use crate::members::member::MemberFacts;

/// The member as the connector sees them now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectorMember {
    pub status: Option<MemberStatus>,
    /// When the status last changed, if the connector says.
    pub status_changed_at: Option<Timestamp>,
    pub email: Option<Email>,
    pub last_checkin_at: Option<Timestamp>,
    /// Check-ins since the time asked for.
    pub checkins: Vec<Timestamp>,
    /// `None`: the connector did not say.
    pub payment_failing: Option<bool>,
    pub last_payment_succeeded_at: Option<Timestamp>,
    pub last_payment_failed_at: Option<Timestamp>,
}

/// An account's own access to its connector: the API key the gym issued (stored in
/// the account, used on every call for its members, never shown by the API nor printed —
/// `Debug` redacts it) and, optionally, the company the key belongs to when it is not named
/// by the account's id. An account without one falls back to the process-wide key, if any.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConnectorCredentials {
    /// Sealed at rest (`kernel::sealed`): as the owner gives it (text), or as stored.
    #[serde(deserialize_with = "de_api_key")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ConnectorKey::field_schema))]
    api_key: Secret,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::kernel::texts::ConnectorCompany::de_optional"
    )]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ConnectorCompany::field_schema))]
    company_id: Option<String>,
}

impl ConnectorCredentials {
    /// Checked credentials: a key and company id that fit in an HTTP header.
    pub fn new(api_key: impl Into<String>, company_id: Option<String>) -> Result<Self, crate::kernel::error::InvalidInput> {
        let credentials = Self {
            api_key: Secret::Open(api_key.into()),
            company_id,
        };
        credentials.validate()?;
        Ok(credentials)
    }

    /// What [`Self::new`] checks; also for credentials read from a request body.
    pub fn validate(&self) -> Result<(), crate::kernel::error::InvalidInput> {
        let header_safe = |v: &str, max: usize| !v.is_empty() && v.len() <= max && v.bytes().all(|b| b.is_ascii_graphic());
        // A key given sealed is not a key the owner gave.
        if !self
            .api_key
            .open_text()
            .is_some_and(|key| header_safe(key, limits::MAX_CONNECTOR_KEY_CHARS))
        {
            return Err(crate::kernel::error::InvalidInput::new(
                "invalid_pushpress",
                format!(
                    "pushpress.api_key must be 1-{} printable characters without spaces",
                    limits::MAX_CONNECTOR_KEY_CHARS
                ),
            ));
        }
        if self
            .company_id
            .as_deref()
            .is_some_and(|c| !header_safe(c, limits::MAX_CONNECTOR_COMPANY_CHARS))
        {
            return Err(crate::kernel::error::InvalidInput::new(
                "invalid_pushpress",
                format!(
                    "pushpress.company_id must be 1-{} printable characters without spaces",
                    limits::MAX_CONNECTOR_COMPANY_CHARS
                ),
            ));
        }
        Ok(())
    }

    /// The key, for the one header that carries it: `None` while it is sealed (the engine
    /// opens it before any call, `Engine::opened_pushpress`).
    pub fn expose_api_key(&self) -> Option<&str> {
        self.api_key.open_text()
    }

    /// The key as stored or given, for the store that seals it.
    pub fn api_key_mut(&mut self) -> &mut Secret {
        &mut self.api_key
    }

    pub fn api_key(&self) -> &Secret {
        &self.api_key
    }

    /// The same credentials with the key's text (opened by the store).
    pub fn opened(&self, key: String) -> Self {
        Self {
            api_key: Secret::Open(key),
            company_id: self.company_id.clone(),
        }
    }

    pub fn company_id(&self) -> Option<&str> {
        self.company_id.as_deref()
    }
}

impl std::fmt::Debug for ConnectorCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectorCredentials")
            .field("api_key", &"<redacted>")
            .field("company_id", &self.company_id)
            .finish()
    }
}

/// A key as the owner gives it (checked as a [`crate::kernel::texts::ConnectorKey`]) or as
/// the store keeps it (sealed; in clear from before sealing).
fn de_api_key<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Secret, D::Error> {
    use serde::de::Error as _;
    match serde_json::Value::deserialize(deserializer)? {
        text @ serde_json::Value::String(_) => crate::kernel::texts::ConnectorKey::de(text)
            .map(Secret::Open)
            .map_err(D::Error::custom),
        stored => Secret::deserialize(stored).map_err(D::Error::custom),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// No answer worth having: timeouts, refused connections, 429 and 5xx after retries.
    #[error("connector unavailable: {0}")]
    Unavailable(String),
    /// An answer we cannot read.
    #[error("connector answered malformed data: {0}")]
    Malformed(String),
    /// The connector refused the request (a bad key, a forbidden company).
    #[error("connector refused the request: {0}")]
    Refused(String),
}

/// The member-data source (PushPress). Calls retry transient failures themselves.
#[async_trait]
pub trait Connector: Send + Sync {
    /// Its name, which keys its health (`pushpress`).
    fn name(&self) -> &'static str;
    /// Whether it can be called for an account with these credentials of its own (or none):
    /// an account that has none, where no process-wide key stands in, is simply not
    /// connected — its projected facts are used as they are, and nothing counts as a failure.
    fn serves(&self, credentials: Option<&ConnectorCredentials>) -> bool;
    /// The member now, with their check-ins since `since`; `None` if the connector does not
    /// know them. The call is made with the account's own `credentials` when it has them.
    async fn member(
        &self,
        account: AccountId,
        credentials: Option<&ConnectorCredentials>,
        member: &MemberId,
        since: Timestamp,
    ) -> Result<Option<ConnectorMember>, ConnectorError>;
    /// The same system as a [`crate::members::source::MemberSource`] — for connecting, the import
    /// and webhook subscriptions — if this connector is one.
    fn source(&self) -> Option<&dyn crate::members::source::MemberSource> {
        None
    }
}

/// One account's view of a connector's health, kept in the table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectorHealth {
    pub consecutive_failures: u32,
    pub last_success_at: Option<Timestamp>,
    pub last_failure_at: Option<Timestamp>,
    /// Set when the failures reached [`limits::CONNECTOR_DEGRADED_AFTER`]; cleared by a success.
    pub degraded_since: Option<Timestamp>,
}

/// What a recorded call changed about the health.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthChange {
    None,
    /// This failure made the connector degraded (exactly one caller sees this).
    Degraded,
    /// This success ended a degradation.
    Recovered,
}

impl ConnectorHealth {
    pub fn is_degraded(&self) -> bool {
        self.degraded_since.is_some()
    }

    /// When the connector may be asked again: after the backoff of the latest failure.
    pub fn next_attempt_at(&self) -> Option<Timestamp> {
        let last = self.last_failure_at?;
        (self.consecutive_failures > 0).then(|| last + limits::connector_backoff(self.consecutive_failures))
    }

    /// Whether a call may be made at `now`.
    pub fn allows_call(&self, now: Timestamp) -> bool {
        self.next_attempt_at().is_none_or(|at| now >= at)
    }

    /// Whether a success at `now` is worth writing: after failures, or when the last written
    /// success is older than [`limits::CONNECTOR_SUCCESS_RECORD_INTERVAL`] (a healthy
    /// connector costs no write per call).
    pub fn success_worth_recording(&self, now: Timestamp) -> bool {
        self.consecutive_failures > 0
            || self.is_degraded()
            || self
                .last_success_at
                .is_none_or(|at| now.duration_since(at) >= limits::CONNECTOR_SUCCESS_RECORD_INTERVAL)
    }
}

/// The facts the stale guard reads: what the webhooks projected, brought up to date with what
/// the connector says now. Nothing here is stored; webhooks remain the projection's writers.
pub fn refresh(stored: Option<MemberFacts>, member: &MemberId, fresh: &ConnectorMember, now: Timestamp) -> MemberFacts {
    let mut facts = stored.unwrap_or_else(|| MemberFacts::new(member.clone()));
    if let Some(status) = fresh.status
        && facts.status != Some(status)
    {
        let at = fresh.status_changed_at.unwrap_or(now);
        if status == MemberStatus::Cancelled {
            facts.cancelled_at = Some(facts.cancelled_at.map_or(at, |c| c.max(at)));
        }
        if status == MemberStatus::Active && facts.status == Some(MemberStatus::Cancelled) {
            facts.reactivated_at = Some(at);
        }
        facts.status = Some(status);
        facts.status_stamp = Some(crate::members::member::Stamp::new(at, "connector"));
    }
    if facts.email.is_none() {
        facts.email = fresh.email.clone();
    }
    for at in fresh.checkins.iter().chain(&fresh.last_checkin_at) {
        if facts.checkins.insert(*at) {
            facts.checkin_count += 1;
        }
        facts.last_checkin_at = Some(facts.last_checkin_at.map_or(*at, |l| l.max(*at)));
    }
    let later = |a: Option<Timestamp>, b: Option<Timestamp>| a.max(b);
    facts.last_payment_succeeded_at = later(facts.last_payment_succeeded_at, fresh.last_payment_succeeded_at);
    facts.last_payment_failed_at = later(facts.last_payment_failed_at, fresh.last_payment_failed_at);
    if let Some(failing) = fresh.payment_failing {
        facts.payment_failing = failing;
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;
    use jiff::SignedDuration;

    fn member() -> MemberId {
        MemberId::parse("m_1").expect("id")
    }

    #[test]
    fn a_failure_pushes_the_next_call_out_and_the_backoff_grows() {
        let now = at("2026-11-02T14:00:00Z");
        let mut health = ConnectorHealth::default();
        assert!(health.allows_call(now));
        health.consecutive_failures = 1;
        health.last_failure_at = Some(now);
        let first = health.next_attempt_at().expect("after a failure");
        assert!(!health.allows_call(now) && health.allows_call(first));
        health.consecutive_failures = 6;
        assert!(health.next_attempt_at().expect("later") > first, "the backoff grows with failures");
        health.consecutive_failures = 60;
        assert!(
            health.next_attempt_at().expect("capped") <= now + limits::connector_backoff(u32::MAX),
            "and is capped"
        );
    }

    #[test]
    fn a_healthy_connectors_successes_are_written_once_an_interval() {
        let now = at("2026-11-02T14:00:00Z");
        let mut health = ConnectorHealth {
            last_success_at: Some(now),
            ..ConnectorHealth::default()
        };
        assert!(!health.success_worth_recording(now + SignedDuration::from_mins(5)));
        assert!(health.success_worth_recording(now + limits::CONNECTOR_SUCCESS_RECORD_INTERVAL));
        health.consecutive_failures = 1;
        assert!(health.success_worth_recording(now + SignedDuration::from_mins(5)));
    }

    #[test]
    fn fresh_data_brings_the_projection_up_to_date() {
        let now = at("2026-11-10T14:00:00Z");
        let mut stored = MemberFacts::new(member());
        stored.status = Some(MemberStatus::Active);
        stored.last_checkin_at = Some(at("2026-10-01T12:00:00Z"));
        stored.checkins.insert(at("2026-10-01T12:00:00Z"));
        stored.checkin_count = 1;
        stored.payment_failing = true;
        let fresh = ConnectorMember {
            status: Some(MemberStatus::Frozen),
            status_changed_at: Some(at("2026-11-09T10:00:00Z")),
            checkins: vec![at("2026-11-08T12:00:00Z"), at("2026-10-01T12:00:00Z")],
            payment_failing: Some(false),
            last_payment_succeeded_at: Some(at("2026-11-09T09:00:00Z")),
            ..ConnectorMember::default()
        };
        let facts = refresh(Some(stored), &member(), &fresh, now);
        assert_eq!(facts.status, Some(MemberStatus::Frozen));
        assert_eq!(facts.status_stamp.map(|s| s.at), Some(at("2026-11-09T10:00:00Z")));
        assert_eq!(
            (facts.last_checkin_at, facts.checkin_count),
            (Some(at("2026-11-08T12:00:00Z")), 2),
            "a check-in already known is not counted twice"
        );
        assert!(!facts.payment_failing);
        assert_eq!(facts.last_payment_succeeded_at, Some(at("2026-11-09T09:00:00Z")));
    }

    #[test]
    fn credentials_fit_a_header_and_never_print_their_key() {
        let credentials = ConnectorCredentials::new("pp_live_4f1c", Some("co_9".into())).expect("valid");
        assert!(!format!("{credentials:?}").contains("pp_live_4f1c"));
        assert_eq!(
            (credentials.expose_api_key(), credentials.company_id()),
            (Some("pp_live_4f1c"), Some("co_9"))
        );
        for (key, company) in [("", None), ("two words", None), ("ok", Some("")), ("bad\nline", None)] {
            let err = ConnectorCredentials::new(key, company.map(str::to_owned)).expect_err("refused");
            assert_eq!(err.code, "invalid_pushpress");
        }
    }

    #[test]
    fn a_cancelled_member_who_is_active_again_is_reactivated() {
        let now = at("2026-11-10T14:00:00Z");
        let mut stored = MemberFacts::new(member());
        stored.status = Some(MemberStatus::Cancelled);
        let fresh = ConnectorMember {
            status: Some(MemberStatus::Active),
            ..ConnectorMember::default()
        };
        let facts = refresh(Some(stored), &member(), &fresh, now);
        assert_eq!((facts.status, facts.reactivated_at), (Some(MemberStatus::Active), Some(now)));
    }
}

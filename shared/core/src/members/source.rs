//! The gym's member system as a source of history and a sender of events (PushPress Platform
//! API v3, `../shared/PUSHPRESS.md`): what connecting, the import and PushPress's own
//! webhooks read, in the domain's words. The adapter (`openloop-pushpress`) speaks the wire
//! format and hands over these types; nothing here knows PushPress's JSON.
//!
//! PushPress has no member status, no prices and no payment events. A member's state is
//! derived here from the two things it does have: the customer's `role` ([`CustomerRole`])
//! and their enrollments' statuses ([`EnrollmentStatus`]) — see [`membership_status`].

use async_trait::async_trait;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{Email, MemberId};
use crate::members::connector::{ConnectorCredentials, ConnectorError};
use crate::members::event::MemberStatus;

/// The gym as PushPress describes it (`GET /company`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Company {
    pub id: String,
    pub name: String,
    /// An IANA name, when PushPress has one.
    pub timezone: Option<String>,
}

/// A customer's `role`: the only status-like field PushPress has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CustomerRole {
    Superuser,
    Admin,
    Coach,
    Frontdesk,
    Member,
    NonMember,
    ExMember,
    Lead,
}

impl CustomerRole {
    /// Staff are not members: the import and the webhooks leave them out.
    pub fn is_staff(self) -> bool {
        matches!(self, Self::Superuser | Self::Admin | Self::Coach | Self::Frontdesk)
    }

    /// The member status the role alone says (enrollments may say more, see
    /// [`membership_status`]); `None` for staff.
    pub fn status(self) -> Option<MemberStatus> {
        match self {
            Self::Member => Some(MemberStatus::Active),
            Self::Lead | Self::NonMember => Some(MemberStatus::Lead),
            Self::ExMember => Some(MemberStatus::Cancelled),
            _ => None,
        }
    }
}

/// One customer, as far as Openloop cares.
#[derive(Clone, Debug, PartialEq)]
pub struct Customer {
    pub id: MemberId,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<Email>,
    /// `None`: a role PushPress added after this was written (read as a member's facts
    /// without a status).
    pub role: Option<CustomerRole>,
    /// When they first became a member (`membershipDetails.initialMembershipStartDate`).
    pub member_since: Option<Timestamp>,
    /// Their phone, when PushPress has one in E.164.
    pub phone: Option<String>,
    /// The US state of their address (two-letter code), when it has one Openloop knows:
    /// where texts' hours are kept.
    pub state: Option<String>,
}

/// An enrollment's status, as PushPress spells it (`canceled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EnrollmentStatus {
    Active,
    /// Undocumented by PushPress; read as billing trouble — an inference.
    Alert,
    Canceled,
    Completed,
    Paused,
    Pendactivation,
    Pendcancel,
}

impl EnrollmentStatus {
    /// Still paying (or about to): the member belongs to the gym.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Active | Self::Alert | Self::Pendactivation | Self::Pendcancel)
    }
}

/// One enrollment (a member's subscription to a plan).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Enrollment {
    pub id: String,
    pub customer: MemberId,
    pub plan_id: Option<String>,
    pub status: EnrollmentStatus,
    /// Bills every `interval` `period`s (`month`, `year`…); `once` for a one-off.
    pub billing_period: Option<String>,
    pub billing_interval: Option<u32>,
    pub paid_until: Option<Timestamp>,
    pub next_charge: Option<Timestamp>,
}

/// The four kinds of check-in, each with its own list in PushPress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum CheckinKind {
    Class,
    Event,
    Open,
    Appointment,
}

impl CheckinKind {
    pub const ALL: [CheckinKind; 4] = [CheckinKind::Class, CheckinKind::Event, CheckinKind::Open, CheckinKind::Appointment];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Class => "class",
            Self::Event => "event",
            Self::Open => "open",
            Self::Appointment => "appointment",
        }
    }
}

/// One check-in.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkin {
    pub id: String,
    pub customer: MemberId,
    pub at: Timestamp,
    pub kind: CheckinKind,
    /// The class's or event's name, if any.
    pub name: Option<String>,
    /// A class check-in that PushPress refused (`result: failure`): not attendance.
    pub failed: bool,
}

/// A plan (the cadence only: PushPress has no prices).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub id: String,
    pub name: String,
}

/// Where to go on in a list: PushPress pages most lists by number and the appointment
/// check-ins by an opaque cursor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCursor {
    /// 1-based page number, for numbered lists.
    pub page: u32,
    /// The `next` cursor, for the appointment check-ins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

impl PageCursor {
    pub fn first() -> Self {
        Self { page: 1, next: None }
    }
}

/// One page of a list and where the next one starts (`None`: this was the last).
#[derive(Clone, Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<PageCursor>,
}

/// A webhook subscription at the source.
#[derive(Clone, PartialEq, Eq)]
pub struct Subscription {
    pub id: String,
    pub url: String,
    pub event_types: Vec<String>,
    /// What deliveries are signed with; stored write-only.
    pub signing_secret: Option<String>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("event_types", &self.event_types)
            .field("signing_secret", &self.signing_secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// The calls connecting and the import make. Every one is a PushPress operation that
/// `../shared/PUSHPRESS.md` lists; each retries transient failures itself (429, 5xx, with
/// `Retry-After` honoured), so an error is worth reporting.
#[async_trait]
pub trait MemberSource: Send + Sync {
    /// `GET /company`: also the check that the key is good ([`ConnectorError::Refused`] if not).
    async fn company(&self, credentials: &ConnectorCredentials) -> Result<Company, ConnectorError>;
    /// `GET /customers?page&limit`, every role.
    async fn customers(&self, credentials: &ConnectorCredentials, at: &PageCursor) -> Result<Page<Customer>, ConnectorError>;
    /// `GET /enrollments?page&limit`.
    async fn enrollments(&self, credentials: &ConnectorCredentials, at: &PageCursor) -> Result<Page<Enrollment>, ConnectorError>;
    /// `GET /checkins/{kind}?after&…`: check-ins of one kind at or after `after`.
    async fn checkins(
        &self,
        credentials: &ConnectorCredentials,
        kind: CheckinKind,
        after: Timestamp,
        at: &PageCursor,
    ) -> Result<Page<Checkin>, ConnectorError>;
    /// `GET /plans/{id}`; `None` if PushPress does not know it.
    async fn plan(&self, credentials: &ConnectorCredentials, id: &str) -> Result<Option<Plan>, ConnectorError>;
    /// `GET /webhooks`.
    async fn subscriptions(&self, credentials: &ConnectorCredentials) -> Result<Vec<Subscription>, ConnectorError>;
    /// `POST /webhooks {url, eventTypes}`.
    async fn subscribe(&self, credentials: &ConnectorCredentials, url: &str, event_types: &[&str]) -> Result<Subscription, ConnectorError>;
    /// `DELETE /webhooks/{id}`; a subscription already gone is not an error.
    async fn unsubscribe(&self, credentials: &ConnectorCredentials, id: &str) -> Result<(), ConnectorError>;
}

/// The PushPress event types Openloop subscribes to: every data event it maps or
/// acknowledges (app events need an app id and cannot be mixed with data events).
pub const SUBSCRIBED_EVENT_TYPES: [&str; 21] = [
    "customer.created",
    "customer.details.changed",
    "customer.status.changed",
    "customer.deleted",
    "checkin.created",
    "checkin.updated",
    "checkin.failed",
    "checkin.deleted",
    "enrollment.created",
    "enrollment.status.changed",
    "enrollment.deleted",
    "appointment.scheduled",
    "appointment.rescheduled",
    "appointment.noshowed",
    "appointment.canceled",
    "reservation.created",
    "reservation.waitlisted",
    "reservation.canceled",
    "reservation.noshowed",
    "class.canceled",
    "memberapp.updated",
];

/// A member's status from their role and enrollments: a live enrollment makes them active
/// (whatever the role says — roles lag), a paused one with none live frozen; otherwise the
/// role decides (a `member` whose enrollments all ended is cancelled). `None` for staff.
pub fn membership_status(role: Option<CustomerRole>, enrollments: &[EnrollmentStatus]) -> Option<MemberStatus> {
    if role.is_some_and(CustomerRole::is_staff) {
        return None;
    }
    if enrollments.iter().any(|s| s.is_live()) {
        return Some(MemberStatus::Active);
    }
    if enrollments.contains(&EnrollmentStatus::Paused) {
        return Some(MemberStatus::Frozen);
    }
    match role {
        Some(CustomerRole::Member) if !enrollments.is_empty() => Some(MemberStatus::Cancelled),
        Some(role) => role.status(),
        None => None,
    }
}

/// A PushPress time: the API says "unix timestamp" without a unit and its examples use
/// milliseconds while its filters take seconds, so anything above 10^11 is read as
/// milliseconds (10^11 seconds is the year 5138).
pub fn unix_time(value: i64) -> Option<Timestamp> {
    if value.abs() > 100_000_000_000 {
        Timestamp::from_millisecond(value).ok()
    } else {
        Timestamp::from_second(value).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_milliseconds_are_told_apart() {
        let s = unix_time(1_672_531_200).expect("seconds");
        let ms = unix_time(1_672_531_200_000).expect("milliseconds");
        assert_eq!(s, ms);
        assert_eq!(s.to_string(), "2023-01-01T00:00:00Z");
    }

    #[test]
    fn status_comes_from_enrollments_first_then_the_role() {
        use EnrollmentStatus as E;
        let member = Some(CustomerRole::Member);
        assert_eq!(membership_status(member, &[E::Active]), Some(MemberStatus::Active));
        assert_eq!(membership_status(member, &[E::Canceled, E::Paused]), Some(MemberStatus::Frozen));
        assert_eq!(membership_status(member, &[E::Canceled]), Some(MemberStatus::Cancelled));
        assert_eq!(membership_status(member, &[]), Some(MemberStatus::Active));
        assert_eq!(
            membership_status(Some(CustomerRole::ExMember), &[E::Pendcancel]),
            Some(MemberStatus::Active),
            "a live enrollment wins over a lagging role"
        );
        assert_eq!(membership_status(Some(CustomerRole::Lead), &[]), Some(MemberStatus::Lead));
        assert_eq!(membership_status(Some(CustomerRole::ExMember), &[]), Some(MemberStatus::Cancelled));
        assert_eq!(
            membership_status(Some(CustomerRole::Coach), &[E::Active]),
            None,
            "staff are not members"
        );
    }
}

/// What one of PushPress's own webhook deliveries says, read by the adapter
/// (`openloop_pushpress::webhook`) after its signature was checked.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceDelivery {
    /// PushPress's event type (`customer.created`…).
    pub event: String,
    /// The envelope's `created` (seconds or milliseconds on the wire). PushPress does not
    /// sign it: it is only checked to be near now, and may move a delivery's order earlier
    /// by at most that much, never later ([`crate::kernel::limits::PUSHPRESS_CREATED_WINDOW`]).
    pub created: Timestamp,
    /// `data.id` (for the logs).
    pub data_id: String,
    /// The SHA-256 (hex) of what PushPress signed (the compact `data`): what tells a
    /// redelivery or a replay, whatever its unsigned `created` or `event` says.
    pub data_hash: String,
    pub change: SourceChange,
}

impl SourceDelivery {
    /// The delivery's id for deduplication: its event name and the hash of what PushPress
    /// signed, never the unsigned `created`. The name is part of it because PushPress sends
    /// different events over the very same data (`appointment.scheduled`, then
    /// `appointment.noshowed` over the unchanged appointment): keyed on the data alone, the
    /// no-show would be taken for a redelivery and lost. The same delivery again, whatever its
    /// `created`, is a duplicate. (PushPress signs only `data`, so a captured delivery sent
    /// again under another name cannot be told from a genuine event by its signature; its
    /// `created` must still be near now, and what it means is no more than that event says.)
    pub fn dedupe_id(&self) -> String {
        format!("v3:{}:{}", self.event, self.data_hash)
    }
}

/// What a delivery changes about a member, in the domain's words.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceChange {
    /// `customer.created|details.changed|status.changed`: the customer as they are now.
    Customer(Customer),
    /// `checkin.created|updated` of any kind, by an attendee.
    Checkin(Checkin),
    /// `enrollment.created|status.changed`.
    Enrollment(Enrollment),
    /// `appointment.noshowed`, `reservation.noshowed`.
    NoShow {
        customer: MemberId,
        at: Timestamp,
        kind: CheckinKind,
    },
    /// `appointment.scheduled`, `reservation.created`: a trial booked, if the customer is a lead.
    Booking { customer: MemberId, booked_for: Timestamp },
    /// `customer.deleted`: the gym removed the customer, so Openloop forgets them.
    CustomerDeleted { customer: MemberId },
    /// Understood and nothing to change: acknowledged, and logged with why.
    Acknowledged(String),
}

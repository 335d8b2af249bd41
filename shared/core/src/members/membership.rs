//! A member's membership as PushPress knows it — their role, their enrollments, their
//! no-shows — kept in their facts ([`MemberFacts::membership`]) and projected the way every
//! fact is (see [`crate::members::member`]): each part last-writer-wins by its [`Stamp`] or a
//! set, so the import and the webhooks can arrive in any order, any number of times.
//!
//! The status the rest of the system reads ([`MemberFacts::status`]) is derived from the role
//! and the enrollments ([`crate::members::source::membership_status`]) after every change.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::members::event::MemberStatus;
use crate::members::member::{MemberFacts, Stamp};
use crate::members::source::{CheckinKind, CustomerRole, Enrollment, EnrollmentStatus, membership_status};

/// How many no-show times the facts keep.
pub const NO_SHOW_HISTORY_MAX: usize = 50;

/// See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Membership {
    #[serde(default)]
    pub role: Option<CustomerRole>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<String>>))]
    pub role_stamp: Option<Stamp>,
    /// By enrollment id.
    #[serde(default)]
    pub enrollments: BTreeMap<String, EnrollmentFact>,
    /// Classes and appointments they booked and did not come to.
    #[serde(default)]
    pub no_shows: BTreeSet<Timestamp>,
}

/// The latest word on one enrollment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EnrollmentFact {
    pub status: EnrollmentStatus,
    pub plan_id: Option<String>,
    pub paid_until: Option<Timestamp>,
    pub next_charge: Option<Timestamp>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub stamp: Stamp,
}

impl Membership {
    /// The enrollment that says most about the member now: a live one before others, then the
    /// latest word.
    pub fn current_enrollment(&self) -> Option<(&String, &EnrollmentFact)> {
        self.enrollments.iter().max_by_key(|(_, e)| (e.status.is_live(), e.stamp.clone()))
    }

    /// The plan of [`Self::current_enrollment`].
    pub fn plan_id(&self) -> Option<&str> {
        self.current_enrollment().and_then(|(_, e)| e.plan_id.as_deref())
    }
}

/// A customer as PushPress described them at some moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CustomerFacts {
    #[serde(default)]
    pub email: Option<crate::kernel::ids::Email>,
    #[serde(default)]
    pub first_name: Option<String>,
    #[serde(default)]
    pub last_name: Option<String>,
    #[serde(default)]
    pub role: Option<CustomerRole>,
    #[serde(default)]
    pub member_since: Option<Timestamp>,
    /// E.164, when PushPress has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// The US state of their address (two-letter code), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

impl MemberFacts {
    pub(crate) fn apply_customer(&mut self, customer: &CustomerFacts, stamp: Stamp) {
        let wins = |current: &Option<Stamp>| current.as_ref().is_none_or(|c| stamp > *c);
        if wins(&self.profile_stamp) {
            if customer.email.is_some() {
                self.email = customer.email.clone();
            }
            if customer.phone.is_some() {
                self.phone = customer.phone.clone();
            }
            // The customer record is whole: an address without a state, or none, clears it.
            self.address_state = customer.state.clone();
            self.first_name = super::member::name_part(&customer.first_name);
            self.last_name = super::member::name_part(&customer.last_name);
            if customer.member_since.is_some() {
                self.joined_at = customer.member_since;
            }
            self.profile_stamp = Some(stamp.clone());
        }
        if customer.role.is_some() && wins(&self.membership.role_stamp) {
            self.membership.role = customer.role;
            self.membership.role_stamp = Some(stamp.clone());
        }
        self.derive_status(stamp);
    }

    pub(crate) fn apply_enrollment(&mut self, enrollment: &Enrollment, stamp: Stamp) {
        let newer = self
            .membership
            .enrollments
            .get(&enrollment.id)
            .is_none_or(|known| stamp > known.stamp);
        if newer {
            self.membership.enrollments.insert(
                enrollment.id.clone(),
                EnrollmentFact {
                    status: enrollment.status,
                    plan_id: enrollment.plan_id.clone(),
                    paid_until: enrollment.paid_until,
                    next_charge: enrollment.next_charge,
                    stamp: stamp.clone(),
                },
            );
        }
        self.derive_status(stamp);
    }

    /// An enrollment PushPress deleted: it no longer says anything about the member.
    pub(crate) fn forget_enrollment(&mut self, id: &str, stamp: Stamp) {
        if self.membership.enrollments.get(id).is_some_and(|known| stamp > known.stamp) {
            self.membership.enrollments.remove(id);
            self.derive_status(stamp);
        }
    }

    pub(crate) fn apply_no_show(&mut self, at: Timestamp, _kind: CheckinKind) {
        self.membership.no_shows.insert(at);
        while self.membership.no_shows.len() > NO_SHOW_HISTORY_MAX {
            self.membership.no_shows.pop_first();
        }
    }

    /// The status the role and the enrollments say, written with the latest stamp that moved
    /// either (so a later explicit status change still wins, as it would over any event).
    fn derive_status(&mut self, stamp: Stamp) {
        let statuses: Vec<EnrollmentStatus> = self.membership.enrollments.values().map(|e| e.status).collect();
        let Some(status) = membership_status(self.membership.role, &statuses) else {
            return;
        };
        let latest = self
            .membership
            .enrollments
            .values()
            .map(|e| e.stamp.clone())
            .chain(self.membership.role_stamp.clone())
            .max()
            .unwrap_or(stamp);
        if self.status_stamp.as_ref().is_some_and(|s| *s > latest) {
            return;
        }
        if status == MemberStatus::Cancelled && self.status != Some(MemberStatus::Cancelled) {
            let at = latest.at;
            if self.cancelled_at.is_none_or(|c| at > c) {
                self.cancelled_at = Some(at);
            }
        }
        if status == MemberStatus::Active
            && self.status == Some(MemberStatus::Cancelled)
            && self.reactivated_at.is_none_or(|r| latest.at > r)
        {
            self.reactivated_at = Some(latest.at);
        }
        self.status = Some(status);
        self.status_stamp = Some(latest);
    }
}

#[cfg(test)]
mod address_tests {
    use super::*;

    fn customer(state: Option<&str>) -> CustomerFacts {
        CustomerFacts {
            email: None,
            first_name: Some("Ana".into()),
            last_name: None,
            role: Some(CustomerRole::Member),
            member_since: None,
            phone: Some("+15555550100".into()),
            state: state.map(str::to_owned),
        }
    }

    #[test]
    fn the_address_state_follows_the_latest_customer_record() {
        let at = |s: &str| -> Timestamp { s.parse().expect("time") };
        let mut facts = MemberFacts::new(crate::kernel::ids::MemberId::parse("usr_ana").expect("id"));
        facts.apply_customer(&customer(Some("FL")), Stamp::new(at("2026-11-01T00:00:00Z"), "a"));
        assert_eq!(facts.address_state.as_deref(), Some("FL"));
        // An older record changes nothing; a newer one without a state clears it.
        facts.apply_customer(&customer(Some("TX")), Stamp::new(at("2026-10-01T00:00:00Z"), "b"));
        assert_eq!(facts.address_state.as_deref(), Some("FL"));
        facts.apply_customer(&customer(None), Stamp::new(at("2026-11-02T00:00:00Z"), "c"));
        assert_eq!(facts.address_state, None);
    }
}

//! Member facts: what the connector has told us about a member, and the send ledger that
//! enforces the weekly cap.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::event::{MemberEvent, MemberStatus};
use crate::ids::{Email, MemberId};

/// The projection of connector events for one member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberFacts {
    pub member_id: MemberId,
    pub email: Option<Email>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub status: Option<MemberStatus>,
    pub joined_at: Option<Timestamp>,
    pub monthly_value: Option<f64>,
    pub last_checkin_at: Option<Timestamp>,
    pub checkin_count: u32,
    pub payment_failing: bool,
    pub last_payment_failed_at: Option<Timestamp>,
    pub last_payment_succeeded_at: Option<Timestamp>,
    /// The newest event time applied per field group, so late duplicates change nothing.
    pub profile_as_of: Option<Timestamp>,
    pub payment_as_of: Option<Timestamp>,
    /// Webhook ids applied lately, so a redelivered event is not counted twice.
    pub recent_events: Vec<String>,
    /// Optimistic-lock version of the facts (the send ledger has its own).
    pub version: u64,
}

impl MemberFacts {
    pub fn new(member_id: MemberId) -> Self {
        Self {
            member_id,
            email: None,
            first_name: None,
            last_name: None,
            status: None,
            joined_at: None,
            monthly_value: None,
            last_checkin_at: None,
            checkin_count: 0,
            payment_failing: false,
            last_payment_failed_at: None,
            last_payment_succeeded_at: None,
            profile_as_of: None,
            payment_as_of: None,
            recent_events: Vec::new(),
            version: 0,
        }
    }

    pub fn display_name(&self) -> Option<String> {
        match (&self.first_name, &self.last_name) {
            (Some(f), Some(l)) => Some(format!("{f} {l}")),
            (Some(f), None) => Some(f.clone()),
            (None, Some(l)) => Some(l.clone()),
            (None, None) => None,
        }
    }

    /// Apply one event. Events older than what a field group already reflects are ignored,
    /// so out-of-order delivery cannot roll facts back. Check-ins are counted by the caller
    /// only once per webhook id (the webhook dedup record).
    /// Returns false (and changes nothing) for an event id applied before.
    pub fn apply(&mut self, event_id: &str, event: &MemberEvent, at: Timestamp) -> bool {
        const REMEMBERED: usize = 32;
        if self.recent_events.iter().any(|id| id == event_id) {
            return false;
        }
        if self.recent_events.len() >= REMEMBERED {
            self.recent_events.remove(0);
        }
        self.recent_events.push(event_id.to_owned());
        self.apply_event(event, at);
        true
    }

    fn apply_event(&mut self, event: &MemberEvent, at: Timestamp) {
        let newer = |as_of: Option<Timestamp>| as_of.is_none_or(|t| at >= t);
        match event {
            MemberEvent::MemberCreated {
                email,
                first_name,
                last_name,
                status,
                joined_at,
                monthly_value,
                ..
            } => {
                if newer(self.profile_as_of) {
                    self.email = Some(email.clone());
                    self.first_name = first_name.clone();
                    self.last_name = last_name.clone();
                    self.status = Some(*status);
                    self.joined_at = *joined_at;
                    self.monthly_value = *monthly_value;
                    self.profile_as_of = Some(at);
                }
            }
            MemberEvent::StatusChanged { status, .. } => {
                if newer(self.profile_as_of) {
                    self.status = Some(*status);
                    self.profile_as_of = Some(at);
                }
            }
            MemberEvent::CheckinCreated { checked_in_at, .. } => {
                self.checkin_count += 1;
                if self.last_checkin_at.is_none_or(|t| *checked_in_at > t) {
                    self.last_checkin_at = Some(*checked_in_at);
                }
            }
            MemberEvent::PaymentFailed { failed_at, .. } => {
                if newer(self.payment_as_of) {
                    self.payment_failing = true;
                    self.last_payment_failed_at = Some(*failed_at);
                    self.payment_as_of = Some(at);
                }
            }
            MemberEvent::PaymentSucceeded { paid_at, .. } => {
                if newer(self.payment_as_of) {
                    self.payment_failing = false;
                    self.last_payment_succeeded_at = Some(*paid_at);
                    self.payment_as_of = Some(at);
                }
            }
            MemberEvent::TrialBooked { .. } => {}
        }
    }
}

/// The member's recent sends across all tasks, keyed by reservation key (`{task}#{touch}`),
/// with the version the reservation is conditional on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendLedger {
    pub sends: BTreeMap<String, Timestamp>,
    pub version: u64,
}

//! Member facts: what the connector has told us about a member, and the send ledger that
//! enforces the weekly cap.
//!
//! The facts are a projection of member events that must not depend on how the events
//! reach the projection: the signals queue delivers at least once and in any order. So every
//! field is either last-writer-wins by its [`Stamp`] — the event's time, then the order the
//! webhooks were accepted in (a `member.status_changed` sent in the same second as its
//! `member.created`, after it, wins), then the event id —, or a maximum, or a set (check-ins
//! are a set of times, so a redelivered check-in is counted once even after its webhook id is
//! forgotten). The acceptance order is fixed when the webhook is accepted and travels with the
//! event ([`crate::members::event::SignalEnvelope::received_at`]), so applying the same
//! accepted events in any order, any number of times, gives the same facts; a property test
//! holds us to it.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{Email, MemberId};
use crate::members::event::{MemberEvent, MemberStatus};

/// How many recent check-in times the facts keep (the check-in history window). Older ones
/// are only counted.
pub const CHECKIN_HISTORY_MAX: usize = 120;

/// What a last-writer-wins field was written by, in the order fields are won: the event's
/// time, then when its webhook was accepted (none for what no webhook brought: the import, the
/// connector; those lose a tie to any accepted event), then the event id.
///
/// Stored and shown as `[event time, event id]` or `[event time, event id, accepted at]`, so
/// the facts written before acceptance was kept still read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    pub at: Timestamp,
    pub accepted_at: Option<Timestamp>,
    pub event_id: String,
}

impl Stamp {
    /// An event no webhook brought (imported, or told by the connector).
    pub fn new(at: Timestamp, event_id: impl Into<String>) -> Self {
        Self {
            at,
            accepted_at: None,
            event_id: event_id.into(),
        }
    }

    /// An event whose webhook was accepted at `accepted_at`.
    pub fn accepted(at: Timestamp, accepted_at: Timestamp, event_id: impl Into<String>) -> Self {
        Self {
            at,
            accepted_at: Some(accepted_at),
            event_id: event_id.into(),
        }
    }
}

impl Serialize for Stamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut tuple = serializer.serialize_tuple(if self.accepted_at.is_some() { 3 } else { 2 })?;
        tuple.serialize_element(&self.at)?;
        tuple.serialize_element(&self.event_id)?;
        if let Some(accepted_at) = &self.accepted_at {
            tuple.serialize_element(accepted_at)?;
        }
        tuple.end()
    }
}

impl<'de> Deserialize<'de> for Stamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Parts;
        impl<'de> serde::de::Visitor<'de> for Parts {
            type Value = Stamp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("[event time, event id] or [event time, event id, accepted at]")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Stamp, A::Error> {
                use serde::de::Error;
                let at = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let event_id = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
                let accepted_at = seq.next_element::<Option<Timestamp>>()?.flatten();
                Ok(Stamp { at, accepted_at, event_id })
            }
        }
        deserializer.deserialize_seq(Parts)
    }
}

/// The owner's word on a member's failing payment that no task works on: they took care of the
/// failure of `failed_at`, or want it back at `until`. A later failure asks again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaymentSeen {
    pub failed_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Timestamp>,
}

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
    /// Every check-in ever seen (the history window plus those that fell out of it).
    pub checkin_count: u32,
    /// The most recent check-in times, oldest first, at most [`CHECKIN_HISTORY_MAX`].
    #[serde(default)]
    pub checkins: BTreeSet<Timestamp>,
    /// Check-ins that fell out of the history window (counted, no longer listed).
    #[serde(default)]
    pub checkins_before_history: u32,
    /// The class of each listed check-in that named one (the same window as `checkins`), so
    /// a message may mention the member's usual class.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub checkin_classes: std::collections::BTreeMap<Timestamp, String>,
    pub payment_failing: bool,
    pub last_payment_failed_at: Option<Timestamp>,
    pub last_payment_succeeded_at: Option<Timestamp>,
    /// The owner's word on the failing payment (from the brief: checked, or put off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_seen: Option<PaymentSeen>,
    /// When the member last became cancelled, and last came back from cancelled to active.
    #[serde(default)]
    pub cancelled_at: Option<Timestamp>,
    #[serde(default)]
    pub cancellation_reason: Option<String>,
    #[serde(default)]
    pub reactivated_at: Option<Timestamp>,
    /// The latest trial booking: when it was booked (event time) and for when.
    #[serde(default)]
    pub trial_booked_at: Option<Timestamp>,
    #[serde(default)]
    pub trial_booked_for: Option<Timestamp>,
    /// Who wrote each last-writer-wins group.
    #[serde(default)]
    pub profile_stamp: Option<Stamp>,
    #[serde(default)]
    pub status_stamp: Option<Stamp>,
    #[serde(default)]
    pub payment_stamp: Option<Stamp>,
    #[serde(default)]
    pub trial_stamp: Option<Stamp>,
    /// Role, enrollments and no-shows from PushPress (see [`crate::members::membership`]).
    #[serde(default)]
    pub membership: crate::members::membership::Membership,
    /// Webhook ids applied lately, so a redelivered event is reported as a duplicate.
    pub recent_events: Vec<String>,
    /// The member's phone (E.164), when an event gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// The member's answer about text messages (`members/consent.rs`); none: no texts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sms_consent: Option<crate::members::consent::SmsConsent>,
    /// The member's time zone (IANA) as the owner set it on their consent record: texts keep
    /// their hours in it (`rails/quiet_hours.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The member's US state (two-letter code) as the owner set it: its texting rules apply,
    /// and its zones when no time zone is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The state of the member's PushPress address (two-letter code), used when the owner set
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_state: Option<String>,
    /// Optimistic-lock version of the facts (the send ledger has its own).
    pub version: u64,
}

impl MemberFacts {
    pub fn new(member_id: MemberId) -> Self {
        Self {
            member_id,
            phone: None,
            sms_consent: None,
            time_zone: None,
            state: None,
            address_state: None,
            email: None,
            first_name: None,
            last_name: None,
            status: None,
            joined_at: None,
            monthly_value: None,
            last_checkin_at: None,
            checkin_count: 0,
            checkins: BTreeSet::new(),
            checkins_before_history: 0,
            checkin_classes: Default::default(),
            payment_failing: false,
            last_payment_failed_at: None,
            last_payment_succeeded_at: None,
            payment_seen: None,
            cancelled_at: None,
            cancellation_reason: None,
            reactivated_at: None,
            trial_booked_at: None,
            trial_booked_for: None,
            profile_stamp: None,
            status_stamp: None,
            payment_stamp: None,
            trial_stamp: None,
            membership: Default::default(),
            recent_events: Vec::new(),
            version: 0,
        }
    }

    /// Whether the owner put the failing payment aside at `now`: they checked this failure, or
    /// put it off past `now`.
    pub fn payment_put_aside(&self, now: Timestamp) -> bool {
        self.payment_seen
            .as_ref()
            .is_some_and(|seen| seen.failed_at == self.last_payment_failed_at && seen.until.is_none_or(|until| until > now))
    }

    /// The member's name as a person writes it ([`crate::members::name::as_written`]).
    pub fn display_name(&self) -> Option<String> {
        let written = |part: &Option<String>| name_part(part).map(|p| crate::members::name::as_written(&p));
        match (written(&self.first_name), written(&self.last_name)) {
            (Some(f), Some(l)) => Some(format!("{f} {l}")),
            (Some(f), None) => Some(f),
            (None, Some(l)) => Some(l),
            (None, None) => None,
        }
    }

    /// The first name a greeting or an owner's line may use: none when empty.
    pub fn first_name(&self) -> Option<String> {
        name_part(&self.first_name).map(|n| crate::members::name::as_written(&n))
    }

    /// Who the member is in owner text when their first name is unknown: their address,
    /// else their id.
    pub fn first_name_or_address(&self) -> String {
        self.first_name()
            .or_else(|| self.email.as_ref().map(ToString::to_string))
            .unwrap_or_else(|| self.member_id.to_string())
    }

    /// Whole days since the member joined, if we know when.
    pub fn tenure_days(&self, now: Timestamp) -> Option<i64> {
        self.joined_at.map(|j| now.duration_since(j).as_hours() / 24)
    }

    /// Whether the gym's data holds the member's whole history since they joined, so that a
    /// count said to them (their visits, their months with the gym) is true: "10 visits in
    /// over a year" from a year of membership of which only the last months were imported is
    /// not. It is whole when they joined since the gym's records start (`records_from`: the
    /// account's creation, after which its webhooks bring everything), or when the first
    /// check-in the gym holds is within [`limits::WHOLE_HISTORY_SLACK_DAYS`] of their joining
    /// (an import that reached back to their start), and none has fallen out of the list. A
    /// member whose joining is unknown has no whole history.
    ///
    /// [`limits::WHOLE_HISTORY_SLACK_DAYS`]: crate::kernel::limits::WHOLE_HISTORY_SLACK_DAYS
    pub fn history_is_whole(&self, records_from: Timestamp) -> bool {
        let Some(joined) = self.joined_at else {
            return false;
        };
        if joined >= records_from {
            return true;
        }
        let slack = SignedDuration::from_hours(24 * crate::kernel::limits::WHOLE_HISTORY_SLACK_DAYS);
        self.checkins_before_history == 0 && self.checkins.first().is_some_and(|first| first.duration_since(joined) <= slack)
    }

    /// Check-ins at or after `since` (from the history window).
    pub fn checkins_since(&self, since: Timestamp) -> usize {
        self.checkins.range(since..).count()
    }

    /// Check-ins in `[from, until)`.
    pub fn checkins_between(&self, from: Timestamp, until: Timestamp) -> usize {
        if from >= until {
            return 0;
        }
        self.checkins.range(from..until).count()
    }

    /// The first check-in at or after `since`, and the `n`th (1-based) — for milestones.
    pub fn nth_checkin_since(&self, since: Timestamp, n: usize) -> Option<Timestamp> {
        self.checkins.range(since..).nth(n.checked_sub(1)?).copied()
    }

    /// Apply one event no webhook brought (an imported one; a test's). See [`Self::apply_stamped`].
    pub fn apply(&mut self, event_id: &str, event: &MemberEvent, at: Timestamp) -> bool {
        self.apply_stamped(event, Stamp::new(at, event_id))
    }

    /// Apply one event whose webhook was accepted at `accepted_at`: at the same event time, the
    /// later accepted wins.
    pub fn apply_accepted(&mut self, event_id: &str, event: &MemberEvent, at: Timestamp, accepted_at: Timestamp) -> bool {
        self.apply_stamped(event, Stamp::accepted(at, accepted_at, event_id))
    }

    /// Apply one event under its stamp. Returns false (and changes nothing) for an event id
    /// applied lately; an older redelivery changes nothing either, because every field is
    /// won by the greater stamp, kept as a maximum or as a set.
    pub fn apply_stamped(&mut self, event: &MemberEvent, stamp: Stamp) -> bool {
        const REMEMBERED: usize = 32;
        let event_id = stamp.event_id.as_str();
        if self.recent_events.iter().any(|id| id == event_id) {
            return false;
        }
        if self.recent_events.len() >= REMEMBERED {
            self.recent_events.remove(0);
        }
        self.recent_events.push(event_id.to_owned());
        self.apply_event(event, stamp);
        true
    }

    fn apply_event(&mut self, event: &MemberEvent, stamp: Stamp) {
        let at = stamp.at;
        let wins = |current: &Option<Stamp>| current.as_ref().is_none_or(|c| stamp > *c);
        match event {
            MemberEvent::MemberCreated {
                email,
                first_name,
                last_name,
                status,
                joined_at,
                monthly_value,
                phone,
                ..
            } => {
                if wins(&self.profile_stamp) {
                    // A member known by phone only keeps the address another event gave.
                    if email.is_some() {
                        self.email = email.clone();
                    }
                    self.phone = phone.clone();
                    self.first_name = name_part(first_name);
                    self.last_name = name_part(last_name);
                    self.joined_at = *joined_at;
                    self.monthly_value = *monthly_value;
                    self.profile_stamp = Some(stamp.clone());
                }
                // The status a member was created with is the oldest word on it: any status
                // change stamped later wins over it.
                if wins(&self.status_stamp) {
                    self.status = Some(*status);
                    self.cancellation_reason = None;
                    self.status_stamp = Some(stamp);
                }
            }
            MemberEvent::StatusChanged {
                status,
                previous_status,
                cancellation_reason,
                ..
            } => {
                if *status == MemberStatus::Cancelled {
                    max_in(&mut self.cancelled_at, at);
                }
                if *status == MemberStatus::Active && *previous_status == Some(MemberStatus::Cancelled) {
                    max_in(&mut self.reactivated_at, at);
                }
                if wins(&self.status_stamp) {
                    self.status = Some(*status);
                    self.cancellation_reason = cancellation_reason.clone();
                    self.status_stamp = Some(stamp);
                }
            }
            MemberEvent::CheckinCreated {
                checked_in_at, class_name, ..
            } => {
                self.add_checkin(*checked_in_at);
                self.note_class(*checked_in_at, class_name.as_deref());
            }
            MemberEvent::PaymentFailed { failed_at, .. } => {
                max_in(&mut self.last_payment_failed_at, *failed_at);
                if wins(&self.payment_stamp) {
                    self.payment_failing = true;
                    self.payment_stamp = Some(stamp);
                }
            }
            MemberEvent::PaymentSucceeded { paid_at, .. } => {
                max_in(&mut self.last_payment_succeeded_at, *paid_at);
                if wins(&self.payment_stamp) {
                    self.payment_failing = false;
                    self.payment_stamp = Some(stamp);
                }
            }
            MemberEvent::TrialBooked { booked_for, .. } => {
                max_in(&mut self.trial_booked_at, at);
                if wins(&self.trial_stamp) {
                    self.trial_booked_for = Some(*booked_for);
                    self.trial_stamp = Some(stamp);
                }
            }
            MemberEvent::Customer { customer, .. } => self.apply_customer(customer, stamp),
            MemberEvent::Enrollment { enrollment, .. } => self.apply_enrollment(enrollment, stamp),
            MemberEvent::EnrollmentDeleted { enrollment_id, .. } => self.forget_enrollment(enrollment_id, stamp),
            MemberEvent::NoShow { at, kind, .. } => self.apply_no_show(*at, *kind),
        }
    }

    /// Check-ins are a set: the same time twice is one check-in. When the window is full, the
    /// oldest time leaves it and is only counted; a check-in older than every listed one
    /// cannot be told from a duplicate then, and is ignored.
    pub(crate) fn add_checkin(&mut self, at: Timestamp) {
        let full = self.checkins.len() >= CHECKIN_HISTORY_MAX;
        if full && self.checkins.first().is_some_and(|oldest| at < *oldest) {
            return;
        }
        if !self.checkins.insert(at) {
            return;
        }
        while self.checkins.len() > CHECKIN_HISTORY_MAX {
            self.checkins.pop_first();
            self.checkins_before_history += 1;
        }
        self.checkin_count = self.checkins_before_history + u32::try_from(self.checkins.len()).unwrap_or(u32::MAX);
        self.last_checkin_at = self.checkins.last().copied();
    }
}

/// The most characters of a class name kept.
const CLASS_NAME_MAX_CHARS: usize = 60;

impl MemberFacts {
    /// The class of the check-in at `at`, if it is listed and named one; the names leave with
    /// their check-ins. The same check-in named twice keeps the greater name, whatever the order.
    fn note_class(&mut self, at: Timestamp, class_name: Option<&str>) {
        if let Some(name) = class_name.map(str::trim).filter(|n| !n.is_empty())
            && self.checkins.contains(&at)
        {
            let name: String = name.chars().take(CLASS_NAME_MAX_CHARS).collect();
            let slot = self.checkin_classes.entry(at).or_default();
            if name > *slot {
                *slot = name;
            }
        }
        if let Some(oldest) = self.checkins.first().copied() {
            self.checkin_classes.retain(|t, _| *t >= oldest);
        }
    }
}

fn max_in(slot: &mut Option<Timestamp>, at: Timestamp) {
    if slot.is_none_or(|t| at > t) {
        *slot = Some(at);
    }
}

/// How active a member is lately, from the check-in history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityTier {
    /// Checked in within the last week.
    Active,
    /// Last check-in 8–21 days ago.
    Slipping,
    /// Last check-in 22–60 days ago.
    Lapsed,
    /// More than 60 days, or never.
    Dormant,
}

impl ActivityTier {
    pub fn of(facts: &MemberFacts, now: Timestamp) -> ActivityTier {
        let Some(last) = facts.last_checkin_at else {
            return ActivityTier::Dormant;
        };
        let days = now.duration_since(last).as_hours() / 24;
        match days {
            ..=7 => ActivityTier::Active,
            8..=21 => ActivityTier::Slipping,
            22..=60 => ActivityTier::Lapsed,
            _ => ActivityTier::Dormant,
        }
    }
}

/// `n` days as a duration.
pub fn days(n: i64) -> SignedDuration {
    SignedDuration::from_hours(24 * n)
}

/// The member's recent sends across all tasks, keyed by reservation key (`{task}#{touch}`),
/// with the version the reservation is conditional on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendLedger {
    pub sends: BTreeMap<String, Timestamp>,
    pub version: u64,
}

/// A part of a name as a member event or PushPress gives it, trimmed; an empty one is no name
/// (a member with `"first_name": ""` is greeted "Hi there", and the owner reads their address).
pub(crate) fn name_part(name: &Option<String>) -> Option<String> {
    name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn member() -> MemberId {
        MemberId::parse("m_1").expect("member id")
    }

    /// The facts without the bookkeeping that may differ by arrival (recent ids, version).
    fn projection(f: &MemberFacts) -> MemberFacts {
        MemberFacts {
            recent_events: Vec::new(),
            version: 0,
            ..f.clone()
        }
    }

    fn event(kind: u8, minute: i64, value: u8) -> MemberEvent {
        let t = at("2026-11-01T00:00:00Z") + SignedDuration::from_mins(minute);
        let status = [
            MemberStatus::Lead,
            MemberStatus::Active,
            MemberStatus::Cancelled,
            MemberStatus::Frozen,
        ][usize::from(value % 4)];
        match kind % 6 {
            0 => MemberEvent::MemberCreated {
                member_id: member(),
                email: Some(Email::parse(&format!("m{value}@example.com")).expect("email")),
                first_name: Some(format!("F{value}")),
                last_name: None,
                status,
                joined_at: Some(t),
                monthly_value: Some(f64::from(value)),
                phone: None,
            },
            1 => MemberEvent::StatusChanged {
                member_id: member(),
                status,
                previous_status: Some(MemberStatus::Cancelled),
                cancellation_reason: Some(format!("r{value}")),
            },
            2 => MemberEvent::CheckinCreated {
                member_id: member(),
                checked_in_at: t,
                class_name: None,
            },
            3 => MemberEvent::PaymentFailed {
                member_id: member(),
                amount: f64::from(value),
                currency: "USD".into(),
                failed_at: t,
                reason: None,
            },
            4 => MemberEvent::PaymentSucceeded {
                member_id: member(),
                amount: f64::from(value),
                currency: "USD".into(),
                paid_at: t,
            },
            _ => MemberEvent::TrialBooked {
                member_id: member(),
                booked_for: t + SignedDuration::from_hours(i64::from(value)),
            },
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// Given a set of distinct accepted events (several sharing a timestamp, some accepted
        /// in the same instant), when the queue hands them on in any order with any duplicates,
        /// then the facts are the same as applying each once in the order of their stamps:
        /// event time, then acceptance, then id.
        #[test]
        fn facts_do_not_depend_on_delivery_order_or_duplicates(
            events in proptest::collection::vec((0u8..6, 0i64..40, 0u8..8, 0i64..6), 1..40),
            order in proptest::collection::vec(any::<prop::sample::Index>(), 0..120),
            shuffle_seed in any::<u64>(),
        ) {
            let distinct: Vec<(MemberEvent, Stamp)> = events
                .iter()
                .enumerate()
                .map(|(i, (k, m, v, accepted))| {
                    let e = event(*k, *m, *v);
                    let time = at("2026-11-01T00:00:00Z") + SignedDuration::from_mins(*m);
                    let accepted_at = at("2026-11-02T00:00:00Z") + SignedDuration::from_nanos(*accepted);
                    (e, Stamp::accepted(time, accepted_at, format!("wh_{i}")))
                })
                .collect();
            let mut reference = MemberFacts::new(member());
            let mut in_stamp_order = distinct.clone();
            in_stamp_order.sort_by(|a, b| a.1.cmp(&b.1));
            for (e, stamp) in &in_stamp_order {
                reference.apply_stamped(e, stamp.clone());
            }
            // Every event at least once, then extra duplicates, in a shuffled order.
            let mut delivery: Vec<usize> = (0..distinct.len()).collect();
            delivery.extend(order.iter().map(|ix| ix.index(distinct.len())));
            let mut seed = shuffle_seed | 1;
            for i in (1..delivery.len()).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let j = usize::try_from(seed % (i as u64 + 1)).unwrap_or(0);
                delivery.swap(i, j);
            }
            let mut facts = MemberFacts::new(member());
            for ix in delivery {
                let (e, stamp) = &distinct[ix];
                facts.apply_stamped(e, stamp.clone());
            }
            prop_assert_eq!(projection(&facts), projection(&reference));
        }

        /// Given a member's creation and a status change sent with the same timestamp, the
        /// change accepted after the creation, when the queue applies them in either order,
        /// whatever their ids, then the member has the changed status and its reason.
        #[test]
        fn a_status_change_accepted_after_its_creation_wins_in_the_same_second(
            created_id in "[a-z0-9]{1,12}",
            changed_id in "[a-z0-9]{1,12}",
            change_first in any::<bool>(),
        ) {
            prop_assume!(created_id != changed_id);
            let second = at("2026-11-01T09:00:00Z");
            let created = MemberEvent::MemberCreated {
                member_id: member(),
                email: Some(Email::parse("ian@example.com").expect("email")),
                first_name: Some("Ian".into()),
                last_name: None,
                status: MemberStatus::Active,
                joined_at: Some(second),
                monthly_value: Some(150.0),
                phone: None,
            };
            let cancelled = MemberEvent::StatusChanged {
                member_id: member(),
                status: MemberStatus::Cancelled,
                previous_status: Some(MemberStatus::Active),
                cancellation_reason: Some("Moving to Portland for a new job".into()),
            };
            let accepted = at("2026-11-01T09:00:01Z");
            let first = (&created, Stamp::accepted(second, accepted, created_id.clone()));
            let then = (&cancelled, Stamp::accepted(second, accepted + SignedDuration::from_nanos(1), changed_id.clone()));
            let mut facts = MemberFacts::new(member());
            let order = if change_first { [then.clone(), first.clone()] } else { [first.clone(), then.clone()] };
            for (e, stamp) in order {
                facts.apply_stamped(e, stamp);
            }
            // A redelivery of the creation, its id long forgotten, is still no newer word.
            facts.recent_events.clear();
            facts.apply_stamped(first.0, first.1.clone());
            prop_assert_eq!(facts.status, Some(MemberStatus::Cancelled));
            prop_assert_eq!(facts.cancellation_reason.as_deref(), Some("Moving to Portland for a new job"));
            prop_assert_eq!(facts.first_name.as_deref(), Some("Ian"));
        }
    }

    #[test]
    fn a_stamp_reads_as_it_was_stored_before_acceptance_was_kept() {
        let old: Stamp = serde_json::from_str(r#"["2026-11-01T09:00:00Z","wh_1"]"#).expect("old stamp");
        assert_eq!(old, Stamp::new(at("2026-11-01T09:00:00Z"), "wh_1"));
        let new = Stamp::accepted(at("2026-11-01T09:00:00Z"), at("2026-11-01T09:00:01Z"), "wh_2");
        let text = serde_json::to_string(&new).expect("json");
        assert_eq!(text, r#"["2026-11-01T09:00:00Z","wh_2","2026-11-01T09:00:01Z"]"#);
        assert_eq!(serde_json::from_str::<Stamp>(&text).expect("new stamp"), new);
        assert!(new > old, "an accepted event wins a tie over one no webhook brought");
    }

    #[test]
    fn a_redelivered_checkin_counts_once_even_after_its_id_is_forgotten() {
        let mut facts = MemberFacts::new(member());
        let checkin = MemberEvent::CheckinCreated {
            member_id: member(),
            checked_in_at: at("2026-11-02T14:00:00Z"),
            class_name: None,
        };
        assert!(facts.apply("wh_1", &checkin, at("2026-11-02T14:00:00Z")));
        for i in 0..40 {
            let other = MemberEvent::TrialBooked {
                member_id: member(),
                booked_for: at("2026-11-10T14:00:00Z"),
            };
            facts.apply(&format!("other_{i}"), &other, at("2026-11-03T14:00:00Z"));
        }
        assert!(facts.apply("wh_1", &checkin, at("2026-11-02T14:00:00Z")), "the id was forgotten");
        assert_eq!(facts.checkin_count, 1);
        assert_eq!(facts.last_checkin_at, Some(at("2026-11-02T14:00:00Z")));
    }

    #[test]
    fn the_history_window_keeps_the_newest_checkins_and_counts_the_rest() {
        let mut facts = MemberFacts::new(member());
        let start = at("2026-01-01T10:00:00Z");
        for i in 0..(CHECKIN_HISTORY_MAX as i64 + 10) {
            let t = start + days(i);
            let e = MemberEvent::CheckinCreated {
                member_id: member(),
                checked_in_at: t,
                class_name: None,
            };
            facts.apply(&format!("c{i}"), &e, t);
        }
        assert_eq!(facts.checkins.len(), CHECKIN_HISTORY_MAX);
        assert_eq!(facts.checkin_count, CHECKIN_HISTORY_MAX as u32 + 10);
        assert_eq!(facts.checkins.first().copied(), Some(start + days(10)));
    }

    #[test]
    fn a_member_back_from_cancelled_is_reactivated_and_tiers_follow_checkins() {
        let mut facts = MemberFacts::new(member());
        let back = MemberEvent::StatusChanged {
            member_id: member(),
            status: MemberStatus::Active,
            previous_status: Some(MemberStatus::Cancelled),
            cancellation_reason: None,
        };
        facts.apply("s1", &back, at("2026-11-05T00:00:00Z"));
        assert_eq!(facts.reactivated_at, Some(at("2026-11-05T00:00:00Z")));
        assert_eq!(ActivityTier::of(&facts, at("2026-11-05T00:00:00Z")), ActivityTier::Dormant);
        let c = MemberEvent::CheckinCreated {
            member_id: member(),
            checked_in_at: at("2026-11-05T10:00:00Z"),
            class_name: None,
        };
        facts.apply("c1", &c, at("2026-11-05T10:00:00Z"));
        assert_eq!(ActivityTier::of(&facts, at("2026-11-10T00:00:00Z")), ActivityTier::Active);
        assert_eq!(ActivityTier::of(&facts, at("2026-11-20T00:00:00Z")), ActivityTier::Slipping);
        assert_eq!(ActivityTier::of(&facts, at("2026-12-20T00:00:00Z")), ActivityTier::Lapsed);
    }
}

//! A member's facts as a template sees them: only what a person at the gym would know and
//! might say, each `None` where the facts do not tell.

use jiff::Timestamp;
use jiff::civil::Weekday;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::members::event::MemberStatus;
use crate::members::member::MemberFacts;

/// See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberVars {
    #[serde(default)]
    pub first_name: Option<String>,
    /// Days from joining to now (to their cancellation, for a member who left); none where
    /// the gym's data does not hold their whole history ([`MemberFacts::history_is_whole`]).
    #[serde(default)]
    pub tenure_days: Option<u32>,
    #[serde(default)]
    pub days_since_last_visit: Option<u32>,
    /// Check-ins ever seen; 0 where the gym's data does not hold them all.
    #[serde(default)]
    pub visits: u32,
    /// "Tuesday evening", "morning": when most of their recent check-ins fall.
    #[serde(default)]
    pub usual_time: Option<String>,
    #[serde(default)]
    pub plan_name: Option<String>,
    /// The class half of their recent named check-ins were (three at least).
    #[serde(default)]
    pub usual_class: Option<String>,
    /// Their membership is billed in PushPress (they have a PushPress enrollment), so they can
    /// update their card themselves in PushPress's member app.
    #[serde(default)]
    pub billed_in_pushpress: bool,
    /// What a cancelled member's reason reads as (`moving`, `medical`, `financial`,
    /// `schedule`, `dissatisfied`, `other`); none for a member who is not cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellation_class: Option<String>,
    /// Days since a cancelled member cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days_since_cancelled: Option<u32>,
}

/// Check-ins needed before a habit is named.
const HABIT_MIN_CHECKINS: usize = 3;

fn days(from: Timestamp, to: Timestamp) -> Option<u32> {
    let hours = to.duration_since(from).as_hours();
    (hours >= 0).then(|| u32::try_from(hours / 24).unwrap_or(u32::MAX))
}

fn part_of_day(hour: i8) -> Option<&'static str> {
    match hour {
        5..=11 => Some("morning"),
        12..=16 => Some("afternoon"),
        17..=22 => Some("evening"),
        _ => None,
    }
}

fn weekday_name(day: Weekday) -> &'static str {
    match day {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}

/// The most frequent of `items` if it makes up at least `share_pct` percent of `total`.
fn habit<T: Ord + Clone>(items: impl Iterator<Item = T>, total: usize, share_pct: usize) -> Option<T> {
    let mut counts = std::collections::BTreeMap::<T, usize>::new();
    for item in items {
        *counts.entry(item).or_default() += 1;
    }
    let (best, n) = counts.into_iter().max_by_key(|(_, n)| *n)?;
    (n * 100 >= total * share_pct).then_some(best)
}

/// When the member usually trains, in the gym's time zone: a weekday and part of the day that
/// half their recent check-ins share, else a part of the day that 60% share.
fn usual_time(checkins: &[Timestamp], tz: &TimeZone) -> Option<String> {
    if checkins.len() < HABIT_MIN_CHECKINS {
        return None;
    }
    let local: Vec<(Weekday, &'static str)> = checkins
        .iter()
        .filter_map(|at| {
            let z = at.to_zoned(tz.clone());
            part_of_day(z.hour()).map(|part| (z.weekday(), part))
        })
        .collect();
    let total = checkins.len();
    if let Some((day, part)) = habit(local.iter().map(|(d, p)| (d.to_monday_one_offset(), *p)), total, 50) {
        let day = local.iter().find(|(d, _)| d.to_monday_one_offset() == day).map(|(d, _)| *d)?;
        return Some(format!("{} {part}", weekday_name(day)));
    }
    habit(local.iter().map(|(_, p)| *p), total, 60).map(str::to_owned)
}

/// The class most of the member's named check-ins were, if half of them (three at least).
fn usual_class(facts: &MemberFacts) -> Option<String> {
    let named = facts.checkin_classes.len();
    if named < HABIT_MIN_CHECKINS {
        return None;
    }
    habit(facts.checkin_classes.values().cloned(), named, 50)
}

impl MemberVars {
    /// From the member's facts, their plan's name (the connection keeps the names) and the
    /// first name the task greets them by. `records_from` is when the gym's records start
    /// (the account's creation): the one rule for counts said to a member is here — their
    /// visits and their months with the gym are given only where the gym's data holds the
    /// whole of them ([`MemberFacts::history_is_whole`]), else the template's sentence reads
    /// without them.
    pub fn from_facts(
        facts: &MemberFacts,
        first_name: Option<String>,
        plan_name: Option<String>,
        tz: &TimeZone,
        records_from: Timestamp,
        now: Timestamp,
    ) -> Self {
        let left = (facts.status == Some(MemberStatus::Cancelled))
            .then_some(facts.cancelled_at)
            .flatten();
        let checkins: Vec<Timestamp> = facts.checkins.iter().copied().collect();
        let whole = facts.history_is_whole(records_from);
        Self {
            first_name: first_name.or_else(|| facts.first_name.clone()),
            tenure_days: facts
                .joined_at
                .filter(|_| whole)
                .and_then(|joined| days(joined, left.unwrap_or(now))),
            days_since_last_visit: facts.last_checkin_at.and_then(|at| days(at, now)),
            visits: if whole { facts.checkin_count } else { 0 },
            usual_time: usual_time(&checkins, tz),
            plan_name,
            usual_class: usual_class(facts),
            billed_in_pushpress: !facts.membership.enrollments.is_empty(),
            cancellation_class: left.map(|_| {
                crate::members::cancellation::CancellationClass::of(facts.cancellation_reason.as_deref())
                    .as_str()
                    .to_owned()
            }),
            days_since_cancelled: left.and_then(|at| days(at, now)),
        }
    }

    /// Only the first name: a member Openloop has no facts about.
    pub fn named(first_name: Option<String>) -> Self {
        Self {
            first_name,
            ..Self::default()
        }
    }

    /// The member a preview is written to.
    pub fn sample() -> Self {
        Self {
            first_name: Some("Dana".into()),
            tenure_days: Some(430),
            days_since_last_visit: Some(12),
            visits: 86,
            usual_time: Some("Tuesday evening".into()),
            plan_name: Some("Unlimited".into()),
            usual_class: Some("CrossFit".into()),
            billed_in_pushpress: true,
            cancellation_class: None,
            days_since_cancelled: None,
        }
    }

    /// Tenure in words; none under a month.
    pub fn tenure(&self) -> Option<String> {
        let days = self.tenure_days?;
        Some(match days {
            0..=29 => return None,
            30..=59 => "a month".to_owned(),
            60..=364 => format!("{} months", days / 30),
            365..=729 => "over a year".to_owned(),
            _ => format!("{} years", days / 365),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_habit_is_named_only_when_most_check_ins_share_it() {
        let tz = TimeZone::UTC;
        // 2026-11-03 is a Tuesday.
        let tuesdays: Vec<Timestamp> = [
            "2026-11-03T18:00:00Z",
            "2026-11-10T18:30:00Z",
            "2026-11-17T19:00:00Z",
            "2026-11-05T07:00:00Z",
        ]
        .iter()
        .map(|t| t.parse().expect("time"))
        .collect();
        assert_eq!(usual_time(&tuesdays, &tz).as_deref(), Some("Tuesday evening"));
        let scattered: Vec<Timestamp> = ["2026-11-03T18:00:00Z", "2026-11-04T07:00:00Z", "2026-11-06T13:00:00Z"]
            .iter()
            .map(|t| t.parse().expect("time"))
            .collect();
        assert_eq!(usual_time(&scattered, &tz), None);
        assert_eq!(usual_time(&tuesdays[..2], &tz), None, "two check-ins are no habit");
    }

    #[test]
    fn the_usual_class_is_named_from_the_check_ins_that_named_one() {
        use crate::members::event::MemberEvent;
        let member = crate::kernel::ids::MemberId::parse("m_1").expect("id");
        let mut facts = MemberFacts::new(member.clone());
        let checkin = |at: &str, class: Option<&str>| MemberEvent::CheckinCreated {
            member_id: member.clone(),
            checked_in_at: at.parse().expect("time"),
            class_name: class.map(str::to_owned),
        };
        for (i, (at, class)) in [
            ("2026-11-03T18:00:00Z", Some("Yoga Flow")),
            ("2026-11-04T18:00:00Z", None),
            ("2026-11-05T18:00:00Z", Some("Yoga Flow")),
        ]
        .into_iter()
        .enumerate()
        {
            facts.apply(&format!("c{i}"), &checkin(at, class), at.parse().expect("time"));
        }
        let vars = |f: &MemberFacts| {
            MemberVars::from_facts(
                f,
                None,
                None,
                &TimeZone::UTC,
                "2026-01-01T00:00:00Z".parse().expect("time"),
                "2026-11-20T00:00:00Z".parse().expect("time"),
            )
        };
        assert_eq!(vars(&facts).usual_class, None, "two named check-ins are no habit");
        facts.apply(
            "c9",
            &checkin("2026-11-10T18:00:00Z", Some("Open Gym")),
            "2026-11-10T18:00:00Z".parse().expect("time"),
        );
        assert_eq!(vars(&facts).usual_class.as_deref(), Some("Yoga Flow"));
        assert_eq!(vars(&facts).visits, 0, "when they joined is unknown, so is whether these are all");
        facts.joined_at = Some("2026-11-01T00:00:00Z".parse().expect("time"));
        assert_eq!(vars(&facts).visits, 4);
    }

    /// Issue 42, point 3: Joy trains every other day, but only her last months were imported;
    /// "10 visits in over a year" would be false, so neither the count nor the months are
    /// said. A member who joined since the gym's records start, or whose first known check-in
    /// is right after their joining, has a whole history, and both are said.
    #[test]
    fn counts_are_said_only_where_the_gym_holds_the_whole_history() {
        use crate::members::event::MemberEvent;
        let t = |s: &str| -> Timestamp { s.parse().expect("time") };
        let records_from = t("2026-09-01T00:00:00Z");
        let now = t("2026-11-20T00:00:00Z");
        let member = crate::kernel::ids::MemberId::parse("m_joy").expect("id");
        let with_checkins = |joined: &str, first: &str| {
            let mut facts = MemberFacts::new(member.clone());
            facts.joined_at = Some(t(joined));
            let start = t(first);
            for i in 0..10 {
                let at = start + jiff::SignedDuration::from_hours(48 * i);
                let event = MemberEvent::CheckinCreated {
                    member_id: member.clone(),
                    checked_in_at: at,
                    class_name: None,
                };
                facts.apply(&format!("c{i}"), &event, at);
            }
            MemberVars::from_facts(&facts, None, None, &TimeZone::UTC, records_from, now)
        };
        let partial = with_checkins("2025-06-01T00:00:00Z", "2026-09-02T07:00:00Z");
        assert_eq!((partial.visits, partial.tenure()), (0, None), "imported from the middle");
        let since_records = with_checkins("2026-09-10T00:00:00Z", "2026-09-12T07:00:00Z");
        assert_eq!((since_records.visits, since_records.tenure().as_deref()), (10, Some("2 months")));
        let imported_from_the_start = with_checkins("2025-06-01T00:00:00Z", "2025-06-03T07:00:00Z");
        assert_eq!(imported_from_the_start.visits, 10);
        assert_eq!(imported_from_the_start.tenure().as_deref(), Some("over a year"));
        let mut unknown = MemberFacts::new(member.clone());
        unknown.checkin_count = 3;
        let unknown = MemberVars::from_facts(&unknown, None, None, &TimeZone::UTC, records_from, now);
        assert_eq!((unknown.visits, unknown.tenure_days), (0, None), "joining unknown");
        for (task_type, touch) in [("milestone_review", "first"), ("churn_risk", "first"), ("win_back", "first")] {
            for text in super::super::shipped_variants(task_type, touch) {
                let profile = crate::owner::account::Profile::default();
                let inputs = |m| super::super::Inputs {
                    member: m,
                    profile: &profile,
                    business_name: "Iron Temple",
                    instructions: None,
                };
                let mail = super::super::render(&text, &inputs(&partial)).expect("renders").body;
                for count in ["10 visits", "10 times", "year", "month"] {
                    assert!(!mail.contains(count), "{task_type}/{touch}: {count}: {mail}");
                }
            }
        }
    }

    #[test]
    fn tenure_reads_as_a_person_would_say_it() {
        let t = |d| {
            MemberVars {
                tenure_days: Some(d),
                ..MemberVars::default()
            }
            .tenure()
        };
        assert_eq!(t(10), None);
        assert_eq!(t(45).as_deref(), Some("a month"));
        assert_eq!(t(250).as_deref(), Some("8 months"));
        assert_eq!(t(400).as_deref(), Some("over a year"));
        assert_eq!(t(800).as_deref(), Some("2 years"));
    }

    /// A member with a PushPress enrollment is billed in PushPress (their card is updated in
    /// its member app); one known only from member events is not.
    #[test]
    fn a_member_with_a_pushpress_enrollment_is_billed_in_pushpress() {
        let now: Timestamp = "2026-11-20T00:00:00Z".parse().expect("time");
        let mut facts = MemberFacts::new(crate::kernel::ids::MemberId::parse("m_1").expect("id"));
        let vars = |f: &MemberFacts| MemberVars::from_facts(f, None, None, &TimeZone::UTC, now, now);
        assert!(!vars(&facts).billed_in_pushpress);
        facts.membership.enrollments.insert(
            "sub_1".into(),
            crate::members::membership::EnrollmentFact {
                status: crate::members::source::EnrollmentStatus::Alert,
                plan_id: None,
                paid_until: None,
                next_charge: None,
                stamp: crate::members::member::Stamp::new(now, "evt"),
            },
        );
        assert!(vars(&facts).billed_in_pushpress);
    }
}

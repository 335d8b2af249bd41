//! The risk scan's judgment of one member: from the member's facts
//! alone, does someone need attention, with which task type, and how sure are we?
//!
//! Five findings, by status: an enrollment PushPress marks `alert`, or an active one whose
//! `paidUntil` passed without a renewal → an inferred `payment_recovery` (PushPress reports no
//! payments; always the owner's review);
//! a new member → `onboarding` (their first 14 days are onboarding's, never a churn risk); an
//! active member whose check-ins dropped off (measured against their own rhythm when it is
//! known) → `churn_risk`; a recently cancelled member → `win_back`, as their reason allows (none
//! for a member who moved away; for one who left for their health, only after
//! [`MEDICAL_QUIET`], and care first); a lead without a booked trial → `lead_followup`.
//! A member known by phone only is judged like any other: the step reaches them by text with
//! their consent, else puts them on the owner's call list.
//! Sparse data never hides a finding; it lowers the confidence, so the task goes to the
//! owner's review instead of running on its own. Pure: the engine does the reading and the
//! creating (`engine/learning/analysis.rs`).

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::kernel::limits::{
    CHURN_PATTERN_CHECKINS, LEAD_FOLLOWUP_AFTER, LEAD_TOO_OLD, MEDICAL_QUIET, ONBOARDING_WINDOW, PAID_UNTIL_GRACE, WIN_BACK_WINDOW,
};
use crate::kernel::plural::count;
use crate::members::cancellation::CancellationClass;
use crate::members::event::MemberStatus;
use crate::members::member::{ActivityTier, MemberFacts};
use crate::members::source::EnrollmentStatus;
use crate::rails::gate::GateContext;

/// Someone who needs attention, and the task that would give it.
#[derive(Clone, Debug)]
pub struct Finding {
    pub task_type: &'static str,
    pub goal: String,
    /// 0–100, lowered by sparse data.
    pub confidence: u8,
    /// What this finding is about (the lapse, the cancellation, the join): the scan acts
    /// on each episode once.
    pub episode: String,
    pub gate: GateContext,
    /// Why, for the task's context and the owner.
    pub context: serde_json::Value,
}

/// The member's finding at `now`, if any, with the account's calibrated thresholds
/// (`churn_gap`: the no-check-in gap, [`crate::kernel::limits::CHURN_NO_CHECKIN`] unless calibrated). Members with
/// neither an e-mail address nor a phone are left out: no one could reach them.
pub fn assess(facts: &MemberFacts, now: Timestamp, churn_gap: SignedDuration) -> Option<Finding> {
    if facts.email.is_none() && facts.phone.is_none() {
        return None;
    }
    let name = facts.first_name_or_address();
    let tenure_days = facts.tenure_days(now);
    let gate = GateContext {
        tenure_days,
        monthly_value: facts.monthly_value,
        cancellation_reason: facts.cancellation_reason.clone(),
    };
    let finding = match facts.status? {
        MemberStatus::Active => active(facts, now, &name, churn_gap)?,
        MemberStatus::Cancelled => win_back(facts, now, &name)?,
        MemberStatus::Lead => lead(facts, now, &name)?,
        MemberStatus::Frozen => return None,
    };
    let (task_type, goal, base, episode, why) = finding;
    let confidence = base.saturating_sub(sparsity_penalty(facts)).clamp(10, 95);
    Some(Finding {
        task_type,
        goal,
        confidence,
        episode,
        gate,
        context: json!({
            "source": "risk_scan",
            "why": why,
            "activity_tier": ActivityTier::of(facts, now),
            "checkin_count": facts.checkin_count,
            "last_checkin_at": facts.last_checkin_at,
            "cancelled_at": facts.cancelled_at,
            "tenure_days": tenure_days,
            "monthly_value": facts.monthly_value,
            "cancellation_class": (facts.status == Some(MemberStatus::Cancelled))
                .then(|| CancellationClass::of(facts.cancellation_reason.as_deref()).as_str()),
        }),
    })
}

/// A finding's context without the counts a partial history cannot vouch for (visits and
/// tenure), with a word to the agent instead: the member's history before the gym's records
/// started is not known.
pub fn forget_partial_counts(context: &mut serde_json::Value) {
    if let Some(fields) = context.as_object_mut() {
        fields.remove("checkin_count");
        fields.remove("tenure_days");
        fields.insert(
            "history".into(),
            json!("only partly known (before the gym's records started): never tell the member a count of visits or how long they have been a member"),
        );
    }
}

/// (task type, goal, base confidence, episode, why)
type Raw = (&'static str, String, u8, String, String);

fn days(d: SignedDuration) -> i64 {
    d.as_hours() / 24
}

/// A usual gap between check-ins in words: "day" for one, "3 days" for more.
fn every(days: i64) -> String {
    match days.max(1) {
        1 => "day".to_owned(),
        n => format!("{n} days"),
    }
}

/// The goal of a payment task inferred from an `alert` enrollment: it says it is an inference.
pub const ALERT_PAYMENT_GOAL: &str = "Inferred payment trouble (PushPress marked the enrollment `alert`; it reports no payments): check with the member, kindly, whether their billing needs fixing";
/// The goal of a payment task inferred from a lapsed `paidUntil`: it says it is an inference.
pub const LAPSED_PAYMENT_GOAL: &str = "Inferred payment trouble (the membership's paid-until date passed without a renewal; PushPress reports no payments): check with the member, kindly, whether their billing needs fixing";

/// Under every task type's threshold: an inference always goes to the owner first.
pub const INFERRED_PAYMENT_CONFIDENCE: u8 = 40;

/// The episode of an `alert` enrollment: once per enrollment and paid-until date, whether the
/// webhook or the scan (after an import) sees it first.
pub fn alert_episode(enrollment_id: &str, paid_until: Option<Timestamp>) -> String {
    match paid_until {
        Some(p) => format!("alert:{enrollment_id}:{p}"),
        None => format!("alert:{enrollment_id}"),
    }
}

/// Payment trouble inferred from the enrollments (PushPress reports no
/// payments): one PushPress marked `alert`, or an active one paid only until a date more than
/// [`PAID_UNTIL_GRACE`] ago — a renewal would have moved `paidUntil` on.
fn payment_trouble(facts: &MemberFacts, now: Timestamp) -> Option<Raw> {
    let enrollments = &facts.membership.enrollments;
    if let Some((id, alert)) = enrollments.iter().find(|(_, e)| e.status == EnrollmentStatus::Alert) {
        return Some((
            "payment_recovery",
            ALERT_PAYMENT_GOAL.to_owned(),
            INFERRED_PAYMENT_CONFIDENCE,
            alert_episode(id, alert.paid_until),
            format!(
                "inferred: PushPress marks enrollment {id} `alert`; it reports no payments, so a failed payment is inferred, not known"
            ),
        ));
    }
    let (id, enrollment, paid_until) = enrollments
        .iter()
        .filter(|(_, e)| e.status == EnrollmentStatus::Active)
        .filter_map(|(id, e)| Some((id, e, e.paid_until?)))
        .filter(|(_, _, paid_until)| now.duration_since(*paid_until) > PAID_UNTIL_GRACE)
        .min_by_key(|(_, _, paid_until)| *paid_until)?;
    Some((
        "payment_recovery",
        LAPSED_PAYMENT_GOAL.to_owned(),
        INFERRED_PAYMENT_CONFIDENCE,
        format!("paid_until:{id}:{paid_until}"),
        format!(
            "inferred: enrollment {id} (plan {}) was paid until {paid_until}, {} ago, and is still active with no renewal; PushPress reports no payments, so a failed payment is inferred, not known",
            enrollment.plan_id.as_deref().unwrap_or("unknown"),
            count(days(now.duration_since(paid_until)), "day", "days")
        ),
    ))
}

fn active(facts: &MemberFacts, now: Timestamp, name: &str, churn_gap: SignedDuration) -> Option<Raw> {
    if let Some(trouble) = payment_trouble(facts, now) {
        return Some(trouble);
    }
    if let Some(joined) = facts.joined_at.filter(|j| now.duration_since(*j) < ONBOARDING_WINDOW) {
        // Already building the habit: the onboarding goal is met.
        if facts.checkins_since(joined) >= 3 {
            return None;
        }
        return Some((
            "onboarding",
            format!("Welcome {name} and help them check in at least 3 times in their first 30 days"),
            85,
            format!("joined:{joined}"),
            format!("joined {} ago", count(days(now.duration_since(joined)), "day", "days")),
        ));
    }
    // Dropping off needs check-ins to drop off from; with none, there is nothing to compare.
    let last = facts.last_checkin_at?;
    let gap = now.duration_since(last);
    let rhythm = usual_gap(facts);
    let threshold = rhythm.map_or(churn_gap, |r| churn_gap.max(r * 2));
    if gap < threshold {
        return None;
    }
    let (base, why) = match rhythm {
        Some(r) if facts.checkin_count >= CHURN_PATTERN_CHECKINS => {
            (85, format!("no check-in for {} days; usually every {}", days(gap), every(days(r))))
        }
        Some(r) => (
            65,
            format!(
                "no check-in for {} days; {} check-ins, usually every {} — a short history",
                days(gap),
                facts.checkin_count,
                every(days(r))
            ),
        ),
        None => (
            45,
            format!(
                "no check-in for {} days; only {}, too few to know their rhythm",
                days(gap),
                count(facts.checkin_count, "check-in", "check-ins")
            ),
        ),
    };
    let young = facts.tenure_days(now).is_some_and(|t| t < 30);
    Some((
        "churn_risk",
        format!("Re-engage {name}, who has not checked in for {} days", days(gap)),
        if young { base.min(50) } else { base },
        format!("lapse_since:{last}"),
        why,
    ))
}

/// The median gap between the member's recent check-ins, with at least three of them.
pub(crate) fn usual_gap(facts: &MemberFacts) -> Option<SignedDuration> {
    let times: Vec<Timestamp> = facts.checkins.iter().copied().collect();
    let mut gaps: Vec<SignedDuration> = times.windows(2).map(|w| w[1].duration_since(w[0])).collect();
    if gaps.len() < 2 {
        return None;
    }
    gaps.sort();
    Some(gaps[gaps.len() / 2])
}

fn win_back(facts: &MemberFacts, now: Timestamp, name: &str) -> Option<Raw> {
    let cancelled = facts.cancelled_at?;
    let since = now.duration_since(cancelled);
    let class = CancellationClass::of(facts.cancellation_reason.as_deref());
    // What the member told the gym decides whether and when to write (`members/cancellation.rs`).
    let (opens, goal) = match class {
        // They live elsewhere now: an invitation back would only say we did not listen.
        CancellationClass::Moving => return None,
        CancellationClass::Medical => (
            MEDICAL_QUIET,
            format!(
                "Ask after {name}, who stopped training for their health, with care first: no push to come back, the door open when they are ready"
            ),
        ),
        CancellationClass::Financial => (
            SignedDuration::ZERO,
            format!(
                "Invite {name}, who left over the cost, back: offer only what the gym offers (a pause, a cheaper plan, its current promotion), never a discount it does not"
            ),
        ),
        _ => (
            SignedDuration::ZERO,
            format!("Invite {name}, who cancelled {}, back to the gym", ago(days(since))),
        ),
    };
    if since < opens || since >= opens + WIN_BACK_WINDOW || since < SignedDuration::ZERO {
        return None;
    }
    let mut base: u8 = 75;
    if facts.cancellation_reason.is_none() {
        base -= 10;
    }
    if facts.checkin_count == 0 {
        base -= 15;
    }
    let when = ago(days(since));
    Some((
        "win_back",
        goal,
        base,
        format!("cancelled:{cancelled}"),
        format!(
            "cancelled {when}{}; their reason reads as {}",
            facts.cancellation_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default(),
            class.as_str()
        ),
    ))
}

/// Whole days back as words: "today", "yesterday", "12 days ago".
fn ago(days: i64) -> String {
    match days {
        ..=0 => "today".to_owned(),
        1 => "yesterday".to_owned(),
        n => format!("{} ago", count(n, "day", "days")),
    }
}

/// How sure a new lead's immediate follow-up is (the scan's own lead finding's base).
pub const NEW_LEAD_CONFIDENCE: u8 = 75;

/// The episode a lead is followed up in: when they became a lead (the webhook that answers a
/// new lead at once and the scan that finds one later claim the same).
pub fn lead_episode(joined_at: Option<Timestamp>) -> String {
    joined_at.map_or_else(|| "lead:unknown".to_owned(), |since| format!("lead:{since}"))
}

fn lead(facts: &MemberFacts, now: Timestamp, name: &str) -> Option<Raw> {
    if facts.trial_booked_at.is_some() {
        return None;
    }
    let (base, episode, why) = match facts.joined_at {
        Some(since) => {
            let age = now.duration_since(since);
            if age < LEAD_FOLLOWUP_AFTER || age > LEAD_TOO_OLD {
                return None;
            }
            (
                NEW_LEAD_CONFIDENCE,
                lead_episode(Some(since)),
                format!("a lead for {} days without a trial booked", days(age)),
            )
        }
        // When they became a lead is unknown: still worth a look, less surely.
        None => (50, lead_episode(None), "a lead without a trial booked (since unknown)".to_owned()),
    };
    Some(("lead_followup", format!("Help {name} book a trial class"), base, episode, why))
}

/// How much less sure sparse facts make us.
fn sparsity_penalty(facts: &MemberFacts) -> u8 {
    let mut penalty = 0;
    if facts.first_name.is_none() {
        penalty += 5;
    }
    if facts.monthly_value.is_none() {
        penalty += 5;
    }
    if facts.joined_at.is_none() {
        penalty += 10;
    }
    penalty
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::{Email, MemberId};
    use crate::kernel::limits::CHURN_NO_CHECKIN;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn now() -> Timestamp {
        at("2026-11-02T14:00:00Z")
    }

    fn member(status: MemberStatus) -> MemberFacts {
        let mut facts = MemberFacts::new(MemberId::parse("m_1").expect("id"));
        facts.email = Email::parse("sam@example.com").ok();
        facts.first_name = Some("Sam".into());
        facts.monthly_value = Some(150.0);
        facts.joined_at = Some(at("2025-01-01T00:00:00Z"));
        facts.status = Some(status);
        facts
    }

    fn enrolled(mut facts: MemberFacts, status: EnrollmentStatus, paid_until: &str) -> MemberFacts {
        facts.membership.enrollments.insert(
            "sub_1".into(),
            crate::members::membership::EnrollmentFact {
                status,
                plan_id: Some("pln_1".into()),
                paid_until: Some(at(paid_until)),
                next_charge: None,
                stamp: crate::members::member::Stamp::new(at("2026-10-01T00:00:00Z"), "e"),
            },
        );
        facts
    }

    /// `paidUntil` passing without a renewal is inferred payment trouble —
    /// after the grace, only for an enrollment still active, once per paid-until date, and
    /// always under the review threshold; before it, the member's other findings stand.
    #[test]
    fn an_active_enrollment_paid_until_a_date_past_the_grace_is_inferred_payment_trouble() {
        let regular = with_checkins(member(MemberStatus::Active), 2, 20, now() - SignedDuration::from_hours(24));
        let lapsed = assess(
            &enrolled(regular.clone(), EnrollmentStatus::Active, "2026-10-28T00:00:00Z"),
            now(),
            CHURN_NO_CHECKIN,
        )
        .expect("a finding");
        assert_eq!(lapsed.task_type, "payment_recovery");
        assert_eq!(lapsed.goal, LAPSED_PAYMENT_GOAL);
        assert!(lapsed.confidence <= 40, "always the owner's review: {}", lapsed.confidence);
        assert_eq!(lapsed.episode, "paid_until:sub_1:2026-10-28T00:00:00Z");
        assert!(
            lapsed.context["why"].as_str().is_some_and(|w| w.starts_with("inferred")),
            "{}",
            lapsed.context
        );
        // Inside the grace (paid until three days ago at most): nothing.
        assert!(
            assess(
                &enrolled(regular.clone(), EnrollmentStatus::Active, "2026-10-30T15:00:00Z"),
                now(),
                CHURN_NO_CHECKIN
            )
            .is_none()
        );
        // An `alert` enrollment is the same inference, whatever its date, once per date.
        let alert = assess(
            &enrolled(regular.clone(), EnrollmentStatus::Alert, "2026-11-30T00:00:00Z"),
            now(),
            CHURN_NO_CHECKIN,
        )
        .expect("alert");
        assert_eq!((alert.task_type, alert.goal.as_str()), ("payment_recovery", ALERT_PAYMENT_GOAL));
        assert_eq!(alert.episode, alert_episode("sub_1", Some(at("2026-11-30T00:00:00Z"))));
        // A cancelled or paused enrollment is not a payment that failed.
        for status in [EnrollmentStatus::Canceled, EnrollmentStatus::Paused] {
            assert!(
                assess(&enrolled(regular.clone(), status, "2026-10-01T00:00:00Z"), now(), CHURN_NO_CHECKIN)
                    .is_none_or(|f| f.task_type != "payment_recovery")
            );
        }
    }

    fn with_checkins(mut facts: MemberFacts, every_days: i64, count: i64, last: Timestamp) -> MemberFacts {
        for n in 0..count {
            facts.checkins.insert(last - SignedDuration::from_hours(24 * every_days * n));
        }
        facts.checkin_count = u32::try_from(count).expect("count");
        facts.last_checkin_at = facts.checkins.last().copied();
        facts
    }

    #[test]
    fn a_regular_who_stopped_coming_is_a_confident_churn_risk() {
        let facts = with_checkins(member(MemberStatus::Active), 3, 30, now() - SignedDuration::from_hours(24 * 20));
        let finding = assess(&facts, now(), CHURN_NO_CHECKIN).expect("finding");
        assert_eq!((finding.task_type, finding.confidence), ("churn_risk", 85));
    }

    #[test]
    fn a_member_who_comes_every_three_weeks_is_not_at_risk_after_twenty_days() {
        let facts = with_checkins(member(MemberStatus::Active), 21, 12, now() - SignedDuration::from_hours(24 * 20));
        assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_none());
        let later = now() + SignedDuration::from_hours(24 * 25);
        assert_eq!(assess(&facts, later, CHURN_NO_CHECKIN).map(|f| f.task_type), Some("churn_risk"));
    }

    #[test]
    fn a_calibrated_gap_flags_a_member_with_little_history_later() {
        let facts = with_checkins(member(MemberStatus::Active), 30, 2, now() - SignedDuration::from_hours(24 * 16));
        assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_some(), "16 days is past the default 14");
        let three_weeks = SignedDuration::from_hours(24 * 21);
        assert!(assess(&facts, now(), three_weeks).is_none(), "this gym's members take three weeks");
        let later = now() + SignedDuration::from_hours(24 * 6);
        assert!(assess(&facts, later, three_weeks).is_some());
    }

    #[test]
    fn sparse_history_lowers_the_confidence_but_keeps_the_finding() {
        let facts = with_checkins(member(MemberStatus::Active), 3, 2, now() - SignedDuration::from_hours(24 * 30));
        let sparse = assess(&facts, now(), CHURN_NO_CHECKIN).expect("finding");
        assert_eq!(sparse.task_type, "churn_risk");
        assert!(sparse.confidence <= 45, "{}", sparse.confidence);
        let mut unknown = facts.clone();
        unknown.monthly_value = None;
        unknown.joined_at = None;
        assert!(assess(&unknown, now(), CHURN_NO_CHECKIN).expect("finding").confidence < sparse.confidence);
    }

    #[test]
    fn no_checkins_at_all_is_no_evidence_of_dropping_off() {
        assert!(assess(&member(MemberStatus::Active), now(), CHURN_NO_CHECKIN).is_none());
    }

    #[test]
    fn new_members_get_onboarding_until_the_habit_forms() {
        let mut facts = member(MemberStatus::Active);
        facts.joined_at = Some(now() - SignedDuration::from_hours(24 * 3));
        assert_eq!(assess(&facts, now(), CHURN_NO_CHECKIN).map(|f| f.task_type), Some("onboarding"));
        let formed = with_checkins(facts, 1, 3, now() - SignedDuration::from_hours(1));
        assert!(assess(&formed, now(), CHURN_NO_CHECKIN).is_none());
    }

    #[test]
    fn recent_cancellations_are_won_back_and_old_ones_left_alone() {
        let mut facts = with_checkins(member(MemberStatus::Cancelled), 4, 20, now() - SignedDuration::from_hours(24 * 40));
        facts.cancelled_at = Some(now() - SignedDuration::from_hours(24 * 10));
        facts.cancellation_reason = Some("new shifts at work".into());
        let finding = assess(&facts, now(), CHURN_NO_CHECKIN).expect("finding");
        assert_eq!((finding.task_type, finding.confidence), ("win_back", 75));
        assert_eq!(finding.context["cancellation_class"], "schedule");
        facts.cancelled_at = Some(now() - SignedDuration::from_hours(24 * 90));
        assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_none());
    }

    #[test]
    fn leads_get_a_follow_up_once_they_had_time_and_until_they_book() {
        let mut facts = member(MemberStatus::Lead);
        facts.joined_at = Some(now() - SignedDuration::from_hours(24 * 5));
        assert_eq!(assess(&facts, now(), CHURN_NO_CHECKIN).map(|f| f.task_type), Some("lead_followup"));
        facts.joined_at = Some(now() - SignedDuration::from_hours(12));
        assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_none(), "a brand-new lead gets time");
        facts.joined_at = Some(now() - SignedDuration::from_hours(24 * 5));
        facts.trial_booked_at = Some(now());
        assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_none(), "a booked trial is the goal");
    }

    #[test]
    fn nobody_unreachable_and_nobody_frozen_but_a_phone_is_enough() {
        let mut facts = with_checkins(member(MemberStatus::Active), 3, 30, now() - SignedDuration::from_hours(24 * 20));
        facts.email = None;
        assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_none(), "no address and no phone");
        facts.phone = Some("+15555550100".into());
        let phone_only = assess(&facts, now(), CHURN_NO_CHECKIN).expect("a member known by phone only is scanned");
        assert_eq!(phone_only.task_type, "churn_risk");
        let frozen = with_checkins(member(MemberStatus::Frozen), 3, 30, now() - SignedDuration::from_hours(24 * 20));
        assert!(assess(&frozen, now(), CHURN_NO_CHECKIN).is_none());
    }

    fn cancelled(reason: &str, days_ago: i64) -> MemberFacts {
        let mut facts = with_checkins(
            member(MemberStatus::Cancelled),
            4,
            20,
            now() - SignedDuration::from_hours(24 * (days_ago + 30)),
        );
        facts.cancelled_at = Some(now() - SignedDuration::from_hours(24 * days_ago));
        facts.cancellation_reason = Some(reason.into());
        facts
    }

    #[test]
    fn a_member_who_moved_away_gets_no_win_back() {
        for days_ago in [0, 13, 45] {
            let facts = cancelled("Moving to Portland for a new job", days_ago);
            assert!(assess(&facts, now(), CHURN_NO_CHECKIN).is_none(), "{days_ago} days after");
        }
    }

    #[test]
    fn a_member_who_left_for_their_health_hears_nothing_for_30_days_then_care_first() {
        let reason = "Knee surgery, doctor says no training for 3 months";
        for days_ago in [0, 1, 29] {
            assert!(
                assess(&cancelled(reason, days_ago), now(), CHURN_NO_CHECKIN).is_none(),
                "{days_ago} days after"
            );
        }
        let finding = assess(&cancelled(reason, 30), now(), CHURN_NO_CHECKIN).expect("after 30 days");
        assert_eq!(finding.task_type, "win_back");
        assert!(finding.goal.contains("care first"), "{}", finding.goal);
        assert_eq!(finding.context["cancellation_class"], "medical");
        assert!(
            assess(&cancelled(reason, 80), now(), CHURN_NO_CHECKIN).is_some(),
            "still within the window from day 30"
        );
        assert!(assess(&cancelled(reason, 95), now(), CHURN_NO_CHECKIN).is_none());
    }

    #[test]
    fn a_member_who_left_over_the_cost_is_offered_only_what_the_gym_offers() {
        let finding = assess(&cancelled("Too expensive for me right now", 5), now(), CHURN_NO_CHECKIN).expect("finding");
        assert!(finding.goal.contains("never a discount it does not"), "{}", finding.goal);
        assert_eq!(finding.context["cancellation_class"], "financial");
    }

    #[test]
    fn a_partial_history_tells_the_agent_no_count() {
        let finding = assess(&cancelled("Too expensive for me right now", 5), now(), CHURN_NO_CHECKIN).expect("finding");
        let mut context = finding.context;
        assert!(context.get("checkin_count").is_some());
        forget_partial_counts(&mut context);
        assert!(
            context.get("checkin_count").is_none() && context.get("tenure_days").is_none(),
            "{context}"
        );
        assert!(
            context["history"]
                .as_str()
                .is_some_and(|h| h.contains("never tell the member a count"))
        );
    }

    #[test]
    fn a_member_in_their_first_14_days_is_never_a_churn_risk() {
        // Three check-ins in their first days, then nothing for ten: still onboarding's.
        let mut facts = with_checkins(member(MemberStatus::Active), 1, 3, now() - SignedDuration::from_hours(24 * 10));
        facts.joined_at = Some(now() - SignedDuration::from_hours(24 * 13));
        assert_ne!(assess(&facts, now(), CHURN_NO_CHECKIN).map(|f| f.task_type), Some("churn_risk"));
        assert!(assess(&facts, now(), SignedDuration::from_hours(24)).is_none_or(|f| f.task_type == "onboarding"));
    }
}

//! What the risk scan would have seen in a member who cancelled (the churn report's second
//! kind of reason, beside the cancellation reasons members give): their check-ins had stopped
//! (by the scan's gap, against their own rhythm when it is known), they never checked in, they
//! were new, their payment was in trouble. Pure, from the member's facts; the same rules as
//! [`crate::rails::risk::assess`], read at the cancellation rather than now.

use jiff::SignedDuration;

use crate::kernel::limits::ONBOARDING_WINDOW;
use crate::members::member::MemberFacts;
use crate::members::source::EnrollmentStatus;
use crate::rails::risk::usual_gap;

pub const STOPPED_CHECKING_IN: &str = "risk scan: check-ins had stopped";
pub const NEVER_CHECKED_IN: &str = "risk scan: never checked in";
pub const NEW_MEMBER: &str = "risk scan: new member";
pub const PAYMENT_TROUBLE: &str = "risk scan: payment trouble";

/// The scan's factors for a member who cancelled (none for one who did not), with the
/// account's no-check-in gap.
pub fn at_cancellation(facts: &MemberFacts, churn_gap: SignedDuration) -> Vec<&'static str> {
    let Some(cancelled) = facts.cancelled_at else {
        return Vec::new();
    };
    let mut factors = Vec::new();
    match facts.last_checkin_at {
        Some(last) => {
            let threshold = usual_gap(facts).map_or(churn_gap, |r| churn_gap.max(r * 2));
            if cancelled.duration_since(last) >= threshold {
                factors.push(STOPPED_CHECKING_IN);
            }
        }
        None if facts.checkin_count == 0 => factors.push(NEVER_CHECKED_IN),
        None => {}
    }
    if facts.joined_at.is_some_and(|j| cancelled.duration_since(j) < ONBOARDING_WINDOW) {
        factors.push(NEW_MEMBER);
    }
    let alert = facts.membership.enrollments.values().any(|e| e.status == EnrollmentStatus::Alert);
    if facts.payment_failing || alert {
        factors.push(PAYMENT_TROUBLE);
    }
    factors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::MemberId;
    use crate::kernel::limits::CHURN_NO_CHECKIN;
    use crate::testing::at;

    fn cancelled(last_checkin: Option<&str>) -> MemberFacts {
        let mut f = MemberFacts::new(MemberId::parse("m_gone").unwrap_or_else(|e| panic!("{e}")));
        f.joined_at = Some(at("2025-01-01T00:00:00Z"));
        f.cancelled_at = Some(at("2026-11-20T00:00:00Z"));
        f.last_checkin_at = last_checkin.map(at);
        f.checkin_count = u32::from(last_checkin.is_some()) * 40;
        f
    }

    #[test]
    fn a_member_who_stopped_coming_weeks_before_cancelling_shows_the_scans_factor() {
        let f = cancelled(Some("2026-10-01T00:00:00Z"));
        assert_eq!(at_cancellation(&f, CHURN_NO_CHECKIN), [STOPPED_CHECKING_IN]);
        let still_coming = cancelled(Some("2026-11-18T00:00:00Z"));
        assert!(at_cancellation(&still_coming, CHURN_NO_CHECKIN).is_empty());
        let mut failing = cancelled(None);
        failing.payment_failing = true;
        assert_eq!(at_cancellation(&failing, CHURN_NO_CHECKIN), [NEVER_CHECKED_IN, PAYMENT_TROUBLE]);
        let mut active = cancelled(Some("2026-10-01T00:00:00Z"));
        active.cancelled_at = None;
        assert!(at_cancellation(&active, CHURN_NO_CHECKIN).is_empty());
    }
}

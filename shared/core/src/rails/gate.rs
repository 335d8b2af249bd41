//! The confidence gate: does a new task go to the owner first, or may it run?

use serde::Serialize;

use crate::owner::account::ExecutionMode;
use crate::owner::calibration::Calibration;
use crate::task::TaskStatus;
use crate::task::reason::{GateReason, Reason};
use crate::task::task_type::{EscalationTrigger, TaskTypeDef};

impl EscalationTrigger {
    /// The reason logged when this trigger sends a new task to review.
    pub fn reason(self) -> Reason {
        match self {
            EscalationTrigger::Always => Reason::EscalationTriggerAlways,
            EscalationTrigger::MemberTenureOver1Year => Reason::EscalationTriggerMemberTenureOver1Year,
            EscalationTrigger::MemberTenureOver2Years => Reason::EscalationTriggerMemberTenureOver2Years,
            EscalationTrigger::MonthlyValueOver200 => Reason::EscalationTriggerMonthlyValueOver200,
            EscalationTrigger::CancellationReasonComplaint => Reason::EscalationTriggerCancellationReasonComplaint,
            EscalationTrigger::CancellationReasonBilling => Reason::EscalationTriggerCancellationReasonBilling,
        }
    }
}

/// What is known about the member when the task is made, for the escalation triggers.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GateContext {
    pub tenure_days: Option<i64>,
    pub monthly_value: Option<f64>,
    pub cancellation_reason: Option<String>,
}

/// The initial status of a new task, and the reason for it (logged on creation). The type's
/// auto-send threshold is raised by the account's calibration.
pub fn initial_status(
    mode: ExecutionMode,
    def: &TaskTypeDef,
    calibration: Calibration,
    confidence: u8,
    ctx: &GateContext,
) -> (TaskStatus, GateReason) {
    initial_status_on(mode, def, calibration, confidence, ctx, false)
}

/// [`initial_status`] of a type the owner put on autopilot (settings `autopilot_types`) when
/// `autopilot`: on `limited_auto` the member's value or tenure alone no longer sends it to
/// review. Every other trigger still does (a complaint, billing, a type that always asks, such
/// as a payment), and so does a confidence below the threshold; the ramp applies after.
pub fn initial_status_on(
    mode: ExecutionMode,
    def: &TaskTypeDef,
    calibration: Calibration,
    confidence: u8,
    ctx: &GateContext,
    autopilot: bool,
) -> (TaskStatus, GateReason) {
    if mode == ExecutionMode::Manual {
        return (TaskStatus::PendingReview, Reason::ManualModeRequiresReview.into());
    }
    let waived = |trigger: &EscalationTrigger| {
        autopilot
            && matches!(
                trigger,
                EscalationTrigger::MemberTenureOver1Year
                    | EscalationTrigger::MemberTenureOver2Years
                    | EscalationTrigger::MonthlyValueOver200
            )
    };
    for trigger in def.escalation_triggers.iter().filter(|t| !waived(t)) {
        let fires = match trigger {
            EscalationTrigger::Always => true,
            EscalationTrigger::MemberTenureOver1Year => ctx.tenure_days.is_some_and(|d| d > 365),
            EscalationTrigger::MemberTenureOver2Years => ctx.tenure_days.is_some_and(|d| d > 730),
            EscalationTrigger::MonthlyValueOver200 => ctx.monthly_value.is_some_and(|v| v > 200.0),
            EscalationTrigger::CancellationReasonComplaint => ctx.cancellation_reason.as_deref().is_some_and(|r| r.contains("complaint")),
            EscalationTrigger::CancellationReasonBilling => ctx.cancellation_reason.as_deref().is_some_and(|r| r.contains("billing")),
        };
        if fires {
            return (TaskStatus::PendingReview, trigger.reason().into());
        }
    }
    let threshold = calibration.auto_threshold(def.auto_threshold);
    if confidence < threshold {
        return (
            TaskStatus::PendingReview,
            GateReason::ConfidenceBelowThreshold { confidence, threshold },
        );
    }
    (TaskStatus::Ready, GateReason::AutoApproved { confidence })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task_type::{AD_HOC, CHURN_RISK, PAYMENT_RECOVERY};

    /// On autopilot a long-standing, valuable member no longer sends the type to review;
    /// a payment, which always asks, still does; manual mode still reviews everything.
    #[test]
    fn autopilot_waives_value_and_tenure_but_not_what_always_asks() {
        let valued = GateContext {
            tenure_days: Some(800),
            monthly_value: Some(250.0),
            cancellation_reason: None,
        };
        let gate = |mode, def, autopilot| initial_status_on(mode, def, Calibration::default(), 95, &valued, autopilot).0;
        assert_eq!(gate(ExecutionMode::LimitedAuto, &CHURN_RISK, false), TaskStatus::PendingReview);
        assert_eq!(gate(ExecutionMode::LimitedAuto, &CHURN_RISK, true), TaskStatus::Ready);
        assert_eq!(gate(ExecutionMode::LimitedAuto, &PAYMENT_RECOVERY, true), TaskStatus::PendingReview);
        assert_eq!(gate(ExecutionMode::Manual, &CHURN_RISK, true), TaskStatus::PendingReview);
    }

    #[test]
    fn a_calibrated_account_holds_what_the_type_alone_would_send() {
        let ctx = GateContext::default();
        let raised = Calibration::default()
            .with(crate::owner::calibration::Threshold::ConfidenceRaise, 10)
            .expect("in bounds");
        let def = &CHURN_RISK;
        let confidence = def.auto_threshold + 5;
        let (status, _) = initial_status(ExecutionMode::LimitedAuto, def, Calibration::default(), confidence, &ctx);
        assert_eq!(status, TaskStatus::Ready);
        let (status, reason) = initial_status(ExecutionMode::LimitedAuto, def, raised, confidence, &ctx);
        assert_eq!(status, TaskStatus::PendingReview);
        assert!(
            matches!(reason, GateReason::ConfidenceBelowThreshold { threshold, .. } if threshold == def.auto_threshold + 10),
            "{reason:?}"
        );
    }

    #[test]
    fn manual_mode_sends_everything_to_review() {
        let (status, _) = initial_status(
            ExecutionMode::Manual,
            &CHURN_RISK,
            Calibration::default(),
            100,
            &GateContext::default(),
        );
        assert_eq!(status, TaskStatus::PendingReview);
    }

    #[test]
    fn always_triggers_review_whatever_the_confidence() {
        for def in [&PAYMENT_RECOVERY, &AD_HOC] {
            let (status, reason) = initial_status(
                ExecutionMode::LimitedAuto,
                def,
                Calibration::default(),
                100,
                &GateContext::default(),
            );
            assert_eq!(status, TaskStatus::PendingReview);
            assert_eq!(reason.to_string(), "escalation_trigger:always");
        }
    }

    #[test]
    fn a_trigger_is_logged_by_its_serde_name() {
        use EscalationTrigger::*;
        for trigger in [
            Always,
            MemberTenureOver1Year,
            MemberTenureOver2Years,
            MonthlyValueOver200,
            CancellationReasonComplaint,
            CancellationReasonBilling,
        ] {
            let name = serde_json::to_value(trigger).expect("serialize");
            assert_eq!(
                trigger.reason().as_str(),
                format!("escalation_trigger:{}", name.as_str().expect("a string"))
            );
        }
    }

    #[test]
    fn the_confidence_comparison_is_logged_with_its_numbers() {
        let low = GateReason::ConfidenceBelowThreshold {
            confidence: 74,
            threshold: 75,
        };
        assert_eq!(low.to_string(), "confidence_74_below_threshold_75");
        assert_eq!(
            GateReason::AutoApproved { confidence: 90 }.to_string(),
            "auto_approved_confidence_90"
        );
    }

    #[test]
    fn limited_auto_runs_confident_tasks_and_reviews_the_rest() {
        let ctx = GateContext {
            tenure_days: Some(100),
            monthly_value: Some(150.0),
            cancellation_reason: None,
        };
        assert_eq!(
            initial_status(ExecutionMode::LimitedAuto, &CHURN_RISK, Calibration::default(), 75, &ctx).0,
            TaskStatus::Ready
        );
        assert_eq!(
            initial_status(ExecutionMode::LimitedAuto, &CHURN_RISK, Calibration::default(), 74, &ctx).0,
            TaskStatus::PendingReview
        );
        let valuable = GateContext {
            monthly_value: Some(250.0),
            ..ctx
        };
        assert_eq!(
            initial_status(ExecutionMode::LimitedAuto, &CHURN_RISK, Calibration::default(), 99, &valuable).0,
            TaskStatus::PendingReview
        );
    }
}

//! An account's calibrated thresholds: where this gym's
//! evidence moved the risk scan's no-check-in gap and the agent's confidence threshold away
//! from the defaults. Only an accepted calibration suggestion changes them, only within the
//! safe bounds of [`crate::kernel::limits`], and its undo puts back the value it replaced.

use jiff::SignedDuration;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::limits::{CONFIDENCE_RAISE_MAX, RISK_GAP_DAYS_MAX, RISK_GAP_DAYS_MIN};

/// Which threshold a calibration moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    /// Days without a check-in before the scan flags an active member (the default 14).
    RiskGapDays,
    /// Points added to every task type's auto-send confidence threshold (the default 0).
    ConfidenceRaise,
}

impl Threshold {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RiskGapDays => "risk_gap_days",
            Self::ConfidenceRaise => "confidence_raise",
        }
    }

    /// The safe bounds of the threshold (inclusive).
    pub fn bounds(self) -> (u16, u16) {
        match self {
            Self::RiskGapDays => (RISK_GAP_DAYS_MIN, RISK_GAP_DAYS_MAX),
            Self::ConfidenceRaise => (0, u16::from(CONFIDENCE_RAISE_MAX)),
        }
    }
}

/// The account's thresholds; the defaults until a calibration is accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Calibration {
    #[serde(default = "default_gap_days")]
    pub risk_gap_days: u16,
    #[serde(default)]
    pub confidence_raise: u8,
}

fn default_gap_days() -> u16 {
    RISK_GAP_DAYS_MIN
}

impl Default for Calibration {
    fn default() -> Self {
        Self {
            risk_gap_days: RISK_GAP_DAYS_MIN,
            confidence_raise: 0,
        }
    }
}

impl Calibration {
    pub fn get(&self, threshold: Threshold) -> u16 {
        match threshold {
            Threshold::RiskGapDays => self.risk_gap_days,
            Threshold::ConfidenceRaise => u16::from(self.confidence_raise),
        }
    }

    /// The same calibration with `threshold` at `value`; refused outside its safe bounds.
    pub fn with(mut self, threshold: Threshold, value: u16) -> Result<Self, InvalidInput> {
        let (low, high) = threshold.bounds();
        if !(low..=high).contains(&value) {
            return Err(InvalidInput::new(
                "invalid_calibration",
                format!("{} must be within {low}..={high}, not {value}", threshold.as_str()),
            ));
        }
        match threshold {
            Threshold::RiskGapDays => self.risk_gap_days = value,
            Threshold::ConfidenceRaise => self.confidence_raise = u8::try_from(value).unwrap_or(CONFIDENCE_RAISE_MAX),
        }
        Ok(self)
    }

    /// Both thresholds within their bounds.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        Self::default()
            .with(Threshold::RiskGapDays, self.risk_gap_days)?
            .with(Threshold::ConfidenceRaise, u16::from(self.confidence_raise))
            .map(|_| ())
    }

    /// The no-check-in gap the risk scan flags an active member after.
    pub fn churn_gap(&self) -> SignedDuration {
        SignedDuration::from_hours(24 * i64::from(self.risk_gap_days))
    }

    /// A task type's auto-send threshold for this account (never above 100).
    pub fn auto_threshold(&self, type_threshold: u8) -> u8 {
        type_threshold.saturating_add(self.confidence_raise).min(100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_moves_only_within_its_safe_bounds() {
        let c = Calibration::default();
        assert_eq!(c.churn_gap(), crate::kernel::limits::CHURN_NO_CHECKIN, "the default is the spec's");
        assert!(
            c.with(Threshold::RiskGapDays, 13).is_err(),
            "never flagged earlier than the default"
        );
        assert!(c.with(Threshold::RiskGapDays, 43).is_err());
        assert_eq!(c.with(Threshold::RiskGapDays, 21).expect("in bounds").risk_gap_days, 21);
        assert!(c.with(Threshold::ConfidenceRaise, 21).is_err());
        let raised = c.with(Threshold::ConfidenceRaise, 10).expect("in bounds");
        assert_eq!((raised.auto_threshold(80), raised.auto_threshold(95)), (90, 100));
    }
}

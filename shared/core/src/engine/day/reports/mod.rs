//! The monthly churn report: `GET /api/v1/reports/churn?month=` and
//! `/app/reports/churn`. Reads the members' facts (as the risk scan does, at most
//! [`REPORT_MEMBERS_READ`]) and the tasks' tallies closed since the month began; the sums are
//! [`crate::owner::churn_report`]'s.

use super::Engine;
use crate::kernel::ids::AccountId;
use crate::owner::churn_report::{ChurnReport, cancelled_in, report, with_risk_factors};
use crate::owner::scorecard::Month;
use crate::task::error::EngineError;

/// The most members one report reads (in pages of 500).
pub const REPORT_MEMBERS_READ: usize = 10_000;

impl Engine {
    /// The churn report of `month` (`YYYY-MM`; default: the current month in the account's
    /// time zone), with the 12 months up to it.
    pub async fn monthly_churn_report(&self, account: AccountId, month: Option<&str>) -> Result<ChurnReport, EngineError> {
        let account = self.account(account).await?;
        let tz = account.settings.time_zone();
        let month = match month {
            Some(m) => Month::parse(m, &tz)?,
            None => Month::containing(self.clock.now(), &tz)?,
        };
        let months = month.trailing(12, &tz)?;
        let tallies = self.store.tallies(account.id, month.start).await?;
        let mut members = Vec::new();
        let mut cursor = None;
        loop {
            let (page, next) = self.store.list_member_facts(account.id, 500, cursor).await?;
            members.extend(page);
            match next {
                Some(next) if members.len() < REPORT_MEMBERS_READ => cursor = Some(next),
                _ => break,
            }
        }
        let churned = report(&members, &tallies, &months);
        // Why they left, as the risk scan would have seen it (the same calibrated gap).
        let gap = account.settings.calibration.churn_gap();
        let factors = cancelled_in(&members, &month).flat_map(|m| crate::rails::risk_factors::at_cancellation(m, gap));
        Ok(with_risk_factors(churned, factors))
    }
}

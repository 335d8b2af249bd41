//! What the owner sees of outcomes: the scorecard (see [`crate::owner::scorecard`]), counted
//! from the tallies the store keeps beside the tasks (the open tasks and those closed since the
//! month began) and one ranged read of the daily send counters; the dashboard's overview,
//! which adds the revenue of the months before and the daily metrics for its charts; and the
//! activity feed, the account's decisions across its tasks, newest first.

use super::Engine;
use super::accounts::Autonomy;
use crate::kernel::ids::AccountId;
use crate::kernel::limits::{ACTIVITY_DEFAULT_LIMIT, ACTIVITY_MAX_LIMIT};
use crate::owner::metrics::{DayRange, MetricsRange};
use crate::owner::scorecard::{Month, Scorecard, revenue_by_month, tally};
use crate::task::TaskStatus;
use crate::task::error::EngineError;
use crate::task::history::ActivityEntry;

/// The dashboard's overview of an account, read at once: what it costs does not grow with
/// the tasks the account has stored.
#[derive(Clone, Debug)]
pub struct Overview {
    pub autonomy: Autonomy,
    /// The current month's scorecard (in the account's time zone).
    pub scorecard: Scorecard,
    /// `YYYY-MM` and the revenue retained in it, for the months up to this one, oldest first.
    pub revenue_by_month: Vec<(String, f64)>,
    /// Tasks waiting for the owner's review now.
    pub pending_review: usize,
    /// The daily metrics of the charts' days.
    pub metrics: MetricsRange,
}

impl Engine {
    /// The scorecard of `month` (`YYYY-MM`; default: the current month in the account's time
    /// zone): the tallies of the open tasks and of those closed since the month began, and
    /// one ranged read of the month's daily send counters.
    pub async fn scorecard(&self, account: AccountId, month: Option<&str>) -> Result<Scorecard, EngineError> {
        let account = self.account(account).await?;
        let tz = account.settings.time_zone();
        let month = match month {
            Some(m) => Month::parse(m, &tz)?,
            None => Month::containing(self.clock.now(), &tz)?,
        };
        let (tallies, sends) = futures::try_join!(self.store.tallies(account.id, month.start), self.month_sends(account.id, &month))?;
        let mut card = tally(&tallies, &month, sends);
        let days = month.days();
        if let (Some(first), Some(last)) = (days.first(), days.last()) {
            let texts = self.store.texts_between(account.id, *first, *last).await?;
            card.texts_sent = texts.texts;
            card.text_segments = texts.segments;
        }
        Ok(card)
    }

    async fn month_sends(&self, account: AccountId, month: &Month) -> Result<u32, crate::kernel::error::StoreError> {
        let days = month.days();
        match (days.first(), days.last()) {
            (Some(first), Some(last)) => self.store.sends_between(account, *first, *last).await,
            _ => Ok(0),
        }
    }

    /// The overview: the account and its ramp, this month's scorecard, the revenue retained
    /// in each of the last `months` months (those since the account was made), the review queue's length, and the daily metrics
    /// from `metrics_from` (`YYYY-MM-DD`) to today. One read of the account, two of the
    /// tallies (open; closed since the first month), one of the month's send counters and
    /// one of the daily metrics.
    pub async fn overview(&self, account: AccountId, months: usize, metrics_from: &str) -> Result<Overview, EngineError> {
        let account = self.account(account).await?;
        let now = self.clock.now();
        let tz = account.settings.time_zone();
        let month = Month::containing(now, &tz)?;
        // No month before the gym was here: its chart starts with the month it was made in.
        let mut chart_months = month.trailing(months.max(1), &tz)?;
        chart_months.retain(|m| m.end > account.created_at || m.start == month.start);
        let since = chart_months.first().map_or(month.start, |m| m.start);
        let range = DayRange::parse(Some(metrics_from), None, crate::kernel::limits::local_date(now, &tz))?;
        let (tallies, sends, days) = futures::try_join!(
            self.store.tallies(account.id, since),
            self.month_sends(account.id, &month),
            self.store.metrics_days(account.id, range.from, range.to),
        )?;
        let metrics = MetricsRange::of(range, &account.settings.timezone, &days, &self.config.ai_pricing);
        Ok(Overview {
            scorecard: tally(&tallies, &month, sends),
            revenue_by_month: revenue_by_month(&tallies, &chart_months),
            pending_review: tallies.iter().filter(|t| t.status == TaskStatus::PendingReview).count(),
            metrics,
            autonomy: Autonomy::of(account, now),
        })
    }

    /// The account's daily metrics of the local days `from` through `to`
    /// (`YYYY-MM-DD`; default: the [`crate::kernel::limits::METRICS_DEFAULT_DAYS`] days up to today in
    /// the account's time zone), each with its rates, and the range's totals. One ranged read
    /// of the days the hourly fold wrote.
    pub async fn metrics(&self, account: AccountId, from: Option<&str>, to: Option<&str>) -> Result<MetricsRange, EngineError> {
        let account = self.account(account).await?;
        let tz = account.settings.time_zone();
        let range = DayRange::parse(from, to, crate::kernel::limits::local_date(self.clock.now(), &tz))?;
        let stored = self.store.metrics_days(account.id, range.from, range.to).await?;
        Ok(MetricsRange::of(
            range,
            &account.settings.timezone,
            &stored,
            &self.config.ai_pricing,
        ))
    }

    /// A page of the account's activity feed: `limit` (default [`ACTIVITY_DEFAULT_LIMIT`], at
    /// most [`ACTIVITY_MAX_LIMIT`]) decisions, newest first, and the cursor of the next page.
    pub async fn activity(
        &self,
        account: AccountId,
        limit: Option<usize>,
        cursor: Option<String>,
    ) -> Result<(Vec<ActivityEntry>, Option<String>), EngineError> {
        let limit = limit.unwrap_or(ACTIVITY_DEFAULT_LIMIT);
        if !(1..=ACTIVITY_MAX_LIMIT).contains(&limit) {
            return Err(crate::kernel::error::InvalidInput::new("invalid_limit", format!("limit must be 1-{ACTIVITY_MAX_LIMIT}")).into());
        }
        Ok(self.store.activity(account, limit, cursor).await?)
    }
}

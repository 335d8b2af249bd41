//! What the owner sees of outcomes: the scorecard (see [`crate::owner::scorecard`]), which reads the
//! account's tasks that can count for the month and its daily send counters, and the activity
//! feed, the account's decisions across its tasks, newest first.

use super::Engine;
use crate::kernel::ids::AccountId;
use crate::kernel::limits::{ACTIVITY_DEFAULT_LIMIT, ACTIVITY_MAX_LIMIT, SCORECARD_LOOKBACK_DAYS};
use crate::members::member::days;
use crate::owner::metrics::{DayRange, MetricsRange};
use crate::owner::scorecard::{Month, Scorecard, tally};
use crate::ports::TaskQuery;
use crate::task::error::EngineError;
use crate::task::history::ActivityEntry;

impl Engine {
    /// The scorecard of `month` (`YYYY-MM`; default: the current month in the account's time
    /// zone). Reads the account's tasks newest first down to those made
    /// [`SCORECARD_LOOKBACK_DAYS`] before the month, and one send counter per day.
    pub async fn scorecard(&self, account: AccountId, month: Option<&str>) -> Result<Scorecard, EngineError> {
        let account = self.account(account).await?;
        let tz = account.settings.time_zone();
        let month = match month {
            Some(m) => Month::parse(m, &tz)?,
            None => Month::containing(self.clock.now(), &tz)?,
        };
        let horizon = month.start - days(SCORECARD_LOOKBACK_DAYS);
        let mut tasks = Vec::new();
        let mut cursor = None;
        'pages: loop {
            let query = TaskQuery {
                limit: 200,
                cursor,
                ..TaskQuery::default()
            };
            let (page, next) = self.store.list_tasks(account.id, &query).await?;
            for task in page {
                // Newest first: everything after this one was made even earlier.
                if task.created_at < horizon {
                    break 'pages;
                }
                if task.created_at < month.end {
                    tasks.push(task);
                }
            }
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        // One send counter a day of the month, read at once rather than one after another.
        let sends = futures::future::try_join_all(month.days().into_iter().map(|day| self.store.daily_sends(account.id, day))).await?;
        Ok(tally(&tasks, &month, sends.into_iter().sum()))
    }

    /// The account's daily metrics (spec §28.3) of the local days `from` through `to`
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

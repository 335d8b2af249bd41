//! The hourly metrics fold and the alert conditions (§28.4), run by the
//! attribution function after attribution: per account, the decisions made since its
//! watermark are added to its daily metrics, and the alerts they trip are raised once a day.
//! Also the operator's platform-wide aggregate of a month's learning records.

use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::civil::Date;
use serde::Serialize;

use super::Engine;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::limits::{
    self, ACTIVITY_MAX_LIMIT, ALERT_ESCALATION_DAYS, LEARNING_AGGREGATE_MAX_RECORDS, LEARNING_PAGE_SIZE, METRICS_FIRST_LOOKBACK,
    METRICS_SETTLE,
};
use crate::learning::MonthAggregate;
use crate::owner::account::Account;
use crate::owner::alert::Alert;
use crate::owner::metrics::{DailyMetrics, MetricsCursor, alerts, fold};
use crate::owner::scorecard::Month;
use crate::task::error::EngineError;
use crate::task::history::ActivityEntry;

/// What one metrics run did, summed over accounts (the platform metrics).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MetricsReport {
    pub accounts: usize,
    /// Decisions folded in this run.
    pub decisions: usize,
    /// Their counts, summed over accounts (AI calls: today's readings).
    pub folded: DailyMetrics,
    pub alerts: Vec<Alert>,
    /// Accounts left for the next run after losing every race.
    pub conflicts: usize,
}

const MAX_RACES: usize = 4;

impl Engine {
    /// Fold every account's new decisions into its daily metrics and raise the alerts they
    /// trip. Costs one cursor read and one activity page per account, plus the pages of what
    /// was decided since the last run.
    pub async fn record_metrics(&self) -> Result<MetricsReport, EngineError> {
        let now = self.clock.now();
        let mut report = MetricsReport::default();
        for account in self.accounts_at_work().await? {
            report.accounts += 1;
            let mut done = false;
            for _ in 0..MAX_RACES {
                match self.fold_account(&account, now, &mut report).await {
                    Err(EngineError::StaleVersion | EngineError::Store(StoreError::Conflict(Conflict::Version))) => continue,
                    Ok(()) => {
                        done = true;
                        break;
                    }
                    // One account's bad data never stops the others' fold.
                    Err(e) => {
                        report
                            .alerts
                            .push(Alert::account_run_failed(account.id, "metrics", &e.to_string(), now));
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                report.conflicts += 1;
            }
        }
        for alert in report.alerts.clone() {
            self.raise(alert).await;
        }
        Ok(report)
    }

    async fn fold_account(&self, account: &Account, now: Timestamp, report: &mut MetricsReport) -> Result<(), EngineError> {
        let id = account.id;
        let tz = account.settings.time_zone();
        let cursor = self.store.metrics_cursor(id).await?;
        let through = now - METRICS_SETTLE;
        // The first fold starts just before the account was made (its first decisions may
        // carry that very instant), at most the lookback ago.
        let from = cursor
            .through
            .unwrap_or_else(|| (account.created_at - jiff::SignedDuration::from_secs(1)).max(through - METRICS_FIRST_LOOKBACK));
        let entries = self.decisions_between(account, from, through).await?;
        let mut days: BTreeMap<Date, DailyMetrics> = fold(&entries, &tz);
        // The AI counters of the days the counters may have moved on: yesterday and today.
        let today = limits::local_date(now, &tz);
        for date in [today.yesterday().unwrap_or(today), today] {
            let calls = self.store.ai_calls(id, date).await?;
            if calls > 0 && self.store.daily_metrics(id, date).await?.ai_calls != calls {
                days.entry(date).or_default().ai_calls = calls;
            }
        }
        if days.values().all(DailyMetrics::is_empty) {
            return Ok(());
        }
        let mut totals = cursor.totals.clone();
        for delta in days.values() {
            totals.add(&DailyMetrics {
                ai_calls: 0,
                ..delta.clone()
            });
        }
        // The last days as they will stand after this fold, oldest first, for the alerts.
        let mut recent = Vec::new();
        let mut date = today;
        for _ in 0..ALERT_ESCALATION_DAYS {
            let mut day = self.store.daily_metrics(id, date).await?;
            if let Some(delta) = days.get(&date) {
                let calls = if delta.ai_calls > 0 { delta.ai_calls } else { day.ai_calls };
                day.add(&DailyMetrics {
                    ai_calls: 0,
                    ..delta.clone()
                });
                day.ai_calls = calls;
            }
            recent.push(day);
            date = date.yesterday().unwrap_or(date);
        }
        recent.reverse();
        let mut alerted = cursor.alerted.clone();
        alerted.retain(|_, on| *on >= today.yesterday().unwrap_or(today));
        let raised: Vec<Alert> = alerts(account, &recent, &totals, &self.config.ai_pricing, now)
            .into_iter()
            .filter(|a| alerted.get(a.code) != Some(&today))
            .collect();
        for alert in &raised {
            alerted.insert(alert.code.to_owned(), today);
        }
        let next = MetricsCursor {
            through: Some(through),
            totals,
            alerted,
            version: cursor.version + 1,
        };
        let days: Vec<(Date, DailyMetrics)> = days.into_iter().collect();
        self.store.save_metrics(id, &next, &days).await?;
        report.decisions += entries.len();
        for (date, delta) in &days {
            let counted = if *date == today {
                delta.clone()
            } else {
                DailyMetrics {
                    ai_calls: 0,
                    ..delta.clone()
                }
            };
            report.folded.add(&counted);
        }
        report.alerts.extend(raised);
        Ok(())
    }

    /// The account's decisions made in `(from, through]`, read newest first from the
    /// activity feed down to `from`.
    async fn decisions_between(&self, account: &Account, from: Timestamp, through: Timestamp) -> Result<Vec<ActivityEntry>, EngineError> {
        let mut out = Vec::new();
        if through <= from {
            return Ok(out);
        }
        let mut cursor = None;
        loop {
            let (page, next) = self.store.activity(account.id, ACTIVITY_MAX_LIMIT, cursor).await?;
            for entry in page {
                if entry.entry.at <= from {
                    return Ok(out);
                }
                if entry.entry.at <= through {
                    out.push(entry);
                }
            }
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    /// The platform-wide learning aggregate of `month` (`YYYY-MM`, UTC; default: the current
    /// month) for operators: every account's shared learning records of the month, added up
    /// per task type and outcome (see [`crate::learning`]). Reads the month's one partition
    /// in pages of [`LEARNING_PAGE_SIZE`], at most [`LEARNING_AGGREGATE_MAX_RECORDS`] records.
    pub async fn platform_learning(&self, month: Option<&str>) -> Result<MonthAggregate, EngineError> {
        let utc = jiff::tz::TimeZone::UTC;
        let month = match month {
            Some(m) => Month::parse(m, &utc)?,
            None => Month::containing(self.clock.now(), &utc)?,
        }
        .label();
        let mut aggregate = MonthAggregate::new(&month);
        let mut cursor = None;
        loop {
            let (page, next) = self.store.shared_outcomes(&month, LEARNING_PAGE_SIZE, cursor).await?;
            aggregate.add(&page);
            match next {
                None => return Ok(aggregate),
                Some(_) if aggregate.records >= LEARNING_AGGREGATE_MAX_RECORDS as u64 => {
                    aggregate.complete = false;
                    return Ok(aggregate);
                }
                Some(next) => cursor = Some(next),
            }
        }
    }
}

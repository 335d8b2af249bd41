//! [`MetricsStore`] in memory: daily metrics and their watermark.

use async_trait::async_trait;
use jiff::civil::Date;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::metrics::{DailyMetrics, MetricsCursor};
use crate::ports::MetricsStore;

use super::{MemoryStore, conflict};

#[async_trait]
impl MetricsStore for MemoryStore {
    async fn metrics_cursor(&self, account: AccountId) -> Result<MetricsCursor, StoreError> {
        Ok(self.lock()?.metrics_cursors.get(&account).cloned().unwrap_or_default())
    }

    async fn save_metrics(&self, account: AccountId, cursor: &MetricsCursor, days: &[(Date, DailyMetrics)]) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let stored = s.metrics_cursors.get(&account).map_or(0, |c| c.version);
        if stored + 1 != cursor.version {
            return Err(conflict(Conflict::Version));
        }
        s.metrics_cursors.insert(account, cursor.clone());
        for (date, delta) in days {
            let day = s.metrics.entry((account, *date)).or_default();
            let ai_calls = if delta.ai_calls > 0 { delta.ai_calls } else { day.ai_calls };
            day.add(&DailyMetrics {
                ai_calls: 0,
                ..delta.clone()
            });
            day.ai_calls = ai_calls;
        }
        Ok(())
    }

    async fn daily_metrics(&self, account: AccountId, date: Date) -> Result<DailyMetrics, StoreError> {
        Ok(self.lock()?.metrics.get(&(account, date)).cloned().unwrap_or_default())
    }

    async fn metrics_days(&self, account: AccountId, from: Date, to: Date) -> Result<Vec<(Date, DailyMetrics)>, StoreError> {
        let mut days: Vec<(Date, DailyMetrics)> = self
            .lock()?
            .metrics
            .iter()
            .filter(|((a, d), _)| *a == account && (from..=to).contains(d))
            .map(|((_, d), m)| (*d, m.clone()))
            .collect();
        days.sort_by_key(|(d, _)| *d);
        Ok(days)
    }
}

//! [`ConnectorHealthStore`] in memory: connector health per account and connector.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;
use crate::members::connector::{ConnectorHealth, HealthChange};
use crate::ports::ConnectorHealthStore;

use super::MemoryStore;

#[async_trait]
impl ConnectorHealthStore for MemoryStore {
    async fn connector_health(&self, account: AccountId, name: &str) -> Result<ConnectorHealth, StoreError> {
        Ok(self
            .lock()?
            .connector_health
            .get(&(account, name.to_owned()))
            .cloned()
            .unwrap_or_default())
    }

    async fn record_connector_call(
        &self,
        account: AccountId,
        name: &str,
        ok: bool,
        now: Timestamp,
        degraded_after: u32,
    ) -> Result<(ConnectorHealth, HealthChange), StoreError> {
        let mut s = self.lock()?;
        let health = s.connector_health.entry((account, name.to_owned())).or_default();
        let change = if ok {
            health.consecutive_failures = 0;
            health.last_success_at = Some(now);
            if health.degraded_since.take().is_some() {
                HealthChange::Recovered
            } else {
                HealthChange::None
            }
        } else {
            health.consecutive_failures += 1;
            health.last_failure_at = Some(now);
            if health.consecutive_failures >= degraded_after && health.degraded_since.is_none() {
                health.degraded_since = Some(now);
                HealthChange::Degraded
            } else {
                HealthChange::None
            }
        };
        Ok((health.clone(), change))
    }
}

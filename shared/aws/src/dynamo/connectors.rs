//! [`ConnectorHealthStore`] on DynamoDB: the `CONNECTOR#` items, updated in place.

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::members::connector::{ConnectorHealth, HealthChange};
use openloop_core::ports::ConnectorHealthStore;

use crate::keys::*;

use super::items::{attr_parse, n, s};
use super::{DynamoStore, Item, unavailable};

#[async_trait]
impl ConnectorHealthStore for DynamoStore {
    async fn connector_health(&self, account: AccountId, name: &str) -> Result<ConnectorHealth, StoreError> {
        Ok(self
            .get(account_pk(account), &connector_sk(name))
            .await?
            .map(|item| health_from_item(&item))
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
        use aws_sdk_dynamodb::types::ReturnValue;
        let update = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(connector_sk(name)))
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":kind", s("connector_health"))
            .expression_attribute_values(":now", s(now.to_string()));
        self.count();
        if ok {
            let out = update
                .update_expression("SET #kind = :kind, failures = :zero, last_success_at = :now REMOVE degraded_since")
                .expression_attribute_values(":zero", n(0))
                .return_values(ReturnValue::AllOld)
                .send()
                .await
                .map_err(unavailable)?;
            let old = out.attributes.map(|a| health_from_item(&a)).unwrap_or_default();
            let health = ConnectorHealth {
                consecutive_failures: 0,
                last_success_at: Some(now),
                last_failure_at: old.last_failure_at,
                degraded_since: None,
            };
            let change = if old.degraded_since.is_some() {
                HealthChange::Recovered
            } else {
                HealthChange::None
            };
            return Ok((health, change));
        }
        let out = update
            .update_expression("SET #kind = :kind, last_failure_at = :now ADD failures :one")
            .expression_attribute_values(":one", n(1))
            .return_values(ReturnValue::AllNew)
            .send()
            .await
            .map_err(unavailable)?;
        let mut health = out.attributes.map(|a| health_from_item(&a)).unwrap_or_default();
        if health.consecutive_failures < degraded_after || health.degraded_since.is_some() {
            return Ok((health, HealthChange::None));
        }
        // The failure that reached the threshold: whoever sets the flag first reports it.
        self.count();
        let marked = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(connector_sk(name)))
            .update_expression("SET degraded_since = :now")
            .condition_expression("attribute_not_exists(degraded_since) AND failures >= :threshold")
            .expression_attribute_values(":now", s(now.to_string()))
            .expression_attribute_values(":threshold", n(degraded_after))
            .send()
            .await;
        match marked {
            Ok(_) => {
                health.degraded_since = Some(now);
                Ok((health, HealthChange::Degraded))
            }
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok((health, HealthChange::None)),
            Err(e) => Err(unavailable(e)),
        }
    }
}

/// A connector-health item's attributes (absent ones: healthy defaults).
fn health_from_item(item: &Item) -> ConnectorHealth {
    ConnectorHealth {
        consecutive_failures: item
            .get("failures")
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        last_success_at: attr_parse(item, "last_success_at"),
        last_failure_at: attr_parse(item, "last_failure_at"),
        degraded_since: attr_parse(item, "degraded_since"),
    }
}

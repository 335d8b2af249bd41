//! [`MetricsStore`] on DynamoDB: the `METRICS#{date}` items and their watermark
//! `METRICS#CURSOR`, moved together in one transaction.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
use jiff::civil::Date;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::metrics::{DailyMetrics, MetricsCursor};
use openloop_core::ports::MetricsStore;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, build_error};

#[async_trait]
impl MetricsStore for DynamoStore {
    async fn metrics_cursor(&self, account: AccountId) -> Result<MetricsCursor, StoreError> {
        Ok(self
            .get(account_pk(account), METRICS_CURSOR_SK)
            .await?
            .map(from_item)
            .transpose()?
            .unwrap_or_default())
    }

    async fn save_metrics(&self, account: AccountId, cursor: &MetricsCursor, days: &[(Date, DailyMetrics)]) -> Result<(), StoreError> {
        let pk = account_pk(account);
        let mut put =
            Put::builder()
                .table_name(&self.table)
                .set_item(Some(keyed(cursor, pk.clone(), METRICS_CURSOR_SK.into(), "metrics_cursor")?));
        put = if cursor.version <= 1 {
            put.condition_expression("attribute_not_exists(PK)")
        } else {
            put.condition_expression("#v = :v")
                .expression_attribute_names("#v", "version")
                .expression_attribute_values(":v", n(cursor.version - 1))
        };
        let mut writes = vec![(
            TransactWriteItem::builder().put(put.build().map_err(build_error)?).build(),
            Some(Conflict::Version),
        )];
        for (date, delta) in days {
            let adds: Vec<(&str, u32)> = delta
                .fields()
                .into_iter()
                .filter(|(name, v)| *v > 0 && *name != "ai_calls")
                .collect();
            if adds.is_empty() && delta.ai_calls == 0 {
                continue;
            }
            let mut set = vec!["#kind = :kind".to_owned()];
            let mut update = Update::builder()
                .table_name(&self.table)
                .key(PK, s(pk.clone()))
                .key(SK, s(metrics_sk(*date)))
                .expression_attribute_names("#kind", KIND)
                .expression_attribute_values(":kind", s("daily_metrics"));
            if delta.ai_calls > 0 {
                set.push("ai_calls = :ai_calls".into());
                update = update.expression_attribute_values(":ai_calls", n(delta.ai_calls));
            }
            let mut expression = format!("SET {}", set.join(", "));
            if !adds.is_empty() {
                let clauses: Vec<String> = adds.iter().map(|(name, _)| format!("{name} :{name}")).collect();
                expression.push_str(&format!(" ADD {}", clauses.join(", ")));
                for (name, v) in &adds {
                    update = update.expression_attribute_values(format!(":{name}"), n(*v));
                }
            }
            let update = update.update_expression(expression).build().map_err(build_error)?;
            writes.push((TransactWriteItem::builder().update(update).build(), None));
        }
        self.transact(writes).await
    }

    async fn daily_metrics(&self, account: AccountId, date: Date) -> Result<DailyMetrics, StoreError> {
        Ok(self
            .get(account_pk(account), &metrics_sk(date))
            .await?
            .map(from_item)
            .transpose()?
            .unwrap_or_default())
    }

    async fn metrics_days(&self, account: AccountId, from: Date, to: Date) -> Result<Vec<(Date, DailyMetrics)>, StoreError> {
        // `METRICS#{date}` items sort by date; the cursor (`METRICS#CURSOR`) sorts after
        // every date, so a BETWEEN on two dates never reads it.
        let items = self.query_between(account_pk(account), metrics_sk(from), metrics_sk(to)).await?;
        let mut days = Vec::new();
        for item in items {
            let Some(date) = item.get(SK).and_then(|v| v.as_s().ok()).and_then(|sk| metrics_date(sk)) else {
                continue;
            };
            days.push((date, from_item(item)?));
        }
        Ok(days)
    }
}

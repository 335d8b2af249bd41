//! [`Counters`] on DynamoDB: the daily counter items (`SENDS#`, `AICALLS#`, `COUNT#…`) and the
//! creation counters, each counted by one conditional update.

use std::collections::HashMap;

use async_trait::async_trait;
use jiff::civil::Date;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::sms::TextCounts;
use openloop_core::ports::Counters;
use openloop_core::task::flood::CreationCounts;

use crate::keys::*;

use super::items::{n, s, sk_of};
use super::{DynamoStore, unavailable};

#[async_trait]
impl Counters for DynamoStore {
    async fn daily_sends(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        let item = self.get(account_pk(account), &sends_sk(date)).await?;
        Ok(item
            .and_then(|i| i.get("sent").and_then(|v| v.as_n().ok()).and_then(|v| v.parse::<i64>().ok()))
            .map_or(0, |v| u32::try_from(v.max(0)).unwrap_or(0)))
    }

    async fn sends_between(&self, account: AccountId, from: Date, to: Date) -> Result<u32, StoreError> {
        // `SENDS#{date}` items sort by date: one ranged read of the days.
        let items = self.query_between(account_pk(account), sends_sk(from), sends_sk(to)).await?;
        let sent = items
            .iter()
            .filter_map(|i| i.get("sent").and_then(|v| v.as_n().ok()).and_then(|v| v.parse::<i64>().ok()))
            .map(|v| u32::try_from(v.max(0)).unwrap_or(0))
            .fold(0u32, u32::saturating_add);
        Ok(sent)
    }

    async fn count_ai_call(&self, account: AccountId, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        self.count_up(account, ai_calls_sk(date), "ai_calls", limit, None).await
    }

    async fn ai_calls(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        Ok(self
            .get(account_pk(account), &ai_calls_sk(date))
            .await?
            .and_then(|item| item.get("calls").and_then(|v| v.as_n().ok()).and_then(|v| v.parse().ok()))
            .unwrap_or(0))
    }

    async fn count_daily(&self, account: AccountId, counter: &str, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        // Kept two days past its day, then removed by the table's TTL.
        let expires = date
            .checked_add(jiff::Span::new().days(3))
            .ok()
            .and_then(|d| d.to_zoned(jiff::tz::TimeZone::UTC).ok())
            .map(|z| z.timestamp().as_second());
        self.count_up(account, daily_counter_sk(counter, date), "daily_counter", limit, expires)
            .await
    }

    async fn creation_counts(&self, account: AccountId, date: Date) -> Result<CreationCounts, StoreError> {
        let pk = account_pk(account);
        let key = |sk: String| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(sk))]);
        let keys = vec![key(OPEN_TASKS_SK.into()), key(created_sk(date)), key(agent_created_sk(date))];
        let mut counts = CreationCounts::default();
        for item in self.batch_get(keys).await? {
            let value = item
                .get("n")
                .and_then(|v| v.as_n().ok())
                .and_then(|v| v.parse::<i64>().ok())
                .map_or(0, |v| u32::try_from(v.max(0)).unwrap_or(u32::MAX));
            match sk_of(&item) {
                OPEN_TASKS_SK => counts.open = value,
                sk if sk == created_sk(date) => counts.created = value,
                sk if sk == agent_created_sk(date) => counts.agent_created = value,
                _ => {}
            }
        }
        Ok(counts)
    }

    async fn count_text(&self, account: AccountId, date: Date, segments: u32, limit: u32) -> Result<Option<TextCounts>, StoreError> {
        self.count();
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(texts_sk(date)))
            // Named: SEGMENTS is one of DynamoDB's reserved words.
            .condition_expression("attribute_not_exists(#texts) OR #texts < :limit")
            .update_expression("SET #kind = :kind ADD #texts :one, #segments :segments")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_names("#texts", "texts")
            .expression_attribute_names("#segments", "segments")
            .expression_attribute_values(":kind", s("texts"))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":segments", n(segments))
            .expression_attribute_values(":limit", n(limit))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
            .send()
            .await;
        match out {
            Ok(out) => Ok(out.attributes.as_ref().map(text_counts)),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(None),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn texts_between(&self, account: AccountId, from: Date, to: Date) -> Result<TextCounts, StoreError> {
        let items = self.query_between(account_pk(account), texts_sk(from), texts_sk(to)).await?;
        Ok(items.iter().map(text_counts).fold(TextCounts::default(), |sum, c| TextCounts {
            texts: sum.texts.saturating_add(c.texts),
            segments: sum.segments.saturating_add(c.segments),
        }))
    }
}

/// A `TEXTS#` item's counts.
fn text_counts(item: &HashMap<String, aws_sdk_dynamodb::types::AttributeValue>) -> TextCounts {
    let number = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse::<i64>().ok())
            .map_or(0, |v| u32::try_from(v.max(0)).unwrap_or(u32::MAX))
    };
    TextCounts {
        texts: number("texts"),
        segments: number("segments"),
    }
}

impl DynamoStore {
    /// Add one to the counter item `sk` of the account while it is below `limit`: the new
    /// count, or `None` at the limit (nothing changed).
    async fn count_up(
        &self,
        account: AccountId,
        sk: String,
        kind: &str,
        limit: u32,
        expires: Option<i64>,
    ) -> Result<Option<u32>, StoreError> {
        self.count();
        let mut req = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(sk))
            .condition_expression("attribute_not_exists(calls) OR calls < :limit")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":kind", s(kind))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":limit", n(limit))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew);
        req = match expires {
            Some(at) => req
                .update_expression("SET #kind = :kind, #ttl = :ttl ADD calls :one")
                .expression_attribute_names("#ttl", TTL)
                .expression_attribute_values(":ttl", n(at)),
            None => req.update_expression("SET #kind = :kind ADD calls :one"),
        };
        match req.send().await {
            Ok(out) => Ok(out
                .attributes
                .and_then(|a| a.get("calls").and_then(|v| v.as_n().ok()).and_then(|v| v.parse().ok()))),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(None),
            Err(e) => Err(unavailable(e)),
        }
    }
}

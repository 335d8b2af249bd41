//! The DynamoDB store: one table, conditional writes for optimistic locking, and transactions
//! for everything that must hold across items (ARCHITECTURE.md, "Data"). Every capability of
//! [`TaskStore`] is implemented in a file of its own, named as the conformance suite's part
//! that checks it (`accounts.rs` is [`AccountStore`], `tasks.rs` is [`TaskWrites`] and
//! [`TaskReads`], …).
//!
//! Here: the store and the requests the capabilities share (each one counted, for the bench).
//! Entities are (de)serialised through serde_json's value in `items.rs`; the key attributes come from
//! [`crate::keys`]. A transaction's cancellation reasons are mapped back, item by item, to the
//! [`Conflict`] each condition stands for.
//!
//! [`TaskStore`]: openloop_core::ports::TaskStore
//! [`AccountStore`]: openloop_core::ports::AccountStore
//! [`TaskWrites`]: openloop_core::ports::TaskWrites
//! [`TaskReads`]: openloop_core::ports::TaskReads

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes, Put, TransactWriteItem};
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::task::Task;
use openloop_core::task::work::due_time_key;

use crate::keys::*;

use items::{decode_cursor, encode_cursor, s};

mod accounts;
mod annotations;
mod connections;
mod connectors;
mod counters;
mod credentials;
mod deliverability;
mod erasure;
mod idempotency;
mod items;
mod learning;
mod loops;
mod member_open_tasks;
mod members;
mod memories;
mod message_templates;
mod metrics;
mod notices;
mod sealing;
mod sign_in_links;
mod suggestions;
mod task_index;
mod tasks;
mod templates;
mod todos;
mod triggers;
mod webhooks;

type Item = HashMap<String, AttributeValue>;

/// See the module docs. Counts its requests, for the bench.
#[derive(Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
    requests: Arc<AtomicU64>,
    usage: Arc<Usage>,
    /// Seals the gyms' secrets before they are written (`sealing.rs`): KMS in AWS
    /// ([`crate::kms::KmsKeyring`]), the local keyring by default.
    keyring: Arc<dyn openloop_core::ports::Keyring>,
}

/// What this store's requests cost in DynamoDB's on-demand units, estimated from what each
/// request carries (for the bench's cost per gym-month): a read is one read unit per item it
/// names (a query one), a write one write unit per item, two in a transaction — items of at
/// most 4 KB read and 1 KB written, as most of Openloop's are.
#[derive(Default)]
struct Usage {
    writes: AtomicU64,
    read_units: AtomicU64,
    write_units: AtomicU64,
}

/// [`DynamoStore::usage`]: requests, of which writes, and the units they used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreUsage {
    pub requests: u64,
    pub writes: u64,
    pub read_units: u64,
    pub write_units: u64,
}

impl std::ops::Sub for StoreUsage {
    type Output = StoreUsage;
    fn sub(self, before: StoreUsage) -> StoreUsage {
        StoreUsage {
            requests: self.requests - before.requests,
            writes: self.writes - before.writes,
            read_units: self.read_units - before.read_units,
            write_units: self.write_units - before.write_units,
        }
    }
}

/// A token of one conditional write ([`WRITE_TOKEN`]).
fn write_token() -> String {
    ulid::Ulid::new().to_string()
}

/// An item's key, if it has one.
fn key_of(item: &Item) -> Option<(String, String)> {
    let part = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
    Some((part(PK)?, part(SK)?))
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
            requests: Arc::new(AtomicU64::new(0)),
            usage: Arc::new(Usage::default()),
            keyring: Arc::new(openloop_core::kernel::sealed::LocalKeyring::default()),
        }
    }

    /// The same store sealing with `keyring` (KMS in AWS and on the emulator).
    pub fn with_keyring(mut self, keyring: Arc<dyn openloop_core::ports::Keyring>) -> Self {
        self.keyring = keyring;
        self
    }

    /// Requests so far, the writes among them and the units they used (see `Usage`).
    pub fn usage(&self) -> StoreUsage {
        let requests = self.requests();
        let writes = self.usage.writes.load(Ordering::Relaxed);
        StoreUsage {
            requests,
            writes,
            // Every request that is not a write reads at least one unit.
            read_units: self.usage.read_units.load(Ordering::Relaxed) + (requests - writes),
            write_units: self.usage.write_units.load(Ordering::Relaxed),
        }
    }

    /// A write request of `units` write units.
    fn count_write(&self, units: u64) {
        self.usage.writes.fetch_add(1, Ordering::Relaxed);
        self.usage.write_units.fetch_add(units, Ordering::Relaxed);
    }

    /// DynamoDB requests made so far by this store (and its clones).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bulk-load tasks without conditions or log entries — for seeding benchmarks and
    /// migrations, never for the engine's own writes.
    pub async fn import_tasks(&self, tasks: &[Task]) -> Result<(), StoreError> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        // A task and its tally: 24 items a batch.
        for chunk in tasks.chunks(12) {
            let mut requests = Vec::new();
            for task in chunk {
                for item in [self.task_put(task)?, self.tally_item(task)?] {
                    requests.push(
                        WriteRequest::builder()
                            .put_request(PutRequest::builder().set_item(Some(item)).build().map_err(build_error)?)
                            .build(),
                    );
                }
            }
            let mut pending = HashMap::from([(self.table.clone(), requests)]);
            while !pending.is_empty() {
                self.count();
                self.count_write(pending.values().map(|v| v.len() as u64).sum());
                let out = self
                    .client
                    .batch_write_item()
                    .set_request_items(Some(pending))
                    .send()
                    .await
                    .map_err(unavailable)?;
                pending = out
                    .unprocessed_items
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(_, v)| !v.is_empty())
                    .collect();
            }
        }
        Ok(())
    }

    fn count(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Delete one item; whether it was there.
    async fn delete(&self, pk: String, sk: &str) -> Result<bool, StoreError> {
        self.count();
        self.count_write(1);
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(sk))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    async fn get(&self, pk: String, sk: &str) -> Result<Option<Item>, StoreError> {
        self.count();
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(sk))
            .consistent_read(true)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(out.item)
    }

    /// A transaction's write of `item`, only where nothing is stored under its key yet.
    fn put_new(&self, item: Item) -> Result<TransactWriteItem, StoreError> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// One transaction, which recognises its own earlier attempt: DynamoDB's client request
    /// token makes the SDK's retry of an applied transaction a success, and each put carries
    /// the same token as [`WRITE_TOKEN`], so a retry that meets a condition failure (an
    /// emulator without the request token) reads a failed put back and finds its own write.
    async fn transact(&self, items: Vec<(TransactWriteItem, Option<Conflict>)>) -> Result<(), StoreError> {
        self.count();
        self.count_write(2 * items.len() as u64);
        let token = write_token();
        let (mut writes, kinds): (Vec<_>, Vec<_>) = items.into_iter().unzip();
        for write in &mut writes {
            if let Some(put) = write.put.as_mut() {
                put.item.insert(WRITE_TOKEN.into(), s(token.clone()));
            }
        }
        let keys: Vec<Option<(String, String)>> = writes.iter().map(|w| w.put.as_ref().and_then(|p| key_of(&p.item))).collect();
        let sent = self
            .client
            .transact_write_items()
            .set_transact_items(Some(writes))
            .client_request_token(token.clone())
            .send()
            .await;
        match sent {
            Ok(_) => Ok(()),
            Err(SdkError::ServiceError(e)) => match e.err() {
                TransactWriteItemsError::TransactionCanceledException(ex) => {
                    let reasons = ex.cancellation_reasons();
                    // Our own transaction already applied: a put whose condition failed holds
                    // our token (a transaction is applied whole or not at all).
                    for (i, r) in reasons.iter().enumerate() {
                        if r.code() == Some("ConditionalCheckFailed")
                            && let Some(Some((pk, sk))) = keys.get(i)
                            && self.written_by(pk, sk, &token).await?
                        {
                            return Ok(());
                        }
                    }
                    let failed = reasons.iter().enumerate().find_map(|(i, r)| match r.code() {
                        // Another transaction was writing one of the items: nothing is known
                        // of it (it may yet fail), so not a reached limit, a held guard or a
                        // claim taken — worth another try, reported like a lost version race.
                        Some("TransactionConflict") => Some(Conflict::Version),
                        Some("ConditionalCheckFailed") => Some(kinds.get(i).copied().flatten().unwrap_or(Conflict::Version)),
                        _ => None,
                    });
                    match failed {
                        Some(conflict) => Err(StoreError::Conflict(conflict)),
                        None => {
                            let codes: Vec<_> = reasons.iter().map(|r| r.code().unwrap_or("None").to_owned()).collect();
                            Err(StoreError::Unavailable(format!("transaction cancelled: {codes:?}").into()))
                        }
                    }
                }
                other => Err(StoreError::Unavailable(
                    format!("transaction failed: {:?}", other.meta().code()).into(),
                )),
            },
            Err(e) => Err(unavailable(e)),
        }
    }

    /// An unconditional put.
    async fn put(&self, item: Item) -> Result<(), StoreError> {
        self.count();
        self.count_write(1);
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn put_conditional(
        &self,
        item: Item,
        condition: &str,
        names: &[(&str, &str)],
        values: Vec<(&str, AttributeValue)>,
        conflict: Conflict,
    ) -> Result<(), StoreError> {
        self.count();
        self.count_write(1);
        // Our own earlier attempt, applied with its answer lost, is told by its token.
        let mut item = item;
        let token = write_token();
        item.insert(WRITE_TOKEN.into(), s(token.clone()));
        let key = key_of(&item);
        let mut req = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(condition);
        for (k, v) in names {
            req = req.expression_attribute_names(*k, *v);
        }
        for (k, v) in values {
            req = req.expression_attribute_values(k, v);
        }
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => match key {
                Some((pk, sk)) if self.written_by(&pk, &sk, &token).await? => Ok(()),
                _ => Err(StoreError::Conflict(conflict)),
            },
            Err(e) => Err(unavailable(e)),
        }
    }

    /// Whether the item under `pk`/`sk` was last written with `token` (a consistent read).
    async fn written_by(&self, pk: &str, sk: &str, token: &str) -> Result<bool, StoreError> {
        Ok(self
            .get(pk.to_owned(), sk)
            .await?
            .is_some_and(|item| item.get(WRITE_TOKEN).and_then(|v| v.as_s().ok()).is_some_and(|t| t == token)))
    }

    /// Query every page of a key condition (used where the result is small by design).
    async fn query_all(
        &self,
        index: Option<&str>,
        pk_name: &str,
        pk: String,
        sk_prefix: Option<String>,
        forward: bool,
    ) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            self.count();
            let mut req = self
                .client
                .query()
                .table_name(&self.table)
                .set_index_name(index.map(str::to_owned))
                .scan_index_forward(forward)
                .expression_attribute_names("#pk", pk_name)
                .expression_attribute_values(":pk", s(pk.clone()))
                .set_exclusive_start_key(start.take());
            req = match &sk_prefix {
                Some(prefix) => req
                    .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                    .expression_attribute_names("#sk", if index.is_some() { GSI2SK } else { SK })
                    .expression_attribute_values(":prefix", s(prefix.clone())),
                None => req.key_condition_expression("#pk = :pk"),
            };
            if index.is_none() {
                req = req.consistent_read(true);
            }
            let out = req.send().await.map_err(unavailable)?;
            items.extend(out.items.unwrap_or_default());
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => return Ok(items),
            }
        }
    }

    /// Every item of the partition `pk` whose sort key is between `from` and `to` (inclusive),
    /// in key order, every page (used where the result is small by design).
    async fn query_between(&self, pk: String, from: String, to: String) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            self.count();
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("PK = :pk AND SK BETWEEN :from AND :to")
                .expression_attribute_values(":pk", s(pk.clone()))
                .expression_attribute_values(":from", s(from.clone()))
                .expression_attribute_values(":to", s(to.clone()))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            items.extend(out.items.unwrap_or_default());
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => return Ok(items),
            }
        }
    }

    /// The items of one sparse due partition on GSI1 (sort key `{due time}#…`) due at or
    /// before `until`, oldest first, at most `limit` (1–1,000).
    async fn due_in(&self, gsi1pk: &str, until: Timestamp, limit: usize) -> Result<Vec<Item>, StoreError> {
        self.count();
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression("GSI1PK = :pk AND GSI1SK <= :upper")
            .expression_attribute_values(":pk", s(gsi1pk))
            .expression_attribute_values(":upper", s(format!("{}#~", due_time_key(until))))
            .limit(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(out.items.unwrap_or_default())
    }

    /// Consistent reads of many keys in the table (100 a request, unprocessed keys retried);
    /// missing items are simply absent from the result.
    async fn batch_get(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        for chunk in keys.chunks(100) {
            let mut pending = Some(
                KeysAndAttributes::builder()
                    .set_keys(Some(chunk.to_vec()))
                    .consistent_read(true)
                    .build()
                    .map_err(build_error)?,
            );
            while let Some(request) = pending.take() {
                self.count();
                // One unit per key beyond the one every read counts.
                let keys = request.keys().len() as u64;
                self.usage.read_units.fetch_add(keys.saturating_sub(1), Ordering::Relaxed);
                let out = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, request)
                    .send()
                    .await
                    .map_err(unavailable)?;
                items.extend(out.responses.and_then(|mut r| r.remove(&self.table)).unwrap_or_default());
                pending = out
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(&self.table))
                    .filter(|k| !k.keys().is_empty());
            }
        }
        Ok(items)
    }

    /// One page of an index partition (at most `limit` items, 1–1,000), with the cursor of
    /// the next page: the attribution index and the activity feed page this way.
    #[allow(clippy::too_many_arguments)]
    async fn index_page(
        &self,
        index: Option<&str>,
        pk_name: &str,
        pk: String,
        sk_prefix: Option<&str>,
        forward: bool,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<Item>, Option<String>), StoreError> {
        let start = match cursor {
            Some(c) => Some(decode_cursor(&c, (pk_name, &pk))?),
            None => None,
        };
        self.count();
        let mut req = self
            .client
            .query()
            .table_name(&self.table)
            .set_index_name(index.map(str::to_owned))
            .expression_attribute_names("#pk", pk_name)
            .expression_attribute_values(":pk", s(pk))
            .scan_index_forward(forward)
            .limit(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000))
            .set_exclusive_start_key(start);
        req = match sk_prefix {
            Some(prefix) => req
                .key_condition_expression("#pk = :pk AND begins_with(SK, :prefix)")
                .expression_attribute_values(":prefix", s(prefix)),
            None => req.key_condition_expression("#pk = :pk"),
        };
        let out = req.send().await.map_err(unavailable)?;
        let next = out.last_evaluated_key.filter(|k| !k.is_empty()).map(|k| encode_cursor(&k));
        Ok((out.items.unwrap_or_default(), next))
    }

    fn plain_put(&self, item: Item) -> Result<TransactWriteItem, StoreError> {
        Ok(TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(item))
                    .build()
                    .map_err(build_error)?,
            )
            .build())
    }
}

fn unavailable<E: std::error::Error + Send + Sync + 'static>(e: SdkError<E>) -> StoreError {
    let code = e.as_service_error().map(|se| format!("{se}")).unwrap_or_else(|| format!("{e:?}"));
    StoreError::Unavailable(code.into())
}

fn build_error(e: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}

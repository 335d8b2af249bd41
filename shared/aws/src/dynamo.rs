//! The DynamoDB [`TaskStore`]: one table, conditional writes for optimistic locking, and
//! transactions for everything that must hold across items (ARCHITECTURE.md, "Data").
//!
//! Entities are (de)serialised with serde_dynamo; the key attributes are added here from
//! [`crate::keys`]. A transaction's cancellation reasons are mapped back, item by item, to the
//! [`Conflict`] each condition stands for.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, Delete, KeysAndAttributes, Put, TransactWriteItem, Update};
use jiff::Timestamp;
use jiff::civil::Date;
use serde::Serialize;
use serde::de::DeserializeOwned;

use openloop_core::account::{Account, SystemConfig};
use openloop_core::action::{ActionClaim, ActionRecord};
use openloop_core::connector::{ConnectorHealth, HealthChange};
use openloop_core::error::{Conflict, StoreError};
use openloop_core::flood::{CreationCounts, CreationQuota, Limit, closes_task};
use openloop_core::ids::{AccountId, Email, MemberId, TaskId};
use openloop_core::interaction::{InteractionOutcome, SharedOutcome};
use openloop_core::limits::DUE_INDEX_SHARDS;
use openloop_core::member::{MemberFacts, SendLedger};
use openloop_core::metrics::{DailyMetrics, MetricsCursor};
use openloop_core::owner_notice::OwnerNotice;
use openloop_core::ports::{ActivityEntry, SendEffect, SendSnapshot, TaskCommit, TaskHistory, TaskQuery, TaskStore, dates_around};
use openloop_core::recurring::RecurringTemplate;
use openloop_core::task::{ConversationMessage, LogEntry, OutboundMessage, Task};
use openloop_core::work::{DueEntry, due_at, due_shard, due_sort_key, due_time_key};

use crate::keys::*;

type Item = HashMap<String, AttributeValue>;

/// See the module docs. Counts its requests, for the bench.
#[derive(Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
    requests: Arc<AtomicU64>,
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
            requests: Arc::new(AtomicU64::new(0)),
        }
    }

    /// DynamoDB requests made so far by this store (and its clones).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bulk-load tasks without conditions or log entries — for seeding benchmarks and
    /// migrations, never for the engine's own writes.
    pub async fn import_tasks(&self, tasks: &[Task]) -> Result<(), StoreError> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        for chunk in tasks.chunks(25) {
            let mut requests = Vec::new();
            for task in chunk {
                requests.push(
                    WriteRequest::builder()
                        .put_request(
                            PutRequest::builder()
                                .set_item(Some(self.task_put(task)?))
                                .build()
                                .map_err(build_error)?,
                        )
                        .build(),
                );
            }
            let mut pending = HashMap::from([(self.table.clone(), requests)]);
            while !pending.is_empty() {
                self.count();
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

    async fn transact(&self, items: Vec<(TransactWriteItem, Option<Conflict>)>) -> Result<(), StoreError> {
        self.count();
        let (writes, kinds): (Vec<_>, Vec<_>) = items.into_iter().unzip();
        match self.client.transact_write_items().set_transact_items(Some(writes)).send().await {
            Ok(_) => Ok(()),
            Err(SdkError::ServiceError(e)) => match e.err() {
                TransactWriteItemsError::TransactionCanceledException(ex) => {
                    let reasons = ex.cancellation_reasons();
                    let failed = reasons.iter().enumerate().find_map(|(i, r)| match r.code() {
                        // Another transaction held a creation counter: not a reached limit,
                        // so worth another try (reported like a lost version race).
                        Some("TransactionConflict") if kinds.get(i).copied().flatten().and_then(Limit::from_conflict).is_some() => {
                            Some(Conflict::Version)
                        }
                        Some("ConditionalCheckFailed") | Some("TransactionConflict") => {
                            Some(kinds.get(i).copied().flatten().unwrap_or(Conflict::Version))
                        }
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

    /// An unconditional put.
    async fn put(&self, item: Item) -> Result<(), StoreError> {
        self.count();
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
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => {
                Err(StoreError::Conflict(conflict))
            }
            Err(e) => Err(unavailable(e)),
        }
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

    fn task_put(&self, task: &Task) -> Result<Item, StoreError> {
        let mut item = keyed(task, account_pk(task.account_id), task_sk(task.id), "task")?;
        item.insert(GSI2PK.into(), s(tasks_gsi2pk(task.account_id)));
        item.insert(GSI2SK.into(), s(task_sk(task.id)));
        if let Some(due) = due_at(task) {
            item.insert(GSI1PK.into(), s(due_gsi1pk(due_shard(&task.id, DUE_INDEX_SHARDS))));
            item.insert(GSI1SK.into(), s(due_sort_key(due, &task.id)));
        } else if let Some(until) = task.attribution_until {
            item.insert(GSI1PK.into(), s(attribution_gsi1pk(due_shard(&task.id, DUE_INDEX_SHARDS))));
            item.insert(GSI1SK.into(), s(due_sort_key(until, &task.id)));
        }
        Ok(item)
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

    fn log_item(&self, task: &Task, entry: &LogEntry) -> Result<Item, StoreError> {
        let mut item = keyed(entry, account_pk(task.account_id), log_sk(task.id, entry.id), "log")?;
        item.insert(GSI2PK.into(), s(activity_gsi2pk(task.account_id)));
        item.insert(GSI2SK.into(), s(activity_gsi2sk(entry.at, entry.id)));
        item.insert("task_id".into(), s(task.id.to_string()));
        item.insert("task_type".into(), s(task.task_type.clone()));
        item.insert("member_id".into(), s(task.member.id.as_str()));
        Ok(item)
    }

    fn message_item(&self, task: &Task, message: &ConversationMessage) -> Result<Item, StoreError> {
        keyed(
            message,
            account_pk(task.account_id),
            conversation_sk(task.id, message.id),
            "conversation",
        )
    }

    fn outbound_item(&self, account: AccountId, message: &OutboundMessage) -> Result<Item, StoreError> {
        keyed(
            message,
            account_pk(account),
            outbound_sk(message.task_id, message.touch),
            "outbound",
        )
    }
}

/// A reply-routing item (see `keys::task_route_pk`).
fn route_item(pk: String, task: &Task) -> Item {
    HashMap::from([
        (PK.into(), s(pk)),
        (SK.into(), s(ROUTE_SK)),
        (KIND.into(), s("route")),
        ("account_id".into(), s(task.account_id.to_string())),
        ("task_id".into(), s(task.id.to_string())),
    ])
}

impl DynamoStore {
    /// One creation counter: `ADD n 1`, below `max` if given, forgotten at `ttl` if given.
    fn counter_add(
        &self,
        account: AccountId,
        sk: String,
        by: i64,
        max: Option<u32>,
        ttl: Option<i64>,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut expression = "ADD #n :by SET #kind = :kind".to_owned();
        let mut update = Update::builder()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(sk))
            .expression_attribute_names("#n", "n")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":by", n(by))
            .expression_attribute_values(":kind", s("creation_counter"));
        if let Some(ttl) = ttl {
            expression.push_str(", #ttl = :ttl");
            update = update
                .expression_attribute_names("#ttl", TTL)
                .expression_attribute_values(":ttl", n(ttl));
        }
        if let Some(max) = max {
            update = update
                .condition_expression("attribute_not_exists(#n) OR #n < :max")
                .expression_attribute_values(":max", n(max));
        }
        let update = update.update_expression(expression).build().map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// The counters a new open task moves (see [`TaskStore::create_task_within`]), each with
    /// the conflict its condition stands for.
    fn creation_counter_writes(
        &self,
        task: &Task,
        quota: &CreationQuota,
    ) -> Result<Vec<(TransactWriteItem, Option<Conflict>)>, StoreError> {
        let account = task.account_id;
        let mut writes = vec![(
            self.counter_add(account, OPEN_TASKS_SK.into(), 1, quota.active_max, None)?,
            Some(Conflict::ActiveTasks),
        )];
        if let Some(date) = quota.date {
            let ttl = Some(quota.counters_expire_at.as_second());
            writes.push((
                self.counter_add(account, created_sk(date), 1, quota.daily_max, ttl)?,
                Some(Conflict::DailyTasks),
            ));
            if let Some(agent) = &quota.agent {
                writes.push((
                    self.counter_add(account, agent_created_sk(date), 1, Some(agent.daily_max), ttl)?,
                    Some(Conflict::AgentTasks),
                ));
                writes.push((
                    self.counter_add(
                        account,
                        agent_member_created_sk(date, &agent.member),
                        1,
                        Some(agent.member_max),
                        ttl,
                    )?,
                    Some(Conflict::MemberAgentTasks),
                ));
            }
        }
        Ok(writes)
    }
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn unavailable<E: std::error::Error + Send + Sync + 'static>(e: SdkError<E>) -> StoreError {
    let code = e.as_service_error().map(|se| format!("{se}")).unwrap_or_else(|| format!("{e:?}"));
    StoreError::Unavailable(code.into())
}

fn build_error(e: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError::Unavailable(Box::new(e))
}

/// An entity's item: its serde form plus its keys and kind.
fn keyed<T: Serialize>(value: &T, pk: String, sk: String, kind: &str) -> Result<Item, StoreError> {
    let mut item = to_item(value)?;
    item.insert(PK.into(), s(pk));
    item.insert(SK.into(), s(sk));
    item.insert(KIND.into(), s(kind));
    Ok(item)
}

fn account_item(account: &Account) -> Result<Item, StoreError> {
    let mut item = keyed(account, account_pk(account.id), PROFILE_SK.into(), "account")?;
    item.insert(GSI2PK.into(), s(ACCOUNTS_GSI2PK));
    item.insert(GSI2SK.into(), s(account.id.to_string()));
    Ok(item)
}

fn to_item<T: Serialize>(value: &T) -> Result<Item, StoreError> {
    serde_dynamo::to_item(value).map_err(|e| StoreError::Corrupt {
        key: std::any::type_name::<T>().into(),
        reason: e.to_string(),
    })
}

fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, StoreError> {
    let key = format!(
        "{:?}/{:?}",
        item.get(PK).and_then(|v| v.as_s().ok()),
        item.get(SK).and_then(|v| v.as_s().ok())
    );
    serde_dynamo::from_item(item).map_err(|e| StoreError::Corrupt {
        key,
        reason: e.to_string(),
    })
}

/// A member item holds the facts (under `facts`) and the send ledger (`ledger`, `ledger_version`).
fn member_from_item(item: &Item, member: &MemberId) -> Result<(MemberFacts, SendLedger), StoreError> {
    let facts = match item.get("facts") {
        Some(AttributeValue::M(m)) => from_item::<MemberFacts>(m.clone())?,
        _ => MemberFacts::new(member.clone()),
    };
    let mut ledger = SendLedger::default();
    if let Some(AttributeValue::M(m)) = item.get("ledger") {
        for (k, v) in m {
            if let Some(at) = v.as_s().ok().and_then(|t| t.parse::<Timestamp>().ok()) {
                ledger.sends.insert(k.clone(), at);
            }
        }
    }
    ledger.version = item
        .get("ledger_version")
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Ok((facts, ledger))
}

fn sk_of(item: &Item) -> &str {
    item.get(SK).and_then(|v| v.as_s().ok()).map(String::as_str).unwrap_or("")
}

fn encode_cursor(key: &Item) -> String {
    let map: HashMap<&str, &str> = key
        .iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_s().ok()?.as_str())))
        .collect();
    serde_json::to_string(&map).map(|j| hex(j.as_bytes())).unwrap_or_default()
}

fn decode_cursor(cursor: &str, expect: (&str, &str)) -> Result<Item, StoreError> {
    let bytes = unhex(cursor).ok_or(StoreError::InvalidCursor)?;
    let map: HashMap<String, String> = serde_json::from_slice(&bytes).map_err(|_| StoreError::InvalidCursor)?;
    if map.get(expect.0).map(String::as_str) != Some(expect.1) {
        return Err(StoreError::InvalidCursor);
    }
    Ok(map.into_iter().map(|(k, v)| (k, s(v))).collect())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 4096 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[async_trait]
impl TaskStore for DynamoStore {
    async fn create_account(&self, account: &Account, api_token_hash: &str) -> Result<(), StoreError> {
        let item = account_item(account)?;
        let token: Item = HashMap::from([
            (PK.into(), s(token_pk(api_token_hash))),
            (SK.into(), s(TOKEN_SK)),
            (KIND.into(), s("api_token")),
            ("account_id".into(), s(account.id.to_string())),
        ]);
        let absent = |item: Item| -> Result<TransactWriteItem, StoreError> {
            Ok(TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(item))
                        .condition_expression("attribute_not_exists(PK)")
                        .build()
                        .map_err(build_error)?,
                )
                .build())
        };
        self.transact(vec![
            (absent(item)?, Some(Conflict::AlreadyExists)),
            (absent(token)?, Some(Conflict::AlreadyExists)),
        ])
        .await
    }

    async fn get_account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        self.get(account_pk(id), PROFILE_SK).await?.map(from_item).transpose()
    }

    async fn account_for_token(&self, api_token_hash: &str) -> Result<Option<AccountId>, StoreError> {
        let Some(item) = self.get(token_pk(api_token_hash), TOKEN_SK).await? else {
            return Ok(None);
        };
        let id = item.get("account_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok());
        Ok(id)
    }

    async fn save_account(&self, account: &Account) -> Result<(), StoreError> {
        let item = account_item(account)?;
        self.put_conditional(
            item,
            "#v = :v",
            &[("#v", "version")],
            vec![(":v", n(account.version.saturating_sub(1)))],
            Conflict::Version,
        )
        .await
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, StoreError> {
        let items = self.query_all(Some(GSI2), GSI2PK, ACCOUNTS_GSI2PK.into(), None, true).await?;
        items.into_iter().map(from_item).collect()
    }

    async fn system_config(&self) -> Result<SystemConfig, StoreError> {
        Ok(self
            .get(SYSTEM_PK.into(), CONFIG_SK)
            .await?
            .map(from_item)
            .transpose()?
            .unwrap_or_default())
    }

    async fn save_system_config(&self, config: &SystemConfig) -> Result<(), StoreError> {
        self.put(keyed(config, SYSTEM_PK.into(), CONFIG_SK.into(), "system_config")?).await
    }

    async fn save_template(&self, template: &RecurringTemplate) -> Result<(), StoreError> {
        let mut item = keyed(
            template,
            account_pk(template.account_id),
            template_sk(template.id),
            "recurring_template",
        )?;
        if let (true, Some(at)) = (template.enabled, template.next_at) {
            item.insert(GSI1PK.into(), s(TEMPLATES_DUE_GSI1PK));
            item.insert(GSI1SK.into(), s(format!("{}#{}", due_time_key(at), template.id)));
        }
        self.count();
        let req = self.client.put_item().table_name(&self.table).set_item(Some(item));
        let req = if template.version <= 1 {
            req.condition_expression("attribute_not_exists(PK)")
        } else {
            req.condition_expression("version = :pv")
                .expression_attribute_values(":pv", n(template.version - 1))
        };
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => {
                Err(StoreError::Conflict(Conflict::Version))
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn list_templates(&self, account: AccountId) -> Result<Vec<RecurringTemplate>, StoreError> {
        let items = self
            .query_all(None, PK, account_pk(account), Some(TEMPLATE_PREFIX.into()), true)
            .await?;
        items.into_iter().map(from_item).collect()
    }

    async fn due_templates(&self, until: Timestamp, limit: usize) -> Result<Vec<RecurringTemplate>, StoreError> {
        self.due_in(TEMPLATES_DUE_GSI1PK, until, limit)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        self.count();
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(template_sk(id)))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    async fn create_task(&self, task: &Task, log: &LogEntry, messages: &[ConversationMessage]) -> Result<(), StoreError> {
        self.create_task_within(task, log, messages, &CreationQuota::unlimited()).await
    }

    async fn active_task(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<TaskId>, StoreError> {
        let Some(item) = self.get(account_pk(account), &active_sk(member, task_type)).await? else {
            return Ok(None);
        };
        Ok(item.get("task_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))
    }

    async fn member_active_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, StoreError> {
        let pk = account_pk(account);
        let guards = self
            .query_all(None, PK, pk.clone(), Some(active_member_prefix(member)), true)
            .await?;
        let ids: Vec<TaskId> = guards
            .iter()
            .filter_map(|g| g.get("task_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))
            .collect();
        let mut tasks = self.get_tasks(account, &ids).await?;
        tasks.retain(Task::is_active);
        tasks.sort_by_key(|t| t.id);
        Ok(tasks)
    }

    async fn get_tasks(&self, account: AccountId, ids: &[TaskId]) -> Result<Vec<Task>, StoreError> {
        let pk = account_pk(account);
        let keys = ids
            .iter()
            .map(|id| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(task_sk(*id)))]))
            .collect();
        let found: HashMap<TaskId, Task> = self
            .batch_get(keys)
            .await?
            .into_iter()
            .map(|item| from_item::<Task>(item).map(|t| (t.id, t)))
            .collect::<Result<_, _>>()?;
        Ok(ids.iter().filter_map(|id| found.get(id).cloned()).collect())
    }

    async fn get_task(&self, account: AccountId, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.get(account_pk(account), &task_sk(id)).await?.map(from_item).transpose()
    }

    async fn task_history(&self, account: AccountId, id: TaskId) -> Result<Option<TaskHistory>, StoreError> {
        // One query returns the task, its log and its conversation (they share the prefix).
        let items = self.query_all(None, PK, account_pk(account), Some(task_sk(id)), true).await?;
        let (mut task, mut log, mut messages) = (None, Vec::new(), Vec::new());
        let task_key = task_sk(id);
        for item in items {
            let sk = sk_of(&item).to_owned();
            if sk == task_key {
                task = Some(from_item::<Task>(item)?);
            } else if sk.starts_with(&format!("{task_key}#LOG#")) {
                log.push(from_item::<LogEntry>(item)?);
            } else if sk.starts_with(&format!("{task_key}#CONV#")) {
                messages.push(from_item::<ConversationMessage>(item)?);
            }
        }
        let Some(task) = task else { return Ok(None) };
        let outbound = self.outbound(account, id).await?;
        Ok(Some(TaskHistory {
            task,
            log,
            messages,
            outbound,
        }))
    }

    async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), StoreError> {
        let gsi2pk = tasks_gsi2pk(account);
        let mut start = match &query.cursor {
            Some(c) => Some(decode_cursor(c, (GSI2PK, &gsi2pk))?),
            None => None,
        };
        let limit = query.limit.clamp(1, 200);
        let mut tasks = Vec::new();
        loop {
            let mut filters = Vec::new();
            let mut req = self
                .client
                .query()
                .table_name(&self.table)
                .index_name(GSI2)
                .key_condition_expression("GSI2PK = :pk")
                .expression_attribute_values(":pk", s(gsi2pk.clone()))
                .scan_index_forward(false)
                .limit(i32::try_from(limit - tasks.len()).unwrap_or(1))
                .set_exclusive_start_key(start.take());
            if let Some(status) = query.status {
                filters.push("#status = :status");
                req = req
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_values(":status", s(status.as_str()));
            }
            if let Some(member) = &query.member_id {
                filters.push("#member.#id = :member");
                req = req
                    .expression_attribute_names("#member", "member")
                    .expression_attribute_names("#id", "id")
                    .expression_attribute_values(":member", s(member.as_str()));
            }
            if !filters.is_empty() {
                req = req.filter_expression(filters.join(" AND "));
            }
            self.count();
            let out = req.send().await.map_err(unavailable)?;
            for item in out.items.unwrap_or_default() {
                tasks.push(from_item::<Task>(item)?);
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => {
                    if tasks.len() >= limit {
                        return Ok((tasks, Some(encode_cursor(&key))));
                    }
                    start = Some(key);
                }
                _ => return Ok((tasks, None)),
            }
        }
    }

    async fn commit(&self, commit: &TaskCommit) -> Result<(), StoreError> {
        let task = &commit.task;
        let pk = account_pk(task.account_id);
        let mut writes = Vec::new();
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(self.task_put(task)?))
            .condition_expression("#v = :v")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":v", n(commit.expected_version))
            .build()
            .map_err(build_error)?;
        writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::Version)));
        for entry in &commit.log {
            writes.push((self.plain_put(self.log_item(task, entry)?)?, None));
        }
        for message in &commit.messages {
            writes.push((self.plain_put(self.message_item(task, message)?)?, None));
        }
        let member_key = |member: &MemberId| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(member_sk(member)))]);
        let daily_key = |date: &Date| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(sends_sk(*date)))]);
        match &commit.send {
            Some(SendEffect::Reserve {
                outbound,
                member_id,
                ledger,
                daily_date,
                daily_limit,
            }) => {
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(self.outbound_item(task.account_id, outbound)?))
                    .condition_expression("attribute_not_exists(PK) OR #status = :failed")
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_values(":failed", s("failed"))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::OutboundExists)));
                let sends: Item = ledger.sends.iter().map(|(k, at)| (k.clone(), s(at.to_string()))).collect();
                let mut update = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(member_key(member_id)))
                    .update_expression("SET ledger = :ledger, ledger_version = :nv, #kind = :kind")
                    .expression_attribute_names("#kind", KIND)
                    .expression_attribute_values(":ledger", AttributeValue::M(sends))
                    .expression_attribute_values(":nv", n(ledger.version))
                    .expression_attribute_values(":kind", s("member"));
                update = if ledger.version <= 1 {
                    update.condition_expression("attribute_not_exists(ledger_version)")
                } else {
                    update
                        .condition_expression("ledger_version = :pv")
                        .expression_attribute_values(":pv", n(ledger.version - 1))
                };
                writes.push((
                    TransactWriteItem::builder().update(update.build().map_err(build_error)?).build(),
                    Some(Conflict::MemberLedger),
                ));
                let daily = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(daily_key(daily_date)))
                    .update_expression("ADD sent :one SET #kind = :kind")
                    .condition_expression("attribute_not_exists(sent) OR sent < :limit")
                    .expression_attribute_names("#kind", KIND)
                    .expression_attribute_values(":one", n(1))
                    .expression_attribute_values(":limit", n(*daily_limit))
                    .expression_attribute_values(":kind", s("daily_sends"))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().update(daily).build(), Some(Conflict::DailyLimit)));
            }
            Some(SendEffect::Record { outbound }) => {
                writes.push((self.plain_put(self.outbound_item(task.account_id, outbound)?)?, None));
                writes.push((self.plain_put(route_item(task_route_pk(task.id), task))?, None));
                for id in std::iter::once(&outbound.message_id).chain(&outbound.provider_message_id) {
                    writes.push((self.plain_put(route_item(message_route_pk(id), task))?, None));
                }
            }
            Some(SendEffect::Release {
                outbound,
                member_id,
                ledger_key,
                daily_date,
            }) => {
                writes.push((self.plain_put(self.outbound_item(task.account_id, outbound)?)?, None));
                let member = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(member_key(member_id)))
                    .update_expression("REMOVE ledger.#k ADD ledger_version :one")
                    .expression_attribute_names("#k", ledger_key)
                    .expression_attribute_values(":one", n(1))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().update(member).build(), Some(Conflict::MemberLedger)));
                let daily = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(daily_key(daily_date)))
                    .update_expression("ADD sent :minus")
                    .expression_attribute_values(":minus", n(-1))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().update(daily).build(), None));
            }
            None => {}
        }
        // Closing frees the active guard; revising a task that was already closed (attribution)
        // leaves it alone, as a newer task of the member and type may hold it by now.
        let revises_closed = !commit.log.is_empty() && commit.log.iter().all(|e| e.from_status.is_some_and(|f| f.is_terminal()));
        if !task.is_active() && !revises_closed {
            let delete = Delete::builder()
                .table_name(&self.table)
                .key(PK, s(pk.clone()))
                .key(SK, s(active_sk(&task.member.id, &task.task_type)))
                .condition_expression("attribute_not_exists(PK) OR task_id = :t")
                .expression_attribute_values(":t", s(task.id.to_string()))
                .build()
                .map_err(build_error)?;
            writes.push((TransactWriteItem::builder().delete(delete).build(), None));
        }
        if closes_task(commit) {
            writes.push((self.counter_add(task.account_id, OPEN_TASKS_SK.into(), -1, None, None)?, None));
        }
        // The learning record rides on the close (and on every revision of a closed task):
        // one read of the account's settings for its time zone and business type.
        if !task.is_active() {
            let settings = self.get_account(task.account_id).await?.map(|a| a.settings);
            if let Some(record) = InteractionOutcome::of(task, settings.as_ref()) {
                let private = keyed(&record, pk.clone(), interaction_sk(task.id), "interaction")?;
                writes.push((self.plain_put(private)?, None));
                let shared = keyed(
                    &record.shared,
                    learning_pk(&record.month()),
                    learning_sk(&record.shared.task_type, task.id),
                    "learning",
                )?;
                writes.push((self.plain_put(shared)?, None));
            }
        }
        self.transact(writes).await
    }

    async fn due(
        &self,
        shard: u32,
        until: Timestamp,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<DueEntry>, Option<String>), StoreError> {
        let pk = due_gsi1pk(shard);
        let start = match cursor {
            Some(c) => Some(decode_cursor(&c, (GSI1PK, &pk))?),
            None => None,
        };
        // Everything at or before `until`: the id part sorts below '~'.
        let upper = format!("{}#~", due_time_key(until));
        self.count();
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression("GSI1PK = :pk AND GSI1SK <= :upper")
            .expression_attribute_values(":pk", s(pk))
            .expression_attribute_values(":upper", s(upper))
            .limit(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(unavailable)?;
        let mut entries = Vec::new();
        for item in out.items.unwrap_or_default() {
            let task: Task = from_item(item)?;
            let Some(due_at) = due_at(&task) else {
                continue;
            };
            entries.push(DueEntry {
                account_id: task.account_id,
                task_id: task.id,
                due_at,
                status: task.status,
                touch: task.touch,
            });
        }
        let next = out.last_evaluated_key.filter(|k| !k.is_empty()).map(|k| encode_cursor(&k));
        Ok((entries, next))
    }

    async fn outbound(&self, account: AccountId, task: TaskId) -> Result<Vec<OutboundMessage>, StoreError> {
        let items = self
            .query_all(None, PK, account_pk(account), Some(outbound_prefix(task)), true)
            .await?;
        items.into_iter().map(from_item).collect()
    }

    async fn get_member(&self, account: AccountId, member: &MemberId) -> Result<Option<(MemberFacts, SendLedger)>, StoreError> {
        let item = self.get(account_pk(account), &member_sk(member)).await?;
        item.map(|item| member_from_item(&item, member)).transpose()
    }

    async fn send_snapshot(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
    ) -> Result<SendSnapshot, StoreError> {
        let pk = account_pk(account);
        let key = |pk: String, sk: String| HashMap::from([(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))]);
        let mut keys = vec![
            key(SYSTEM_PK.into(), CONFIG_SK.into()),
            key(pk.clone(), PROFILE_SK.into()),
            key(pk.clone(), member_sk(member)),
        ];
        if let Some(email) = email {
            keys.push(key(pk.clone(), suppress_sk(email)));
        }
        let dates = dates_around(around);
        keys.extend(dates.iter().map(|d| key(pk.clone(), sends_sk(*d))));
        let items = self.batch_get(keys).await?;
        let mut snapshot = SendSnapshot {
            daily: dates.iter().map(|d| (*d, 0)).collect(),
            ..SendSnapshot::default()
        };
        for item in items {
            let sk = sk_of(&item).to_owned();
            if sk == CONFIG_SK {
                snapshot.system = from_item(item)?;
            } else if sk == PROFILE_SK {
                snapshot.account = Some(from_item(item)?);
            } else if sk.starts_with("MEMBER#") {
                let (facts, ledger) = member_from_item(&item, member)?;
                snapshot.ledger = ledger;
                snapshot.facts = item.contains_key("facts").then_some(facts);
            } else if sk.starts_with("SUPPRESS#") {
                snapshot.suppressed = true;
            } else if let Some(date) = sk.strip_prefix("SENDS#").and_then(|d| d.parse::<Date>().ok()) {
                let sent = item
                    .get("sent")
                    .and_then(|v| v.as_n().ok())
                    .and_then(|v| v.parse::<i64>().ok())
                    .unwrap_or(0);
                if let Some(entry) = snapshot.daily.iter_mut().find(|(d, _)| *d == date) {
                    entry.1 = u32::try_from(sent.max(0)).unwrap_or(0);
                }
            }
        }
        Ok(snapshot)
    }

    async fn save_member_facts(&self, account: AccountId, facts: &MemberFacts) -> Result<(), StoreError> {
        self.count();
        let mut req = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(member_sk(&facts.member_id)))
            .update_expression("SET facts = :f, facts_version = :v, #kind = :kind")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":f", AttributeValue::M(to_item(facts)?))
            .expression_attribute_values(":v", n(facts.version))
            .expression_attribute_values(":kind", s("member"));
        req = if facts.version <= 1 {
            req.condition_expression("attribute_not_exists(facts_version)")
        } else {
            req.condition_expression("facts_version = :pv")
                .expression_attribute_values(":pv", n(facts.version - 1))
        };
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => {
                Err(StoreError::Conflict(Conflict::MemberFacts))
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn daily_sends(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        let item = self.get(account_pk(account), &sends_sk(date)).await?;
        Ok(item
            .and_then(|i| i.get("sent").and_then(|v| v.as_n().ok()).and_then(|v| v.parse::<i64>().ok()))
            .map_or(0, |v| u32::try_from(v.max(0)).unwrap_or(0)))
    }

    async fn is_suppressed(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        Ok(self.get(account_pk(account), &suppress_sk(email)).await?.is_some())
    }

    async fn put_suppression(&self, account: AccountId, email: &Email, reason: &str, at: Timestamp) -> Result<(), StoreError> {
        self.count();
        self.client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(account_pk(account)))
            .item(SK, s(suppress_sk(email)))
            .item(KIND, s("suppression"))
            .item("email", s(email.as_str()))
            .item("reason", s(reason))
            .item("created_at", s(at.to_string()))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn delete_suppression(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        self.count();
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(suppress_sk(email)))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    async fn claim_webhook(&self, source: &str, id: &str, now: Timestamp, expires_at: Timestamp) -> Result<bool, StoreError> {
        // TTL deletes late (and never in the emulator): an expired record counts as absent.
        let item: Item = HashMap::from([
            (PK.into(), s(hook_pk(source, id))),
            (SK.into(), s(HOOK_SK)),
            (KIND.into(), s("processed_webhook")),
            (TTL.into(), n(expires_at.as_second())),
            ("received_at".into(), s(now.to_string())),
        ]);
        match self
            .put_conditional(
                item,
                "attribute_not_exists(PK) OR #ttl < :now",
                &[("#ttl", TTL)],
                vec![(":now", n(now.as_second()))],
                Conflict::AlreadyExists,
            )
            .await
        {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn release_webhook(&self, source: &str, id: &str) -> Result<(), StoreError> {
        self.count();
        self.client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(hook_pk(source, id)))
            .key(SK, s(HOOK_SK))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn attribution_watch(&self, shard: u32, limit: usize, cursor: Option<String>) -> Result<(Vec<Task>, Option<String>), StoreError> {
        let (items, next) = self
            .index_page(Some(GSI1), GSI1PK, attribution_gsi1pk(shard), None, true, limit, cursor)
            .await?;
        let tasks = items.into_iter().map(from_item::<Task>).collect::<Result<Vec<_>, _>>()?;
        Ok((tasks, next))
    }

    async fn activity(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<ActivityEntry>, Option<String>), StoreError> {
        let (items, next) = self
            .index_page(Some(GSI2), GSI2PK, activity_gsi2pk(account), None, false, limit, cursor)
            .await?;
        let mut entries = Vec::new();
        for item in items {
            let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned().unwrap_or_default();
            let corrupt = |reason: &str| StoreError::Corrupt {
                key: sk_of(&item).to_owned(),
                reason: reason.to_owned(),
            };
            let task_id: TaskId = text("task_id").parse().map_err(|_| corrupt("task_id"))?;
            let member_id = MemberId::parse(&text("member_id")).map_err(|_| corrupt("member_id"))?;
            let task_type = text("task_type");
            entries.push(ActivityEntry {
                task_id,
                task_type,
                member_id,
                entry: from_item::<LogEntry>(item)?,
            });
        }
        Ok((entries, next))
    }

    async fn task_account(&self, task: TaskId) -> Result<Option<AccountId>, StoreError> {
        let item = self.get(task_route_pk(task), ROUTE_SK).await?;
        Ok(item.as_ref().and_then(|i| attr_parse(i, "account_id")))
    }

    async fn count_ai_call(&self, account: AccountId, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        self.count_up(account, ai_calls_sk(date), "ai_calls", limit, None).await
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

    async fn message_route(&self, message_id: &str) -> Result<Option<(AccountId, TaskId)>, StoreError> {
        let item = self.get(message_route_pk(message_id), ROUTE_SK).await?;
        Ok(item
            .as_ref()
            .and_then(|i| Some((attr_parse(i, "account_id")?, attr_parse(i, "task_id")?))))
    }

    async fn create_task_within(
        &self,
        task: &Task,
        log: &LogEntry,
        messages: &[ConversationMessage],
        quota: &CreationQuota,
    ) -> Result<(), StoreError> {
        let mut writes = Vec::new();
        if task.is_active() {
            let guard: Item = HashMap::from([
                (PK.into(), s(account_pk(task.account_id))),
                (SK.into(), s(active_sk(&task.member.id, &task.task_type))),
                (KIND.into(), s("active_guard")),
                ("task_id".into(), s(task.id.to_string())),
            ]);
            let put = Put::builder()
                .table_name(&self.table)
                .set_item(Some(guard))
                .condition_expression("attribute_not_exists(PK)")
                .build()
                .map_err(build_error)?;
            writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::ActiveTask)));
        }
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(self.task_put(task)?))
            .condition_expression("attribute_not_exists(PK)")
            .build()
            .map_err(build_error)?;
        writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::AlreadyExists)));
        writes.push((self.plain_put(self.log_item(task, log)?)?, None));
        for message in messages {
            writes.push((self.plain_put(self.message_item(task, message)?)?, None));
        }
        if task.is_active() {
            writes.extend(self.creation_counter_writes(task, quota)?);
        }
        self.transact(writes).await
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

    async fn list_member_facts(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberFacts>, Option<String>), StoreError> {
        let pk = account_pk(account);
        let mut start = match cursor {
            Some(c) => Some(decode_cursor(&c, (PK, &pk))?),
            None => None,
        };
        let limit = limit.clamp(1, 1000);
        let mut facts = Vec::new();
        loop {
            self.count();
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("PK = :pk AND begins_with(SK, :prefix)")
                .expression_attribute_values(":pk", s(pk.clone()))
                .expression_attribute_values(":prefix", s(MEMBER_PREFIX))
                .limit(i32::try_from(limit - facts.len()).unwrap_or(1))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            for item in out.items.unwrap_or_default() {
                // A member item may hold only a send ledger (no facts yet): not a member to scan.
                if item.contains_key("facts") {
                    let id = sk_of(&item).strip_prefix(MEMBER_PREFIX).unwrap_or_default().to_owned();
                    let member = MemberId::parse(&id).map_err(|e| StoreError::Corrupt {
                        key: sk_of(&item).to_owned(),
                        reason: e.to_string(),
                    })?;
                    facts.push(member_from_item(&item, &member)?.0);
                }
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => {
                    if facts.len() >= limit {
                        return Ok((facts, Some(encode_cursor(&key))));
                    }
                    start = Some(key);
                }
                _ => return Ok((facts, None)),
            }
        }
    }

    async fn interaction_outcome(&self, account: AccountId, task: TaskId) -> Result<Option<InteractionOutcome>, StoreError> {
        let item = self.get(account_pk(account), &interaction_sk(task)).await?;
        item.map(from_item).transpose()
    }

    async fn shared_outcomes(
        &self,
        month: &str,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<SharedOutcome>, Option<String>), StoreError> {
        let (items, next) = self.index_page(None, PK, learning_pk(month), None, true, limit, cursor).await?;
        let records = items.into_iter().map(from_item).collect::<Result<_, _>>()?;
        Ok((records, next))
    }

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
        let mut days = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            self.count();
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("PK = :pk AND SK BETWEEN :from AND :to")
                .expression_attribute_values(":pk", s(account_pk(account)))
                .expression_attribute_values(":from", s(metrics_sk(from)))
                .expression_attribute_values(":to", s(metrics_sk(to)))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            for item in out.items.unwrap_or_default() {
                let Some(date) = item.get(SK).and_then(|v| v.as_s().ok()).and_then(|sk| metrics_date(sk)) else {
                    continue;
                };
                days.push((date, from_item(item)?));
            }
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => return Ok(days),
            }
        }
    }

    async fn ai_calls(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        Ok(self
            .get(account_pk(account), &ai_calls_sk(date))
            .await?
            .and_then(|item| item.get("calls").and_then(|v| v.as_n().ok()).and_then(|v| v.parse().ok()))
            .unwrap_or(0))
    }

    async fn put_notice(&self, notice: &OwnerNotice) -> Result<(), StoreError> {
        let mut item = keyed(notice, account_pk(notice.account_id), notice_sk(notice.id), "owner_notice")?;
        item.insert(TTL.into(), n((notice.at + openloop_core::limits::OWNER_NOTICE_TTL).as_second()));
        if let Some(at) = notice.digest_at {
            item.insert(GSI1PK.into(), s(NOTICES_DUE_GSI1PK));
            item.insert(GSI1SK.into(), s(notice_due_gsi1sk(at, notice.account_id, notice.id)));
        }
        self.count();
        match self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => {
                Err(StoreError::Conflict(Conflict::AlreadyExists))
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn list_notices(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<OwnerNotice>, Option<String>), StoreError> {
        let (items, next) = self
            .index_page(None, PK, account_pk(account), Some(NOTICE_PREFIX), false, limit, cursor)
            .await?;
        let notices = items.into_iter().map(from_item).collect::<Result<_, _>>()?;
        Ok((notices, next))
    }

    async fn due_notices(&self, until: Timestamp, limit: usize) -> Result<Vec<OwnerNotice>, StoreError> {
        self.due_in(NOTICES_DUE_GSI1PK, until, limit)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn claim_notice(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        self.count();
        match self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(notice_sk(id)))
            .update_expression("REMOVE GSI1PK, GSI1SK, digest_at")
            .condition_expression("attribute_exists(GSI1PK)")
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(false),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn claim_action(&self, record: &ActionRecord) -> Result<ActionClaim, StoreError> {
        let pk = account_pk(record.account_id);
        let sk = action_sk(record.task_id, &record.key);
        let item = keyed(record, pk.clone(), sk.clone(), "action")?;
        let condition = "attribute_not_exists(PK) OR #state = :failed";
        let names = [("#state", "state")];
        match self
            .put_conditional(item, condition, &names, vec![(":failed", s("failed"))], Conflict::AlreadyExists)
            .await
        {
            Ok(()) => Ok(ActionClaim::Claimed),
            Err(StoreError::Conflict(_)) => {
                let existing = self.get(pk, &sk).await?.ok_or_else(|| StoreError::Corrupt {
                    key: sk.clone(),
                    reason: "an action record refused the claim and then vanished".into(),
                })?;
                Ok(ActionClaim::Existing(Box::new(from_item(existing)?)))
            }
            Err(e) => Err(e),
        }
    }

    async fn finish_action(&self, record: &ActionRecord) -> Result<(), StoreError> {
        let (pk, sk) = (account_pk(record.account_id), action_sk(record.task_id, &record.key));
        self.put(keyed(record, pk, sk, "action")?).await
    }

    async fn task_actions(&self, account: AccountId, task: TaskId) -> Result<Vec<ActionRecord>, StoreError> {
        let prefix = actions_prefix(task);
        let mut records = Vec::new();
        let mut cursor = None;
        loop {
            let (items, next) = self
                .index_page(None, PK, account_pk(account), Some(&prefix), true, 1000, cursor)
                .await?;
            for item in items {
                records.push(from_item(item)?);
            }
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(records),
            }
        }
    }
}

fn attr_parse<T: std::str::FromStr>(item: &Item, name: &str) -> Option<T> {
    item.get(name).and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok())
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

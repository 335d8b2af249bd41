//! Items: entities to and from DynamoDB attribute maps (through serde_json's value, plus the key attributes
//! from [`crate::keys`]), the items every capability writes with a task, and page cursors.
//! An aggregate's own items are mapped in its file (`accounts.rs`, `members.rs`, …).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use serde::de::DeserializeOwned;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::kernel::limits::DUE_INDEX_SHARDS;
use openloop_core::kernel::number;
use openloop_core::task::tally::TaskTally;
use openloop_core::task::work::{due_at, due_shard, due_sort_key};
use openloop_core::task::{ConversationMessage, LogEntry, OutboundMessage, Task};

use crate::keys::*;

use super::{DynamoStore, Item, build_error};
use aws_sdk_dynamodb::types::{Delete, TransactWriteItem};

impl DynamoStore {
    pub(super) fn task_put(&self, task: &Task) -> Result<Item, StoreError> {
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

    /// The task's tally item (`TaskTally`): under `TALLY#OPEN#` while the task is open, under
    /// `TALLY#CLOSED#{when}#` once closed.
    pub(super) fn tally_item(&self, task: &Task) -> Result<Item, StoreError> {
        let sk = if task.is_active() {
            tally_open_sk(task.id)
        } else {
            tally_closed_sk(TaskTally::closed_at(task), task.id)
        };
        keyed(&TaskTally::of(task), account_pk(task.account_id), sk, "tally")
    }

    /// What a write of `task` does to its tally, in the task's own transaction: the item put
    /// (overwritten, so a write carried out again puts the same), and once the task is closed
    /// its open tally deleted (a no-op when already gone).
    pub(super) fn tally_writes(&self, task: &Task) -> Result<Vec<TransactWriteItem>, StoreError> {
        let mut writes = vec![self.plain_put(self.tally_item(task)?)?];
        if !task.is_active() {
            let delete = Delete::builder()
                .table_name(&self.table)
                .key(PK, s(account_pk(task.account_id)))
                .key(SK, s(tally_open_sk(task.id)))
                .build()
                .map_err(build_error)?;
            writes.push(TransactWriteItem::builder().delete(delete).build());
        }
        Ok(writes)
    }

    pub(super) fn log_item(&self, task: &Task, entry: &LogEntry) -> Result<Item, StoreError> {
        let mut item = keyed(entry, account_pk(task.account_id), log_sk(task.id, entry.id), "log")?;
        item.insert(GSI2PK.into(), s(activity_gsi2pk(task.account_id)));
        item.insert(GSI2SK.into(), s(activity_gsi2sk(entry.at, entry.id)));
        item.insert("task_id".into(), s(task.id.to_string()));
        item.insert("task_type".into(), s(task.task_type.clone()));
        item.insert("member_id".into(), s(task.member.id.as_str()));
        // The feed names the member without reading them (one index read a page).
        item.insert("member_name".into(), s(task.member.label()));
        Ok(item)
    }

    pub(super) fn message_item(&self, task: &Task, message: &ConversationMessage) -> Result<Item, StoreError> {
        keyed(
            message,
            account_pk(task.account_id),
            conversation_sk(task.id, message.id),
            "conversation",
        )
    }

    pub(super) fn outbound_item(&self, account: AccountId, message: &OutboundMessage) -> Result<Item, StoreError> {
        keyed(
            message,
            account_pk(account),
            outbound_sk(message.task_id, message.touch),
            "outbound",
        )
    }
}

pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(super) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// An entity's item: its serde form plus its keys and kind.
pub(super) fn keyed<T: Serialize>(value: &T, pk: String, sk: String, kind: &str) -> Result<Item, StoreError> {
    let mut item = to_item(value)?;
    item.insert(PK.into(), s(pk));
    item.insert(SK.into(), s(sk));
    item.insert(KIND.into(), s(kind));
    Ok(item)
}

/// An entity's attribute map. A number DynamoDB cannot hold is refused here, before any
/// request, by the same rule the entry points and the in-memory store use
/// (`kernel::number::storable`): the store cannot be handed one.
pub(super) fn to_item<T: Serialize>(value: &T) -> Result<Item, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        key: std::any::type_name::<T>().into(),
        reason,
    };
    let item: Item = match serde_json::to_value(value).map_err(|e| corrupt(e.to_string()))? {
        serde_json::Value::Object(fields) => fields.into_iter().map(|(k, v)| (k, attribute(v))).collect(),
        _ => return Err(corrupt("an entity is stored as a map".into())),
    };
    let mut path = Vec::new();
    for (name, attribute) in &item {
        path.push(name.as_str());
        if let Some((at, number)) = unstorable_number(attribute, &mut path) {
            return Err(StoreError::Unstorable(number::unstorable(&at, &number)));
        }
        path.pop();
    }
    Ok(item)
}

/// The path and text of the first number in `value` that DynamoDB cannot hold.
fn unstorable_number<'a>(value: &'a AttributeValue, path: &mut Vec<&'a str>) -> Option<(String, String)> {
    let bad = |n: &String| !n.parse::<f64>().is_ok_and(number::storable);
    match value {
        AttributeValue::N(n) if bad(n) => Some((path.join("."), n.clone())),
        AttributeValue::Ns(ns) => ns.iter().find(|n| bad(n)).map(|n| (path.join("."), n.clone())),
        AttributeValue::L(items) => items.iter().find_map(|item| unstorable_number(item, path)),
        AttributeValue::M(map) => map.iter().find_map(|(name, item)| {
            path.push(name.as_str());
            let found = unstorable_number(item, path);
            path.pop();
            found
        }),
        _ => None,
    }
}

/// One versioned record per account (the memory book, the trigger book): one item under the
/// account at `sk`, read whole, and written only over the version read.
impl DynamoStore {
    /// The record at `sk`, or its default while none is stored.
    pub(super) async fn account_record<T: DeserializeOwned + Default>(&self, account: AccountId, sk: &str) -> Result<T, StoreError> {
        Ok(self
            .get(account_pk(account), sk)
            .await?
            .map(from_item)
            .transpose()?
            .unwrap_or_default())
    }

    /// Write `record` (of `kind`) at `sk` as `version`: the first only where none is stored,
    /// a later one only over `version - 1` (`Conflict::Version` otherwise; `0` never).
    pub(super) async fn save_account_record<T: Serialize>(
        &self,
        account: AccountId,
        sk: &str,
        kind: &str,
        record: &T,
        version: u64,
    ) -> Result<(), StoreError> {
        let item = keyed(record, account_pk(account), sk.into(), kind)?;
        match version {
            0 => Err(StoreError::Conflict(openloop_core::kernel::error::Conflict::Version)),
            1 => {
                self.put_conditional(
                    item,
                    "attribute_not_exists(PK)",
                    &[],
                    Vec::new(),
                    openloop_core::kernel::error::Conflict::Version,
                )
                .await
            }
            v => {
                self.put_conditional(
                    item,
                    "#v = :v",
                    &[("#v", "version")],
                    vec![(":v", n(v - 1))],
                    openloop_core::kernel::error::Conflict::Version,
                )
                .await
            }
        }
    }
}

pub(super) fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, StoreError> {
    let key = format!(
        "{:?}/{:?}",
        item.get(PK).and_then(|v| v.as_s().ok()),
        item.get(SK).and_then(|v| v.as_s().ok())
    );
    let fields = item
        .into_iter()
        .map(|(k, v)| Ok((k, value(v)?)))
        .collect::<Result<serde_json::Map<_, _>, String>>();
    fields
        .and_then(|fields| serde_json::from_value(serde_json::Value::Object(fields)).map_err(|e| e.to_string()))
        .map_err(|reason| StoreError::Corrupt { key, reason })
}

/// An entity's serde form as a DynamoDB attribute: maps and lists as `M` and `L`, numbers as
/// `N` in their shortest decimal form, nothing as `NULL` — one mapping through serde_json's
/// value for every entity, not a serializer of its own per type.
fn attribute(value: serde_json::Value) -> AttributeValue {
    use serde_json::Value;
    match value {
        Value::Null => AttributeValue::Null(true),
        Value::Bool(b) => AttributeValue::Bool(b),
        Value::Number(n) => AttributeValue::N(match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => f.to_string(),
            _ => n.to_string(),
        }),
        Value::String(s) => AttributeValue::S(s),
        Value::Array(items) => AttributeValue::L(items.into_iter().map(attribute).collect()),
        Value::Object(fields) => AttributeValue::M(fields.into_iter().map(|(k, v)| (k, attribute(v))).collect()),
    }
}

/// A stored attribute as serde_json's value (the inverse of [`attribute`]; sets read as lists).
fn value(attribute: AttributeValue) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    // Whole numbers as such; others by the standard library's exact parse (serde_json's own
    // rounds a long decimal such as 1e-130 written out in full).
    let number = |n: &str| {
        n.parse::<u64>()
            .map(Value::from)
            .or_else(|_| n.parse::<i64>().map(Value::from))
            .or_else(|_| {
                n.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(|| format!("number {n:?}"))
            })
    };
    Ok(match attribute {
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::Bool(b) => Value::Bool(b),
        AttributeValue::N(n) => number(&n)?,
        AttributeValue::S(s) => Value::String(s),
        AttributeValue::L(items) => Value::Array(items.into_iter().map(value).collect::<Result<_, _>>()?),
        AttributeValue::M(fields) => Value::Object(fields.into_iter().map(|(k, v)| Ok((k, value(v)?))).collect::<Result<_, String>>()?),
        AttributeValue::Ss(items) => Value::Array(items.into_iter().map(Value::String).collect()),
        AttributeValue::Ns(items) => Value::Array(items.iter().map(|n| number(n)).collect::<Result<_, _>>()?),
        AttributeValue::B(bytes) => Value::Array(bytes.into_inner().into_iter().map(Value::from).collect()),
        other => return Err(format!("an attribute of a kind no entity holds: {other:?}")),
    })
}

pub(super) fn sk_of(item: &Item) -> &str {
    item.get(SK).and_then(|v| v.as_s().ok()).map(String::as_str).unwrap_or("")
}

pub(super) fn attr_parse<T: std::str::FromStr>(item: &Item, name: &str) -> Option<T> {
    item.get(name).and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok())
}

pub(super) fn encode_cursor(key: &Item) -> String {
    let map: HashMap<&str, &str> = key
        .iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_s().ok()?.as_str())))
        .collect();
    serde_json::to_string(&map).map(|j| hex(j.as_bytes())).unwrap_or_default()
}

pub(super) fn decode_cursor(cursor: &str, expect: (&str, &str)) -> Result<Item, StoreError> {
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

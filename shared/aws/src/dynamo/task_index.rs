//! [`TaskIndex`] on DynamoDB: the owner's list (GSI2 `TASKS#`), the sharded due and attribution
//! indexes (GSI1), the activity feed (GSI2 `ACTIVITY#`) and the reply routes (`ROUTE#`).

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::{AccountId, MemberId, TaskId};
use openloop_core::ports::{TaskIndex, TaskQuery};
use openloop_core::task::history::ActivityEntry;
use openloop_core::task::tally::TaskTally;
use openloop_core::task::work::{DueEntry, due_at, due_time_key};
use openloop_core::task::{LogEntry, Task};

use crate::keys::*;

use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem};
use openloop_core::kernel::error::Conflict;

use super::items::{attr_parse, decode_cursor, encode_cursor, from_item, n, s, sk_of};
use super::{DynamoStore, Item, build_error, unavailable};

/// Items a filtered task list reads per request.
const FILTERED_PAGE: usize = 200;
/// Tallies (about 100 bytes each) a list of one open status reads per request.
const TALLY_PAGE: usize = 1_000;

#[async_trait]
impl TaskIndex for DynamoStore {
    async fn open_tasks_by_member(&self, account: AccountId) -> Result<std::collections::BTreeMap<MemberId, usize>, StoreError> {
        let guards = self
            .query_all(None, PK, account_pk(account), Some(ACTIVE_PREFIX.to_owned()), true)
            .await?;
        let mut counts = std::collections::BTreeMap::new();
        for guard in &guards {
            // `ACTIVE#{member}#{type}`: a task type has no `#`.
            let member = sk_of(guard)
                .strip_prefix(ACTIVE_PREFIX)
                .and_then(|rest| rest.rsplit_once('#'))
                .and_then(|(member, _)| MemberId::parse(member).ok());
            if let Some(member) = member {
                *counts.entry(member).or_default() += 1;
            }
        }
        Ok(counts)
    }

    async fn tallies(&self, account: AccountId, closed_since: Timestamp) -> Result<Vec<TaskTally>, StoreError> {
        let pk = account_pk(account);
        let (open, closed) = tokio::try_join!(
            self.query_all(None, PK, pk.clone(), Some(TALLY_OPEN_PREFIX.to_owned()), true),
            self.query_between(pk.clone(), tally_closed_from(closed_since), TALLY_CLOSED_END.to_owned()),
        )?;
        open.into_iter().chain(closed).map(from_item).collect()
    }

    async fn closed_tallies(&self, account: AccountId, from: Timestamp, until: Timestamp) -> Result<Vec<TaskTally>, StoreError> {
        // `BETWEEN` takes the bound; the first tally at `until` sorts after it.
        let items = self
            .query_between(account_pk(account), tally_closed_from(from), tally_closed_from(until))
            .await?;
        items.into_iter().map(from_item).collect()
    }

    async fn list_tasks(&self, account: AccountId, query: &TaskQuery) -> Result<(Vec<Task>, Option<String>), StoreError> {
        if let Some(status) = query.status.filter(|s| !s.is_terminal()) {
            return self.list_open_tasks(account, status, query).await;
        }
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
            // DynamoDB's limit counts the items it reads, before the filter: a filtered list
            // reads a whole page at a time and stops at `limit` matches, its cursor the key of
            // the last one returned — one request where a shrinking limit took many.
            let page = if filters.is_empty() { limit - tasks.len() } else { FILTERED_PAGE };
            req = req.limit(i32::try_from(page).unwrap_or(1));
            if !filters.is_empty() {
                req = req.filter_expression(filters.join(" AND "));
            }
            self.count();
            let out = req.send().await.map_err(unavailable)?;
            let items = out.items.unwrap_or_default();
            let read = items.len();
            for (n, item) in items.into_iter().enumerate() {
                let key: Item = [PK, SK, GSI2PK, GSI2SK]
                    .iter()
                    .filter_map(|k| Some(((*k).to_owned(), item.get(*k)?.clone())))
                    .collect();
                tasks.push(from_item::<Task>(item)?);
                let more = n + 1 < read || out.last_evaluated_key.as_ref().is_some_and(|k| !k.is_empty());
                if tasks.len() >= limit && more {
                    return Ok((tasks, Some(encode_cursor(&key))));
                }
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
            let member_name = Some(text("member_name")).filter(|n| !n.is_empty());
            entries.push(ActivityEntry {
                task_id,
                task_type,
                member_id,
                member_name,
                entry: from_item::<LogEntry>(item)?,
            });
        }
        Ok((entries, next))
    }

    async fn task_account(&self, task: TaskId) -> Result<Option<AccountId>, StoreError> {
        let item = self.get(task_route_pk(task), ROUTE_SK).await?;
        Ok(item.as_ref().and_then(|i| attr_parse(i, "account_id")))
    }

    async fn message_route(&self, message_id: &str) -> Result<Option<(AccountId, TaskId)>, StoreError> {
        let item = self.get(message_route_pk(message_id), ROUTE_SK).await?;
        Ok(item
            .as_ref()
            .and_then(|i| Some((attr_parse(i, "account_id")?, attr_parse(i, "task_id")?))))
    }
}

impl DynamoStore {
    /// The tasks of one open status (the review queue, the escalations), newest first: read
    /// from the open tasks' tallies, which the task's own writes keep (`TALLY#OPEN#{task}`,
    /// sorted as the task ids), then the page's tasks in one batch — so the review queue reads
    /// the account's open tasks, never the closed ones it has piled up.
    async fn list_open_tasks(
        &self,
        account: AccountId,
        status: openloop_core::task::TaskStatus,
        query: &TaskQuery,
    ) -> Result<(Vec<Task>, Option<String>), StoreError> {
        use openloop_core::ports::TaskReads as _;
        let pk = account_pk(account);
        let mut start = match &query.cursor {
            Some(c) => {
                let key = decode_cursor(c, (PK, &pk))?;
                if !key
                    .get(SK)
                    .and_then(|v| v.as_s().ok())
                    .is_some_and(|sk| sk.starts_with(TALLY_OPEN_PREFIX))
                {
                    return Err(StoreError::InvalidCursor);
                }
                Some(key.into_iter().filter(|(k, _)| k == PK || k == SK).collect::<Item>())
            }
            None => None,
        };
        let limit = query.limit.clamp(1, 200);
        let mut ids: Vec<TaskId> = Vec::new();
        let next = loop {
            let mut req = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("PK = :pk AND begins_with(SK, :open)")
                .expression_attribute_values(":pk", s(pk.clone()))
                .expression_attribute_values(":open", s(TALLY_OPEN_PREFIX.to_owned()))
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":status", s(status.as_str()))
                .scan_index_forward(false)
                .consistent_read(true)
                .limit(i32::try_from(TALLY_PAGE).unwrap_or(1_000))
                .set_exclusive_start_key(start.take());
            req = match &query.member_id {
                Some(member) => req
                    .filter_expression("#status = :status AND member_id = :member")
                    .expression_attribute_values(":member", s(member.as_str())),
                None => req.filter_expression("#status = :status"),
            };
            self.count();
            let out = req.send().await.map_err(unavailable)?;
            let items = out.items.unwrap_or_default();
            let read = items.len();
            let mut full = None;
            for (n, item) in items.into_iter().enumerate() {
                let key: Item = [PK, SK]
                    .iter()
                    .filter_map(|k| Some(((*k).to_owned(), item.get(*k)?.clone())))
                    .collect();
                ids.push(from_item::<TaskTally>(item)?.task_id);
                if ids.len() >= limit {
                    let more = n + 1 < read || out.last_evaluated_key.as_ref().is_some_and(|k| !k.is_empty());
                    full = Some(more.then(|| encode_cursor(&key)));
                    break;
                }
            }
            if let Some(next) = full {
                break next;
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => break None,
            }
        };
        let mut tasks = self.get_tasks(account, &ids).await?;
        // A task that moved on since its tally was read is not of this status any more.
        tasks.retain(|t| t.status == status);
        Ok((tasks, next))
    }

    /// Writes the tally of every task of `account` — for a table written before the tallies
    /// existed, whose tasks the owner's numbers and the open-status lists would otherwise miss
    /// (`openloop-admin backfill-tallies`). Each task's tally goes in a transaction that checks
    /// the task is still the version read, so a task written meanwhile keeps the tally its own
    /// write made; carried out again it writes the same. Returns (tallied, changed meanwhile).
    pub async fn backfill_tallies(&self, account: AccountId) -> Result<(usize, usize), StoreError> {
        /// Tasks a transaction carries (each a check and at most two writes: ≤ 100 items).
        const TASKS_A_TRANSACTION: usize = 25;
        let (mut tallied, mut moved) = (0, 0);
        let mut query = TaskQuery {
            limit: 200,
            ..TaskQuery::default()
        };
        loop {
            let (tasks, next) = self.list_tasks(account, &query).await?;
            for chunk in tasks.chunks(TASKS_A_TRANSACTION) {
                let mut writes = Vec::new();
                for task in chunk {
                    writes.extend(self.tally_backfill(task)?);
                }
                match self.transact(writes).await {
                    Ok(()) => tallied += chunk.len(),
                    // One of them changed since it was read: each on its own, so only that
                    // one is left to the tally its own write made.
                    Err(StoreError::Conflict(_)) => {
                        for task in chunk {
                            match self.transact(self.tally_backfill(task)?).await {
                                Ok(()) => tallied += 1,
                                Err(StoreError::Conflict(_)) => moved += 1,
                                Err(e) => return Err(e),
                            }
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            match next {
                Some(cursor) => query.cursor = Some(cursor),
                None => return Ok((tallied, moved)),
            }
        }
    }

    /// A task's tally writes, checked against the task's version as read.
    fn tally_backfill(&self, task: &Task) -> Result<Vec<(TransactWriteItem, Option<Conflict>)>, StoreError> {
        let check = ConditionCheck::builder()
            .table_name(&self.table)
            .key(PK, s(account_pk(task.account_id)))
            .key(SK, s(task_sk(task.id)))
            .condition_expression("#v = :v")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":v", n(task.version))
            .build()
            .map_err(build_error)?;
        let mut writes = vec![(TransactWriteItem::builder().condition_check(check).build(), Some(Conflict::Version))];
        writes.extend(self.tally_writes(task)?.into_iter().map(|w| (w, None)));
        Ok(writes)
    }
}

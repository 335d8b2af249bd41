//! [`LoopStore`] on DynamoDB: one item per loop under its account, sorted under its member
//! (`LOOP#{member}#{id}`: a member's loops are one consistent query); while open it also
//! waits in the sharded deadline index on GSI1 (`LOOPDUE#{shard}`), and it is listed on GSI2
//! (`LOOPS#{a}`, by status then id). Resolving is one put conditioned on `status = open`,
//! which leaves the deadline index (the GSI1 attributes are not written again).

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem};
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::ports::LoopStore;
use openloop_core::task::open_loop::{LoopStatus, OpenLoop, loop_shard};
use openloop_core::task::work::due_time_key;

use crate::keys::*;

use super::items::{from_item, keyed, s};
use super::{DynamoStore, Item};

impl DynamoStore {
    /// A loop's item, with its indexes as its status says.
    pub(super) fn loop_item(&self, l: &OpenLoop) -> Result<Item, StoreError> {
        let mut item = keyed(l, account_pk(l.account_id), loop_sk(&l.member_id, l.id), "open_loop")?;
        item.insert(GSI2PK.into(), s(loops_gsi2pk(l.account_id)));
        item.insert(GSI2SK.into(), s(loops_gsi2sk(l.status.as_str(), l.id)));
        if l.status == LoopStatus::Open {
            item.insert(GSI1PK.into(), s(loop_due_gsi1pk(loop_shard(l.id))));
            item.insert(GSI1SK.into(), s(format!("{}#{}", due_time_key(l.deadline), l.id)));
        }
        Ok(item)
    }

    /// The writes of a task commit's loops, in its transaction.
    pub(super) fn loop_writes(&self, loops: &[OpenLoop]) -> Result<Vec<TransactWriteItem>, StoreError> {
        loops.iter().map(|l| self.plain_put(self.loop_item(l)?)).collect()
    }

    /// The writes of a task commit's loops: a new one put as it is, one the commit resolves
    /// put only while its record is still open (else the transaction fails as a version
    /// conflict, as the task's own condition would).
    pub(super) fn commit_loop_writes(&self, loops: &[OpenLoop]) -> Result<Vec<(TransactWriteItem, Option<Conflict>)>, StoreError> {
        loops
            .iter()
            .map(|l| {
                if l.status == LoopStatus::Open {
                    return Ok((self.plain_put(self.loop_item(l)?)?, None));
                }
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(self.loop_item(l)?))
                    .condition_expression("attribute_exists(PK) AND #status = :open")
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_values(":open", s(LoopStatus::Open.as_str()))
                    .build()
                    .map_err(super::build_error)?;
                Ok((TransactWriteItem::builder().put(put).build(), Some(Conflict::Version)))
            })
            .collect()
    }
}

#[async_trait]
impl LoopStore for DynamoStore {
    async fn put_loops(&self, loops: &[OpenLoop]) -> Result<(), StoreError> {
        for chunk in loops.chunks(25) {
            match chunk {
                [one] => self.put(self.loop_item(one)?).await?,
                many => {
                    self.transact(self.loop_writes(many)?.into_iter().map(|w| (w, None)).collect())
                        .await?
                }
            }
        }
        Ok(())
    }

    async fn create_todo_with_loop(
        &self,
        todo: &openloop_core::task::todo::Todo,
        wait: &OpenLoop,
        webhooks: bool,
    ) -> Result<bool, StoreError> {
        let mut writes = self.todo_creation(todo)?;
        writes.push((self.plain_put(self.loop_item(wait)?)?, None));
        // Its `todo.created` event, written with it (unless its account has no endpoint).
        if webhooks {
            let event = openloop_core::owner::webhook_event::OutboxItem::new(openloop_core::owner::webhook_event::todo_created(todo));
            writes.push((self.plain_put(super::webhooks::outbox_item(&event)?)?, None));
        }
        match self.transact(writes).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(Conflict::AlreadyExists)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn member_open_loops(&self, account: AccountId, member: &MemberId) -> Result<Vec<OpenLoop>, StoreError> {
        let items = self
            .query_all(None, PK, account_pk(account), Some(loop_member_prefix(member)), true)
            .await?;
        let loops: Vec<OpenLoop> = items.into_iter().map(from_item).collect::<Result<_, _>>()?;
        Ok(loops.into_iter().filter(|l| l.status == LoopStatus::Open).collect())
    }

    async fn resolve_loop(&self, resolved: &OpenLoop) -> Result<bool, StoreError> {
        match self
            .put_conditional(
                self.loop_item(resolved)?,
                "attribute_exists(PK) AND #status = :open",
                &[("#status", "status")],
                vec![(":open", s(LoopStatus::Open.as_str()))],
                Conflict::Version,
            )
            .await
        {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn overdue_loops(&self, shard: u32, until: Timestamp, limit: usize) -> Result<Vec<OpenLoop>, StoreError> {
        self.due_in(&loop_due_gsi1pk(shard), until, limit)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn list_loops(
        &self,
        account: AccountId,
        status: Option<LoopStatus>,
        member: Option<&MemberId>,
        limit: usize,
    ) -> Result<Vec<OpenLoop>, StoreError> {
        // One member's loops: their own consistent query under the member, never the account's.
        if let Some(member) = member {
            let items = self
                .query_all(None, PK, account_pk(account), Some(loop_member_prefix(member)), false)
                .await?;
            let mut loops: Vec<OpenLoop> = items.into_iter().map(from_item).collect::<Result<_, _>>()?;
            loops.retain(|l| status.is_none_or(|s| l.status == s));
            loops.sort_by_key(|l| std::cmp::Reverse(l.id));
            loops.truncate(limit);
            return Ok(loops);
        }
        let statuses = match status {
            Some(one) => vec![one],
            None => vec![LoopStatus::Open, LoopStatus::Met, LoopStatus::Expired],
        };
        let mut loops: Vec<OpenLoop> = Vec::new();
        for status in statuses {
            // Newest first: one page of `limit` per status.
            let (items, _) = self
                .gsi2_page(loops_gsi2pk(account), &format!("{}#", status.as_str()), limit, None)
                .await?;
            for item in items {
                loops.push(from_item(item)?);
            }
        }
        loops.sort_by_key(|l| std::cmp::Reverse(l.id));
        loops.truncate(limit);
        Ok(loops)
    }
}

impl DynamoStore {
    /// One page of a GSI2 partition under a sort-key prefix, newest (greatest key) first.
    async fn gsi2_page(
        &self,
        pk: String,
        prefix: &str,
        limit: usize,
        start: Option<Item>,
    ) -> Result<(Vec<Item>, Option<Item>), StoreError> {
        self.count();
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI2)
            .key_condition_expression("GSI2PK = :pk AND begins_with(GSI2SK, :prefix)")
            .expression_attribute_values(":pk", s(pk))
            .expression_attribute_values(":prefix", s(prefix))
            .scan_index_forward(false)
            .limit(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(super::unavailable)?;
        Ok((out.items.unwrap_or_default(), out.last_evaluated_key.filter(|k| !k.is_empty())))
    }
}

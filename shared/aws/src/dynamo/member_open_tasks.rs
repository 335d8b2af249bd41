//! The member item's open tasks (`open_tasks`, a string set of task ids): added in the
//! transaction that puts a task's active guard (its creation, an owner's reopen) and taken in
//! the one that deletes it (its close), so it holds at least every task whose guard is held.
//! The send snapshot reads it with the member item, and a step spares the guards' query.
//! An account made before the member items kept it is backfilled once
//! (`openloop-admin backfill-tallies`): its guards' ids added to their members' items, then the
//! account marked (`Account::member_open_tasks_kept`). A task closed between the backfill's read
//! and its write leaves its id behind: a superset, which costs the step one read of that task
//! and never a guard missed.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::{AccountId, MemberId, TaskId};

use crate::keys::*;

use super::items::{s, sk_of};
use super::{DynamoStore, Item, build_error, unavailable};

/// The member item's attribute.
pub(super) const OPEN_TASKS: &str = "open_tasks";

/// How a commit moves its task in the member's open tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OpenChange {
    /// The task's guard is put: its id is added.
    Opens,
    /// The task's guard is deleted: its id is taken.
    Closes,
}

/// `:open`, the task's id as a one-element string set.
pub(super) fn open_value(task: TaskId) -> AttributeValue {
    AttributeValue::Ss(vec![task.to_string()])
}

/// The ids a member item keeps, in no order (none when it keeps none, or there is no item).
pub(super) fn open_tasks_of(item: &Item) -> Vec<TaskId> {
    item.get(OPEN_TASKS)
        .and_then(|v| v.as_ss().ok())
        .map(|ids| ids.iter().filter_map(|id| id.parse().ok()).collect())
        .unwrap_or_default()
}

impl DynamoStore {
    /// The member item's update for `change` of `task`, when the commit writes the item for
    /// nothing else (a transaction writes an item once: a reservation's or release's ledger
    /// update carries the change itself).
    pub(super) fn open_tasks_update(
        &self,
        account: AccountId,
        member: &MemberId,
        task: TaskId,
        change: OpenChange,
    ) -> Result<TransactWriteItem, StoreError> {
        let expression = match change {
            OpenChange::Opens => "ADD open_tasks :open SET #kind = :kind",
            OpenChange::Closes => "DELETE open_tasks :open SET #kind = :kind",
        };
        let update = Update::builder()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(member_sk(member)))
            .update_expression(expression)
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":open", open_value(task))
            .expression_attribute_values(":kind", s("member"))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Keep the account's members' open tasks on their items from now on: every held guard's
    /// task added to its member's item, then the account marked. Carried out again it adds
    /// nothing new. Returns how many members' items were written.
    pub async fn backfill_member_open_tasks(&self, account: AccountId) -> Result<usize, StoreError> {
        let pk = account_pk(account);
        let guards = self.query_all(None, PK, pk.clone(), Some(ACTIVE_PREFIX.to_owned()), true).await?;
        let mut by_member: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for guard in &guards {
            // `ACTIVE#{member}#{type}`: a task type has no `#`.
            let member = sk_of(guard)
                .strip_prefix(ACTIVE_PREFIX)
                .and_then(|rest| rest.rsplit_once('#'))
                .map(|(m, _)| m);
            let task = guard.get("task_id").and_then(|v| v.as_s().ok());
            if let (Some(member), Some(task)) = (member, task) {
                by_member.entry(member.to_owned()).or_default().push(task.clone());
            }
        }
        for (member, tasks) in &by_member {
            let member = MemberId::parse(member).map_err(|e| StoreError::Corrupt {
                key: member.clone(),
                reason: e.to_string(),
            })?;
            self.count();
            self.count_write(1);
            self.client
                .update_item()
                .table_name(&self.table)
                .key(PK, s(pk.clone()))
                .key(SK, s(member_sk(&member)))
                .update_expression("ADD open_tasks :open SET #kind = :kind")
                .expression_attribute_names("#kind", KIND)
                .expression_attribute_values(":open", AttributeValue::Ss(tasks.clone()))
                .expression_attribute_values(":kind", s("member"))
                .send()
                .await
                .map_err(unavailable)?;
        }
        // The mark, on the account as stored, under a new version: a save from an older read
        // is refused and read again (an account that is gone stays gone).
        self.count();
        self.count_write(1);
        let marked = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(PROFILE_SK))
            .update_expression("SET member_open_tasks_kept = :yes ADD #v :one")
            .condition_expression("attribute_exists(PK)")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .expression_attribute_values(":one", super::items::n(1))
            .send()
            .await;
        match marked {
            Ok(_) => Ok(by_member.len()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(by_member.len()),
            Err(e) => Err(unavailable(e)),
        }
    }
}

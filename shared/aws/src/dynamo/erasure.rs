//! [`ErasureStore`] on DynamoDB: the erased identities as `ERASED#{hash}` items under the
//! account (read together in one batch), and the removals as deletes that are safe to
//! repeat. A task's items go before the task item, which goes last over its version, so a
//! removal cut short leaves the task to be found and removed again by the retry. Its closed
//! tally (`TALLY#CLOSED#…`) stays, and its learning record is rewritten without its texts.
//!
//! An account's removal reads a page of its partition at a time and deletes it, each task's
//! and sent message's reply routes with it; the account item and its token item go last.
//!
//! To-dos, owner notices and outbox items are found by reading the account's items of that
//! kind (one query of their prefix each): an erasure is rare and asked for by a person, so it
//! reads what the account keeps of them, never the whole partition.

use std::collections::HashMap;

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, Email};
use openloop_core::learning::interaction::InteractionOutcome;
use openloop_core::members::erasure::MemberTrace;
use openloop_core::owner::owner_notice::OwnerNotice;
use openloop_core::owner::webhook_event::OutboxItem;
use openloop_core::ports::ErasureStore;
use openloop_core::task::todo::Todo;
use openloop_core::task::{OutboundMessage, Task};

use crate::keys::*;

use super::items::{from_item, keyed, n, s, sk_of};
use super::{DynamoStore, Item, unavailable};

impl DynamoStore {
    /// Delete every item of the account whose sort key starts with `prefix`; the items, as
    /// they were.
    async fn delete_prefixed(&self, account: AccountId, prefix: String) -> Result<Vec<Item>, StoreError> {
        let items = self.query_all(None, PK, account_pk(account), Some(prefix), true).await?;
        for item in &items {
            self.delete(account_pk(account), sk_of(item)).await?;
        }
        Ok(items)
    }

    /// Delete the items of the account under `prefix` that `names` picks, read as `T`.
    async fn delete_naming<T: serde::de::DeserializeOwned>(
        &self,
        account: AccountId,
        prefix: &str,
        names: impl Fn(&T) -> bool,
    ) -> Result<(), StoreError> {
        let items = self.query_all(None, PK, account_pk(account), Some(prefix.to_owned()), true).await?;
        for item in items {
            let sk = sk_of(&item).to_owned();
            if from_item::<T>(item).is_ok_and(|value| names(&value)) {
                self.delete(account_pk(account), &sk).await?;
            }
        }
        Ok(())
    }
}

#[async_trait]
impl ErasureStore for DynamoStore {
    async fn put_erased(&self, account: AccountId, keys: &[String], at: Timestamp) -> Result<(), StoreError> {
        for key in keys {
            let item: Item = HashMap::from([
                (PK.into(), s(account_pk(account))),
                (SK.into(), s(erased_sk(key))),
                (KIND.into(), s("erased")),
                ("erased_at".into(), s(at.to_string())),
            ]);
            self.put(item).await?;
        }
        Ok(())
    }

    async fn any_erased(&self, account: AccountId, keys: &[String]) -> Result<bool, StoreError> {
        if keys.is_empty() {
            return Ok(false);
        }
        let wanted = keys
            .iter()
            .map(|k| HashMap::from([(PK.to_owned(), s(account_pk(account))), (SK.to_owned(), s(erased_sk(k)))]))
            .collect();
        Ok(!self.batch_get(wanted).await?.is_empty())
    }

    async fn erase_task(&self, task: &Task) -> Result<(), StoreError> {
        if task.is_active() {
            return Err(StoreError::Conflict(Conflict::Version));
        }
        let (account, pk) = (task.account_id, account_pk(task.account_id));
        let Some(stored) = self.get(pk.clone(), &task_sk(task.id)).await? else {
            return Ok(());
        };
        if from_item::<Task>(stored)?.version != task.version {
            return Err(StoreError::Conflict(Conflict::Version));
        }
        // The log (the activity feed's entries) and the conversation.
        self.delete_prefixed(account, task_items_prefix(task.id)).await?;
        // The sent messages, and the routes their Message-IDs kept for replies.
        let outbound = self.delete_prefixed(account, outbound_prefix(task.id)).await?;
        let mut routes: Vec<String> = task
            .thread
            .iter()
            .flat_map(|m| std::iter::once(m.message_id.clone()).chain(m.provider_message_id.clone()))
            .collect();
        for item in outbound {
            if let Ok(message) = from_item::<OutboundMessage>(item) {
                routes.push(message.message_id);
                routes.extend(message.provider_message_id);
            }
        }
        for id in routes {
            self.delete(message_route_pk(&id), ROUTE_SK).await?;
        }
        self.delete(task_route_pk(task.id), ROUTE_SK).await?;
        self.delete_prefixed(account, actions_prefix(task.id)).await?;
        if let Some(item) = self.get(pk.clone(), &interaction_sk(task.id)).await? {
            let record = from_item::<InteractionOutcome>(item)?.without_texts();
            self.put(keyed(&record, pk.clone(), interaction_sk(task.id), "interaction")?)
                .await?;
        }
        // Last, the task, only as it was read: a step that moved it since keeps it.
        self.count();
        self.count_write(1);
        let deleted = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(task_sk(task.id)))
            .condition_expression("attribute_not_exists(PK) OR #v = :v")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":v", n(task.version))
            .send()
            .await;
        match deleted {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => {
                Err(StoreError::Conflict(Conflict::Version))
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn erase_member_records(&self, account: AccountId, trace: &MemberTrace) -> Result<(), StoreError> {
        let Some(member) = trace.member.clone() else {
            return Ok(());
        };
        let pk = account_pk(account);
        self.delete(pk.clone(), &annotations_sk(&member)).await?;
        self.delete_prefixed(account, loop_member_prefix(&member)).await?;
        self.delete_naming::<Todo>(account, TODO_PREFIX, |t| {
            trace.names(Some(&t.member.id), Some(t.task_id), &serde_json::to_string(t).unwrap_or_default())
        })
        .await?;
        self.delete_naming::<OwnerNotice>(account, NOTICE_PREFIX, |notice| {
            trace.names(
                notice.member_id.as_ref(),
                notice.task_id,
                &format!("{}\n{}", notice.title, notice.detail),
            )
        })
        .await?;
        self.delete_naming::<OutboxItem>(account, OUTBOX_PREFIX, |item| {
            trace.names(None, item.event.task_id, &item.event.data.to_string())
        })
        .await?;
        for email in trace.words().filter_map(|w| Email::parse(w).ok()) {
            self.delete(pk.clone(), &suppress_sk(&email)).await?;
            self.delete(pk.clone(), &soft_bounce_sk(&email)).await?;
        }
        // Last, the member item: while it is there, the erasure is not done.
        self.delete(pk, &member_sk(&member)).await?;
        Ok(())
    }

    async fn remove_account_items(&self, account: AccountId, limit: usize) -> Result<usize, StoreError> {
        let pk = account_pk(account);
        self.count();
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("PK = :pk")
            .expression_attribute_values(":pk", s(pk.clone()))
            .consistent_read(true)
            .limit(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000))
            .send()
            .await
            .map_err(unavailable)?;
        let mut removed = 0;
        for item in out.items.unwrap_or_default() {
            let sk = sk_of(&item).to_owned();
            if sk == PROFILE_SK {
                continue;
            }
            // What a task or a sent message keeps outside the account: its reply routes.
            let mut routes = Vec::new();
            if sk.starts_with("TASK#") && !sk["TASK#".len()..].contains('#') {
                if let Ok(task) = from_item::<Task>(item.clone()) {
                    routes.push(task_route_pk(task.id));
                    for m in &task.thread {
                        routes.push(message_route_pk(&m.message_id));
                        routes.extend(m.provider_message_id.as_deref().map(message_route_pk));
                    }
                }
            } else if sk.starts_with("MSG#")
                && let Ok(message) = from_item::<OutboundMessage>(item.clone())
            {
                routes.push(message_route_pk(&message.message_id));
                routes.extend(message.provider_message_id.as_deref().map(message_route_pk));
            }
            for route in routes {
                self.delete(route, ROUTE_SK).await?;
            }
            self.delete(pk.clone(), &sk).await?;
            removed += 1;
        }
        Ok(removed)
    }

    async fn remove_account(&self, account: AccountId) -> Result<(), StoreError> {
        let Some(item) = self.get(account_pk(account), PROFILE_SK).await? else {
            return Ok(());
        };
        if let Some(hash) = from_item::<openloop_core::owner::account::Account>(item)?
            .credentials
            .api_token_hash
        {
            self.delete(token_pk(&hash), TOKEN_SK).await?;
        }
        self.delete(account_pk(account), PROFILE_SK).await?;
        Ok(())
    }
}

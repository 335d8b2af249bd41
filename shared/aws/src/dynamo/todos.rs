//! [`TodoStore`] on DynamoDB: `TODO#{id}` items under the account, on GSI2 by account and
//! status ordered by their index time (`TODOS#{a}#{status}`), created in one transaction with
//! the `TODOSRC#{source}` claim that keeps one source from making two to-dos. A status change
//! moves the item between GSI2 partitions in the same conditional put.

use std::collections::HashMap;

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::ports::TodoStore;
use openloop_core::task::todo::{Todo, TodoStatus, index_time};

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, Item};

fn todo_item(todo: &Todo) -> Result<Item, StoreError> {
    let mut item = keyed(todo, account_pk(todo.account_id), todo_sk(todo.id), "todo")?;
    item.insert(GSI2PK.into(), s(todos_gsi2pk(todo.account_id, todo.status.as_str())));
    item.insert(GSI2SK.into(), s(todos_gsi2sk(index_time(todo), todo.id)));
    Ok(item)
}

impl DynamoStore {
    /// A new to-do's writes: its source's claim and the to-do, each only if new (the claim
    /// refused is `Conflict::AlreadyExists`: the source already made one).
    pub(super) fn todo_creation(&self, todo: &Todo) -> Result<Vec<(TransactWriteItem, Option<Conflict>)>, StoreError> {
        let claim: Item = HashMap::from([
            (PK.into(), s(account_pk(todo.account_id))),
            (SK.into(), s(todo_source_sk(&todo.source))),
            (KIND.into(), s("todo_source")),
            ("todo_id".into(), s(todo.id.to_string())),
        ]);
        Ok(vec![
            (self.put_new(claim)?, Some(Conflict::AlreadyExists)),
            (self.put_new(todo_item(todo)?)?, Some(Conflict::Version)),
        ])
    }
}

#[async_trait]
impl TodoStore for DynamoStore {
    async fn create_todo(&self, todo: &Todo) -> Result<bool, StoreError> {
        match self.transact(self.todo_creation(todo)?).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(Conflict::AlreadyExists)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn get_todo(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<Todo>, StoreError> {
        self.get(account_pk(account), &todo_sk(id)).await?.map(from_item).transpose()
    }

    async fn save_todo(&self, todo: &Todo) -> Result<(), StoreError> {
        self.put_conditional(
            todo_item(todo)?,
            "#v = :v",
            &[("#v", "version")],
            vec![(":v", n(todo.version.saturating_sub(1)))],
            Conflict::Version,
        )
        .await
    }

    async fn list_todos(&self, account: AccountId, status: TodoStatus, limit: usize) -> Result<Vec<Todo>, StoreError> {
        let (items, _) = self
            .index_page(
                Some(GSI2),
                GSI2PK,
                todos_gsi2pk(account, status.as_str()),
                None,
                status != TodoStatus::Done,
                limit,
                None,
            )
            .await?;
        items.into_iter().map(from_item).collect()
    }
}

//! [`TodoStore`] in memory: to-dos by account and id, and the sources made.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::ports::TodoStore;
use crate::task::todo::{Todo, TodoStatus};

use super::MemoryStore;

#[async_trait]
impl TodoStore for MemoryStore {
    async fn create_todo(&self, todo: &Todo) -> Result<bool, StoreError> {
        let mut s = self.lock()?;
        let source = (todo.account_id, todo.source.clone());
        if s.todo_sources.contains(&source) {
            return Ok(false);
        }
        if s.todos.contains_key(&(todo.account_id, todo.id)) {
            return Err(StoreError::Conflict(Conflict::AlreadyExists));
        }
        s.todo_sources.insert(source);
        s.todos.insert((todo.account_id, todo.id), todo.clone());
        Ok(true)
    }

    async fn get_todo(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<Todo>, StoreError> {
        Ok(self.lock()?.todos.get(&(account, id)).cloned())
    }

    async fn save_todo(&self, todo: &Todo) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let key = (todo.account_id, todo.id);
        match s.todos.get(&key) {
            Some(stored) if stored.version + 1 == todo.version => {
                s.todos.insert(key, todo.clone());
                Ok(())
            }
            _ => Err(StoreError::Conflict(Conflict::Version)),
        }
    }

    async fn list_todos(&self, account: AccountId, status: TodoStatus, limit: usize) -> Result<Vec<Todo>, StoreError> {
        let s = self.lock()?;
        let mut todos: Vec<Todo> = s
            .todos
            .range((account, ulid::Ulid::nil())..=(account, ulid::Ulid::from_parts(u64::MAX, u128::MAX)))
            .map(|(_, t)| t)
            .filter(|t| t.status == status)
            .cloned()
            .collect();
        match status {
            TodoStatus::Done => todos.sort_by_key(|t| std::cmp::Reverse((t.done_at, t.id))),
            _ => todos.sort_by_key(|t| (crate::task::todo::index_time(t), t.id)),
        }
        todos.truncate(limit);
        Ok(todos)
    }
}

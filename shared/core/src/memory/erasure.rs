//! [`ErasureStore`] in memory: the erased identities' keyed hashes per account, and the
//! removals, each under the one lock. A removed closed task leaves its tally (the owner's
//! numbers are counted from the tasks here, so the tally is kept beside them).

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::members::erasure::MemberTrace;
use crate::ports::ErasureStore;
use crate::task::Task;
use crate::task::tally::TaskTally;

use super::{MemoryStore, conflict};

#[async_trait]
impl ErasureStore for MemoryStore {
    async fn put_erased(&self, account: AccountId, keys: &[String], _at: Timestamp) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        for key in keys {
            s.erased.insert((account, key.clone()));
        }
        Ok(())
    }

    async fn any_erased(&self, account: AccountId, keys: &[String]) -> Result<bool, StoreError> {
        let s = self.lock()?;
        Ok(keys.iter().any(|k| s.erased.contains(&(account, k.clone()))))
    }

    async fn erase_task(&self, task: &Task) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let Some(stored) = s.tasks.get(&task.id).filter(|t| t.account_id == task.account_id) else {
            return Ok(());
        };
        if stored.version != task.version || stored.is_active() {
            return Err(conflict(Conflict::Version));
        }
        let (account, id) = (task.account_id, task.id);
        let kept = (account, TaskTally::closed_at(stored), TaskTally::of(stored));
        s.erased_tallies.insert(id, kept);
        s.tasks.remove(&id);
        s.logs.remove(&id);
        s.messages.remove(&id);
        s.outbound.retain(|(a, t, _), _| !(*a == account && *t == id));
        s.actions.retain(|(a, t, _), _| !(*a == account && *t == id));
        s.task_routes.remove(&id);
        s.message_routes.retain(|_, (a, t)| !(*a == account && *t == id));
        if let Some(record) = s.interactions.get(&id).map(|r| r.without_texts()) {
            s.interactions.insert(id, record);
        }
        Ok(())
    }

    async fn erase_member_records(&self, account: AccountId, trace: &MemberTrace) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let Some(member) = trace.member.clone() else {
            return Ok(());
        };
        s.annotations.remove(&(account, member.clone()));
        s.loops.retain(|(a, _), l| !(*a == account && l.member_id == member));
        s.todos.retain(|(a, _), t| {
            *a != account || !trace.names(Some(&t.member.id), Some(t.task_id), &serde_json::to_string(t).unwrap_or_default())
        });
        s.notices
            .retain(|(a, _), n| *a != account || !trace.names(n.member_id.as_ref(), n.task_id, &format!("{}\n{}", n.title, n.detail)));
        s.webhook_outbox
            .retain(|(a, _), item| *a != account || !trace.names(None, item.event.task_id, &item.event.data.to_string()));
        let words: Vec<String> = trace.words().map(str::to_owned).collect();
        s.suppressed
            .retain(|(a, email)| *a != account || !words.contains(&email.as_str().to_lowercase()));
        s.soft_bounces
            .retain(|(a, email), _| *a != account || !words.contains(&email.as_str().to_lowercase()));
        s.facts.remove(&(account, member.clone()));
        s.ledgers.remove(&(account, member));
        Ok(())
    }

    async fn remove_account_items(&self, account: AccountId, _limit: usize) -> Result<usize, StoreError> {
        // All at once, under the one lock: the limit pages a table, not a map.
        let mut guard = self.lock()?;
        let s = &mut *guard;
        let a = account;
        let before = s.item_count();
        let tasks: std::collections::HashSet<crate::kernel::ids::TaskId> =
            s.tasks.values().filter(|t| t.account_id == a).map(|t| t.id).collect();
        s.tasks.retain(|id, _| !tasks.contains(id));
        s.logs.retain(|id, _| !tasks.contains(id));
        s.messages.retain(|id, _| !tasks.contains(id));
        s.task_routes.retain(|_, owner| *owner != a);
        s.message_routes.retain(|_, (owner, _)| *owner != a);
        // A learning record that went to the cross-tenant set names no account there; the
        // rest go with their tasks.
        let shared = &s.shared_learning;
        s.interactions.retain(|id, _| !tasks.contains(id) || shared.contains(id));
        s.webhook_endpoints.retain(|(owner, _), _| *owner != a);
        s.webhook_outbox.retain(|(owner, _), _| *owner != a);
        s.message_templates.retain(|(owner, _, _), _| *owner != a);
        s.templates.retain(|(owner, _), _| *owner != a);
        s.guards.retain(|(owner, _, _), _| *owner != a);
        s.facts.retain(|(owner, _), _| *owner != a);
        s.ledgers.retain(|(owner, _), _| *owner != a);
        s.daily.retain(|(owner, _), _| *owner != a);
        s.outbound.retain(|(owner, _, _), _| *owner != a);
        s.suppressed.retain(|(owner, _)| *owner != a);
        s.ai_calls.retain(|(owner, _), _| *owner != a);
        s.created.retain(|(owner, _), _| *owner != a);
        s.agent_created.retain(|(owner, _), _| *owner != a);
        s.agent_member_created.retain(|(owner, _, _), _| *owner != a);
        s.connector_health.retain(|(owner, _), _| *owner != a);
        s.metrics_cursors.remove(&a);
        s.metrics.retain(|(owner, _), _| *owner != a);
        s.notices.retain(|(owner, _), _| *owner != a);
        s.actions.retain(|(owner, _, _), _| *owner != a);
        s.daily_counters.retain(|(owner, _, _), _| *owner != a);
        s.texts.retain(|(owner, _), _| *owner != a);
        s.connections.remove(&a);
        s.annotations.retain(|(owner, _), _| *owner != a);
        s.bounce_windows.remove(&a);
        s.soft_bounces.retain(|(owner, _), _| *owner != a);
        s.memory_books.remove(&a);
        s.suggestions.retain(|(owner, _), _| *owner != a);
        s.fingerprints.retain(|(owner, _)| *owner != a);
        s.sign_in_links.retain(|_, (link, _)| link.account_id != a);
        s.loops.retain(|(owner, _), _| *owner != a);
        s.trigger_books.remove(&a);
        s.todos.retain(|(owner, _), _| *owner != a);
        s.todo_sources.retain(|(owner, _)| *owner != a);
        s.erased.retain(|(owner, _)| *owner != a);
        s.erased_tallies.retain(|_, (owner, _, _)| *owner != a);
        Ok(before - s.item_count())
    }

    async fn remove_account(&self, account: AccountId) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        if let Some(hash) = s.accounts.remove(&account).and_then(|a| a.credentials.api_token_hash) {
            s.token_retirements.remove(&hash);
        }
        s.tokens.retain(|_, owner| *owner != account);
        Ok(())
    }
}

//! [`WebhookStore`] in memory: the owners' outbound webhook endpoints by account and id.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::outbound_webhook::WebhookEndpoint;
use crate::owner::webhook_event::OutboxItem;
use crate::ports::WebhookStore;

use super::{MemoryStore, conflict, storable};

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<(), StoreError> {
        storable(endpoint)?;
        let endpoint = &*crate::ports::sealing::sealed_endpoint(&self.keyring, endpoint).await?;
        let mut s = self.lock()?;
        let key = (endpoint.account_id, endpoint.id);
        if s.webhook_endpoints.contains_key(&key) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        s.webhook_endpoints.insert(key, endpoint.clone());
        Ok(())
    }

    async fn get_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<WebhookEndpoint>, StoreError> {
        Ok(self.lock()?.webhook_endpoints.get(&(account, id)).cloned())
    }

    async fn list_endpoints(&self, account: AccountId) -> Result<Vec<WebhookEndpoint>, StoreError> {
        Ok(self
            .lock()?
            .webhook_endpoints
            .range((account, ulid::Ulid::nil())..)
            .take_while(|((a, _), _)| *a == account)
            .map(|(_, e)| e.clone())
            .collect())
    }

    async fn save_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<(), StoreError> {
        storable(endpoint)?;
        let endpoint = &*crate::ports::sealing::sealed_endpoint(&self.keyring, endpoint).await?;
        let mut s = self.lock()?;
        let key = (endpoint.account_id, endpoint.id);
        match s.webhook_endpoints.get(&key) {
            Some(stored) if stored.version + 1 == endpoint.version => {
                s.webhook_endpoints.insert(key, endpoint.clone());
                Ok(())
            }
            _ => Err(conflict(Conflict::Version)),
        }
    }

    async fn delete_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        Ok(self.lock()?.webhook_endpoints.remove(&(account, id)).is_some())
    }

    async fn due_endpoints(&self, until: Timestamp, limit: usize) -> Result<Vec<(AccountId, ulid::Ulid)>, StoreError> {
        let s = self.lock()?;
        let mut due: Vec<(Timestamp, AccountId, ulid::Ulid)> = s
            .webhook_endpoints
            .values()
            .filter_map(|e| e.due_at().filter(|d| *d <= until).map(|d| (d, e.account_id, e.id)))
            .collect();
        due.sort();
        Ok(due.into_iter().take(limit).map(|(_, a, id)| (a, id)).collect())
    }

    async fn put_outbox(&self, item: &OutboxItem) -> Result<(), StoreError> {
        storable(item)?;
        self.lock()?.put_outbox(item);
        Ok(())
    }

    async fn due_outbox(&self, until: Timestamp, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        let s = self.lock()?;
        let mut due: Vec<&OutboxItem> = s.webhook_outbox.values().filter(|i| i.due_at <= until).collect();
        due.sort_by(|a, b| (a.due_at, a.event.account_id, &a.event.id).cmp(&(b.due_at, b.event.account_id, &b.event.id)));
        Ok(due.into_iter().take(limit).cloned().collect())
    }

    async fn postpone_outbox(&self, item: &OutboxItem) -> Result<(), StoreError> {
        storable(item)?;
        let mut s = self.lock()?;
        match s.webhook_outbox.get_mut(&(item.event.account_id, item.event.id.clone())) {
            Some(stored) => {
                *stored = item.clone();
                Ok(())
            }
            None => Err(conflict(Conflict::Version)),
        }
    }

    async fn delete_outbox(&self, account: AccountId, event_id: &str) -> Result<bool, StoreError> {
        Ok(self.lock()?.webhook_outbox.remove(&(account, event_id.to_owned())).is_some())
    }
}

impl super::State {
    /// Put an outbox item (in the transaction of the change that caused its event).
    pub(super) fn put_outbox(&mut self, item: &OutboxItem) {
        self.webhook_outbox
            .insert((item.event.account_id, item.event.id.clone()), item.clone());
    }
}

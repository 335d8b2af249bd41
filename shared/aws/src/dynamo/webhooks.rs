//! [`WebhookStore`] on DynamoDB: one `WEBHOOK#{id}` item per endpoint under its account (its
//! settings, backlog and delivery log, versioned), on GSI1 `WEBHOOKDUE` by the time a consumer
//! should look at it again while one is set (`WebhookEndpoint::due_at`).

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::outbound_webhook::WebhookEndpoint;
use openloop_core::owner::webhook_event::OutboxItem;
use openloop_core::ports::WebhookStore;
use openloop_core::ports::sealing::sealed_endpoint;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, Item};

fn endpoint_item(endpoint: &WebhookEndpoint) -> Result<Item, StoreError> {
    let mut item = keyed(
        endpoint,
        account_pk(endpoint.account_id),
        webhook_endpoint_sk(endpoint.id),
        "webhook_endpoint",
    )?;
    if let Some(due) = endpoint.due_at() {
        item.insert(GSI1PK.into(), s(WEBHOOKS_DUE_GSI1PK));
        item.insert(GSI1SK.into(), s(webhook_due_gsi1sk(due, endpoint.account_id, endpoint.id)));
    }
    Ok(item)
}

/// An outbox item under its account, on GSI1 `OUTBOXDUE` by when the tick queues it again;
/// also written by a task's commit and a to-do's creation in their transactions.
pub(super) fn outbox_item(item: &OutboxItem) -> Result<Item, StoreError> {
    let account = item.event.account_id;
    let mut stored = keyed(item, account_pk(account), webhook_outbox_sk(&item.event.id), "webhook_outbox")?;
    stored.insert(GSI1PK.into(), s(WEBHOOK_OUTBOX_GSI1PK));
    stored.insert(GSI1SK.into(), s(webhook_outbox_gsi1sk(item.due_at, account, &item.event.id)));
    Ok(stored)
}

#[async_trait]
impl WebhookStore for DynamoStore {
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<(), StoreError> {
        let endpoint = &*sealed_endpoint(self.keyring.as_ref(), endpoint).await?;
        self.put_conditional(
            endpoint_item(endpoint)?,
            "attribute_not_exists(PK)",
            &[],
            vec![],
            Conflict::AlreadyExists,
        )
        .await
    }

    async fn get_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<WebhookEndpoint>, StoreError> {
        self.get(account_pk(account), &webhook_endpoint_sk(id))
            .await?
            .map(from_item)
            .transpose()
    }

    async fn list_endpoints(&self, account: AccountId) -> Result<Vec<WebhookEndpoint>, StoreError> {
        self.query_all(None, PK, account_pk(account), Some(WEBHOOK_ENDPOINT_PREFIX.into()), true)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn save_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<(), StoreError> {
        let endpoint = &*sealed_endpoint(self.keyring.as_ref(), endpoint).await?;
        self.put_conditional(
            endpoint_item(endpoint)?,
            "#v = :v",
            &[("#v", "version")],
            vec![(":v", n(endpoint.version.saturating_sub(1)))],
            Conflict::Version,
        )
        .await
    }

    async fn delete_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        self.delete(account_pk(account), &webhook_endpoint_sk(id)).await
    }

    async fn due_endpoints(&self, until: Timestamp, limit: usize) -> Result<Vec<(AccountId, ulid::Ulid)>, StoreError> {
        let items = self.due_in(WEBHOOKS_DUE_GSI1PK, until, limit).await?;
        items
            .into_iter()
            .map(|item| from_item::<WebhookEndpoint>(item).map(|e| (e.account_id, e.id)))
            .collect()
    }

    async fn put_outbox(&self, item: &OutboxItem) -> Result<(), StoreError> {
        self.put(outbox_item(item)?).await
    }

    async fn due_outbox(&self, until: Timestamp, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        self.due_in(WEBHOOK_OUTBOX_GSI1PK, until, limit)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn postpone_outbox(&self, item: &OutboxItem) -> Result<(), StoreError> {
        self.put_conditional(outbox_item(item)?, "attribute_exists(PK)", &[], vec![], Conflict::Version)
            .await
    }

    async fn delete_outbox(&self, account: AccountId, event_id: &str) -> Result<bool, StoreError> {
        self.delete(account_pk(account), &webhook_outbox_sk(event_id)).await
    }
}

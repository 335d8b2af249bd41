//! Outbound webhooks: the owner's endpoints — made with a
//! `whsec_` secret shown once, listed, removed, their delivery log read — and the events the
//! engine emits for them. Every event is built by `owner/webhook_event.rs` and written to the
//! outbox before it is queued (`deliveries` queue): a task's and a to-do's by the commit that
//! caused it, the brief's here. The consumer (`delivery.rs`) puts it in each subscribed
//! endpoint's backlog, delivers, and takes it out of the outbox; the tick queues again what a
//! refused send left there. Nothing is posted inside the request or step that caused it.

mod delivery;

pub use delivery::WebhookWork;

use jiff::{SignedDuration, Timestamp};

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, new_ulid};
use crate::owner::account::WebhookSecret;
use crate::owner::outbound_webhook::{
    CreatedWebhookEndpoint, MAX_ENDPOINTS, NewWebhookEndpoint, OutboundEvent, WebhookDeliveryLog, WebhookEndpoint, WebhookEndpointView,
};
use crate::owner::webhook_event::{self, OutboxItem};
use crate::task::error::EngineError;
use crate::task::work::QueueName;

fn not_configured() -> EngineError {
    EngineError::NotConfigured(InvalidInput::new(
        "webhooks_unavailable",
        "this deployment cannot deliver webhooks (no transport configured)",
    ))
}

impl Engine {
    /// `POST /api/v1/webhook-endpoints`: check the address (its text, then every address it
    /// resolves to) and store the endpoint with `secret` (made by the caller, which holds the
    /// randomness). The answer carries the secret, this once.
    pub async fn create_webhook_endpoint(
        &self,
        account: AccountId,
        input: NewWebhookEndpoint,
        secret: WebhookSecret,
    ) -> Result<CreatedWebhookEndpoint, EngineError> {
        let events = input.event_types()?;
        let url = input.url.trim().to_owned();
        let transport = self.webhook_transport.as_ref().ok_or_else(not_configured)?;
        transport.check_address(&url).await?;
        let existing = self.store.list_endpoints(account).await?.len();
        if existing >= MAX_ENDPOINTS {
            return Err(InvalidInput::new(
                "too_many_webhook_endpoints",
                format!("an account has at most {MAX_ENDPOINTS} webhook endpoints; remove one first"),
            )
            .into());
        }
        let now = self.clock.now();
        let endpoint = WebhookEndpoint::new(new_ulid(now), account, url, events, secret, now);
        // Counted before it exists, so a step that reads the account never misses its events.
        self.count_endpoints(account, |n| n.map_or(existing, |n| n as usize) + 1).await?;
        if let Err(e) = self.store.create_endpoint(&endpoint).await {
            // Counted one too many costs only outbox writes; given back when it can be.
            if let Err(again) = self
                .count_endpoints(account, |n| n.map_or(existing, |n| (n as usize).saturating_sub(1)))
                .await
            {
                tracing::warn!(account = %account, error = %again, "webhook endpoint count left one high");
            }
            return Err(e.into());
        }
        tracing::info!(account = %account, endpoint = %endpoint.id, "webhook endpoint added");
        Ok(CreatedWebhookEndpoint {
            id: endpoint.id.to_string(),
            url: endpoint.url.clone(),
            events: endpoint.events.iter().copied().collect(),
            secret: endpoint.secret.open_text().unwrap_or_default().to_owned(),
            status: endpoint.status,
            created_at: endpoint.created_at,
        })
    }

    /// The account's endpoints, oldest first (never their secrets).
    pub async fn webhook_endpoints(&self, account: AccountId) -> Result<Vec<WebhookEndpointView>, EngineError> {
        Ok(self
            .store
            .list_endpoints(account)
            .await?
            .iter()
            .map(WebhookEndpointView::from)
            .collect())
    }

    /// One endpoint; another account's is not found.
    pub async fn webhook_endpoint(&self, account: AccountId, id: &str) -> Result<WebhookEndpointView, EngineError> {
        Ok(WebhookEndpointView::from(&self.endpoint(account, id).await?))
    }

    /// Remove an endpoint: nothing more is delivered to it, whatever waited.
    pub async fn delete_webhook_endpoint(&self, account: AccountId, id: &str) -> Result<(), EngineError> {
        let id = parse_id(id)?;
        if !self.store.delete_endpoint(account, id).await? {
            return Err(EngineError::NotFound { what: "webhook endpoint" });
        }
        // Counted down after it is gone (an account from before the count is counted now).
        let uncounted = self.account(account).await?.webhook_endpoints.is_none();
        let left = if uncounted {
            self.store.list_endpoints(account).await?.len()
        } else {
            0
        };
        self.count_endpoints(account, |n| n.map_or(left, |n| (n as usize).saturating_sub(1)))
            .await?;
        tracing::info!(account = %account, endpoint = %id, "webhook endpoint removed");
        Ok(())
    }

    /// The endpoint's delivery log, newest first.
    pub async fn webhook_deliveries(&self, account: AccountId, id: &str) -> Result<WebhookDeliveryLog, EngineError> {
        let endpoint = self.endpoint(account, id).await?;
        Ok(WebhookDeliveryLog {
            deliveries: endpoint.log.into_iter().rev().collect(),
        })
    }

    async fn endpoint(&self, account: AccountId, id: &str) -> Result<WebhookEndpoint, EngineError> {
        self.store
            .get_endpoint(account, parse_id(id)?)
            .await?
            .ok_or(EngineError::NotFound { what: "webhook endpoint" })
    }

    /// Queue `events` for their account's endpoints. They are in the outbox already (written
    /// by the change that caused them, or by [`Self::emit_durably`]): a queue that refuses
    /// leaves them there, and the tick queues them again (`resend_webhook_events`). Never fails
    /// its caller.
    pub(crate) async fn enqueue_webhook_events(&self, events: Vec<OutboundEvent>) {
        let Some(account) = events.first().map(|e| e.account_id) else {
            return;
        };
        let messages = match work_messages(&events) {
            Ok(messages) => messages,
            Err(e) => {
                tracing::error!(account = %account, error = %e, "webhook events not serialised; the outbox sends them again");
                return;
            }
        };
        if let Err(e) = self.queue.send(QueueName::Deliveries, messages).await {
            tracing::warn!(account = %account, events = events.len(), error = %e, "webhook events not queued; the outbox sends them again");
        }
    }

    /// An event that no commit wrote: into the outbox first, then queued. An error: it was
    /// not written, and the caller's work should be tried again.
    pub(crate) async fn emit_durably(&self, event: OutboundEvent) -> Result<(), EngineError> {
        self.store.put_outbox(&OutboxItem::new(event.clone())).await?;
        self.enqueue_webhook_events(vec![event]).await;
        Ok(())
    }

    /// The tick's part: queue again every event still in the outbox past its due time (its
    /// send refused, or the process gone before it), each then due later, up to an hour apart.
    pub(crate) async fn resend_webhook_events(&self, now: Timestamp) -> Result<usize, EngineError> {
        let due = self.store.due_outbox(now, RESEND_MAX).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let events: Vec<OutboundEvent> = due.iter().map(|i| i.event.clone()).collect();
        let messages = work_messages(&events).map_err(|e| EngineError::Dependency(e.to_string()))?;
        self.queue
            .send(QueueName::Deliveries, messages)
            .await
            .map_err(|e| EngineError::Dependency(e.to_string()))?;
        for item in &due {
            match self.store.postpone_outbox(&item.resent(now)).await {
                // Taken by the consumer meanwhile: nothing left to postpone.
                Ok(()) | Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        tracing::info!(events = due.len(), "webhook events queued again from the outbox");
        Ok(due.len())
    }

    /// Read the endpoint, let `change` edit it, save it over the version read; a lost race
    /// re-reads and changes again. `None`: it is gone. `change` says whether to save.
    pub(crate) async fn change_endpoint(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        mut change: impl FnMut(&mut WebhookEndpoint) -> bool,
    ) -> Result<Option<WebhookEndpoint>, EngineError> {
        for _ in 0..8 {
            let Some(mut endpoint) = self.store.get_endpoint(account, id).await? else {
                return Ok(None);
            };
            if !change(&mut endpoint) {
                return Ok(Some(endpoint));
            }
            endpoint.version += 1;
            match self.store.save_endpoint(&endpoint).await {
                Ok(()) => return Ok(Some(endpoint)),
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }
}

impl Engine {
    /// Set the account's count of webhook endpoints to what `count` makes of it (`None`: not
    /// counted yet), over the account's version.
    async fn count_endpoints(&self, account: AccountId, count: impl Fn(Option<u32>) -> usize) -> Result<(), EngineError> {
        self.change_account(account, |a| {
            let n = u32::try_from(count(a.webhook_endpoints)).unwrap_or(u32::MAX);
            let changed = a.webhook_endpoints != Some(n);
            a.webhook_endpoints = Some(n);
            Ok(changed)
        })
        .await?;
        Ok(())
    }
}

fn parse_id(id: &str) -> Result<ulid::Ulid, EngineError> {
    ulid::Ulid::from_string(id).map_err(|_| EngineError::NotFound { what: "webhook endpoint" })
}

/// Outbox items one tick queues again, at most.
const RESEND_MAX: usize = 200;

/// Each event as a message of the `deliveries` queue.
fn work_messages(events: &[OutboundEvent]) -> Result<Vec<(String, SignedDuration)>, serde_json::Error> {
    events
        .iter()
        .map(|event| serde_json::to_string(&WebhookWork::Event { event: event.clone() }).map(|body| (body, SignedDuration::ZERO)))
        .collect()
}

impl Engine {
    /// `task.escalated` for a task whose escalation began (its commit wrote the event).
    pub(crate) async fn emit_escalated_webhook(&self, task: &crate::task::Task) {
        self.enqueue_webhook_events(vec![webhook_event::task_escalated(task)]).await;
    }

    /// A closed task's events, `task.closed` and `member.retained` (its commit wrote them).
    pub(crate) async fn emit_closed_webhooks(&self, task: &crate::task::Task) {
        self.enqueue_webhook_events(webhook_event::task_closed(task)).await;
    }

    /// `todo.created` for a new to-do (its creation wrote the event).
    pub(crate) async fn emit_todo_webhook(&self, todo: &crate::task::todo::Todo) {
        self.enqueue_webhook_events(vec![webhook_event::todo_created(todo)]).await;
    }
}

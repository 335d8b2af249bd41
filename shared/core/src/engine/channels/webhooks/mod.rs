//! Outbound webhooks (CONTRACT.md "For other programs"): the owner's endpoints — made with a
//! `whsec_` secret shown once, listed, removed, their delivery log read — and the events the
//! engine emits for them. Emitting only queues the event (`deliveries` queue); the consumer
//! (`delivery.rs`) puts it in each subscribed endpoint's backlog and delivers, so nothing is
//! posted inside the request or step that caused it.

mod delivery;

pub use delivery::WebhookWork;

use jiff::SignedDuration;

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::owner::account::WebhookSecret;
use crate::owner::outbound_webhook::{
    CreatedWebhookEndpoint, EventType, MAX_ENDPOINTS, NewWebhookEndpoint, OutboundEvent, WebhookDeliveryLog, WebhookEndpoint,
    WebhookEndpointView,
};
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
        if self.store.list_endpoints(account).await?.len() >= MAX_ENDPOINTS {
            return Err(InvalidInput::new(
                "too_many_webhook_endpoints",
                format!("an account has at most {MAX_ENDPOINTS} webhook endpoints; remove one first"),
            )
            .into());
        }
        let now = self.clock.now();
        let endpoint = WebhookEndpoint::new(new_ulid(now), account, url, events, secret, now);
        self.store.create_endpoint(&endpoint).await?;
        tracing::info!(account = %account, endpoint = %endpoint.id, "webhook endpoint added");
        Ok(CreatedWebhookEndpoint {
            id: endpoint.id.to_string(),
            url: endpoint.url.clone(),
            events: endpoint.events.iter().copied().collect(),
            secret: endpoint.secret.expose().to_owned(),
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

    /// Queue an event for the account's endpoints. Never fails its caller: the cause is
    /// committed already; a queue that refuses is logged.
    pub(crate) async fn emit_webhook(&self, account: AccountId, event_type: EventType, task_id: Option<TaskId>, data: serde_json::Value) {
        let now = self.clock.now();
        let event = OutboundEvent {
            id: format!("msg_{}", new_ulid(now)),
            account_id: account,
            event_type,
            timestamp: now,
            task_id,
            data,
        };
        let body = match serde_json::to_string(&WebhookWork::Event { event }) {
            Ok(body) => body,
            Err(e) => {
                tracing::error!(account = %account, error = %e, "webhook event not serialised");
                return;
            }
        };
        if let Err(e) = self.queue.send(QueueName::Deliveries, vec![(body, SignedDuration::ZERO)]).await {
            tracing::error!(account = %account, event = event_type.as_str(), error = %e, "webhook event not queued");
        }
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

fn parse_id(id: &str) -> Result<ulid::Ulid, EngineError> {
    ulid::Ulid::from_string(id).map_err(|_| EngineError::NotFound { what: "webhook endpoint" })
}

impl Engine {
    /// A closed task's events: `task.closed` with its outcome and value, and `member.retained`
    /// when it retained revenue Openloop caused (as the scorecard counts a member retained).
    pub(crate) async fn emit_closed_webhooks(&self, task: &crate::task::Task) {
        let value = task.attributed_value.unwrap_or(0.0);
        self.emit_webhook(
            task.account_id,
            EventType::TaskClosed,
            Some(task.id),
            serde_json::json!({
                "task_id": task.id, "task_type": task.task_type, "status": task.status,
                "member": {"id": task.member.id, "name": task.member.name, "email": task.member.email},
                "outcome": task.outcome, "outcome_reason": task.outcome_reason, "value": task.attributed_value,
            }),
        )
        .await;
        if value > 0.0 && !task.is_held_out() {
            self.emit_webhook(
                task.account_id,
                EventType::MemberRetained,
                Some(task.id),
                serde_json::json!({
                    "member": {"id": task.member.id, "name": task.member.name, "email": task.member.email},
                    "task_id": task.id, "task_type": task.task_type, "outcome": task.outcome, "value": value,
                }),
            )
            .await;
        }
    }
}

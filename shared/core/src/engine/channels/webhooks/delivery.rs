//! Delivering outbound webhooks, from the `deliveries` queue: an event goes into the backlog
//! of each endpoint that takes it, then the endpoint is drained — its head posted, signed,
//! and taken off only once the receiver answered 2xx, so every event arrives at least once and
//! in order. A failure waits its back-off (`owner/outbound_webhook.rs`); the tick nudges
//! endpoints whose back-off ended (`nudge_due_webhooks`). An endpoint failing for a day is
//! disabled and its owner told.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::super::owner_notices::NoticeDraft;
use super::super::{Engine, boxed};
use crate::kernel::ids::AccountId;
use crate::owner::outbound_webhook::{DeliveryStatus, LEASE, OutboundEvent, WebhookEndpoint, signed_headers};
use crate::owner::owner_notice::NoticeKind;
use crate::ports::TransportError;
use crate::task::error::EngineError;
use crate::task::work::QueueName;

/// Deliveries one drain makes before handing the rest to another message (each may take the
/// transport's 10 seconds; the consumer has 60).
const DRAIN_MAX: usize = 4;
/// Due endpoints one tick nudges, at most.
const NUDGE_MAX: usize = 200;

/// A message on the `deliveries` queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "webhook_work", rename_all = "snake_case")]
pub enum WebhookWork {
    /// An event to put in its endpoints' backlogs and deliver.
    Event { event: OutboundEvent },
    /// Deliver what waits for one endpoint (its back-off ended, or a drain stopped at its bound).
    Drain { account_id: AccountId, endpoint_id: ulid::Ulid },
}

/// What one attempt came to.
enum Attempt {
    Delivered(u16),
    Failed(DeliveryStatus, Option<u16>, String),
}

impl Engine {
    /// Handle one message of the `deliveries` queue. An error leaves the message to be tried
    /// again (what was saved before it stays saved: an event already queued is not queued twice).
    pub async fn handle_webhook_work(&self, work: &WebhookWork) -> Result<(), EngineError> {
        boxed(async move {
            match work {
                WebhookWork::Event { event } => {
                    let mut drains = Vec::new();
                    for endpoint in self.store.list_endpoints(event.account_id).await? {
                        if !endpoint.takes(event.event_type) {
                            continue;
                        }
                        let now = self.clock.now();
                        self.change_endpoint(endpoint.account_id, endpoint.id, |e| {
                            let before = e.backlog.len() + e.log.len();
                            e.enqueue(event.clone(), now);
                            e.backlog.len() + e.log.len() != before
                        })
                        .await?;
                        drains.push((endpoint.account_id, endpoint.id));
                    }
                    // Each endpoint drained by a message of its own: one slow receiver never
                    // holds up another, and no message outlives the consumer's timeout.
                    self.queue_drains(&drains).await?;
                    // In every backlog that takes it: out of the outbox.
                    self.store.delete_outbox(event.account_id, &event.id).await?;
                    Ok(())
                }
                WebhookWork::Drain { account_id, endpoint_id } => self.drain_endpoint(*account_id, *endpoint_id).await,
            }
        })
        .await
    }

    /// Deliver an endpoint's backlog in order while it answers, if no other consumer holds it
    /// and its back-off has ended.
    async fn drain_endpoint(&self, account: AccountId, id: ulid::Ulid) -> Result<(), EngineError> {
        let now = self.clock.now();
        let mut claimed = false;
        let Some(mut endpoint) = self
            .change_endpoint(account, id, |e| {
                claimed = e.may_deliver(now);
                if claimed {
                    e.retry_at = None;
                    e.lease_until = Some(now + LEASE);
                }
                claimed
            })
            .await?
        else {
            return Ok(());
        };
        if !claimed {
            return Ok(());
        }
        for _ in 0..DRAIN_MAX {
            let Some(head) = endpoint.backlog.first().cloned() else {
                break;
            };
            let attempt = self.attempt(&endpoint, &head).await;
            let now = self.clock.now();
            let mut disabled = false;
            let mut delivered = false;
            let Some(next) = self
                .change_endpoint(account, id, |e| {
                    match &attempt {
                        Attempt::Delivered(status) => {
                            e.delivered(&head.id, *status, now);
                            delivered = true;
                        }
                        Attempt::Failed(kind, status, error) => disabled = e.failed(&head.id, *kind, *status, error.clone(), now),
                    }
                    e.lease_until = (delivered && !e.backlog.is_empty()).then_some(now + LEASE);
                    true
                })
                .await?
            else {
                return Ok(());
            };
            endpoint = next;
            if disabled {
                self.tell_owner_disabled(&endpoint).await;
            }
            if !delivered {
                tracing::warn!(account = %account, endpoint = %id, failures = endpoint.failures, "webhook delivery failed; retried after its back-off");
                return Ok(());
            }
        }
        if !endpoint.backlog.is_empty() {
            // The drain's bound: the lease given back, the rest in another message, still in order.
            self.change_endpoint(account, id, |e| {
                let held = e.lease_until.is_some();
                e.lease_until = None;
                held
            })
            .await?;
            self.queue_drains(&[(account, id)]).await?;
        }
        Ok(())
    }

    /// Queue a drain of each endpoint.
    async fn queue_drains(&self, endpoints: &[(AccountId, ulid::Ulid)]) -> Result<(), EngineError> {
        if endpoints.is_empty() {
            return Ok(());
        }
        let messages = endpoints
            .iter()
            .map(|(account_id, endpoint_id)| {
                serde_json::to_string(&WebhookWork::Drain {
                    account_id: *account_id,
                    endpoint_id: *endpoint_id,
                })
                .map(|body| (body, SignedDuration::ZERO))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| EngineError::Dependency(e.to_string()))?;
        self.queue
            .send(QueueName::Deliveries, messages)
            .await
            .map_err(|e| EngineError::Dependency(e.to_string()))
    }

    async fn attempt(&self, endpoint: &WebhookEndpoint, event: &OutboundEvent) -> Attempt {
        let Some(transport) = self.webhook_transport.as_ref() else {
            return Attempt::Failed(DeliveryStatus::Failed, None, "this deployment has no webhook transport".into());
        };
        let body = event.body();
        // The secret is opened here, for this signature, and nowhere else.
        let context = crate::kernel::sealed::SecretContext::webhook_endpoint(endpoint.account_id, endpoint.id);
        let secret = match self.store.open_secret(&endpoint.secret, &context).await {
            Ok(text) => crate::owner::account::WebhookSecret::new(text),
            Err(e) => {
                tracing::warn!(account = %endpoint.account_id, endpoint = %endpoint.id, error = %e, "the endpoint's secret could not be opened");
                return Attempt::Failed(DeliveryStatus::Failed, None, "the endpoint's secret could not be opened".into());
            }
        };
        let Some(headers) = signed_headers(&secret, event, &body, self.clock.now()) else {
            return Attempt::Failed(DeliveryStatus::Failed, None, "the endpoint's secret cannot sign".into());
        };
        match transport.post(&endpoint.url, &headers, &body).await {
            Ok(status) if (200..300).contains(&status) => Attempt::Delivered(status),
            Ok(status) => Attempt::Failed(DeliveryStatus::Failed, Some(status), format!("the receiver answered {status}")),
            Err(TransportError::Refused(why)) => Attempt::Failed(DeliveryStatus::Refused, None, why),
            Err(TransportError::Unreachable(why)) => Attempt::Failed(DeliveryStatus::Failed, None, why),
        }
    }

    async fn tell_owner_disabled(&self, endpoint: &WebhookEndpoint) {
        tracing::warn!(account = %endpoint.account_id, endpoint = %endpoint.id, "webhook endpoint disabled after a day of failures");
        let draft = NoticeDraft {
            kind: NoticeKind::SystemAlert,
            task_id: None,
            member_id: None,
            title: "A webhook endpoint was turned off".into(),
            detail: format!(
                "Every delivery to {} failed for a day, so Openloop stopped sending to it. Check the receiver, then remove the endpoint and add it again in Settings.",
                endpoint.url
            ),
        };
        self.notify_owner_after(endpoint.account_id, draft, false).await;
    }

    /// The tick's part: queue a drain for each endpoint whose back-off ended (or whose
    /// consumer's lease lapsed) by `now`. Reads grow with what is due, never with what is stored.
    pub(crate) async fn nudge_due_webhooks(&self, now: Timestamp) -> Result<usize, EngineError> {
        let due = self.store.due_endpoints(now, NUDGE_MAX).await?;
        self.queue_drains(&due).await?;
        Ok(due.len())
    }
}

//! PushPress's own webhook deliveries, after the adapter verified their
//! signature and read them ([`SourceDelivery`]): each is turned into the member event it
//! means and goes the way every member event goes — claimed once, queued, projected into the
//! facts by the signals worker.
//!
//! PushPress signs only `data`: its `created` may be anything a replayer likes. So a delivery
//! is known by its event name and a hash of the signed data (a replay with a new `created` is a
//! duplicate: for the webhook id's life, and for the member's last events in their facts), its
//! `created` must be within [`PUSHPRESS_CREATED_WINDOW`] of now, and it is ordered at the time
//! it was received — or `created` when that is earlier, so an unsigned value can move a
//! delivery back by the window at most, never ahead of a later genuine one. A booking is a trial only for a lead, so that one reads the facts first;
//! the rest is a pure mapping ([`member_event`]).

use jiff::Timestamp;

use super::{Accepted, Engine};
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::AccountId;
use crate::kernel::limits::PUSHPRESS_CREATED_WINDOW;
use crate::members::event::{MemberEvent, MemberStatus, WebhookEvent};
use crate::members::membership::CustomerFacts;
use crate::members::source::{SourceChange, SourceDelivery};
use crate::owner::account::WebhookSecret;
use crate::rails::risk;
use crate::task::error::EngineError;

/// What became of a delivery.
#[derive(Debug, PartialEq, Eq)]
pub enum DeliveryOutcome {
    Accepted(Accepted),
    /// Nothing to change (the reason is logged).
    Acknowledged(String),
    /// `customer.deleted`: the member's data was erased (see `engine/business/erasure.rs`).
    Erased,
}

/// The member event a change means, or why there is none. A booking needs the member's
/// status: `is_lead` says it.
pub fn member_event(change: &SourceChange, is_lead: bool) -> Result<MemberEvent, String> {
    Ok(match change {
        SourceChange::Customer(c) => {
            if c.role.is_some_and(crate::members::source::CustomerRole::is_staff) {
                return Err("a staff member, not a member".into());
            }
            MemberEvent::Customer {
                member_id: c.id.clone(),
                customer: CustomerFacts {
                    email: c.email.clone(),
                    first_name: c.first_name.clone(),
                    last_name: c.last_name.clone(),
                    role: c.role,
                    member_since: c.member_since,
                    phone: c.phone.clone(),
                    state: c.state.clone(),
                },
            }
        }
        SourceChange::Checkin(c) if c.failed => return Err("a failed check-in is not attendance".into()),
        SourceChange::Checkin(c) => MemberEvent::CheckinCreated {
            member_id: c.customer.clone(),
            checked_in_at: c.at,
            class_name: c.name.clone(),
        },
        SourceChange::Enrollment(e) => MemberEvent::Enrollment {
            member_id: e.customer.clone(),
            enrollment: e.clone(),
        },
        SourceChange::NoShow { customer, at, kind } => MemberEvent::NoShow {
            member_id: customer.clone(),
            at: *at,
            kind: *kind,
        },
        SourceChange::Booking { customer, booked_for } if is_lead => MemberEvent::TrialBooked {
            member_id: customer.clone(),
            booked_for: *booked_for,
        },
        SourceChange::Booking { .. } => return Err("a booking by someone who is not a lead is not a trial".into()),
        SourceChange::CustomerDeleted { .. } => return Err("a deleted customer is erased, not an event".into()),
        SourceChange::Acknowledged(why) => return Err(why.clone()),
    })
}

impl Engine {
    /// The secret PushPress signs this account's deliveries with; `None` while the account
    /// has no subscription (every delivery is then refused).
    pub async fn pushpress_signing_secret(&self, account: AccountId) -> Result<Option<WebhookSecret>, EngineError> {
        let connection = self.store.connection(account).await?;
        Ok(connection.and_then(|c| c.subscription).map(|s| s.signing_secret))
    }

    /// Accept a verified delivery: queue the member event it means (once per delivery), or
    /// acknowledge it.
    pub async fn accept_pushpress_delivery(
        &self,
        account: AccountId,
        delivery: SourceDelivery,
        received_at: Timestamp,
    ) -> Result<DeliveryOutcome, EngineError> {
        if received_at.duration_since(delivery.created).abs() > PUSHPRESS_CREATED_WINDOW {
            return Err(InvalidInput::new(
                "delivery_out_of_window",
                format!(
                    "created must be within {} minutes of now; this delivery is not fresh",
                    PUSHPRESS_CREATED_WINDOW.as_mins()
                ),
            )
            .into());
        }
        // PushPress deleted the customer: forget them now (an erasure is safe to repeat, so a
        // redelivery needs no claim); one Openloop never held is acknowledged.
        if let SourceChange::CustomerDeleted { customer } = &delivery.change {
            return match self.erase_member(account, customer).await {
                Ok(()) => Ok(DeliveryOutcome::Erased),
                Err(EngineError::NotFound { .. }) => Ok(DeliveryOutcome::Acknowledged(
                    "customer.deleted: Openloop holds nothing about this customer".into(),
                )),
                Err(e) => Err(e),
            };
        }
        let is_lead = match &delivery.change {
            SourceChange::Booking { customer, .. } => {
                let facts = self.store.get_member(account, customer).await?.map(|(f, _)| f);
                facts.is_some_and(|f| f.status == Some(MemberStatus::Lead))
            }
            _ => false,
        };
        let event = match member_event(&delivery.change, is_lead) {
            Ok(event) => event,
            Err(why) => {
                tracing::info!(%account, event = %delivery.event, data_id = %delivery.data_id, why, "PushPress delivery acknowledged");
                return Ok(DeliveryOutcome::Acknowledged(why));
            }
        };
        if let Err(invalid) = event.validate() {
            tracing::warn!(%account, event = %delivery.event, data_id = %delivery.data_id, error = %invalid.message, "PushPress delivery acknowledged, not applied");
            return Ok(DeliveryOutcome::Acknowledged(invalid.message));
        }
        let id = delivery.dedupe_id();
        let event = WebhookEvent {
            timestamp: delivery.created.min(received_at),
            event,
        };
        Ok(DeliveryOutcome::Accepted(
            self.accept_member_event(account, &id, event, received_at).await?,
        ))
    }
}

impl Engine {
    /// PushPress has no payment events, so an enrollment turning `alert` is
    /// read as payment trouble — an inference, said so in the goal and the context, and with a
    /// confidence under every threshold so the owner always reviews it first. The episode is
    /// the one the risk scan would find (after an import), claimed so only one of them acts.
    pub(crate) async fn inferred_payment_trouble(
        &self,
        account: &crate::owner::account::Account,
        facts: &crate::members::member::MemberFacts,
        enrollment: &crate::members::source::Enrollment,
        webhook_id: &str,
        burst: &crate::task::flood::Burst,
    ) -> Result<Option<crate::kernel::ids::TaskId>, EngineError> {
        use super::tasks::{Created, NewTask};
        if enrollment.status != crate::members::source::EnrollmentStatus::Alert {
            return Ok(None);
        }
        let now = self.clock.now();
        let episode = crate::engine::learning::analysis::episode_key(
            account.id,
            &facts.member_id,
            "payment_recovery",
            &risk::alert_episode(&enrollment.id, enrollment.paid_until),
        );
        let input = NewTask {
            task_type: "payment_recovery".into(),
            member_id: facts.member_id.clone(),
            goal: risk::ALERT_PAYMENT_GOAL.into(),
            confidence: Some(risk::INFERRED_PAYMENT_CONFIDENCE),
            draft: None,
            trigger_type: crate::task::TriggerType::Webhook,
            trigger_event_id: Some(webhook_id.to_owned()),
            gate: crate::rails::gate::GateContext {
                tenure_days: facts.tenure_days(now),
                monthly_value: facts.monthly_value,
                cancellation_reason: None,
            },
            context: serde_json::json!({
                "inferred": true,
                "reason": "PushPress marked the enrollment `alert`; PushPress reports no payments, so a failed payment is inferred, not known",
                "enrollment_id": enrollment.id,
                "plan_id": enrollment.plan_id,
                "paid_until": enrollment.paid_until,
            }),
        };
        let created = match self.create_for_episode(account, input, burst, &episode).await {
            Ok(Some(Created::New(task))) => Some(task.id),
            // Acted on already, or a suppressed member (logged); a limit: not acted on, and
            // nothing claimed, so the scan may act on it later.
            Ok(None | Some(Created::Existing(_))) | Err(EngineError::MemberSuppressed { .. } | EngineError::Limited(_)) => None,
            Err(e) => return Err(e),
        };
        Ok(created)
    }
}

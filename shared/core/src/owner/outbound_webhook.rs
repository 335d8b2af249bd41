//! Outbound webhooks: the owner's endpoints, the events
//! they take, how a delivery is signed (Standard Webhooks, as deliveries into Openloop are
//! checked), the retry schedule and when a failing endpoint is disabled. Which addresses may
//! receive is `webhook_address.rs`; the engine's `webhooks/` carries deliveries out from a
//! queue, never inside the request that caused the event.
//!
//! An endpoint is one versioned record: its settings, the events waiting for it (oldest
//! first, delivered strictly in order — so in order per task) and its delivery log. Taking
//! the head of the backlog is a write over the record's version, so two consumers never
//! deliver out of order; a delivery that fails waits its back-off before the next try.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, TaskId};
use crate::owner::account::WebhookSecret;

/// Endpoints one account may have.
pub const MAX_ENDPOINTS: usize = 10;
/// Events waiting for one endpoint, at most; past it a new event is logged as dropped.
pub const MAX_BACKLOG: usize = 100;
/// Delivery attempts kept in an endpoint's log, newest kept.
pub const LOG_KEPT: usize = 50;
/// A URL's length, at most.
pub const MAX_URL_CHARS: usize = 2_000;
/// An endpoint failing this long is disabled and its owner told.
pub const DISABLE_AFTER_FAILING: SignedDuration = SignedDuration::from_hours(24);
/// How long a consumer holds an endpoint while it delivers (past it another may take over).
pub const LEASE: SignedDuration = SignedDuration::from_mins(2);
/// The waits after each consecutive failure (Standard Webhooks' suggested schedule), the last
/// repeated until the endpoint has failed for [`DISABLE_AFTER_FAILING`].
pub const BACKOFF: [SignedDuration; 6] = [
    SignedDuration::from_secs(5),
    SignedDuration::from_mins(5),
    SignedDuration::from_mins(30),
    SignedDuration::from_hours(2),
    SignedDuration::from_hours(5),
    SignedDuration::from_hours(10),
];

/// What an endpoint can be told about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventType {
    #[serde(rename = "task.escalated")]
    TaskEscalated,
    #[serde(rename = "task.closed")]
    TaskClosed,
    #[serde(rename = "member.retained")]
    MemberRetained,
    #[serde(rename = "todo.created")]
    TodoCreated,
    #[serde(rename = "brief.ready")]
    BriefReady,
}

impl EventType {
    pub const ALL: [EventType; 5] = [
        EventType::TaskEscalated,
        EventType::TaskClosed,
        EventType::MemberRetained,
        EventType::TodoCreated,
        EventType::BriefReady,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::TaskEscalated => "task.escalated",
            EventType::TaskClosed => "task.closed",
            EventType::MemberRetained => "member.retained",
            EventType::TodoCreated => "todo.created",
            EventType::BriefReady => "brief.ready",
        }
    }

    /// What the event tells, as the owner reads it on the webhooks page.
    pub fn words(self) -> &'static str {
        match self {
            EventType::TaskEscalated => "A task waits for you",
            EventType::TaskClosed => "A task closed",
            EventType::MemberRetained => "A member was retained",
            EventType::TodoCreated => "A to-do was made",
            EventType::BriefReady => "The morning brief is ready",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

/// Every event's name.
pub fn event_names() -> Vec<&'static str> {
    EventType::ALL.iter().map(|e| e.as_str()).collect()
}

crate::kernel::bounded::bounded_text! {
    /// An endpoint's address: `https` (the local runtime also takes `http` to loopback).
    pub EndpointUrl = crate::kernel::bounded::TextRule::line(MAX_URL_CHARS, "invalid_url").min(1).format("uri");
    /// An event an endpoint can be told about.
    pub EventName = crate::kernel::bounded::TextRule::line(32, "invalid_events").one_of(event_names);
}

/// `POST /api/v1/webhook-endpoints`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewWebhookEndpoint {
    pub url: EndpointUrl,
    /// At least one.
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub events: Vec<EventName>,
}

impl NewWebhookEndpoint {
    /// The events named, each known, at least one.
    pub fn event_types(&self) -> Result<BTreeSet<EventType>, InvalidInput> {
        if self.events.is_empty() || self.events.len() > EventType::ALL.len() * 2 {
            return Err(InvalidInput::new(
                "invalid_events",
                "events must name at least one of task.escalated, task.closed, member.retained, todo.created, brief.ready",
            ));
        }
        self.events
            .iter()
            .map(|e| {
                EventType::parse(e).ok_or_else(|| {
                    InvalidInput::new(
                        "invalid_events",
                        format!(
                            "{:?} is not an event (task.escalated, task.closed, member.retained, todo.created, brief.ready)",
                            e.chars().take(60).collect::<String>()
                        ),
                    )
                })
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EndpointStatus {
    Active,
    /// Failed for a day (or more); nothing more is queued for it.
    Disabled,
}

/// One event as its endpoints receive it: `{"type", "timestamp", "data"}`, under its id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutboundEvent {
    /// `msg_{ulid}`: the `webhook-id` of every attempt, so a receiver can drop repeats.
    pub id: String,
    pub account_id: AccountId,
    pub event_type: EventType,
    pub timestamp: Timestamp,
    /// The task it is about, if any (ordering is per endpoint, hence per task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    pub data: serde_json::Value,
}

impl OutboundEvent {
    /// The body signed and sent.
    pub fn body(&self) -> String {
        serde_json::json!({
            "type": self.event_type.as_str(),
            "timestamp": self.timestamp,
            "data": self.data,
        })
        .to_string()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// The receiver answered 2xx.
    Delivered,
    /// Any other answer, or none; tried again after the back-off.
    Failed,
    /// The address resolved to a network no delivery may reach; tried again like a failure.
    Refused,
    /// Not queued: the endpoint's backlog was full.
    Dropped,
}

/// One attempt in an endpoint's delivery log (`GET /api/v1/webhook-endpoints/{id}/deliveries`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryRecord {
    pub event_id: String,
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// 1 for the first try.
    pub attempt: u32,
    pub at: Timestamp,
    pub status: DeliveryStatus,
    /// The receiver's HTTP status, when it answered.
    pub response_status: Option<u16>,
    /// What went wrong, in words (never the receiver's body).
    pub error: Option<String>,
    /// When it is tried again, if it will be.
    pub next_attempt_at: Option<Timestamp>,
}

/// An owner's endpoint with what waits for it and what happened to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookEndpoint {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    pub url: String,
    pub events: BTreeSet<EventType>,
    /// Sealed at rest (`kernel::sealed`); opened only to sign a delivery.
    pub secret: crate::kernel::sealed::Secret,
    pub status: EndpointStatus,
    #[serde(default)]
    pub disabled_reason: Option<String>,
    /// Events not yet delivered, oldest first.
    #[serde(default)]
    pub backlog: Vec<OutboundEvent>,
    /// Consecutive failed attempts at the head of the backlog.
    #[serde(default)]
    pub failures: u32,
    /// Since when every attempt failed.
    #[serde(default)]
    pub failing_since: Option<Timestamp>,
    /// No attempt before this (the back-off).
    #[serde(default)]
    pub retry_at: Option<Timestamp>,
    /// A consumer is delivering until then.
    #[serde(default)]
    pub lease_until: Option<Timestamp>,
    /// The last [`LOG_KEPT`] attempts, oldest first.
    #[serde(default)]
    pub log: Vec<DeliveryRecord>,
    pub created_at: Timestamp,
    pub version: u64,
}

impl WebhookEndpoint {
    pub fn new(
        id: ulid::Ulid,
        account_id: AccountId,
        url: String,
        events: BTreeSet<EventType>,
        secret: WebhookSecret,
        now: Timestamp,
    ) -> Self {
        Self {
            id,
            account_id,
            url,
            events,
            secret: crate::kernel::sealed::Secret::Open(secret.expose().to_owned()),
            status: EndpointStatus::Active,
            disabled_reason: None,
            backlog: Vec::new(),
            failures: 0,
            failing_since: None,
            retry_at: None,
            lease_until: None,
            log: Vec::new(),
            created_at: now,
            version: 1,
        }
    }

    /// When a consumer should look at it again without a new event (the due index): the end
    /// of its back-off, or of a lease whose holder may have died, while events wait.
    pub fn due_at(&self) -> Option<Timestamp> {
        if self.status == EndpointStatus::Disabled || self.backlog.is_empty() {
            return None;
        }
        self.retry_at.or(self.lease_until)
    }

    /// Whether it takes `event`.
    pub fn takes(&self, event: EventType) -> bool {
        self.status == EndpointStatus::Active && self.events.contains(&event)
    }

    /// Queue an event behind the others (or log it dropped when the backlog is full).
    pub fn enqueue(&mut self, event: OutboundEvent, now: Timestamp) {
        if self.backlog.iter().any(|e| e.id == event.id) {
            return;
        }
        if self.backlog.len() >= MAX_BACKLOG {
            self.record(DeliveryRecord {
                event_id: event.id,
                event_type: event.event_type,
                attempt: 0,
                at: now,
                status: DeliveryStatus::Dropped,
                response_status: None,
                error: Some(format!("{MAX_BACKLOG} events were already waiting for this endpoint")),
                next_attempt_at: None,
            });
            return;
        }
        self.backlog.push(event);
    }

    /// Whether a consumer may deliver now: active, something waits, not backing off, not held.
    pub fn may_deliver(&self, now: Timestamp) -> bool {
        self.status == EndpointStatus::Active
            && !self.backlog.is_empty()
            && self.retry_at.is_none_or(|t| t <= now)
            && self.lease_until.is_none_or(|t| t <= now)
    }

    /// The head was delivered (`status` the receiver's answer).
    pub fn delivered(&mut self, event_id: &str, status: u16, now: Timestamp) {
        let Some(head) = self.backlog.first().filter(|e| e.id == event_id).cloned() else {
            return;
        };
        self.backlog.remove(0);
        self.record(DeliveryRecord {
            event_id: head.id,
            event_type: head.event_type,
            attempt: self.failures + 1,
            at: now,
            status: DeliveryStatus::Delivered,
            response_status: Some(status),
            error: None,
            next_attempt_at: None,
        });
        self.failures = 0;
        self.failing_since = None;
        self.retry_at = None;
    }

    /// The head failed: its next try after the back-off, or — failing for a day — the
    /// endpoint disabled. Answers whether this failure disabled it.
    pub fn failed(&mut self, event_id: &str, status: DeliveryStatus, response_status: Option<u16>, error: String, now: Timestamp) -> bool {
        let Some(head) = self.backlog.first().filter(|e| e.id == event_id).cloned() else {
            return false;
        };
        let since = *self.failing_since.get_or_insert(now);
        self.failures += 1;
        let next = next_attempt(self.failures, since, now);
        self.record(DeliveryRecord {
            event_id: head.id,
            event_type: head.event_type,
            attempt: self.failures,
            at: now,
            status,
            response_status,
            error: Some(error),
            next_attempt_at: next,
        });
        self.retry_at = next;
        self.lease_until = None;
        if next.is_none() {
            self.status = EndpointStatus::Disabled;
            self.disabled_reason = Some(format!("every delivery failed for {} hours", DISABLE_AFTER_FAILING.as_hours()));
            return true;
        }
        false
    }

    fn record(&mut self, record: DeliveryRecord) {
        self.log.push(record);
        if self.log.len() > LOG_KEPT {
            let extra = self.log.len() - LOG_KEPT;
            self.log.drain(..extra);
        }
    }
}

/// When to try again after the `failures`-th consecutive failure of an endpoint failing since
/// `since`: the back-off, never past a day of failing; `None` once it has failed for a day.
pub fn next_attempt(failures: u32, since: Timestamp, now: Timestamp) -> Option<Timestamp> {
    let give_up = since + DISABLE_AFTER_FAILING;
    if now >= give_up {
        return None;
    }
    let index = usize::try_from(failures.saturating_sub(1))
        .unwrap_or(usize::MAX)
        .min(BACKOFF.len() - 1);
    Some((now + BACKOFF[index]).min(give_up))
}

/// `webhook-signature` for a delivery: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`
/// keyed with the base64 part of the `whsec_` secret; `None` for a secret that is not one.
pub fn sign(secret: &WebhookSecret, id: &str, timestamp: i64, body: &str) -> Option<String> {
    use base64::Engine as _;
    use hmac::Mac as _;
    let encoded = secret.expose().strip_prefix("whsec_")?;
    let key = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    Some(format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// The headers of one attempt, Standard Webhooks' names.
pub fn signed_headers(secret: &WebhookSecret, event: &OutboundEvent, body: &str, now: Timestamp) -> Option<Vec<(String, String)>> {
    let timestamp = now.as_second();
    Some(vec![
        ("content-type".into(), "application/json".into()),
        ("webhook-id".into(), event.id.clone()),
        ("webhook-timestamp".into(), timestamp.to_string()),
        ("webhook-signature".into(), sign(secret, &event.id, timestamp, body)?),
    ])
}

/// An endpoint as the owner sees it (never its secret).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookEndpointView {
    pub id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub status: EndpointStatus,
    pub disabled_reason: Option<String>,
    /// Events waiting to be delivered.
    pub pending: usize,
    pub created_at: Timestamp,
}

impl From<&WebhookEndpoint> for WebhookEndpointView {
    fn from(e: &WebhookEndpoint) -> Self {
        Self {
            id: e.id.to_string(),
            url: e.url.clone(),
            events: e.events.iter().copied().collect(),
            status: e.status,
            disabled_reason: e.disabled_reason.clone(),
            pending: e.backlog.len(),
            created_at: e.created_at,
        }
    }
}

/// `201` of `POST /api/v1/webhook-endpoints`: the endpoint and its secret, shown this once.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedWebhookEndpoint {
    pub id: String,
    pub url: String,
    pub events: Vec<EventType>,
    pub secret: String,
    pub status: EndpointStatus,
    pub created_at: Timestamp,
}

/// `GET /api/v1/webhook-endpoints`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookEndpointList {
    pub webhook_endpoints: Vec<WebhookEndpointView>,
}

/// `GET /api/v1/webhook-endpoints/{id}/deliveries`: newest first.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookDeliveryLog {
    pub deliveries: Vec<DeliveryRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(h: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + h * 3600).expect("time")
    }

    #[test]
    fn retries_back_off_and_stop_after_a_day_of_failing() {
        let since = at(0);
        assert_eq!(next_attempt(1, since, since), Some(since + SignedDuration::from_secs(5)));
        assert_eq!(next_attempt(2, since, since), Some(since + SignedDuration::from_mins(5)));
        assert_eq!(next_attempt(9, since, at(20)), Some(at(24)), "never past a day of failing");
        assert_eq!(next_attempt(9, since, at(24)), None);
    }

    #[test]
    fn a_signature_is_standard_webhooks() {
        // Standard Webhooks' own test vector.
        let secret = WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            sign(&secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
        assert_eq!(sign(&WebhookSecret::new("not-a-secret"), "a", 1, "b"), None);
    }

    #[test]
    fn the_head_waits_its_back_off_and_a_day_of_failing_disables() {
        let mut e = WebhookEndpoint::new(
            ulid::Ulid::nil(),
            AccountId::generate(at(0)),
            "https://example.com/hook".into(),
            BTreeSet::from([EventType::TaskClosed]),
            WebhookSecret::new("whsec_AAAA"),
            at(0),
        );
        let event = |n: u8| OutboundEvent {
            id: format!("msg_{n}"),
            account_id: e_account(),
            event_type: EventType::TaskClosed,
            timestamp: at(0),
            task_id: None,
            data: serde_json::json!({}),
        };
        fn e_account() -> AccountId {
            AccountId::generate(Timestamp::UNIX_EPOCH)
        }
        e.enqueue(event(1), at(0));
        e.enqueue(event(2), at(0));
        assert!(e.may_deliver(at(0)));
        assert!(!e.failed("msg_1", DeliveryStatus::Failed, Some(500), "500".into(), at(0)));
        assert!(!e.may_deliver(at(0)), "backing off");
        assert_eq!(e.due_at(), Some(at(0) + SignedDuration::from_secs(5)));
        e.delivered("msg_2", 200, at(1));
        assert_eq!(e.backlog.len(), 2, "only the head is delivered: order kept");
        e.delivered("msg_1", 200, at(1));
        assert_eq!(e.backlog[0].id, "msg_2");
        assert!(!e.failed("msg_2", DeliveryStatus::Failed, None, "timeout".into(), at(2)));
        assert!(e.failed("msg_2", DeliveryStatus::Failed, None, "timeout".into(), at(26)));
        assert_eq!(e.status, EndpointStatus::Disabled);
        assert_eq!(e.due_at(), None);
        assert!(!e.takes(EventType::TaskClosed));
    }
}

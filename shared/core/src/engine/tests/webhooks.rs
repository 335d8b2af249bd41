//! Outbound webhooks on the in-memory store: an escalation reaches the endpoint signed, from
//! the queue and not before; a failing receiver is tried again after each back-off as the
//! clock moves, in order, and is disabled after a day with the owner told; a private address
//! is refused outside local mode, at creation and again at delivery.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use super::*;
use crate::kernel::error::InvalidInput;
use crate::owner::account::WebhookSecret;
use crate::owner::outbound_webhook::{DeliveryStatus, EndpointStatus, NewWebhookEndpoint, sign};
use crate::owner::webhook_address::AddressPolicy;
use crate::ports::{Clock, TransportError, WebhookStore, WebhookTransport};

/// One post as the fake receiver got it: url, headers, body.
type Post = (String, Vec<(String, String)>, String);

/// A receiver and a resolver: what it answers, what it was sent, where names point.
struct FakeTransport {
    policy: AddressPolicy,
    dns: Mutex<HashMap<String, IpAddr>>,
    answer: Mutex<u16>,
    posts: Mutex<Vec<Post>>,
}

impl FakeTransport {
    fn new(local: bool) -> Arc<Self> {
        Arc::new(Self {
            policy: AddressPolicy { local },
            dns: Mutex::new(HashMap::from([("hooks.example.com".into(), "93.184.216.34".parse().expect("ip"))])),
            answer: Mutex::new(200),
            posts: Mutex::new(Vec::new()),
        })
    }

    fn resolve(&self, url: &str) -> Result<IpAddr, InvalidInput> {
        let target = self.policy.check_url(url)?;
        let ip = match target.ip() {
            Some(ip) => ip,
            None => *self
                .dns
                .lock()
                .expect("dns")
                .get(&target.host)
                .ok_or_else(|| InvalidInput::new("webhook_address_refused", "no such host"))?,
        };
        self.policy.check_ip(ip)?;
        Ok(ip)
    }

    fn posts(&self) -> Vec<Post> {
        self.posts.lock().expect("posts").clone()
    }
}

#[async_trait::async_trait]
impl WebhookTransport for FakeTransport {
    async fn check_address(&self, url: &str) -> Result<(), InvalidInput> {
        self.resolve(url).map(|_| ())
    }

    async fn post(&self, url: &str, headers: &[(String, String)], body: &str) -> Result<u16, TransportError> {
        self.resolve(url).map_err(|e| TransportError::Refused(e.message))?;
        self.posts.lock().expect("posts").push((url.into(), headers.to_vec(), body.into()));
        Ok(*self.answer.lock().expect("answer"))
    }
}

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

impl World {
    fn with_transport(&mut self, transport: Arc<FakeTransport>) {
        self.engine.webhook_transport = Some(transport);
    }

    async fn endpoint(&self, url: &str, events: &[&str]) -> Result<String, EngineError> {
        let input = NewWebhookEndpoint {
            url: crate::owner::outbound_webhook::EndpointUrl::parse("url", url).map_err(EngineError::from)?,
            events: events
                .iter()
                .map(|e| crate::owner::outbound_webhook::EventName::parse("events", *e).map_err(EngineError::from))
                .collect::<Result<_, _>>()?,
        };
        Ok(self
            .engine
            .create_webhook_endpoint(self.account.id, input, WebhookSecret::new(SECRET))
            .await?
            .id)
    }

    /// A task escalated by its member's reply (a legal threat escalates at once).
    async fn escalated(&self) -> Task {
        let task = self.approved("churn_risk", "m_hook").await;
        self.run().await;
        let mail = self.answer_newest(
            "m-hook@example.com",
            "r1@example.com",
            "Stop harassing me or you'll hear from my lawyer.",
        );
        self.engine.receive_reply(&mail).await.expect("reply");
        let task = self.task(&task).await;
        assert_eq!(task.status, TaskStatus::Escalated);
        task
    }
}

use crate::task::error::EngineError;

#[tokio::test]
async fn an_escalation_is_delivered_signed_from_the_queue() {
    let mut w = world().await;
    let transport = FakeTransport::new(false);
    w.with_transport(transport.clone());
    let id = w
        .endpoint("https://hooks.example.com/openloop", &["task.escalated"])
        .await
        .expect("endpoint");
    let task = w.escalated().await;
    assert!(transport.posts().is_empty(), "nothing posted inside the step that escalated");
    w.run().await;
    let posts = transport.posts();
    assert_eq!(posts.len(), 1, "{posts:?}");
    let (url, headers, body) = &posts[0];
    assert_eq!(url, "https://hooks.example.com/openloop");
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).expect(name);
    let expected = sign(
        &WebhookSecret::new(SECRET),
        &header("webhook-id"),
        header("webhook-timestamp").parse().expect("ts"),
        body,
    );
    assert_eq!(Some(header("webhook-signature")), expected);
    let json: serde_json::Value = serde_json::from_str(body).expect("json");
    assert_eq!(json["type"], "task.escalated");
    assert_eq!(json["data"]["task_id"], task.id.to_string());
    let log = w.engine.webhook_deliveries(w.account.id, &id).await.expect("log");
    assert_eq!(log.deliveries[0].status, DeliveryStatus::Delivered);
}

#[tokio::test]
async fn a_failing_receiver_is_retried_with_back_off_then_disabled_after_a_day() {
    let mut w = world().await;
    let transport = FakeTransport::new(false);
    *transport.answer.lock().expect("answer") = 503;
    w.with_transport(transport.clone());
    let id = w.endpoint("https://hooks.example.com/x", &["task.closed"]).await.expect("endpoint");
    let task = w.approved("churn_risk", "m_closing").await;
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    w.run().await;
    assert_eq!(transport.posts().len(), 1, "the first try");
    w.run().await;
    assert_eq!(transport.posts().len(), 1, "nothing before the back-off ends");
    let start = w.clock.now();
    w.clock.set(start + SignedDuration::from_secs(6));
    w.run().await;
    assert_eq!(transport.posts().len(), 2, "tried again after 5 seconds");
    w.clock.set(start + SignedDuration::from_mins(6));
    w.run().await;
    assert_eq!(transport.posts().len(), 3, "and after 5 minutes");
    let ids: Vec<String> = transport
        .posts()
        .iter()
        .map(|(_, h, _)| h.iter().find(|(k, _)| k == "webhook-id").expect("id").1.clone())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "one message id across its tries");
    for hours in [1, 3, 8, 18, 24, 25] {
        w.clock.set(start + SignedDuration::from_hours(hours));
        w.run().await;
    }
    let view = w.engine.webhook_endpoint(w.account.id, &id).await.expect("view");
    assert_eq!(view.status, EndpointStatus::Disabled);
    let tries = transport.posts().len();
    assert!((7..=10).contains(&tries), "{tries} tries over the day");
    let notices = w.store.list_notices(w.account.id, 50, None).await.expect("notices").0;
    assert!(
        notices.iter().any(|n| n.title.contains("webhook endpoint was turned off")),
        "the owner is told"
    );
    w.clock.set(start + SignedDuration::from_hours(30));
    w.run().await;
    assert_eq!(transport.posts().len(), tries, "nothing more to a disabled endpoint");
}

#[tokio::test]
async fn a_private_address_is_refused_outside_local_mode_at_creation_and_delivery() {
    let mut w = world().await;
    let transport = FakeTransport::new(false);
    transport
        .dns
        .lock()
        .expect("dns")
        .insert("internal.example.com".into(), "10.0.0.7".parse().expect("ip"));
    w.with_transport(transport.clone());
    for url in [
        "https://internal.example.com/hook",
        "https://169.254.169.254/latest",
        "http://hooks.example.com/plain",
        "http://127.0.0.1:9000/local-only",
    ] {
        let err = w.endpoint(url, &["task.closed"]).await.expect_err(url);
        assert!(
            matches!(err, EngineError::Invalid(ref e) if e.code == "webhook_address_refused"),
            "{url}: {err:?}"
        );
    }
    // A name that resolved to a public address, then moved to a private one.
    let id = w.endpoint("https://hooks.example.com/x", &["task.closed"]).await.expect("endpoint");
    transport
        .dns
        .lock()
        .expect("dns")
        .insert("hooks.example.com".into(), "192.168.0.9".parse().expect("ip"));
    let task = w.approved("churn_risk", "m_moved").await;
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    w.run().await;
    assert!(transport.posts().is_empty());
    let log = w.engine.webhook_deliveries(w.account.id, &id).await.expect("log");
    assert_eq!(log.deliveries[0].status, DeliveryStatus::Refused);

    // The local runtime takes http to loopback.
    let mut local = world().await;
    local.with_transport(FakeTransport::new(true));
    local
        .endpoint("http://127.0.0.1:9000/hook", &["task.closed"])
        .await
        .expect("local loopback");
}

#[tokio::test]
async fn events_reach_an_endpoint_in_order_and_others_are_not_sent() {
    let mut w = world().await;
    let transport = FakeTransport::new(false);
    w.with_transport(transport.clone());
    w.endpoint("https://hooks.example.com/closed", &["task.closed", "member.retained"])
        .await
        .expect("endpoint");
    let a = w.approved("churn_risk", "m_a").await;
    let b = w.approved("churn_risk", "m_b").await;
    w.engine.cancel(w.account.id, a.id).await.expect("cancel");
    w.engine.cancel(w.account.id, b.id).await.expect("cancel");
    w.run().await;
    let tasks: Vec<String> = transport
        .posts()
        .iter()
        .map(|(_, _, body)| {
            serde_json::from_str::<serde_json::Value>(body).expect("json")["data"]["task_id"]
                .as_str()
                .expect("id")
                .to_owned()
        })
        .collect();
    assert_eq!(tasks, [a.id.to_string(), b.id.to_string()]);
    let other = w.engine.webhook_endpoints(w.account.id).await.expect("list");
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].pending, 0);
}

#[tokio::test]
async fn a_long_backlog_is_delivered_in_order_across_drains() {
    let mut w = world().await;
    let transport = FakeTransport::new(false);
    w.with_transport(transport.clone());
    w.endpoint("https://hooks.example.com/many", &["task.closed"])
        .await
        .expect("endpoint");
    let mut ids = Vec::new();
    for i in 0..7 {
        let task = w.approved("churn_risk", &format!("m_many_{i}")).await;
        w.engine.cancel(w.account.id, task.id).await.expect("cancel");
        ids.push(task.id.to_string());
    }
    w.run().await;
    let delivered: Vec<String> = transport
        .posts()
        .iter()
        .map(|(_, _, body)| {
            serde_json::from_str::<serde_json::Value>(body).expect("json")["data"]["task_id"]
                .as_str()
                .expect("id")
                .to_owned()
        })
        .collect();
    assert_eq!(delivered, ids, "every event, in order, without waiting for a lease to lapse");
}

/// A queue whose `deliveries` refuse every send while `down`; the rest reach the world's queue.
struct DeliveriesDown {
    down: std::sync::atomic::AtomicBool,
    taken: Arc<RecordingQueue>,
}

#[async_trait::async_trait]
impl crate::ports::Queue for DeliveriesDown {
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), crate::ports::QueueError> {
        if queue == QueueName::Deliveries && self.down.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(crate::ports::QueueError {
                queue,
                message: "injected: the queue refuses".into(),
            });
        }
        self.taken.send(queue, messages).await
    }
}

/// A world with a receiver, whose `deliveries` queue refuses sends until told otherwise.
async fn with_deliveries_down() -> (World, Arc<FakeTransport>, Arc<DeliveriesDown>) {
    let mut w = world().await;
    let transport = FakeTransport::new(false);
    w.with_transport(transport.clone());
    let queue = Arc::new(DeliveriesDown {
        down: std::sync::atomic::AtomicBool::new(true),
        taken: w.queue.clone(),
    });
    w.engine.queue = queue.clone();
    (w, transport, queue)
}

/// Given the `deliveries` queue refusing sends, when a task closes, then its event is not
/// lost: it waits in the outbox, and once the queue takes sends again the tick queues it and
/// the endpoint receives it, once; an event the queue took leaves the outbox and is never
/// sent again.
#[tokio::test]
async fn an_event_whose_queue_send_fails_is_kept_and_sent_by_a_later_tick() {
    let (w, transport, queue) = with_deliveries_down().await;
    w.endpoint("https://hooks.example.com/x", &["task.closed"]).await.expect("endpoint");
    let task = w.approved("churn_risk", "m_lost").await;
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    w.run().await;
    assert!(transport.posts().is_empty(), "the queue refused the event");
    let kept = w
        .store
        .due_outbox(w.clock.now() + SignedDuration::from_hours(1), 10)
        .await
        .expect("outbox");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].event.event_type, crate::owner::outbound_webhook::EventType::TaskClosed);

    queue.down.store(false, std::sync::atomic::Ordering::SeqCst);
    w.run().await;
    assert!(transport.posts().is_empty(), "not before its grace ends");
    w.clock
        .advance(crate::owner::webhook_event::OUTBOX_GRACE + SignedDuration::from_secs(1));
    w.run().await;
    let posts = transport.posts();
    assert_eq!(posts.len(), 1, "{posts:?}");
    let body: serde_json::Value = serde_json::from_str(&posts[0].2).expect("json");
    assert_eq!(
        (body["type"].as_str(), body["data"]["task_id"].as_str()),
        (Some("task.closed"), Some(task.id.to_string().as_str()))
    );
    let left = w
        .store
        .due_outbox(w.clock.now() + SignedDuration::from_hours(2), 10)
        .await
        .expect("outbox");
    assert!(left.is_empty(), "taken out once in the backlogs: {left:?}");

    // A close the queue takes at once is delivered once, and nothing waits behind it.
    let other = w.approved("churn_risk", "m_kept").await;
    w.engine.cancel(w.account.id, other.id).await.expect("cancel");
    w.run().await;
    assert_eq!(transport.posts().len(), 2);
    w.clock.advance(SignedDuration::from_hours(2));
    w.run().await;
    assert_eq!(transport.posts().len(), 2, "sent once");
    assert!(w.store.due_outbox(w.clock.now(), 10).await.expect("outbox").is_empty());
}

/// Given an account with no webhook endpoint, when a task's step closes it, then no event is
/// written to the outbox (nor queued); once the account has an endpoint, the same close is
/// written with its commit and delivered as before; and removing the endpoint stops it again.
#[tokio::test]
async fn a_step_writes_webhook_events_only_while_the_account_has_an_endpoint() {
    // The queue refuses deliveries, so whatever a commit wrote stays in the outbox to be seen.
    let (w, transport, queue) = with_deliveries_down().await;
    let closed_by_its_step = |member: &'static str| {
        let w = &w;
        async move {
            let task = w.approved("churn_risk", member).await;
            w.run().await;
            w.clock.advance(days(14) + SignedDuration::from_mins(1));
            w.run().await;
            let done = w.task(&task).await;
            assert_eq!(done.status, TaskStatus::Cancelled, "time ran out");
            done
        }
    };
    let outbox = |w: &World| {
        let (store, until) = (w.store.clone(), w.clock.now() + SignedDuration::from_hours(24));
        async move { store.due_outbox(until, 10).await.expect("outbox") }
    };

    closed_by_its_step("m_quiet").await;
    assert!(outbox(&w).await.is_empty(), "no endpoint: nothing written");

    let id = w.endpoint("https://hooks.example.com/x", &["task.closed"]).await.expect("endpoint");
    let heard = closed_by_its_step("m_heard").await;
    let kept = outbox(&w).await;
    assert_eq!(
        kept.iter().map(|i| (i.event.event_type, i.event.task_id)).collect::<Vec<_>>(),
        [(crate::owner::outbound_webhook::EventType::TaskClosed, Some(heard.id))],
        "an endpoint: the close's event written with it"
    );
    queue.down.store(false, std::sync::atomic::Ordering::SeqCst);
    w.clock
        .advance(crate::owner::webhook_event::OUTBOX_GRACE + SignedDuration::from_secs(1));
    w.run().await;
    let posts = transport.posts();
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert!(posts[0].2.contains(&heard.id.to_string()), "delivered as before");
    assert!(outbox(&w).await.is_empty());

    w.engine.delete_webhook_endpoint(w.account.id, &id).await.expect("delete");
    queue.down.store(true, std::sync::atomic::Ordering::SeqCst);
    closed_by_its_step("m_gone").await;
    assert!(outbox(&w).await.is_empty(), "the endpoint removed: nothing written again");
}

/// The ways a task closes or escalates outside its own step.
#[derive(Clone, Copy, Debug)]
enum Path {
    OwnerCancels,
    OwnerSkips,
    OwnerReopens,
    MemberThreatens,
    MemberRepliesStop,
    OwnerSuppresses,
}

impl World {
    /// A task of `member` closed or escalated through `path`, and the event that says so.
    async fn moved_through(&self, path: Path, member: &str) -> (crate::kernel::ids::TaskId, crate::owner::outbound_webhook::EventType) {
        use crate::owner::outbound_webhook::EventType::{TaskClosed, TaskEscalated};
        let email = format!("{member}@example.com").replace('_', "-");
        let reply = |text: &'static str| {
            let email = email.clone();
            async move {
                self.run().await;
                let mail = self.answer_newest(&email, &format!("{}@mail.example.net", email.replace('@', ".")), text);
                self.engine.receive_reply(&mail).await.expect("reply");
            }
        };
        match path {
            Path::OwnerSkips => {
                let input = self.new_task("churn_risk", member).await;
                let task = self.engine.create_task(&self.account, input).await.expect("create").task().clone();
                self.engine.skip(self.account.id, task.id, None).await.expect("skip");
                (task.id, TaskClosed)
            }
            Path::OwnerCancels | Path::OwnerReopens => {
                let task = self.approved("churn_risk", member).await;
                self.engine.cancel(self.account.id, task.id).await.expect("cancel");
                if matches!(path, Path::OwnerCancels) {
                    return (task.id, TaskClosed);
                }
                self.engine
                    .reopen(self.account.id, task.id, "they never came")
                    .await
                    .expect("reopen");
                (task.id, TaskEscalated)
            }
            Path::MemberThreatens => {
                let task = self.approved("churn_risk", member).await;
                reply("Stop harassing me or you'll hear from my lawyer.").await;
                (task.id, TaskEscalated)
            }
            Path::MemberRepliesStop => {
                let task = self.approved("churn_risk", member).await;
                reply("STOP").await;
                (task.id, TaskClosed)
            }
            Path::OwnerSuppresses => {
                let task = self.approved("churn_risk", member).await;
                let email = crate::kernel::ids::Email::parse(&email).expect("email");
                self.engine
                    .suppress(self.account.id, &email, "member_request")
                    .await
                    .expect("suppress");
                (task.id, TaskClosed)
            }
        }
    }
}

/// Given an account with no webhook endpoint, when its tasks close or escalate by the owner's
/// hand, a member's reply or a suppression, then nothing is written to the outbox (a task's
/// event nor an escalation's to-do's); once it has an endpoint, each path writes its event.
#[tokio::test]
async fn every_path_that_closes_or_escalates_writes_events_only_while_the_account_has_an_endpoint() {
    use crate::owner::outbound_webhook::EventType;
    // The queue refuses deliveries, so whatever a path wrote stays in the outbox to be seen.
    let (w, _transport, _queue) = with_deliveries_down().await;
    let paths = [
        Path::OwnerCancels,
        Path::OwnerSkips,
        Path::OwnerReopens,
        Path::MemberThreatens,
        Path::MemberRepliesStop,
        Path::OwnerSuppresses,
    ];
    let outbox = |w: &World| {
        let (store, until) = (w.store.clone(), w.clock.now() + SignedDuration::from_hours(24 * 30));
        async move { store.due_outbox(until, 1_000).await.expect("outbox") }
    };
    for (i, path) in paths.into_iter().enumerate() {
        let (task, _) = w.moved_through(path, &format!("m_quiet_{i}")).await;
        let moved = w.store.get_task(w.account.id, task).await.expect("get").expect("task");
        assert!(
            moved.status.is_terminal() || moved.status == TaskStatus::Escalated,
            "{path:?}: {:?}",
            moved.status
        );
        let written = outbox(&w).await;
        assert!(written.is_empty(), "{path:?}, no endpoint: nothing written, but {written:?}");
    }

    w.endpoint("https://hooks.example.com/x", &["task.closed", "task.escalated"])
        .await
        .expect("endpoint");
    for (i, path) in paths.into_iter().enumerate() {
        let (task, event) = w.moved_through(path, &format!("m_heard_{i}")).await;
        let written: Vec<EventType> = outbox(&w)
            .await
            .iter()
            .filter(|item| item.event.task_id == Some(task))
            .map(|item| item.event.event_type)
            .collect();
        assert!(
            written.contains(&event),
            "{path:?}, an endpoint: {event:?} written, got {written:?}"
        );
    }
}

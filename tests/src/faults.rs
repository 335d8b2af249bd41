//! The fault harness: two gyms worked for a fortnight while what the functions stand on fails
//! at a seeded rate, then what the members, the owner and the senders would see is checked.
//!
//! The same fortnight runs on two stores. In memory ([`memory_ports`]) the store fails
//! requests and a function is killed between two of its store calls (every later call of that
//! invocation fails, so nothing after the kill is written). On the emulator (the `faults`
//! emulator test) the DynamoDB store speaks through [`crate::fault_proxy`], which throttles,
//! fails, slows and loses answers. Around either store the harness's own ports fail too: the
//! queue refuses a send or loses its answer after queueing, the mail provider answers
//! `TooManyRequests` or accepts a mail and loses the answer. The queue is the harness's: a
//! message a function failed (or whose delete was lost) comes back after the visibility
//! timeout, and after five receives it is dead-lettered, as the template's redrive does.
//!
//! The senders behave as real ones: PushPress (here, member events in the contract's format)
//! and the mail provider's inbound route retry until they get a 2xx and sometimes deliver
//! again after one; the owner approves what waits for them each morning through the API.
//!
//! What must hold afterwards ([`Fortnight::violations`]): no mail twice for one touch, no
//! member over the weekly cap or one a day, every event and reply answered 2xx has its effect,
//! nothing mailed after a STOP answered 2xx, no task stuck, no mail across the gyms, and every
//! refusal in the contract's error shape. The figures ([`Figures`]) are printed by the tests
//! and by `make bench`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use axum::Router;
use axum::body::Body;
use axum::http::Request;
use jiff::{SignedDuration, Timestamp};
use openloop_core::conversation::mail::OutboundMail;
use openloop_core::engine::Wake;
use openloop_core::engine::{Engine, EnginePorts};
use openloop_core::kernel::error::StoreError;
use openloop_core::memory::MemoryStore;
use openloop_core::ports::{Clock, Delivered, Mailer, Queue, QueueError, SendError, TaskStore};
use openloop_core::task::work::QueueName;
use openloop_core::testing::RecordingMailer;
use openloop_local::clock::TestClock;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use secrecy::SecretString;
use serde_json::{Value, json};
use tower::ServiceExt;

/// The AWS SDK's standard retry mode: three attempts.
const SDK_ATTEMPTS: u32 = 3;

/// The seeded dice every fault is thrown with, and the count of what happened.
pub struct Dice {
    rng: Mutex<SmallRng>,
    rate: f64,
    armed: AtomicBool,
    /// The running invocation was killed: every later call of it fails.
    dead: AtomicBool,
    /// The store call of the running invocation at which it is killed (0: none).
    kill_at: AtomicU32,
    calls: AtomicU32,
    tally: Mutex<BTreeMap<&'static str, u64>>,
}

impl Dice {
    pub fn new(seed: u64, rate: f64) -> Arc<Self> {
        Arc::new(Self {
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
            rate,
            armed: AtomicBool::new(false),
            dead: AtomicBool::new(false),
            kill_at: AtomicU32::new(0),
            calls: AtomicU32::new(0),
            tally: Mutex::new(BTreeMap::new()),
        })
    }

    /// Faults happen only while armed (not while the gyms are set up, nor in the final check).
    pub fn arm(&self, on: bool) {
        self.armed.store(on, Ordering::SeqCst);
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }

    /// Whether a fault of `kind` happens at this chance, at the dice's rate (counted if so).
    pub fn roll(&self, kind: &'static str) -> bool {
        self.roll_at(kind, self.rate)
    }

    /// [`Dice::roll`] at a rate of its own.
    pub fn roll_at(&self, kind: &'static str, rate: f64) -> bool {
        if !self.armed() {
            return false;
        }
        let hit = self.rng.lock().unwrap_or_else(std::sync::PoisonError::into_inner).random_bool(rate);
        if hit {
            self.count(kind);
        }
        hit
    }

    /// A whole number in `1..=n`, from the same seeded stream.
    pub fn pick(&self, n: u32) -> u32 {
        self.rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .random_range(1..=n)
    }

    pub fn count(&self, what: &'static str) {
        *self
            .tally
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(what)
            .or_default() += 1;
    }

    /// A function starts: at the dice's rate it will be killed at one of its first ten store
    /// calls.
    pub fn begin(&self) {
        self.calls.store(0, Ordering::SeqCst);
        self.dead.store(false, Ordering::SeqCst);
        let at = if self.roll_at("invocations doomed to be killed", self.rate) {
            self.pick(10)
        } else {
            0
        };
        self.kill_at.store(at, Ordering::SeqCst);
    }

    /// The function returned (or its process died): whether it was killed.
    pub fn end(&self) -> bool {
        self.kill_at.store(0, Ordering::SeqCst);
        let killed = self.dead.swap(false, Ordering::SeqCst);
        if killed {
            self.count("invocations killed between two store calls");
        }
        killed
    }

    pub fn dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }

    /// One call of the running invocation to what it stands on (the store, the queue, the
    /// mail provider): whether the function dies here — this call and every later one fail.
    pub fn killed_at_this_call(&self) -> bool {
        if self.dead() {
            return true;
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.kill_at.load(Ordering::SeqCst) == n {
            self.dead.store(true, Ordering::SeqCst);
        }
        self.dead()
    }

    /// One store call of the running invocation: the fault it meets, if any — the kill, or a
    /// request throttled or failed on each of the SDK's three attempts (each attempt fails at
    /// the dice's rate; one that fails and is retried changes nothing the engine sees).
    pub fn store_call(&self) -> Option<&'static str> {
        if self.killed_at_this_call() {
            return Some("the function was killed");
        }
        for _ in 0..SDK_ATTEMPTS {
            if !self.roll("store requests throttled or failed (the SDK tries again)") {
                return None;
            }
        }
        self.count("store requests failed on all three attempts");
        Some("injected: the store did not answer")
    }

    pub fn tally(&self) -> BTreeMap<&'static str, u64> {
        self.tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// The in-memory store failing as [`Dice::store_call`] says.
pub fn faulty_memory_store(dice: &Arc<Dice>) -> Arc<MemoryStore> {
    let dice = dice.clone();
    Arc::new(MemoryStore::with_faults(Arc::new(move || {
        dice.store_call().map(|why| StoreError::Unavailable(why.into()))
    })))
}

/// One message on the harness's queue.
struct Queued {
    id: u64,
    queue: QueueName,
    body: String,
    visible_at: Timestamp,
    receives: u32,
}

/// SQS as the functions meet it: a send refused or answered with an error after it was
/// queued; a message back after [`VISIBILITY`] when not deleted; dead-lettered after
/// [`MAX_RECEIVES`].
pub struct FaultyQueue {
    dice: Arc<Dice>,
    clock: Arc<TestClock>,
    messages: Mutex<Vec<Queued>>,
    next_id: AtomicU32,
    dead_letters: Mutex<Vec<(QueueName, String)>>,
}

/// The template's `VisibilityTimeout` and redrive `maxReceiveCount`.
const VISIBILITY: SignedDuration = SignedDuration::from_secs(360);
const MAX_RECEIVES: u32 = 5;

impl FaultyQueue {
    fn new(dice: Arc<Dice>, clock: Arc<TestClock>) -> Arc<Self> {
        Arc::new(Self {
            dice,
            clock,
            messages: Mutex::new(Vec::new()),
            next_id: AtomicU32::new(0),
            dead_letters: Mutex::new(Vec::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Queued>> {
        self.messages.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The first visible message, taken (invisible) for one receive.
    fn receive(&self, now: Timestamp) -> Option<Queued> {
        let mut messages = self.lock();
        let at = messages.iter().position(|m| m.visible_at <= now)?;
        let mut message = messages.remove(at);
        message.receives += 1;
        Some(message)
    }

    /// Not deleted: back after the visibility timeout, or to the dead letters.
    fn give_back(&self, message: Queued, now: Timestamp) {
        if message.receives >= MAX_RECEIVES {
            self.dice.count("messages dead-lettered");
            self.dead_letters
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((message.queue, message.body));
            return;
        }
        self.lock().push(Queued {
            visible_at: now + VISIBILITY,
            ..message
        });
    }

    pub fn dead_letters(&self) -> Vec<(QueueName, String)> {
        self.dead_letters.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

#[async_trait]
impl Queue for FaultyQueue {
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), QueueError> {
        let refused = |message: &str| QueueError {
            queue,
            message: message.into(),
        };
        if self.dice.killed_at_this_call() {
            return Err(refused("the function was killed"));
        }
        if self.dice.roll("queue sends refused") {
            return Err(refused("injected: the queue refused the send"));
        }
        let now = self.clock.now();
        let mut held = self.lock();
        for (body, delay) in messages {
            held.push(Queued {
                id: u64::from(self.next_id.fetch_add(1, Ordering::SeqCst)),
                queue,
                body,
                visible_at: now + delay,
                receives: 0,
            });
        }
        drop(held);
        if self.dice.roll("queue sends queued, answer lost") {
            return Err(refused("injected: the queue's answer was lost"));
        }
        Ok(())
    }
}

/// The mail provider: `TooManyRequests` (nothing sent), or the mail accepted and the answer
/// lost; what it accepted is kept in order.
pub struct FaultyMailer {
    dice: Arc<Dice>,
    pub accepted: RecordingMailer,
}

#[async_trait]
impl Mailer for FaultyMailer {
    async fn send(&self, mail: &OutboundMail) -> Result<Delivered, SendError> {
        if self.dice.killed_at_this_call() {
            return Err(SendError::Rejected("the function was killed before it sent".into()));
        }
        if self.dice.roll_at("mail sends throttled (TooManyRequests)", self.dice.rate / 2.0) {
            return Err(SendError::Rejected("injected: TooManyRequestsException".into()));
        }
        let delivered = self.accepted.send(mail).await?;
        if self.dice.roll_at("mail sends accepted, answer lost", self.dice.rate / 2.0) {
            return Err(SendError::Ambiguous("injected: the provider's answer was lost".into()));
        }
        Ok(delivered)
    }
}

/// The harness's ports around `store`: its queue, its mail provider and a test clock at 07:00
/// New York on the first day.
pub fn ports(store: Arc<dyn TaskStore>, dice: &Arc<Dice>) -> (EnginePorts, Arc<FaultyQueue>, Arc<FaultyMailer>, Arc<TestClock>) {
    let clock = Arc::new(TestClock::new());
    clock
        .set(crate::morning(1) - SignedDuration::from_hours(2))
        .unwrap_or_else(|e| panic!("clock: {e}"));
    let queue = FaultyQueue::new(dice.clone(), clock.clone());
    let mailer = Arc::new(FaultyMailer {
        dice: dice.clone(),
        accepted: RecordingMailer::default(),
    });
    let ports = EnginePorts {
        store,
        queue: queue.clone(),
        mailer: mailer.clone(),
        agent: Arc::new(openloop_llm::OfflineAgent),
        bus: Arc::new(openloop_core::testing::RecordingBus::default()),
        clock: clock.clone(),
        connector: None,
        sending_domains: None,
        dns: None,
    };
    (ports, queue, mailer, clock)
}

/// The in-memory store and the harness's ports around it.
pub fn memory_ports(dice: &Arc<Dice>) -> (EnginePorts, Arc<FaultyQueue>, Arc<FaultyMailer>, Arc<TestClock>) {
    ports(faulty_memory_store(dice), dice)
}

/// One gym of the fortnight.
struct Gym {
    id: String,
    token: String,
    secret: String,
    /// Its members: id → address.
    members: BTreeMap<String, String>,
}

/// A delivery a sender got a 2xx for, and when.
#[derive(Clone, Debug)]
struct Answered {
    gym: usize,
    member: String,
    what: String,
    at: Timestamp,
    /// What the face answered (shown when the effect is missing).
    answer: Value,
}

/// The fortnight's figures.
#[derive(Debug, Default)]
pub struct Figures {
    pub faults: BTreeMap<&'static str, u64>,
    pub requests: u64,
    pub refusals: u64,
    pub invocations: u64,
    pub mails: usize,
    pub tasks: usize,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} invocations, {} requests to the HTTP faces ({} refused and retried), {} tasks, {} mails accepted",
            self.invocations, self.requests, self.refusals, self.tasks, self.mails
        )?;
        for (kind, n) in &self.faults {
            writeln!(f, "  {n:>6}  {kind}")?;
        }
        Ok(())
    }
}

/// Two gyms over a fortnight (see the module docs).
pub struct Fortnight {
    engine: Engine,
    dice: Arc<Dice>,
    queue: Arc<FaultyQueue>,
    mailer: Arc<FaultyMailer>,
    clock: Arc<TestClock>,
    api: Router,
    webhooks: Router,
    admin_token: String,
    inbound_token: String,
    gyms: Vec<Gym>,
    answered: Vec<Answered>,
    /// What of [`SCRIPT`] each gym has played: (gym, day, hour).
    done: BTreeSet<(usize, i64, i8)>,
    /// Replies sent (gym, member) so each member replies once.
    replied: BTreeSet<(usize, String)>,
    /// Every answer that was not a 2xx, with the request it answered.
    refusals: Vec<(String, u16, Value)>,
    requests: u64,
    invocations: u64,
    last_analysis: Option<Timestamp>,
    /// The signals function's inbound-mail intake (no SNS topic, no stored mail here).
    mail: openloop_fn_signals::MailIntake,
}

/// The two gyms, by name.
const GYMS: [&str; 2] = ["Iron Temple", "Harbor Strength"];

/// What happens at each gym, at the first round from (day, hour) on: everyone but the leads
/// joins, payments fail (and one is paid), leads arrive.
const SCRIPT: [(i64, i8, &str); 8] = [
    (0, 8, "join"),
    (0, 10, "m_pay1"),
    (1, 10, "m_reply"),
    (1, 12, "m_lead1"),
    (2, 10, "m_stop"),
    (3, 11, "m_pay2"),
    (5, 9, "paid"),
    (6, 14, "m_lead2"),
];

/// Members of each gym: (id, first name).
const MEMBERS: [(&str, &str); 8] = [
    ("m_pay1", "Pat"),
    ("m_pay2", "Quinn"),
    ("m_lead1", "Lee"),
    ("m_lead2", "Lou"),
    ("m_risk1", "Rae"),
    ("m_risk2", "Ros"),
    ("m_reply", "Remy"),
    ("m_stop", "Stef"),
];

impl Fortnight {
    /// Two gyms on `ports`, set up with faults off.
    pub async fn new(ports: (EnginePorts, Arc<FaultyQueue>, Arc<FaultyMailer>, Arc<TestClock>), dice: Arc<Dice>) -> Self {
        let (ports, queue, mailer, clock) = ports;
        if std::env::var("FAULTS_DEBUG").is_ok() {
            openloop_edge::telemetry::init();
        }
        let config = openloop_edge::config::Config::from_env().unwrap_or_else(|e| panic!("{e}"));
        let engine = Engine::new(ports, config.engine_config());
        let admin_token = "fault-harness-admin-token-0123456789abcdef".to_owned();
        let inbound_token = "fault-harness-inbound-token-0123456789abcdef".to_owned();
        let api = openloop_web::layered(openloop_fn_api::routes(Arc::new(openloop_fn_api::ApiState {
            engine: engine.clone(),
            admin_token: SecretString::from(admin_token.clone()),
        })));
        let webhooks = openloop_fn_webhooks::router(Arc::new(openloop_fn_webhooks::WebhooksState {
            engine: engine.clone(),
            inbound_token: SecretString::from(inbound_token.clone()),
            accept_wall_clock: false,
            sms_notifications: openloop_aws::sns::SnsVerifier::new(openloop_aws::tls::client(), None),
        }));
        let mut fortnight = Self {
            engine,
            dice,
            queue,
            mailer,
            clock,
            api,
            webhooks,
            admin_token,
            inbound_token,
            gyms: Vec::new(),
            answered: Vec::new(),
            done: BTreeSet::new(),
            replied: BTreeSet::new(),
            refusals: Vec::new(),
            requests: 0,
            invocations: 0,
            last_analysis: None,
            mail: openloop_fn_signals::MailIntake {
                verifier: openloop_aws::sns::SnsVerifier::new(openloop_aws::tls::client(), None),
                stored: Arc::new(openloop_core::ports::NoStoredMail),
            },
        };
        for name in GYMS {
            let body = json!({"name": name, "timezone": "America/New_York", "execution_mode": "limited_auto",
                "onboarded_at": "2026-01-05T00:00:00Z",
                "profile": {"display_name": name, "owner_first_name": "Mike", "sign_off": "Coach Mike"}});
            let (status, account) = fortnight
                .call("POST", "/api/v1/accounts", Some(&fortnight.admin_token.clone()), Some(body))
                .await;
            assert_eq!(status, 201, "{account}");
            let id = account["account_id"].as_str().unwrap_or_default().to_owned();
            let members = MEMBERS
                .iter()
                .map(|(m, _)| {
                    let address = format!("{}+{}@example.com", m.replace('_', "-"), id.to_ascii_lowercase());
                    ((*m).to_owned(), address)
                })
                .collect();
            fortnight.gyms.push(Gym {
                id,
                token: account["api_token"].as_str().unwrap_or_default().to_owned(),
                secret: account["webhook_secret"].as_str().unwrap_or_default().to_owned(),
                members,
            });
        }
        fortnight
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// One request to a face (`/webhooks/…` to the webhooks function, the rest to the API).
    async fn request(&mut self, request: Request<Body>) -> (u16, Value) {
        self.requests += 1;
        let router = if request.uri().path().starts_with("/webhooks/") {
            self.webhooks.clone()
        } else {
            self.api.clone()
        };
        let what = format!("{} {}", request.method(), request.uri().path());
        self.dice.begin();
        let response = router.oneshot(request).await.unwrap_or_else(|e| match e {});
        self.dice.end();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        if !(200..300).contains(&status) {
            self.refusals.push((what, status, body.clone()));
        }
        (status, body)
    }

    async fn call(&mut self, method: &str, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let body = match body {
            Some(body) => {
                request = request.header("content-type", "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        self.request(request.body(body).unwrap_or_else(|e| panic!("{e}"))).await
    }

    /// A member event, signed, sent until a 2xx as PushPress retries — and, at the dice's
    /// rate, sent once more after it. Kept as answered when a 2xx came.
    async fn event(&mut self, gym: usize, member: &str, id: &str, event: Value) {
        let body = event.to_string();
        let mut answered = None;
        for _ in 0..25 {
            let timestamp = self.now().as_second();
            let signature = crate::sign(&self.gyms[gym].secret, id, timestamp, body.as_bytes());
            let request = Request::builder()
                .method("POST")
                .uri(format!("/webhooks/pushpress/{}", self.gyms[gym].id))
                .header("webhook-id", id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", signature)
                .header("content-type", "application/json")
                .body(Body::from(body.clone()))
                .unwrap_or_else(|e| panic!("{e}"));
            let (status, body) = self.request(request).await;
            if (200..300).contains(&status) {
                let again = answered.is_none() && self.dice.roll("deliveries sent again after a 2xx");
                answered = Some(body);
                if !again {
                    break;
                }
            }
        }
        if let Some(answer) = answered {
            let what = event["type"].as_str().unwrap_or_default().to_owned();
            let at = self.now();
            self.answered.push(Answered {
                gym,
                member: member.to_owned(),
                what,
                at,
                answer,
            });
        }
    }

    /// A member's reply to the first mail they got, through the inbound route, until a 2xx.
    async fn reply(&mut self, gym: usize, member: &str, text: &str) {
        let Some(address) = self.gyms[gym].members.get(member).cloned() else {
            return;
        };
        let Some(first) = self.mailer.accepted.sent().into_iter().find(|m| m.to.as_str() == address) else {
            return;
        };
        if first.date + SignedDuration::from_hours(2) > self.now() || !self.replied.insert((gym, member.to_owned())) {
            return;
        }
        let raw = format!(
            "From: {member} <{address}>\r\nTo: {}\r\nSubject: Re: {}\r\nMessage-ID: <{member}-{}@mail.example.net>\r\n\
             In-Reply-To: <{}>\r\nReferences: <{}>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n",
            first.reply_to,
            first.subject,
            self.gyms[gym].id.to_ascii_lowercase(),
            first.message_id,
            first.message_id,
        );
        for _ in 0..25 {
            let request = Request::builder()
                .method("POST")
                .uri("/webhooks/inbound-email")
                .header("authorization", format!("Bearer {}", self.inbound_token))
                .header("content-type", "message/rfc822")
                .body(Body::from(raw.clone()))
                .unwrap_or_else(|e| panic!("{e}"));
            let (status, body) = self.request(request).await;
            if (200..300).contains(&status) {
                let at = self.now();
                self.answered.push(Answered {
                    gym,
                    member: member.to_owned(),
                    what: format!("reply: {text}"),
                    at,
                    answer: body,
                });
                return;
            }
        }
    }

    /// What a scheduled function does once, as an invocation that can be killed.
    async fn invoke<T, E: std::fmt::Display>(&mut self, run: impl std::future::Future<Output = Result<T, E>>) {
        self.invocations += 1;
        self.dice.begin();
        let result = run.await;
        self.dice.end();
        if result.is_err() {
            self.dice.count("scheduled runs failed (the next one catches up)");
        }
    }

    /// Every visible message handed to its function, one receive at a time.
    async fn drain(&mut self) {
        for _ in 0..2_000 {
            let now = self.now();
            let Some(message) = self.queue.receive(now) else { return };
            let mut record = SqsMessage::default();
            record.message_id = Some(message.id.to_string());
            record.body = Some(message.body.clone());
            record.event_source = Some("aws:sqs".into());
            let mut event = SqsEvent::default();
            event.records.push(record);
            self.invocations += 1;
            self.dice.begin();
            let engine = &self.engine;
            let response = match message.queue {
                QueueName::Signals => openloop_fn_signals::handle(engine, &self.mail, event).await,
                QueueName::Execute => openloop_fn_execute::handle(engine, event).await,
                QueueName::Followup => openloop_fn_followup::handle(engine, event).await,
                QueueName::Dormant => openloop_fn_dormant::handle(engine, event).await,
                QueueName::Deliveries => openloop_fn_signals::handle_deliveries(engine, event).await,
            };
            let killed = self.dice.end();
            let handled = response.batch_item_failures.is_empty() && !killed;
            if handled && !self.dice.roll("message deletes lost (delivered again)") {
                continue;
            }
            self.queue.give_back(message, now);
        }
        panic!("the queues never drained: a message goes round without end");
    }

    /// One round at `now`: the sender's and members' part, then the schedules and the queues.
    async fn round(&mut self, day: i64, hour: i8, now: Timestamp) {
        self.clock.set(now).unwrap_or_else(|e| panic!("clock: {e}"));
        for gym in 0..self.gyms.len() {
            self.script(gym, day, hour).await;
        }
        for _ in 0..2 {
            let engine = self.engine.clone();
            self.invoke(openloop_fn_tick::handle(&engine, Wake::Now)).await;
            self.drain().await;
        }
        if self
            .last_analysis
            .is_none_or(|at| now.duration_since(at) >= SignedDuration::from_hours(6))
        {
            self.last_analysis = Some(now);
            let engine = self.engine.clone();
            self.invoke(openloop_fn_analysis::handle(&engine)).await;
            self.drain().await;
        }
        let engine = self.engine.clone();
        self.invoke(openloop_fn_attribution::handle(&engine)).await;
        self.drain().await;
    }

    /// What happens at a gym at (day, hour).
    async fn script(&mut self, gym: usize, day: i64, hour: i8) {
        let now = self.now();
        let at = now.to_string();
        let member_event = |id: &str, first: &str, status: &str, joined: &str| {
            json!({"type": "member.created", "timestamp": at, "data": {"member_id": id,
                "email": "", "first_name": first, "last_name": "Tester", "status": status,
                "joined_at": joined, "monthly_value": 150}})
        };
        let with_email = |mut event: Value, email: &str| {
            event["data"]["email"] = json!(email);
            event
        };
        let members: Vec<(String, String)> = self.gyms[gym].members.iter().map(|(m, e)| (m.clone(), e.clone())).collect();
        let first = |id: &str| MEMBERS.iter().find(|(m, _)| *m == id).map_or("Sam", |(_, f)| *f);
        for (on, at_hour, what) in SCRIPT {
            if (day, hour) < (on, at_hour) || !self.done.insert((gym, on, at_hour)) {
                continue;
            }
            match what {
                "join" => {
                    for (id, email) in &members {
                        if id.starts_with("m_lead") {
                            continue;
                        }
                        let event = with_email(member_event(id, first(id), "active", "2025-03-01T00:00:00Z"), email);
                        self.event(gym, id, &format!("evt_{id}_created"), event).await;
                    }
                    // The regulars at risk came twice a week until three weeks ago.
                    for id in ["m_risk1", "m_risk2"] {
                        for i in 0..6i64 {
                            let visit = now - SignedDuration::from_hours(24 * (21 + 3 * i));
                            let event = json!({"type": "checkin.created", "timestamp": visit.to_string(),
                                "data": {"member_id": id, "checked_in_at": visit.to_string()}});
                            self.event(gym, id, &format!("evt_{id}_visit{i}"), event).await;
                        }
                    }
                }
                "paid" => {
                    let event = json!({"type": "payment.succeeded", "timestamp": at, "data": {"member_id": "m_pay1",
                        "amount": 150, "currency": "USD", "paid_at": at}});
                    self.event(gym, "m_pay1", "evt_m_pay1_paid", event).await;
                }
                lead if lead.starts_with("m_lead") => {
                    let email = self.gyms[gym].members[lead].clone();
                    let event = with_email(member_event(lead, first(lead), "lead", &at), &email);
                    self.event(gym, lead, &format!("evt_{lead}_created"), event).await;
                }
                id => {
                    let event = json!({"type": "payment.failed", "timestamp": at, "data": {"member_id": id,
                        "amount": 150, "currency": "USD", "failed_at": at, "reason": "card_declined"}});
                    self.event(gym, id, &format!("evt_{id}_failed"), event).await;
                }
            }
        }
        self.reply(gym, "m_reply", "Thanks, I'll update my card tonight.").await;
        self.reply(gym, "m_stop", "STOP").await;
        if hour == 9 {
            self.owner_approves(gym).await;
        }
    }

    /// The owner, each morning, sends every draft that waits for them as it is.
    async fn owner_approves(&mut self, gym: usize) {
        let token = self.gyms[gym].token.clone();
        let (status, page) = self
            .call("GET", "/api/v1/tasks?status=pending_review&limit=100", Some(&token), None)
            .await;
        if status != 200 {
            return;
        }
        let ids: Vec<String> = page["tasks"]
            .as_array()
            .map(|tasks| tasks.iter().filter_map(|t| t["id"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        for id in ids {
            for _ in 0..5 {
                let (status, _) = self
                    .call("POST", &format!("/api/v1/tasks/{id}/approve"), Some(&token), Some(json!({})))
                    .await;
                // 409: decided already (an earlier try's answer was lost).
                if (200..300).contains(&status) || status == 409 {
                    break;
                }
            }
        }
    }

    /// The fortnight: `rounds` hours a day (New York) for 14 days with faults armed, then two
    /// quiet days for whatever was left to settle.
    pub async fn play(&mut self, hours: &[i8]) {
        let first = self.now().to_zoned(crate::new_york()).date();
        self.dice.arm(true);
        for day in 0..16i64 {
            if day == 14 {
                self.dice.arm(false);
            }
            for &hour in hours {
                let date = first.checked_add(jiff::Span::new().days(day)).unwrap_or(first);
                let now = date
                    .at(hour, 0, 0, 0)
                    .to_zoned(crate::new_york())
                    .map(|z| z.timestamp())
                    .unwrap_or_else(|e| panic!("{e}"));
                if now > self.now() {
                    self.round(day, hour, now).await;
                }
            }
        }
    }

    /// Every task of a gym, read through the API.
    async fn tasks(&mut self, gym: usize) -> Vec<Value> {
        let token = self.gyms[gym].token.clone();
        let mut tasks = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/api/v1/tasks?limit=100&cursor={c}"),
                None => "/api/v1/tasks?limit=100".to_owned(),
            };
            let (status, page) = self.call("GET", &path, Some(&token), None).await;
            assert_eq!(status, 200, "{page}");
            tasks.extend(page["tasks"].as_array().cloned().unwrap_or_default());
            cursor = page["next_cursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                return tasks;
            }
        }
    }

    /// What the members, the owner and the senders would find wrong (empty: nothing), and
    /// the figures.
    pub async fn violations(&mut self) -> (Vec<String>, Figures) {
        self.dice.arm(false);
        let mut wrong = Vec::new();
        let mail = self.mailer.accepted.sent();
        let mut tasks_by_gym = Vec::new();
        for gym in 0..self.gyms.len() {
            tasks_by_gym.push(self.tasks(gym).await);
        }
        let owner_of: HashMap<String, usize> = self
            .gyms
            .iter()
            .enumerate()
            .flat_map(|(g, gym)| gym.members.values().map(move |e| (e.clone(), g)))
            .collect();
        // One mail per touch: a thread's messages, by the reply address and subject line.
        let mut per_touch: BTreeMap<(String, String, usize), u32> = BTreeMap::new();
        let mut days: BTreeMap<(String, jiff::civil::Date), u32> = BTreeMap::new();
        let mut sent_to: BTreeMap<String, Vec<Timestamp>> = BTreeMap::new();
        for m in &mail {
            let Some(&gym) = owner_of.get(m.to.as_str()) else { continue };
            let references = m.references.len();
            *per_touch.entry((m.to.to_string(), m.reply_to.clone(), references)).or_default() += 1;
            *days
                .entry((m.to.to_string(), m.date.to_zoned(crate::new_york()).date()))
                .or_default() += 1;
            sent_to.entry(m.to.to_string()).or_default().push(m.date);
            if !m.from_name.contains(GYMS[gym]) && !m.text.contains(GYMS[gym]) {
                wrong.push(format!("{} got a mail that does not name their gym: {:?}", m.to, m.from_name));
            }
        }
        for ((to, _, n), count) in &per_touch {
            if *count > 1 {
                wrong.push(format!("{to} got the same touch ({n} earlier in the thread) {count} times"));
            }
        }
        for ((to, date), count) in &days {
            if *count > 1 {
                wrong.push(format!("{to} got {count} mails on {date}"));
            }
        }
        for (to, times) in &sent_to {
            for (i, at) in times.iter().enumerate() {
                let week = times[i..]
                    .iter()
                    .filter(|t| t.duration_since(*at) < SignedDuration::from_hours(24 * 7))
                    .count();
                if week > openloop_core::kernel::limits::DEFAULT_MEMBER_WEEKLY_LIMIT as usize {
                    wrong.push(format!("{to} got {week} mails within a week from {at}"));
                }
            }
        }
        // Every delivery answered 2xx has its effect.
        for a in self.answered.clone() {
            let tasks = &tasks_by_gym[a.gym];
            let of_member: Vec<&Value> = tasks.iter().filter(|t| t["member"]["id"] == a.member.as_str()).collect();
            let address = self.gyms[a.gym].members[&a.member].clone();
            if a.what == "payment.failed" && !of_member.iter().any(|t| t["task_type"] == "payment_recovery") {
                wrong.push(format!(
                    "{}'s failed payment was answered 2xx at {} ({}) and opened no task",
                    a.member, a.at, a.answer
                ));
            }
            if a.what == "member.created" && a.member.starts_with("m_lead") && !of_member.iter().any(|t| t["task_type"] == "lead_followup")
            {
                wrong.push(format!(
                    "lead {} was answered 2xx at {} ({}) and opened no task",
                    a.member, a.at, a.answer
                ));
            }
            if let Some(text) = a.what.strip_prefix("reply: ") {
                let mut found = false;
                let mut seen = Vec::new();
                for t in &of_member {
                    let id = t["id"].as_str().unwrap_or_default().to_owned();
                    let token = self.gyms[a.gym].token.clone();
                    let (_, detail) = self.call("GET", &format!("/api/v1/tasks/{id}"), Some(&token), None).await;
                    let messages = detail["messages"].as_array().cloned().unwrap_or_default();
                    found |= messages
                        .iter()
                        .any(|m| m["content"].as_str().is_some_and(|c| c.contains(text.trim_end_matches('.'))));
                    let said: Vec<String> = messages
                        .iter()
                        .map(|m| format!("{}: {:.60}", m["role"], m["content"].as_str().unwrap_or_default()))
                        .collect();
                    seen.push(format!("{id} ({}): {said:?}", t["status"]));
                }
                if !found {
                    wrong.push(format!(
                        "{}'s reply {text:?} was answered 2xx at {} ({}) and is in no conversation of their tasks:\n  {}",
                        a.member,
                        a.at,
                        a.answer,
                        seen.join("\n  ")
                    ));
                }
                if text == "STOP" {
                    let after: Vec<&Timestamp> = sent_to.get(&address).into_iter().flatten().filter(|t| **t > a.at).collect();
                    if !after.is_empty() {
                        wrong.push(format!("{} said STOP at {} and was mailed after it: {after:?}", a.member, a.at));
                    }
                }
            }
        }
        // The risk scan found both regulars.
        for (gym, tasks) in tasks_by_gym.iter().enumerate() {
            for id in ["m_risk1", "m_risk2"] {
                if !tasks.iter().any(|t| t["member"]["id"] == id) {
                    wrong.push(format!("gym {gym}: {id}, three weeks away, was never taken up"));
                }
            }
            // No task stuck: anything open has its next step ahead, or waits for the owner.
            let now = self.now();
            for t in tasks {
                let status = t["status"].as_str().unwrap_or_default();
                let next: Option<Timestamp> = t["next_action_at"].as_str().and_then(|s| s.parse().ok());
                let waits_on_owner = matches!(status, "pending_review" | "escalated" | "held_out");
                let closed = matches!(status, "completed" | "cancelled");
                if !closed && !waits_on_owner && next.is_none_or(|n| n + SignedDuration::from_hours(1) < now) {
                    wrong.push(format!(
                        "gym {gym}: task {} ({status}) is stuck: next step {next:?}, now {now}",
                        t["id"]
                    ));
                }
                if t["member"]["email"]
                    .as_str()
                    .is_some_and(|e| owner_of.get(e).is_some_and(|g| *g != gym))
                {
                    wrong.push(format!("gym {gym}: task {} is about another gym's member", t["id"]));
                }
            }
        }
        for (what, status, body) in &self.refusals {
            let shaped = body["error"]["code"].is_string() && body["error"]["message"].is_string();
            if !shaped {
                wrong.push(format!("{what} answered {status} outside the contract's error shape: {body}"));
            }
        }
        let dead = self.queue.dead_letters();
        for (queue, body) in dead.iter().filter(|(q, _)| *q == QueueName::Signals) {
            wrong.push(format!("a {} message was dead-lettered: {body}", queue.as_str()));
        }
        let figures = Figures {
            faults: self.dice.tally(),
            requests: self.requests,
            refusals: self.refusals.len() as u64,
            invocations: self.invocations,
            mails: mail.len(),
            tasks: tasks_by_gym.iter().map(Vec::len).sum(),
        };
        (wrong, figures)
    }
}

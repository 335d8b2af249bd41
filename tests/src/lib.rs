//! Shared support for the emulator tests, the bench and the demo: start the local runtime on
//! its own names (so tests share one emulator without seeing each other), and speak
//! CONTRACT.md over HTTP — accounts, signed webhooks, the test clock, runs and the outbox.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use jiff::Timestamp;
use serde_json::{Value, json};
use sha2::Sha256;

use std::sync::Arc;

use openloop_aws::dynamo::DynamoStore;
use openloop_aws::provision::{Names, deprovision, provision};
use openloop_core::engine::{Engine, EngineConfig, EnginePorts};
use openloop_core::kernel::ids::TaskId;
use openloop_core::memory::MemoryStore;
use openloop_edge::config::{Clients, Config};
use openloop_local::clock::TestClock;

pub mod bedrock;
pub mod browser;
pub mod demo;
pub mod fault_proxy;
pub mod faults;
pub mod grants;
pub mod gym;
pub mod lift_simulation;
pub mod pictures;
pub mod pushpress;
pub mod receiver;
pub mod scale;
pub mod signed_calls;
pub mod sns;

/// The emulator the tests use; `make test` starts one and sets this.
pub fn endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL")
        .unwrap_or_else(|_| panic!("AWS_ENDPOINT_URL is not set: run the emulator tests through `make test`, which starts moto"))
}

/// Where `make run` serves, for the tools that talk to it (`make demo`): `OPENLOOP_URL` if set,
/// else `http://{OPENLOOP_HTTP_ADDR}` as `make run` reads it, else its default address.
pub fn stack_url(openloop_url: Option<String>, http_addr: Option<String>) -> String {
    let noted = std::fs::read_to_string(openloop_local::URL_FILE).ok();
    stack_url_from(openloop_url, http_addr, noted)
}

/// [`stack_url`] from what it reads: `OPENLOOP_URL`, else `OPENLOOP_HTTP_ADDR`, else the URL
/// a running `make run` noted (`openloop_local::URL_FILE`), else the default address.
pub fn stack_url_from(openloop_url: Option<String>, http_addr: Option<String>, noted: Option<String>) -> String {
    let given = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    given(openloop_url)
        .map(|url| url.trim_end_matches('/').to_owned())
        .or_else(|| given(http_addr).map(|addr| format!("http://{addr}")))
        .or_else(|| given(noted).map(|url| url.trim_end_matches('/').to_owned()))
        .unwrap_or_else(|| "http://127.0.0.1:8787".to_owned())
}

/// A unique, emulator-friendly name prefix.
pub fn unique_prefix(what: &str) -> String {
    format!("t{}-{what}", ulid::Ulid::new().to_string().to_ascii_lowercase())
}

/// Configuration for a test: the environment's, pointed at the emulator.
pub fn test_config() -> Config {
    let mut config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    config.endpoint = Some(endpoint());
    config
}

pub async fn clients(config: &Config) -> Clients {
    // The tests' own clients (provisioning, seeding, a scratch's store and its removal) wait
    // for the emulator as long as it takes: seeding or removing thousands of items there
    // takes longer than a function's DynamoDB request may (`DYNAMODB_ATTEMPT_TIMEOUT`).
    config
        .clients()
        .await
        .with_dynamodb_timeouts(std::time::Duration::from_secs(60), std::time::Duration::from_secs(180))
}

/// One test's table, queues and bus on the emulator, removed when the test ends — passed or
/// failed, since dropping runs on unwind too. The emulator keeps every table in memory and
/// copies them all on each transaction, so what a test leaves behind slows every later one.
pub struct Scratch {
    pub names: Names,
    config: Config,
}

impl Scratch {
    pub fn new(what: &str) -> Self {
        Self {
            names: Names::from_prefix(&unique_prefix(what)),
            config: test_config(),
        }
    }

    /// Provision the names; returns a configuration pointed at them and its clients.
    pub async fn provision(&self) -> (Config, Clients) {
        let mut config = self.config.clone();
        config.table = self.names.table.clone();
        config.event_bus = self.names.event_bus.clone();
        config.inbound_mail_bucket = self.names.inbound_mail_bucket.clone();
        let clients = clients(&config).await;
        let provisioned = provision(&clients, &self.names, "mail.openloop.local")
            .await
            .unwrap_or_else(|e| panic!("provision: {e}"));
        config.queue_urls = provisioned.queue_urls;
        // The gyms' secrets sealed by the emulator's KMS, as in AWS.
        config.kms_key_id = Some(provisioned.secrets_key);
        (config, clients)
    }

    /// An engine on these names with the offline agent and a test clock at 09:00 New York
    /// tomorrow; `from_email` overrides the sender. The store and the clock come back too, for
    /// the test to seed, read and move.
    pub async fn engine(&self, from_email: Option<&str>) -> (Engine, DynamoStore, Arc<TestClock>) {
        let (ports, config, store, clock) = self.ports(from_email).await;
        (Engine::new(ports, config), store, clock)
    }

    /// [`Scratch::engine`]'s parts before they are joined, for a test that changes a port
    /// first (a mailer that fails on purpose, a connector).
    pub async fn ports(&self, from_email: Option<&str>) -> (EnginePorts, EngineConfig, DynamoStore, Arc<TestClock>) {
        let (mut config, clients) = self.provision().await;
        if let Some(from) = from_email {
            config.from_email = openloop_core::kernel::ids::Email::parse(from).unwrap_or_else(|e| panic!("{e}"));
        }
        let clock = Arc::new(TestClock::new());
        clock.set(morning(1)).unwrap_or_else(|e| panic!("clock: {e}"));
        let (ports, store) = openloop_edge::config::ports(&config, &clients, clock.clone(), Arc::new(openloop_llm::OfflineAgent));
        (ports, config.engine_config(), store, clock)
    }

    /// The signed reply address of a task's mail, as [`Scratch::engine`]'s engine writes it.
    pub fn reply_address(&self, task: &TaskId) -> String {
        let config = self.config.engine_config();
        format!("reply+{}@{}", config.signing_key.reply_token(task), config.reply_domain)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let (names, config) = (self.names.clone(), self.config.clone());
        // Its own thread and runtime: the test's runtime may be unwinding or single-threaded.
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async { deprovision(&clients(&config).await, &names).await })
        });
        if let Ok(Err(e)) = cleanup.join() {
            eprintln!("cleaning up {}: {e}", self.names.table);
        }
    }
}

/// An engine with every port in memory, the offline agent and a test clock at 09:00 New
/// York tomorrow — [`Scratch::engine`]'s twin for tests that need no AWS behaviour. The
/// store and the clock come back too, for the test to seed and move.
pub fn memory_engine() -> (Engine, Arc<MemoryStore>, Arc<TestClock>) {
    use openloop_core::testing::{RecordingBus, RecordingMailer, RecordingQueue};
    let config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    let clock = Arc::new(TestClock::new());
    clock.set(morning(1)).unwrap_or_else(|e| panic!("clock: {e}"));
    let store = Arc::new(MemoryStore::new());
    let ports = EnginePorts {
        store: store.clone(),
        queue: Arc::new(RecordingQueue::default()),
        mailer: Arc::new(RecordingMailer::default()),
        agent: Arc::new(openloop_llm::OfflineAgent),
        bus: Arc::new(RecordingBus::default()),
        clock: clock.clone(),
        connector: None,
        sending_domains: Some(Arc::new(openloop_core::memory::MemorySendingDomains::default())),
        dns: Some(Arc::new(openloop_core::memory::MemoryDns::default())),
    };
    (Engine::new(ports, config.engine_config()), store, clock)
}

/// 09:00 in New York (14:00 UTC in winter, 13:00 in summer — inside the send window and a
/// first touch's morning hours either way) on the day `days_ahead` after today (UTC).
pub fn morning(days_ahead: i64) -> Timestamp {
    let day = Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .checked_add(jiff::Span::new().days(days_ahead))
        .unwrap_or_else(|e| panic!("{e}"));
    nine_in_new_york(day)
}

/// 09:00 in New York on `day`.
pub fn nine_in_new_york(day: jiff::civil::Date) -> Timestamp {
    day.at(9, 0, 0, 0)
        .to_zoned(new_york())
        .unwrap_or_else(|e| panic!("{e}"))
        .timestamp()
}

/// The test gyms' time zone.
pub fn new_york() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::get("America/New_York").unwrap_or_else(|e| panic!("{e}"))
}

/// `at` is a follow-up time on `day`'s date in New York, inside the afternoon hours a
/// follow-up is planned in.
pub fn assert_follow_up_on(at: Timestamp, day: Timestamp) {
    let (local, day) = (at.to_zoned(new_york()), day.to_zoned(new_york()).date());
    let (from, to) = openloop_core::kernel::limits::FOLLOW_UP_HOURS;
    assert_eq!(local.date(), day, "{local} is not on {day}");
    assert!((from..to).contains(&local.hour()), "{local} is outside the follow-up hours");
}

/// A test's whole life on a thread of its own with room (16 MiB): every function of the local
/// runtime runs on the test's thread, and a debug build's frames for a long walk through them
/// outgrow a test thread's 2 MiB stack.
pub fn with_room<F: std::future::Future<Output = ()>>(test: impl FnOnce() -> F + Send + 'static) {
    let run = std::thread::Builder::new().stack_size(16 << 20).spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"))
            .block_on(test());
    });
    if let Err(panic) = run.unwrap_or_else(|e| panic!("thread: {e}")).join() {
        std::panic::resume_unwind(panic);
    }
}

/// The local runtime, started for one test, and a client for it: in memory
/// ([`Stack::start`], for behaviour through the contract) or on the emulator
/// ([`Stack::on_emulator`], where AWS semantics are the point). Dropping it stops the
/// runtime, then removes its emulator resources.
pub struct Stack {
    pub running: openloop_local::Running,
    pub client: Client,
    pub scratch: Option<Scratch>,
}

impl std::ops::Deref for Stack {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Stack {
    /// Every port in memory: the same routers, handlers and test clock, no emulator.
    pub async fn start(name: &str) -> Self {
        Self::start_with(name, |_| {}).await
    }

    /// [`Stack::start`] with the configuration adjusted first (a connector, say).
    pub async fn start_with(name: &str, adjust: impl FnOnce(&mut Config)) -> Self {
        let mut config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
        config.endpoint = None;
        adjust(&mut config);
        Self::launch(unique_prefix(name), openloop_local::Ports::Memory, config, None, None).await
    }

    /// [`Stack::start`] with its own agent (a model adapter pointed at a fake model API), as
    /// `OPENLOOP_LLM` would choose one — without setting the process's variables.
    pub async fn start_with_agent(name: &str, agent: std::sync::Arc<dyn openloop_core::ports::Agent>) -> Self {
        let mut config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
        config.endpoint = None;
        Self::launch(unique_prefix(name), openloop_local::Ports::Memory, config, None, Some(agent)).await
    }

    /// The runtime on the emulator's DynamoDB, SQS, SES and S3, on names of its own.
    pub async fn on_emulator(name: &str) -> Self {
        let scratch = Scratch::new(name);
        let prefix = scratch.names.table.clone();
        Self::launch(prefix, openloop_local::Ports::Emulator, test_config(), Some(scratch), None).await
    }

    /// This runtime killed (whatever it was doing dropped) and one started again on the same
    /// names and emulator, as `make run` is started again: what the emulator holds is all
    /// that carries over.
    pub async fn restarted(self) -> Self {
        let Self { running, scratch, .. } = self;
        drop(running);
        let prefix = scratch
            .as_ref()
            .map(|s| s.names.table.clone())
            .unwrap_or_else(|| panic!("only a runtime on the emulator is started again"));
        Self::launch(prefix, openloop_local::Ports::Emulator, test_config(), scratch, None).await
    }

    /// [`Stack::on_emulator`] with every AWS call through `endpoint`, a proxy in front of the
    /// emulator ([`signed_calls::SignedCalls`]), and the stand-in PushPress for gyms to
    /// connect to, as `make run` serves it.
    pub async fn on_emulator_through(name: &str, endpoint: &str) -> Self {
        let scratch = Scratch::new(name);
        let prefix = scratch.names.table.clone();
        let mut config = test_config();
        config.endpoint = Some(endpoint.to_owned());
        config.pushpress = None;
        Self::launch_with(prefix, openloop_local::Ports::Emulator, config, Some(scratch), None, true).await
    }

    /// [`Stack::start`] with no background consumer: what a request queued waits in its queue
    /// until `/_local/run`, so a test can see what a request did before the queue did the rest.
    pub async fn start_without_consumer(name: &str) -> Self {
        let mut config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
        config.endpoint = None;
        let options = openloop_local::Options {
            http_addr: "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
            prefix: unique_prefix(name),
            background: false,
            ports: openloop_local::Ports::Memory,
            config,
            agent: None,
            pushpress_stand_in: false,
        };
        Self::started(options, None).await
    }

    /// As `make run` starts it with no PushPress configured: in memory, with the stand-in
    /// PushPress (`openloop_local::pushpress`) for gyms to connect to.
    pub async fn start_as_make_run(name: &str) -> Self {
        let mut config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
        config.endpoint = None;
        config.pushpress = None;
        Self::launch_with(unique_prefix(name), openloop_local::Ports::Memory, config, None, None, true).await
    }

    async fn launch(
        prefix: String,
        ports: openloop_local::Ports,
        config: Config,
        scratch: Option<Scratch>,
        agent: Option<std::sync::Arc<dyn openloop_core::ports::Agent>>,
    ) -> Self {
        Self::launch_with(prefix, ports, config, scratch, agent, false).await
    }

    /// [`Stack::on_emulator`] with no background consumer: what a request queued waits in
    /// its SQS queue until `/_local/run` (or a test receives it).
    pub async fn on_emulator_without_consumer(name: &str) -> Self {
        let scratch = Scratch::new(name);
        let options = openloop_local::Options {
            http_addr: "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
            prefix: scratch.names.table.clone(),
            background: false,
            ports: openloop_local::Ports::Emulator,
            config: test_config(),
            agent: None,
            pushpress_stand_in: false,
        };
        Self::started(options, Some(scratch)).await
    }

    async fn launch_with(
        prefix: String,
        ports: openloop_local::Ports,
        config: Config,
        scratch: Option<Scratch>,
        agent: Option<std::sync::Arc<dyn openloop_core::ports::Agent>>,
        pushpress_stand_in: bool,
    ) -> Self {
        let options = openloop_local::Options {
            http_addr: "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
            prefix,
            // As `make run` serves it: queues consumed as soon as something is sent (a member
            // event is known by the time the test's next call arrives), schedules driven
            // through `/_local/run` and the test clock.
            background: true,
            ports,
            config,
            agent,
            pushpress_stand_in,
        };
        Self::started(options, scratch).await
    }

    /// The local runtime started with `options`, and a client for it.
    async fn started(options: openloop_local::Options, scratch: Option<Scratch>) -> Self {
        let running = openloop_local::start(options)
            .await
            .unwrap_or_else(|e| panic!("the local runtime did not start: {e}"));
        let client = Client {
            url: running.url(),
            http: openloop_aws::tls::client(),
            admin_token: running.admin_token.clone(),
            inbound_token: running.inbound_token.clone(),
        };
        Self { running, client, scratch }
    }
}

/// CONTRACT.md over HTTP, against any running stack.
pub struct Client {
    pub url: String,
    pub http: reqwest::Client,
    pub admin_token: String,
    pub inbound_token: String,
}

impl Client {
    pub async fn call(&self, method: reqwest::Method, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.url));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let response = req.send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, Some(token), None).await
    }

    /// When the owner's next digest goes, as the feed's waiting notices say.
    pub async fn digest_due(&self, token: &str) -> Timestamp {
        let (_, feed) = self.get("/api/v1/notifications", token).await;
        feed["notifications"]
            .as_array()
            .and_then(|n| n.iter().find_map(|n| n["digest_at"].as_str()))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("the approvals wait for a digest: {feed}"))
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(token), Some(body)).await
    }

    /// A new gym; returns `{account_id, api_token, webhook_secret}`.
    pub async fn create_account(&self, execution_mode: &str) -> Account {
        let body = json!({"name": "CrossFit Renegade", "timezone": "America/New_York", "execution_mode": execution_mode,
            "onboarded_at": "2026-10-01T00:00:00Z", "profile": {"display_name": "CrossFit Renegade", "owner_first_name": "Mike", "sign_off": "Coach Mike"}});
        let (status, account) = self.post("/api/v1/accounts", &self.admin_token, body).await;
        assert_eq!(status, 201, "create account: {account}");
        Account {
            id: account["account_id"].as_str().unwrap_or_default().to_owned(),
            token: account["api_token"].as_str().unwrap_or_default().to_owned(),
            webhook_secret: account["webhook_secret"].as_str().unwrap_or_default().to_owned(),
        }
    }

    /// Names an owner address for `gym` (unique to it), through `PUT /api/v1/settings`, and
    /// returns it: where the owner's mail and sign-in links go.
    pub async fn give_owner_address(&self, gym: &Account) -> String {
        let owner = format!("owner+{}@renegade.example", gym.id.to_ascii_lowercase());
        let (status, settings) = self
            .call(
                reqwest::Method::PUT,
                "/api/v1/settings",
                Some(&gym.token),
                Some(json!({"owner_email": owner})),
            )
            .await;
        assert_eq!(
            (status, settings["owner_email"].as_str()),
            (200, Some(owner.as_str())),
            "{settings}"
        );
        owner
    }

    /// A new gym's `PUT /api/v1/settings` with PushPress key `key` beside another setting
    /// (`daily_send_limit`), refused: the gym, and the status and error answered, once it is
    /// checked that nothing of the patch was applied.
    pub async fn refused_pushpress_key(&self, key: &str) -> (Account, u16, Value) {
        let gym = self.create_account("manual").await;
        let (status, error) = self
            .call(
                reqwest::Method::PUT,
                "/api/v1/settings",
                Some(&gym.token),
                Some(json!({"pushpress": {"api_key": key}, "daily_send_limit": 9})),
            )
            .await;
        let (_, settings) = self.get("/api/v1/settings", &gym.token).await;
        assert_eq!(settings["daily_send_limit"], 15, "nothing is half-applied: {settings}");
        (gym, status, error)
    }

    pub async fn now(&self) -> Timestamp {
        let (_, body) = self.call(reqwest::Method::GET, "/_local/clock", None, None).await;
        body["now"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("clock: {body}"))
    }

    pub async fn set_clock(&self, to: &str) {
        let (status, body) = self
            .call(reqwest::Method::POST, "/_local/clock", None, Some(json!({"now": to})))
            .await;
        assert_eq!(status, 200, "set clock: {body}");
    }

    /// When task `id` is next due, as the engine scheduled it (its `next_action_at`).
    pub async fn due_at(&self, gym: &Account, id: &str) -> Timestamp {
        let (status, task) = self.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
        assert_eq!(status, 200, "{task}");
        task["next_action_at"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("nothing scheduled: {task}"))
    }

    /// Move the test clock to when task `id` is next due, as scheduled (not a guess at it),
    /// and fire the schedules; returns that time.
    pub async fn run_when_due(&self, gym: &Account, id: &str) -> Timestamp {
        let due = self.due_at(gym, id).await;
        let now = self.now().await;
        assert!(
            due >= now - jiff::SignedDuration::from_hours(24),
            "task {id} was due long ago, at {due}"
        );
        // Due already: the clock stays (it moves on its own from where it was set, so setting
        // it to a `now` read a moment ago would be a step back).
        if due > now {
            self.set_clock(&due.to_string()).await;
        }
        self.run().await;
        due
    }

    /// Fire the schedules and drain the queues.
    pub async fn run(&self) -> Value {
        let (status, body) = self.call(reqwest::Method::POST, "/_local/run", None, None).await;
        assert_eq!(status, 200, "run: {body}");
        body
    }

    /// Every mail to `to`, oldest first.
    pub async fn outbox_to(&self, to: &str) -> Vec<Value> {
        let path = format!(
            "/_local/outbox?to={}",
            to.replace('%', "%25").replace('&', "%26").replace('+', "%2B").replace('@', "%40")
        );
        let (status, body) = self.call(reqwest::Method::GET, &path, None, None).await;
        assert_eq!(status, 200, "outbox: {body}");
        let mail = body.as_array().cloned().unwrap_or_default();
        assert!(mail.iter().all(|m| m["to"].as_str() == Some(to)), "outbox for {to}: {body}");
        mail
    }

    /// A member the gym knows (via a signed `member.created`), with an address unique to the
    /// account; returns the address.
    pub async fn member(&self, gym: &Account, id: &str, first: &str, at: Timestamp) -> String {
        let email = format!("{id}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-");
        let (status, body) = self
            .webhook(
                gym,
                &format!("evt_{id}"),
                events::member_created(id, &email, first, &at.to_string()),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        email
    }

    /// A manual task, approved as drafted; returns its id.
    /// Tess (`m_text`, on `phone`), who consented to texts, her failed payment's task
    /// approved: the id of a task that reaches her by text (the gym texts already).
    pub async fn texting_member_task(&self, gym: &Account, phone: &str, email: Option<&str>) -> String {
        let at = self.now().await.to_string();
        let mut data = json!({"member_id": "m_text", "first_name": "Tess", "status": "active",
            "joined_at": "2025-06-01T00:00:00Z", "monthly_value": 150, "phone": phone});
        if let Some(email) = email {
            data["email"] = json!(email);
        }
        let (status, body) = self
            .webhook(gym, "evt_tess", json!({"type": "member.created", "timestamp": at, "data": data}))
            .await;
        assert_eq!(status, 202, "{body}");
        self.run().await;
        let (status, body) = self
            .post(
                "/api/v1/members/m_text/consent",
                &gym.token,
                json!({"sms": true, "source": "owner"}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        self.webhook(gym, "evt_tess_failed", events::payment_failed("m_text", &at)).await;
        self.run().await;
        let (_, tasks) = self.get("/api/v1/tasks?member_id=m_text", &gym.token).await;
        let task = tasks["tasks"][0]["id"].as_str().unwrap_or_default().to_owned();
        let (status, body) = self.post(&format!("/api/v1/tasks/{task}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{body}");
        task
    }

    pub async fn approved_task(&self, gym: &Account, task_type: &str, member: &str) -> String {
        let body = json!({"task_type": task_type, "member_id": member, "goal": "Bring them back to the gym", "confidence": 80});
        let (status, created) = self.post("/api/v1/tasks", &gym.token, body).await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        let (status, approved) = self.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{approved}");
        id
    }

    /// `POST /webhooks/inbound-email` with one raw message, as a mail provider forwards it.
    pub async fn inbound(&self, raw: &str) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}/webhooks/inbound-email", self.url))
            .bearer_auth(&self.inbound_token)
            .header("content-type", "message/rfc822")
            .body(raw.to_owned())
            .send()
            .await
            .unwrap_or_else(|e| panic!("inbound: {e}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// The member's answer to `mail` (an outbox entry), quoting it as mail clients do.
    pub fn reply_to(mail: &Value, message_id: &str, text: &str) -> String {
        let field = |name: &str| mail[name].as_str().unwrap_or_default().to_owned();
        format!(
            "From: Member <{}>\r\nTo: {}\r\nSubject: Re: {}\r\nMessage-ID: <{message_id}>\r\nIn-Reply-To: <{}>\r\n\
             References: <{}>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n\r\nOn Mon, Nov 2, 2026, Coach Mike wrote:\r\n> {}\r\n",
            field("to"),
            field("reply_to"),
            field("subject"),
            field("message_id"),
            field("message_id"),
            field("text").replace('\n', "\r\n> "),
        )
    }

    /// Sarah (`m_1`, an address of her own per account) joins and her payment fails at `at`:
    /// the two member events of the spec's payment-recovery walkthrough, each accepted.
    /// Returns her address.
    pub async fn sarahs_payment_failed(&self, account: &Account, at: &str) -> String {
        let email = format!("sarah+{}@example.com", account.id.to_ascii_lowercase());
        let (status, body) = self
            .webhook(account, "evt_member", events::member_created("m_1", &email, "Sarah", at))
            .await;
        assert_eq!(status, 202, "{body}");
        let (status, body) = self.webhook(account, "evt_payment", events::payment_failed("m_1", at)).await;
        assert_eq!(status, 202, "{body}");
        email
    }

    /// Send a member event, signed with the account's secret at the clock's time.
    pub async fn webhook(&self, account: &Account, id: &str, body: Value) -> (u16, Value) {
        let timestamp = self.now().await.as_second();
        self.webhook_signed(account, id, timestamp, &body.to_string(), None).await
    }

    /// Send a raw webhook with full control (for the refusal tests).
    pub async fn webhook_signed(&self, account: &Account, id: &str, timestamp: i64, body: &str, signature: Option<String>) -> (u16, Value) {
        let signature = signature.unwrap_or_else(|| sign(&account.webhook_secret, id, timestamp, body.as_bytes()));
        let response = self
            .http
            .post(format!("{}/webhooks/pushpress/{}", self.url, account.id))
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap_or_else(|e| panic!("webhook: {e}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }
}

impl Client {
    /// `POST /webhooks/pushpress-v3/{account}` with `body` signed as PushPress signs it with
    /// `secret` (or with `signature` as given, for the refusal tests).
    pub async fn pushpress_delivery(&self, account: &Account, secret: &str, body: &Value, signature: Option<&str>) -> (u16, Value) {
        let text = body.to_string();
        let signed = openloop_pushpress::webhook::sign(secret, text.as_bytes()).unwrap_or_default();
        let response = self
            .http
            .post(format!("{}/webhooks/pushpress-v3/{}", self.url, account.id))
            .header("webhook-signature", signature.unwrap_or(&signed))
            .header("content-type", "application/json")
            .body(text)
            .send()
            .await
            .unwrap_or_else(|e| panic!("delivery: {e}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }
}

#[derive(Clone, Debug)]
pub struct Account {
    pub id: String,
    pub token: String,
    pub webhook_secret: String,
}

/// `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` with the `whsec_` secret.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap_or_default();
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&key).unwrap_or_else(|e| panic!("{e}"));
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

/// The reasons of a task's decision log, oldest first.
pub fn reasons(task: &Value) -> Vec<&str> {
    task["log"]
        .as_array()
        .map(|l| l.iter().filter_map(|e| e["reason"].as_str()).collect())
        .unwrap_or_default()
}

/// Member events as CONTRACT.md shapes them.
pub mod events {
    use serde_json::{Value, json};

    pub fn member_created(member: &str, email: &str, first: &str, at: &str) -> Value {
        json!({"type": "member.created", "timestamp": at, "data": {"member_id": member, "email": email, "first_name": first, "last_name": "Tester",
            "status": "active", "joined_at": "2025-06-01T00:00:00Z", "monthly_value": 150}})
    }

    pub fn payment_failed(member: &str, at: &str) -> Value {
        json!({"type": "payment.failed", "timestamp": at, "data": {"member_id": member, "amount": 150, "currency": "USD", "failed_at": at, "reason": "card_declined"}})
    }

    pub fn payment_succeeded(member: &str, at: &str) -> Value {
        json!({"type": "payment.succeeded", "timestamp": at, "data": {"member_id": member, "amount": 150, "currency": "USD", "paid_at": at}})
    }
}

/// Every message the emulator's SES accepted, read from moto's whole state
/// (`/moto-api/data.json`, `ses.RawMessage[]`) — for tests that drive the SES adapter
/// without the local runtime's outbox. Its cost grows with everything moto holds: read once.
pub async fn ses_accepted() -> Vec<openloop_local::outbox::OutboxMail> {
    let url = format!("{}/moto-api/data.json", endpoint().trim_end_matches('/'));
    // moto serialises its state while other tests write to it; a read that a write spoiled
    // (a 500 or a cut body) is made again.
    let mut last = String::new();
    for _ in 0..10 {
        let data: Value = match reqwest::get(&url).await.and_then(reqwest::Response::error_for_status) {
            Ok(response) => match response.json().await {
                Ok(data) => data,
                Err(e) => {
                    last = e.to_string();
                    continue;
                }
            },
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        return data
            .pointer("/ses/RawMessage")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let raw = entry.get("raw_data")?.as_str()?;
                openloop_local::outbox::parse(raw.as_bytes(), entry.get("id").and_then(Value::as_str).map(str::to_owned))
            })
            .collect();
    }
    panic!("{url}: {last}")
}

/// A task made for a member whose `member.created` event had not been processed yet (no
/// address on file at creation); the event arrives, and the first touch still goes out to
/// the address it carries (no stale member). Run on both stacks.
pub async fn late_member_event_still_gets_the_first_touch(stack: &Stack) {
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let id = stack.approved_task(&gym, "churn_risk", "m_late").await;
    let email = stack.member(&gym, "m_late", "Lee", day0).await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "the first touch went to the address the event brought");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(task["status"], "waiting", "{task}");
    assert_eq!(task["member"]["email"], email.as_str(), "{task}");
}

#[cfg(test)]
mod tests {
    use super::stack_url_from;

    #[test]
    fn the_demo_finds_the_stack_where_make_run_serves_it() {
        let url = |a: Option<&str>, b: Option<&str>, c: Option<&str>| {
            stack_url_from(a.map(str::to_owned), b.map(str::to_owned), c.map(str::to_owned))
        };
        assert_eq!(url(None, None, None), "http://127.0.0.1:8787");
        assert_eq!(url(None, Some("127.0.0.1:9000"), None), "http://127.0.0.1:9000");
        assert_eq!(url(Some("http://gym.local:1/"), Some("127.0.0.1:9000"), None), "http://gym.local:1");
        assert_eq!(url(Some(" "), Some(""), None), "http://127.0.0.1:8787");
        // The port a running `make run` took, noted in the checkout: found without settings.
        assert_eq!(url(None, None, Some("http://127.0.0.1:41234\n")), "http://127.0.0.1:41234");
        assert_eq!(
            url(None, Some("127.0.0.1:9000"), Some("http://127.0.0.1:41234")),
            "http://127.0.0.1:9000"
        );
    }
}

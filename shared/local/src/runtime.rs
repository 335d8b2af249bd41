//! Starting the local runtime: provision, serve, poll, schedule.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent, SqsMessage};
use axum::Router;
use axum::body::Bytes;
use axum::extract::Query;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jiff::Timestamp;
use secrecy::ExposeSecret;
use serde::Deserialize;
use tokio::sync::RwLock;

use openloop_aws::provision::{Names, provision};
use openloop_aws::sns::SnsVerifier;
use openloop_core::engine::{Engine, EnginePorts, Wake};
use openloop_core::members::connector::Connector;
use openloop_core::memory::MemoryStore;
use openloop_core::ports::{Clock, NoStoredMail, NullBus, TaskStore};
use openloop_core::task::work::QueueName;
use openloop_edge::config::{Clients, Config};
use openloop_edge::http::{ApiError, body_error, json_body};

use crate::clock::TestClock;
use crate::function::{run_as, serve_as};
use crate::outbox::{AcceptingProvider, Outbox};
use crate::queues::{LocalQueues, MemoryQueues, SqsInbox};
use crate::schedule::Schedule;

/// Where the runtime keeps its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ports {
    /// DynamoDB, SQS, EventBridge, SES and S3 of the AWS emulator at `AWS_ENDPOINT_URL`
    /// (`make run`'s default): the AWS semantics, at the emulator's speed.
    Emulator,
    /// Every port in this process's memory — the in-memory store, queues with SQS's delay and
    /// visibility, a mail provider that accepts everything — behind the same routers, handlers
    /// and test clock. Fast and disposable: nothing survives a restart.
    Memory,
}

impl Ports {
    /// `OPENLOOP_LOCAL_PORTS`: `emulator` (default) or `memory`.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("OPENLOOP_LOCAL_PORTS").unwrap_or_default().trim() {
            "" | "emulator" => Ok(Self::Emulator),
            "memory" => Ok(Self::Memory),
            other => Err(format!("OPENLOOP_LOCAL_PORTS={other:?}: use `emulator` or `memory`")),
        }
    }
}

/// How the runtime is started (from the environment in `main`, explicitly in tests).
#[derive(Clone)]
pub struct Options {
    pub http_addr: SocketAddr,
    /// Names the table, queues and bus (`{prefix}`, `{prefix}-signals`, …); tests use a
    /// unique prefix each so they can share one emulator.
    pub prefix: String,
    /// Run the background queue consumer and the per-minute tick (`make run`); tests drive
    /// everything through `/_local/run` instead.
    pub background: bool,
    pub ports: Ports,
    pub config: Config,
    /// The agent, when not the one `OPENLOOP_LLM` names (a test's model at a fake server).
    pub agent: Option<Arc<dyn openloop_core::ports::Agent>>,
    /// With no PushPress connector configured, serve the stand-in PushPress
    /// ([`crate::pushpress`]) on a loopback port and connect gyms to it (`make run`); without
    /// it, such a runtime answers a connect `503 connector_not_configured`, as a deployment does.
    pub pushpress_stand_in: bool,
}

impl Options {
    pub fn from_env() -> Result<Self, String> {
        let mut config = Config::from_env().map_err(|e| e.to_string())?;
        let ports = Ports::from_env()?;
        if ports == Ports::Emulator {
            config.endpoint.get_or_insert_with(|| "http://127.0.0.1:4566".into());
        }
        let http_addr = std::env::var("OPENLOOP_HTTP_ADDR").unwrap_or_else(|_| "127.0.0.1:8787".into());
        Ok(Self {
            http_addr: http_addr.parse().map_err(|e| format!("OPENLOOP_HTTP_ADDR {http_addr:?}: {e}"))?,
            prefix: std::env::var("OPENLOOP_PREFIX").unwrap_or_else(|_| "openloop".into()),
            background: std::env::var("OPENLOOP_LOCAL_BACKGROUND")
                .map(|v| v != "off" && v != "0")
                .unwrap_or(true),
            ports,
            config,
            agent: None,
            pushpress_stand_in: true,
        })
    }
}

struct Local {
    engine: Engine,
    /// The fake SMS service's texts (`/_local/outbox?channel=sms`).
    texts: Arc<crate::texts::FakeSms>,
    /// The signals function's SNS check and inbound-mail bucket (nothing reaches them locally
    /// unless an SNS topic is wired to the signals queue).
    mail: openloop_fn_signals::MailIntake,
    /// What is kept for a restart (on the emulator): the clock is kept as it is set.
    kept: Option<Arc<crate::kept::Kept>>,
    clock: Arc<TestClock>,
    queues: Arc<LocalQueues>,
    outbox: Arc<Outbox>,
    /// The background consumer holds it shared while it drains; `/_local/run` holds it
    /// exclusively, so a run sees every message and nothing is half-processed behind its back.
    gate: RwLock<()>,
    /// The 6-hourly risk scan (the minute tick fires on every run).
    analysis: Schedule,
    /// The weekly evaluation, and the `TaskClosed` events the evaluation rule would route.
    evaluation: Schedule,
    /// The monthly cross-business evaluation, when the test clock enters a new month.
    monthly: crate::evaluation::Monthly,
    closed: Arc<crate::evaluation::ClosedTasks>,
    /// Something may have changed since the last run's attribution: a request that writes,
    /// the clock moved, a queued message handled. A run with nothing changed leaves
    /// attribution (hourly in AWS) out — its answer could not differ.
    changed: AtomicBool,
}

/// A started runtime.
pub struct Running {
    pub addr: SocketAddr,
    /// The engine the routes and consumers share.
    pub engine: Engine,
    /// The engine's store, kept for tests that seed it or read it directly.
    pub store: Arc<dyn TaskStore>,
    /// The engine's mailer: the outbox around the provider.
    pub outbox: Arc<Outbox>,
    pub admin_token: String,
    pub inbound_token: String,
    /// The stand-in PushPress's base URL (`http://127.0.0.1:…/v3`), when one is served.
    pub pushpress_stand_in: Option<String>,
    /// The fake SMS service: what it accepted, and which functions signed the texts.
    pub texts: Arc<crate::texts::FakeSms>,
    server: tokio::task::JoinHandle<()>,
    background: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop serving and polling (dropping it does the same).
    pub fn stop(self) {}
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.abort();
        for task in &self.background {
            task.abort();
        }
    }
}

/// The engine and the runtime's own parts, on the chosen ports.
struct Assembled {
    engine: Engine,
    store: Arc<dyn TaskStore>,
    queues: Arc<LocalQueues>,
    outbox: Arc<Outbox>,
    mail: openloop_fn_signals::MailIntake,
    /// What the runtime keeps of its own for a restart (on the emulator).
    kept: Option<Arc<crate::kept::Kept>>,
}

/// On the emulator: provision the names, then the AWS adapters, with the mailer kept in the
/// outbox and the queues joined to the consumers.
async fn on_emulator(
    config: &mut Config,
    names: &Names,
    clock: Arc<TestClock>,
    agent: Arc<dyn openloop_core::ports::Agent>,
    closed: Arc<crate::evaluation::ClosedTasks>,
) -> Result<Assembled, Box<dyn std::error::Error + Send + Sync>> {
    // Each function signs as itself (`crate::function`), the runtime's own calls as the runtime.
    let clients = match &config.endpoint {
        Some(endpoint) => Clients::signing_as(&config.region, endpoint, Arc::new(crate::function::access_key)),
        None => config.clients().await,
    };
    let sender_domain = config
        .from_email
        .as_str()
        .split_once('@')
        .map(|(_, d)| d.to_owned())
        .unwrap_or_default();
    let provisioned = provision(&clients, names, &sender_domain).await?;
    config.queue_urls = provisioned.queue_urls.clone();
    // The gyms' secrets are sealed by the emulator's KMS, with the key provisioning made.
    config.kms_key_id.get_or_insert(provisioned.secrets_key.clone());
    let (mut ports, _) = openloop_edge::config::ports(config, &clients, clock.clone(), agent);
    closed.forward_to(ports.bus.clone());
    ports.bus = closed;
    // A runtime started again goes on where the last one was: its clock, its outbox.
    let kept = Arc::new(crate::kept::Kept::new(clients.dynamodb.clone(), &names.table));
    if let Some(offset) = kept.clock().await?
        && clock.set(Timestamp::now() + offset).is_err()
    {
        tracing::warn!(%offset, "the kept clock is behind real time; the clock starts at the real time");
    }
    let outbox = Arc::new(Outbox::kept_in(ports.mailer.clone(), kept.clone()).await?);
    ports.mailer = outbox.clone();
    let inbox = Arc::new(SqsInbox {
        client: clients.sqs(),
        urls: provisioned.queue_urls,
        kept: kept.clone(),
    });
    // What a runtime before this one held goes back to its queue at once, and what the
    // queues hold from it is drained as if this one had sent it.
    let handed = inbox.hand_back_held().await?;
    if handed > 0 {
        tracing::info!(handed, "messages a runtime before this one held are back in their queues");
    }
    let queues = Arc::new(LocalQueues::new(ports.queue.clone(), inbox.clone()));
    for queue in QueueName::ALL {
        queues.expect(queue, inbox.holding(queue).await?);
    }
    ports.queue = queues.clone();
    let store = ports.store.clone();
    Ok(Assembled {
        engine: Engine::new(ports, config.engine_config()),
        store,
        queues,
        outbox,
        mail: openloop_fn_signals::MailIntake::from_config(config, &clients),
        kept: Some(kept),
    })
}

/// In memory: the in-memory store and queues, a provider that accepts every mail.
fn in_memory(
    config: &Config,
    clock: Arc<TestClock>,
    agent: Arc<dyn openloop_core::ports::Agent>,
    closed: Arc<crate::evaluation::ClosedTasks>,
) -> Assembled {
    let memory = Arc::new(MemoryQueues::default());
    let queues = Arc::new(LocalQueues::new(memory.clone(), memory));
    let outbox = Arc::new(Outbox::new(Arc::new(AcceptingProvider {
        region: config.region.clone(),
    })));
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
    let ports = EnginePorts {
        store: store.clone(),
        queue: queues.clone(),
        mailer: outbox.clone(),
        agent,
        bus: closed.clone(),
        clock,
        connector: config.pushpress.clone().map(|p| Arc::new(p) as Arc<dyn Connector>),
        sending_domains: Some(Arc::new(openloop_core::memory::MemorySendingDomains::default())),
        dns: Some(Arc::new(openloop_core::memory::MemoryDns::default())),
    };
    Assembled {
        engine: Engine::new(ports, config.engine_config()),
        store,
        queues,
        outbox,
        mail: openloop_fn_signals::MailIntake {
            verifier: SnsVerifier::new(openloop_aws::tls::client(), config.mail_events_topic_arn.clone()),
            stored: Arc::new(NoStoredMail),
        },
        kept: None,
    }
}

pub async fn start(options: Options) -> Result<Running, Box<dyn std::error::Error + Send + Sync>> {
    let mut config = options.config.clone();
    let names = Names::from_prefix(&options.prefix);
    config.table = names.table.clone();
    config.event_bus = names.event_bus.clone();
    config.inbound_mail_bucket = names.inbound_mail_bucket.clone();
    let listener = tokio::net::TcpListener::bind(options.http_addr).await?;
    let addr = listener.local_addr()?;
    // Links in mail lead to this runtime, unless a public address was given: the variable,
    // or a configuration naming an https one (as a deployment's is).
    if std::env::var("OPENLOOP_PUBLIC_URL").is_err() && !config.public_url.starts_with("https://") {
        config.public_url = format!("http://{addr}");
    }

    let clock = Arc::new(TestClock::new());
    let mut background = Vec::new();
    let mut pushpress_stand_in = None;
    if options.pushpress_stand_in && config.pushpress.is_none() {
        let loopback = SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), 0);
        let (stand_in, server) = crate::pushpress::FakePushPress::stand_in(loopback, clock.now()).await?;
        let client = openloop_pushpress::PushPressConfig::new(&stand_in.base, None)?;
        config.pushpress = Some(openloop_pushpress::PushPress::new(client)?);
        background.push(server);
        pushpress_stand_in = Some(stand_in.base);
    }
    // The model's clients (Bedrock's) are the SDK's whole chain, as everything local.
    let vars = openloop_edge::config::Vars::env();
    let model_clients = config.clients().await;
    let agent = match options.agent.clone() {
        Some(agent) => agent,
        None => openloop_edge::config::agent(&vars, &model_clients)?,
    };
    let closed = Arc::new(crate::evaluation::ClosedTasks::new(Arc::new(NullBus)));
    let Assembled {
        engine,
        store,
        queues,
        outbox,
        mail,
        kept,
    } = match options.ports {
        Ports::Emulator => on_emulator(&mut config, &names, clock.clone(), agent, closed.clone()).await?,
        Ports::Memory => in_memory(&config, clock.clone(), agent, closed.clone()),
    };
    // `OPENLOOP_EVALUATOR=model`: the model evaluator; the offline one otherwise.
    let engine = match openloop_edge::config::evaluator(&vars, &model_clients)? {
        Some(evaluator) => engine.with_evaluator(evaluator),
        None => engine,
    };
    // The local rule: http to a loopback address is taken too, so tests can receive.
    let engine = engine.with_webhook_transport(Arc::new(openloop_edge::webhook_transport::HttpWebhookTransport::new(true)));
    // Texts: the engine's real adapter, at a fake server of the SMS service's protocol.
    let texts = match &kept {
        Some(kept) => crate::texts::FakeSms::kept_in(clock.clone(), kept.clone()).await?,
        None => crate::texts::FakeSms::new(clock.clone()),
    };
    let (texts_url, texts_server) = texts.serve().await?;
    let engine = engine.with_sms(Arc::new(openloop_aws::sms::EndUserMessagingSms::at(
        &texts_url,
        &config.region,
        Arc::new(crate::function::access_key),
    )));
    let local = Arc::new(Local {
        texts,
        mail,
        kept,
        engine: engine.clone(),
        clock,
        queues,
        outbox,
        gate: RwLock::new(()),
        analysis: Schedule::new(openloop_fn_analysis::PERIOD, engine.now()),
        evaluation: Schedule::new(crate::evaluation::WEEK, engine.now()),
        monthly: crate::evaluation::Monthly::new(engine.now()),
        closed,
        changed: AtomicBool::new(true),
    });

    // Both faces on one router, as API Gateway routes them to their two functions in AWS.
    let api = serve_as(
        "api",
        openloop_fn_api::routes(Arc::new(openloop_fn_api::ApiState {
            engine: engine.clone(),
            admin_token: config.admin_token.clone(),
        })),
    );
    let dashboard = serve_as(
        "dashboard",
        openloop_fn_dashboard::routes(Arc::new(openloop_fn_dashboard::DashboardState {
            engine: engine.clone(),
            session_key: openloop_fn_dashboard::session_key(&config.signing_key),
        })),
    );
    let api = openloop_web::layered(api.merge(dashboard));
    let webhooks = serve_as(
        "webhooks",
        openloop_fn_webhooks::router(Arc::new(openloop_fn_webhooks::WebhooksState {
            engine,
            inbound_token: config.inbound_token.clone(),
            accept_wall_clock: true,
            sms_notifications: SnsVerifier::new(openloop_aws::tls::client(), config.inbound_sms_topic_arn.clone()),
        })),
    );
    let local_routes = Router::new()
        .route("/health", get(|| async { axum::Json(serde_json::json!({"status": "ok"})) }))
        .route("/_local/clock", get(get_clock).post(set_clock))
        .route("/_local/run", post(run))
        .route("/_local/outbox", get(get_outbox))
        .route("/_local/ses-notification", post(ses_notification))
        .route("/_local/inbound-sms", post(inbound_sms))
        .method_not_allowed_fallback(openloop_edge::http::method_not_allowed)
        .layer(axum::middleware::map_response(openloop_edge::json_errors::json_errors))
        .layer(axum::middleware::map_request(openloop_edge::http::drop_empty_query_params))
        .layer(axum::middleware::from_fn(|request, next| {
            openloop_edge::http::limit_declared_body(LOCAL_MAX_BODY_BYTES, request, next)
        }))
        .layer(axum::extract::DefaultBodyLimit::max(LOCAL_MAX_BODY_BYTES))
        .with_state(local.clone());
    let writes = local.clone();
    let app = api.merge(webhooks).merge(local_routes).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let writes = writes.clone();
            async move {
                if !matches!(*request.method(), axum::http::Method::GET | axum::http::Method::HEAD) && request.uri().path() != "/_local/run"
                {
                    writes.changed.store(true, Ordering::SeqCst);
                }
                next.run(request).await
            }
        },
    ));
    let server = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "HTTP server stopped");
        }
    });

    background.push(texts_server);
    if options.background {
        let consumer = local.clone();
        background.push(tokio::spawn(async move {
            // The SQS event sources: drain at once whenever something was sent, and look at
            // every queue each second — for delayed messages, ones whose visibility timeout
            // ran out, and ones sent from elsewhere.
            let mut everything = true;
            loop {
                let result = {
                    let _shared = consumer.gate.read().await;
                    consumer.drain(&mut BTreeMap::new(), everything).await
                };
                if let Err(e) = result {
                    tracing::warn!(error = %e, "queue consumer failed; trying again");
                }
                everything = tokio::select! {
                    () = consumer.queues.wake.notified() => false,
                    () = tokio::time::sleep(Duration::from_secs(1)) => true,
                };
            }
        }));
        let hourly = local.clone();
        let local = local.clone();
        background.push(tokio::spawn(async move {
            // The first a minute after the start, as a schedule fires: not at once, over a
            // clock a test (or the demo) is still setting.
            let minute = Duration::from_secs(60);
            let mut every_minute = tokio::time::interval_at(tokio::time::Instant::now() + minute, minute);
            loop {
                every_minute.tick().await;
                let _shared = local.gate.read().await;
                if let Err(e) = run_as("tick", openloop_fn_tick::handle(&local.engine, Wake::Now)).await {
                    tracing::warn!(error = %e, "scheduled tick failed");
                }
                if let Err(e) = local.analysis_if_due().await {
                    tracing::warn!(error = %e, "scheduled analysis failed");
                }
            }
        }));
        let local = hourly;
        background.push(tokio::spawn(async move {
            // The attribution schedule (hourly in AWS), on the wall clock like the tick's.
            let hour = Duration::from_secs(3600);
            let mut every_hour = tokio::time::interval_at(tokio::time::Instant::now() + hour, hour);
            loop {
                every_hour.tick().await;
                let _shared = local.gate.read().await;
                if let Err(e) = run_as("attribution", openloop_fn_attribution::handle(&local.engine)).await {
                    tracing::warn!(error = %e, "scheduled attribution failed");
                }
            }
        }));
    }
    Ok(Running {
        addr,
        engine: local.engine.clone(),
        store,
        outbox: local.outbox.clone(),
        admin_token: config.admin_token.expose_secret().to_owned(),
        inbound_token: config.inbound_token.expose_secret().to_owned(),
        pushpress_stand_in,
        texts: local.texts.clone(),
        server,
        background,
    })
}

/// Counts of what one poll or run handled.
#[derive(Default, serde::Serialize)]
struct Handled {
    processed: usize,
    retrying: usize,
}

impl Local {
    /// The analysis schedule, if the clock has reached its next time.
    async fn analysis_if_due(&self) -> Result<Option<openloop_core::engine::AnalysisReport>, openloop_core::task::error::EngineError> {
        if !self.analysis.take_due(self.clock.now()) {
            return Ok(None);
        }
        run_as("analysis", openloop_fn_analysis::handle(&self.engine)).await.map(Some)
    }

    async fn dispatch(&self, queue: QueueName, event: SqsEvent) -> SqsBatchResponse {
        let engine = &self.engine;
        run_as(crate::function::consumer(queue), async move {
            match queue {
                QueueName::Signals => openloop_fn_signals::handle(engine, &self.mail, event).await,
                QueueName::Execute => openloop_fn_execute::handle(engine, event).await,
                QueueName::Followup => openloop_fn_followup::handle(engine, event).await,
                QueueName::Dormant => openloop_fn_dormant::handle(engine, event).await,
                QueueName::Deliveries => openloop_fn_signals::handle_deliveries(engine, event).await,
            }
        })
        .await
    }

    /// Receive one batch from `queue` into its function, as the SQS event source would, and
    /// delete what the function did not report as failed.
    async fn poll(&self, queue: QueueName, everything: bool) -> Result<Handled, String> {
        let messages = self.queues.receive(queue, everything).await?;
        if messages.is_empty() {
            return Ok(Handled::default());
        }
        let mut event = SqsEvent::default();
        let mut receipts = HashMap::new();
        for message in messages {
            let mut record = SqsMessage::default();
            record.message_id = Some(message.id.clone());
            record.body = Some(message.body);
            record.receipt_handle = Some(message.receipt.clone());
            record.event_source = Some("aws:sqs".into());
            receipts.insert(message.id, message.receipt);
            event.records.push(record);
        }
        let response = self.dispatch(queue, event).await;
        let failed: Vec<String> = response.batch_item_failures.into_iter().map(|f| f.item_identifier).collect();
        let done: Vec<String> = receipts
            .into_iter()
            .filter(|(id, _)| !failed.contains(id))
            .map(|(_, receipt)| receipt)
            .collect();
        let processed = done.len();
        self.queues.delete(queue, done).await?;
        self.changed.store(true, Ordering::SeqCst);
        Ok(Handled {
            processed,
            retrying: failed.len(),
        })
    }

    /// Drain every queue until a receive comes back empty. Messages a function asked to
    /// retry stay invisible until their visibility timeout, as in SQS; they are counted.
    /// (`everything`: ask every queue, not only those holding what this process sent.)
    async fn drain(&self, totals: &mut BTreeMap<&'static str, Handled>, everything: bool) -> Result<(), String> {
        loop {
            let mut any = false;
            for queue in QueueName::ALL {
                let handled = self.poll(queue, everything).await?;
                any |= handled.processed + handled.retrying > 0;
                let total = totals.entry(queue.as_str()).or_default();
                total.processed += handled.processed;
                total.retrying += handled.retrying;
            }
            if !any {
                return Ok(());
            }
        }
    }
}

/// The local endpoints' bodies (a clock, an SES notification) are small.
const LOCAL_MAX_BODY_BYTES: usize = openloop_core::kernel::limits::MAX_BODY_BYTES;

fn local_error(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
    ApiError::new(status, code, message)
}

async fn get_clock(State(local): State<Arc<Local>>) -> Response {
    axum::Json(serde_json::json!({"now": local.clock.now()})).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetClock {
    now: Timestamp,
}

async fn set_clock(State(local): State<Arc<Local>>, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let input: SetClock = json_body(&body.map_err(body_error)?)?;
    match local.clock.set(input.now) {
        Ok(now) => {
            if let Some(kept) = &local.kept
                && let Err(e) = kept.set_clock(local.clock.offset()).await
            {
                tracing::error!(error = %e, "the clock was set but not kept for a restart");
            }
            Ok(axum::Json(serde_json::json!({"now": now})).into_response())
        }
        Err(current) => Err(local_error(
            StatusCode::CONFLICT,
            "clock_backwards",
            format!("the clock only moves forward; it is {current}"),
        )),
    }
}

/// Fire every schedule at the clock's now and drain every queue, repeating while the tick
/// finds work (a step can make another one due at once), then run attribution (which
/// enqueues nothing) and say what ran.
async fn run(State(local): State<Arc<Local>>) -> Result<Response, ApiError> {
    let _exclusive = local.gate.write().await;
    let changed = local.changed.swap(false, Ordering::SeqCst);
    let mut totals = BTreeMap::new();
    let mut ticks = Vec::new();
    let unavailable = |e: String| local_error(StatusCode::SERVICE_UNAVAILABLE, "queue_unavailable", e);
    local.drain(&mut totals, false).await.map_err(unavailable)?;
    let analysis = local.analysis_if_due().await?;
    for _ in 0..20 {
        let report = run_as("tick", openloop_fn_tick::handle(&local.engine, Wake::Now)).await?;
        let enqueued: usize = report.enqueued.values().sum();
        ticks.push(report);
        if enqueued == 0 {
            break;
        }
        local.drain(&mut totals, false).await.map_err(unavailable)?;
    }
    // The hourly attribution schedule, after the work: what the workers closed is valued now
    // (`null`: nothing changed since the last run's).
    let worked = analysis.is_some() || totals.values().any(|h: &Handled| h.processed + h.retrying > 0);
    let attribution = if changed || worked {
        Some(run_as("attribution", openloop_fn_attribution::handle(&local.engine)).await?)
    } else {
        None
    };
    // The evaluation function: once per task closed since the last run (its account), and on
    // its weekly schedule (every account).
    let weekly = local.evaluation.take_due(local.clock.now());
    let evaluation = run_as("evaluation", crate::evaluation::run(&local.engine, &local.closed, weekly)).await?;
    let monthly_evaluation = run_as("evaluation", local.monthly.run(&local.engine)).await?;
    Ok(axum::Json(
        serde_json::json!({"now": local.clock.now(), "ticks": ticks, "analysis": analysis, "attribution": attribution, "evaluation": evaluation, "monthly_evaluation": monthly_evaluation, "queues": totals}),
    )
    .into_response())
}

/// What SES would publish to the mail-events topic (a bounce, a complaint, a received mail),
/// handed to the signals function's engine operation as if it had come through SNS and SQS —
/// there is no SNS locally to sign it. The body is the SES notification itself.
async fn ses_notification(State(local): State<Arc<Local>>, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    let notification = std::str::from_utf8(&body)
        .ok()
        .and_then(openloop_aws::mail_events::ses_notification)
        .ok_or_else(|| {
            local_error(
                StatusCode::BAD_REQUEST,
                "invalid_notification",
                "the body is not an SES notification",
            )
        })?;
    let event = openloop_aws::mail_events::mail_event(&notification).map_err(openloop_core::task::error::EngineError::from)?;
    let outcome = run_as("signals", local.engine.handle_mail_event(event, local.mail.stored.as_ref())).await?;
    Ok(axum::Json(serde_json::json!({"outcome": format!("{outcome:?}")})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutboxQuery {
    /// `sms`: the texts sent instead of the mail (`mail`, the default).
    channel: Option<String>,
    /// Only the mail to this address (the texts to this phone).
    to: Option<String>,
    /// Skip the first `after` entries (of the selection): what a reader has already seen.
    after: Option<String>,
}

/// `GET /_local/outbox[?to=&after=]`: the mail the provider accepted, oldest first.
async fn get_outbox(
    State(local): State<Arc<Local>>,
    query: Result<Query<OutboxQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| local_error(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))?;
    let after = match query.after.as_deref() {
        Some(a) => a
            .parse()
            .map_err(|_| local_error(StatusCode::BAD_REQUEST, "invalid_query", "after must be a number of entries"))?,
        None => 0,
    };
    let to = query.to.as_deref();
    match query.channel.as_deref() {
        None | Some("mail" | "email") => Ok(axum::Json(local.outbox.read(to, after)).into_response()),
        Some("sms") => Ok(axum::Json(local.texts.read(to, after)).into_response()),
        Some(_) => Err(local_error(StatusCode::BAD_REQUEST, "invalid_query", "channel is mail or sms")),
    }
}

/// `POST /_local/inbound-sms {"from", "to", "body"}`: a member's text, handed to the engine
/// as the webhooks function hands one from SNS (there is no SNS locally to sign it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InboundSmsBody {
    from: String,
    to: String,
    body: String,
}

async fn inbound_sms(State(local): State<Arc<Local>>, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let body = body.map_err(body_error)?;
    let text: InboundSmsBody = serde_json::from_slice(&body).map_err(|e| {
        local_error(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            format!("expected {{\"from\", \"to\", \"body\"}}: {e}"),
        )
    })?;
    let inbound = openloop_core::engine::SmsInbound {
        from: text.from,
        to: text.to,
        body: text.body,
        message_id: ulid::Ulid::new().to_string(),
    };
    let outcome = run_as("webhooks", local.engine.receive_text(inbound)).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(outcome)).into_response())
}

//! The operations the functions call. Each reads what it needs through the ports, decides
//! with the pure modules, and commits one [`TaskCommit`] per decision. Nothing here reads the
//! clock except through [`Clock`], and nothing trusts the message that woke it.

// The engine in eight rooms by operation family: a task's life, what arrives from outside, the
// business and its owner, what is learned and reported, what time brings, the owner's day,
// what the owner automates, and the channels a message leaves by. Their modules keep their flat
// names inside the engine (`tasks`, `replies`, `todos`, …) through the imports below (all of
// them, used or not yet), so a room can be rearranged without touching its callers.
mod automation;
mod business;
mod channels;
mod day;
mod inbound;
mod learning;
mod lifecycle;
mod schedule;

#[allow(unused_imports)]
use automation::{control, loops, triggers};
#[allow(unused_imports)]
use business::{account_removal, accounts, connection, credentials, erasure, feedback, members, owner_notices, sending_domains, sign_in};
#[allow(unused_imports)]
use channels::{messages, sms, webhooks};
#[allow(unused_imports)]
use day::{brief, conversations, links, plans, presence, reopen, reports, todos};
#[allow(unused_imports)]
use inbound::{mail_events, pushpress, replies, signals, suppression, threats};
#[allow(unused_imports)]
use learning::{analysis, attribution, experiments, lift, memories, network, observability, scorecard, send_hours, suggestions};
#[allow(unused_imports)]
use lifecycle::{actions, ai, autonomy, categories, decisions, escalation, freshness, reservation, send, subtasks, tasks, work};
#[allow(unused_imports)]
use schedule::{recurring, tick};

pub use account_removal::{AccountRemovalStep, AccountRemovalView, REMOVAL_PAGE, RemovalOutcome};
pub use accounts::{AccountSecrets, Autonomy, NewAccount, SettingsPatch};
pub use actions::AT_RISK_TAG;
pub use analysis::{AccountAnalysis, AnalysisReport};
pub use attribution::AttributionReport;
pub use brief::REVIEW_EXPIRED;
pub use connection::{ConnectorView, ImportOutcome, ImportStep, PlanView, WebhookView};
pub use conversations::{CONVERSATIONS_LISTED, Conversation};
pub use credentials::SignInRequest;
pub use decisions::Resolution;
pub use erasure::{ExportedTask, MemberExport};
pub use experiments::{ExperimentRun, ExperimentView, ExperimentsReport};
pub use lift::LiftReport;
pub use links::{LinkPage, LinkState};
pub use loops::{LOOPS_PAGE_MAX, LoopSweep, LoopView};
pub use mail_events::{InboundMail, MailEvent, MailEventOutcome, MailFeedback};
pub use members::{MEMBERS_PAGE_MAX, MemberDetail, MemberView, monthly_value};
pub use memories::NewMemory;
pub use messages::{MessageTemplateView, TemplateInput, TemplateWithVariants};
pub use network::NetworkReport;
pub use observability::MetricsReport;
pub use pushpress::{DeliveryOutcome, member_event};
pub use recurring::SpawnReport;
pub use replies::InboundOutcome;
pub use scorecard::Overview;
pub use send_hours::SendHoursRun;
pub use sign_in::SignInToken;
pub use signals::{Accepted, SignalOutcome};
pub use sms::{ConsentInput, ConsentView, MemberTexts, SmsInbound, SmsOutcome, TextCounts, TextPlaceView};
pub use subtasks::Batch;
pub use suggestions::EvaluationReport;
pub use tasks::Created;
pub use tasks::{CreateOptions, NewTask};
pub use tick::{TickReport, Wake};
pub use todos::TODOS_LISTED;
pub use triggers::{DryRun, DryRunMember};
pub use webhooks::WebhookWork;
pub use work::StepOutcome;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::conversation::token::SigningKey;
use crate::kernel::ids::Email;
use crate::members::connector::Connector;
use crate::ports::{Agent, Clock, EventBus, Mailer, Queue, TaskStore};
use crate::rails::priority_rules::PriorityRules;

/// Deployment settings the engine needs (from the environment in the functions).
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The address mail is sent from (its domain must be a verified SES identity).
    pub from_email: Email,
    /// Domain of the `reply+{token}@…` addresses.
    pub reply_domain: String,
    /// Public base URL for links in mail (unsubscribe).
    pub public_url: String,
    pub signing_key: SigningKey,
    /// The declarative priority rules (`rules/priority.toml` unless configured).
    pub priority_rules: Arc<PriorityRules>,
    /// What an AI call of the configured model costs, and the day's spend that alerts us.
    pub ai_pricing: crate::owner::metrics::AiPricing,
}

/// The adapters an engine is built from. A composition root assembles them (decorating one
/// first if it needs to, as the local runtime wraps the mailer in its outbox) and hands them to
/// [`Engine::new`]; after that only the engine's operations reach them.
#[derive(Clone)]
pub struct EnginePorts {
    pub store: Arc<dyn TaskStore>,
    pub queue: Arc<dyn Queue>,
    pub mailer: Arc<dyn Mailer>,
    pub agent: Arc<dyn Agent>,
    pub bus: Arc<dyn EventBus>,
    pub clock: Arc<dyn Clock>,
    /// The member-data connector the stale guard refreshes from; `None`
    /// (the local default) reads the projected facts only.
    pub connector: Option<Arc<dyn Connector>>,
    /// The mail provider's sending identities (a gym's own domain, spec §33.1); `None`: every
    /// account sends from the shared domain and naming a domain is refused.
    pub sending_domains: Option<Arc<dyn crate::ports::SendingDomains>>,
    /// The resolver that reads a sending domain's ownership record; `None`: no domain is ever
    /// proven, so mail leaves from the shared domain.
    pub dns: Option<Arc<dyn crate::ports::DnsTxt>>,
}

/// The ports and settings every operation works with. Its fields are the engine's own:
/// handlers call operations, never a port, so every read and write goes through a decision
/// made here.
#[derive(Clone)]
pub struct Engine {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) queue: Arc<dyn Queue>,
    pub(crate) mailer: Arc<dyn Mailer>,
    pub(crate) agent: Arc<dyn Agent>,
    pub(crate) bus: Arc<dyn EventBus>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) config: EngineConfig,
    pub(crate) connector: Option<Arc<dyn Connector>>,
    pub(crate) sending_domains: Option<Arc<dyn crate::ports::SendingDomains>>,
    pub(crate) dns: Option<Arc<dyn crate::ports::DnsTxt>>,
    /// The evaluation function's evaluator (the offline one unless [`Engine::with_evaluator`]).
    pub(crate) evaluator: Arc<dyn crate::ports::Evaluator>,
    /// Posts outbound webhooks and checks their addresses (`None`: none can be added).
    pub(crate) webhook_transport: Option<Arc<dyn crate::ports::WebhookTransport>>,
    /// The text-message provider ([`Engine::with_sms`]); `None`: no text is sent, and a
    /// touch that would be one is refused and retried like a refused mail.
    pub(crate) sms: Option<Arc<dyn crate::ports::SmsSender>>,
    /// Which accounts have a row of their own on `task_closed` (`engine/automation/triggers/openloop.rs`).
    pub(crate) closed_rows: Arc<triggers::ClosedRows>,
    /// The order member events were accepted in (`engine/inbound/signals.rs`).
    pub(crate) arrivals: Arc<signals::Arrivals>,
}

impl Engine {
    /// The engine over these adapters and deployment settings.
    pub fn new(ports: EnginePorts, config: EngineConfig) -> Self {
        let EnginePorts {
            store,
            queue,
            mailer,
            agent,
            bus,
            clock,
            connector,
            sending_domains,
            dns,
        } = ports;
        Self {
            store,
            queue,
            mailer,
            agent,
            bus,
            clock,
            config,
            connector,
            sending_domains,
            dns,
            evaluator: Arc::new(crate::ports::OfflineEvaluator),
            webhook_transport: None,
            sms: None,
            closed_rows: Default::default(),
            arrivals: Default::default(),
        }
    }

    /// The same engine sending texts through `sms`.
    pub fn with_sms(mut self, sms: Arc<dyn crate::ports::SmsSender>) -> Self {
        self.sms = Some(sms);
        self
    }

    /// The same engine with another evaluator (a model's).
    pub fn with_evaluator(mut self, evaluator: Arc<dyn crate::ports::Evaluator>) -> Self {
        self.evaluator = evaluator;
        self
    }

    /// The same engine delivering outbound webhooks through `transport`.
    pub fn with_webhook_transport(mut self, transport: Arc<dyn crate::ports::WebhookTransport>) -> Self {
        self.webhook_transport = Some(transport);
        self
    }

    /// The engine's current time, from its clock: what a handler checks a signature's
    /// timestamp against and stamps its metrics with (the test clock locally, never the
    /// wall clock directly).
    pub fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }
}

/// An operation's future on the heap: the caller's future (and, in a debug build, its stack
/// frame) holds a pointer, not the operation's whole state, so the engine's deepest paths (a
/// step that escalates, mails the owner, makes a to-do and meets loops) fit a test thread's
/// default stack. An operation boxes its own body, `boxed(async move { … }).await`, or the
/// call of another, `boxed(self.step(item)).await`.
pub(crate) fn boxed<'a, T>(operation: impl Future<Output = T> + Send + 'a) -> std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>> {
    Box::pin(operation)
}

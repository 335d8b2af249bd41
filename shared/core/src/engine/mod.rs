//! The operations the functions call. Each reads what it needs through the ports, decides
//! with the pure modules, and commits one [`TaskCommit`] per decision. Nothing here reads the
//! clock except through [`Clock`], and nothing trusts the message that woke it.

mod accounts;
mod actions;
pub use actions::AT_RISK_TAG;
mod ai;
mod analysis;
pub use analysis::{AccountAnalysis, AnalysisReport};
mod attribution;
pub(crate) mod escalation;
pub use attribution::AttributionReport;
mod autonomy;
mod categories;
mod connection;
mod control;
mod conversations;
pub use connection::{ConnectorView, ImportOutcome, ImportStep, PlanView, WebhookView};
pub use conversations::{CONVERSATIONS_LISTED, Conversation};
mod feedback;
mod freshness;
mod loops;
pub use loops::{LOOPS_PAGE_MAX, LoopSweep, LoopView};
mod mail_events;
mod members;
pub use members::{MEMBERS_PAGE_MAX, MemberDetail, MemberView, monthly_value};
mod memories;
mod messages;
pub use messages::{MessageTemplateView, TemplateInput};
mod network;
mod suggestions;
pub use memories::NewMemory;
pub use network::NetworkReport;
pub use suggestions::EvaluationReport;
mod observability;
pub use observability::MetricsReport;
mod owner_notices;
mod presence;
mod pushpress;
pub use pushpress::{DeliveryOutcome, member_event};
mod recurring;
mod reopen;
mod reports;
pub use mail_events::{InboundMail, MailEvent, MailEventOutcome, MailFeedback};
mod replies;
mod reservation;
mod scorecard;
pub use scorecard::Overview;
mod send;
mod sending_domains;
mod sign_in;
pub use recurring::SpawnReport;
pub use replies::InboundOutcome;
pub use sign_in::SignInToken;
mod signals;
mod subtasks;
mod suppression;
pub use subtasks::Batch;
mod brief;
mod lift;
mod tasks;
mod threats;
mod tick;
mod triggers;
pub use brief::REVIEW_EXPIRED;
pub use signals::{Accepted, SignalOutcome};
pub use tasks::Created;
pub use triggers::{DryRun, DryRunMember};
mod todos;
pub use todos::TODOS_LISTED;
mod work;

#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use accounts::{AccountSecrets, Autonomy, NewAccount, SettingsPatch};
pub use lift::LiftReport;
pub use tasks::{CreateOptions, NewTask, Resolution};
pub use tick::{TickReport, Wake};
pub use work::StepOutcome;

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
    /// The member-data connector the stale guard refreshes from (spec §30, §34); `None`
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
    /// Which accounts have a row of their own on `task_closed` (`engine/triggers/openloop.rs`).
    pub(crate) closed_rows: Arc<triggers::ClosedRows>,
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
            closed_rows: Default::default(),
        }
    }

    /// The same engine with another evaluator (a model's).
    pub fn with_evaluator(mut self, evaluator: Arc<dyn crate::ports::Evaluator>) -> Self {
        self.evaluator = evaluator;
        self
    }

    /// The engine's current time, from its clock: what a handler checks a signature's
    /// timestamp against and stamps its metrics with (the test clock locally, never the
    /// wall clock directly).
    pub fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }
}

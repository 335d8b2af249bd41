//! The composition root: configuration from the environment (Lambda reads nothing else), the
//! AWS clients, and the engine assembled from the adapters. Secrets are wrapped so they never reach a log.

use std::collections::HashMap;
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

use openloop_core::conversation::token::SigningKey;
use openloop_core::engine::{Engine, EngineConfig, EnginePorts};
use openloop_core::kernel::ids::Email;
use openloop_core::owner::metrics::AiPricing;
use openloop_core::ports::{AccountStore, Agent, Clock};
use openloop_core::rails::priority_rules::PriorityRules;
use openloop_core::task::work::QueueName;

pub use openloop_aws::clients::Clients;
use openloop_aws::dynamo::DynamoStore;
use openloop_pushpress::{PushPress, PushPressConfig};

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(pub String);

/// Everything the functions read from the environment.
#[derive(Clone, Debug)]
pub struct Config {
    pub table: String,
    pub queue_urls: HashMap<QueueName, String>,
    pub event_bus: String,
    pub from_email: Email,
    pub reply_domain: String,
    pub public_url: String,
    pub signing_key: SecretString,
    pub admin_token: SecretString,
    pub inbound_token: SecretString,
    pub region: String,
    /// `AWS_ENDPOINT_URL`: an emulator instead of AWS.
    pub endpoint: Option<String>,
    pub priority_rules: Arc<PriorityRules>,
    /// `OPENLOOP_SES_CONFIGURATION_SET`: the SES configuration set sends name (bounce and
    /// complaint notifications); none locally.
    pub ses_configuration_set: Option<String>,
    /// `OPENLOOP_PUSHPRESS_BASE_URL` (+ the process-wide `OPENLOOP_PUSHPRESS_API_KEY`): the
    /// member-data connector the stale guard refreshes from; none by default (projected facts
    /// only).
    pub pushpress: Option<PushPress>,
    /// `OPENLOOP_MAIL_EVENTS_TOPIC_ARN`: the only SNS topic whose messages the signals
    /// function accepts (any correctly signed topic when unset).
    pub mail_events_topic_arn: Option<String>,
    /// `OPENLOOP_INBOUND_SMS_TOPIC_ARN`: the only SNS topic whose notifications
    /// `POST /webhooks/inbound-sms` accepts (members' texts). Required in Lambda (a function
    /// without it does not start); unset locally, any correctly signed topic.
    pub inbound_sms_topic_arn: Option<String>,
    /// `OPENLOOP_INBOUND_MAIL_BUCKET`: where SES receiving stores inbound messages
    /// (`{prefix}-inbound-mail` locally).
    pub inbound_mail_bucket: String,
    /// What an AI call of the configured model costs, and the day's spend per account that
    /// alerts us: `OPENLOOP_AI_CALL_COSTS` (`model=usd,…`) over the defaults of known models
    /// ([`DEFAULT_AI_CALL_COSTS`]), for the model `OPENLOOP_LLM`/`OPENLOOP_LLM_MODEL` name;
    /// `OPENLOOP_AI_COST_ALERT_USD` (default $10, spec §28.4).
    pub ai_pricing: AiPricing,
    /// `OPENLOOP_KMS_KEY_ID`: the KMS key (ARN, id or alias) that seals the gyms' secrets
    /// (`kernel::sealed`). Required in Lambda; unset locally, the local keyring seals (the
    /// local runtime on the emulator names the emulator's key it provisioned).
    pub kms_key_id: Option<String>,
}

/// The platform's secrets a variable may name instead of holding: `{NAME}_SECRET` (a Secrets
/// Manager secret's ARN or name, or `ssm:/parameter`) is read at start-up into `NAME`.
pub const SECRET_VARIABLES: &[&str] = &[
    "OPENLOOP_SIGNING_KEY",
    "OPENLOOP_ADMIN_TOKEN",
    "OPENLOOP_INBOUND_TOKEN",
    "OPENLOOP_PUSHPRESS_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
];

/// The model's API key, whichever provider `OPENLOOP_LLM` names: `OPENLOOP_LLM_API_KEY_SECRET`
/// is read into `ANTHROPIC_API_KEY` and `OPENAI_API_KEY` (unless those are named themselves).
pub const MODEL_KEY_SECRET: &str = "OPENLOOP_LLM_API_KEY_SECRET";

/// The environment with the platform's secrets read from Secrets Manager or SSM: what
/// configuration is read through in Lambda ([`Vars::resolve`]); locally the environment alone
/// ([`Vars::env`]) or with secrets named too.
#[derive(Clone, Default)]
pub struct Vars {
    resolved: HashMap<String, SecretString>,
}

impl std::fmt::Debug for Vars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.resolved.keys().collect();
        names.sort();
        f.debug_struct("Vars").field("resolved", &names).finish()
    }
}

impl Vars {
    /// The environment as it is.
    pub fn env() -> Self {
        Self::default()
    }

    /// A variable: a secret read at start-up, else the environment's (blank is unset).
    pub fn get(&self, name: &str) -> Option<String> {
        self.resolved
            .get(name)
            .map(|v| v.expose_secret().to_owned())
            .or_else(|| var(name))
            .filter(|v| !v.trim().is_empty())
    }

    /// What [`SECRET_VARIABLES`] and [`MODEL_KEY_SECRET`] name, read once through `read`
    /// (`(variable, its secret's id)` → the value). A secret named but unreadable stops the
    /// start, naming the variable and the secret, never a value.
    pub async fn resolve<F, Fut>(var: impl Fn(&str) -> Option<String>, read: F) -> Result<Self, ConfigError>
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = Result<String, String>>,
    {
        // Read at once, not one after another: a cold start waits for the slowest only.
        let named: Vec<(String, String)> = SECRET_VARIABLES
            .iter()
            .map(|name| format!("{name}_SECRET"))
            .chain(std::iter::once(MODEL_KEY_SECRET.to_owned()))
            .filter_map(|variable| Some((var(&variable)?, variable)))
            .map(|(id, variable)| (variable, id))
            .collect();
        let values = futures::future::join_all(named.iter().map(|(_, id)| read(id.clone()))).await;
        let mut resolved = HashMap::new();
        let mut model_key = None;
        for ((variable, _), value) in named.iter().zip(values) {
            let value = value.map_err(|e| ConfigError(format!("{variable}: {e}")))?;
            match variable.strip_suffix("_SECRET") {
                Some(name) if variable != MODEL_KEY_SECRET => {
                    resolved.insert(name.to_owned(), SecretString::from(value));
                }
                _ => model_key = Some(value),
            }
        }
        if let Some(value) = model_key {
            for name in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"] {
                resolved.entry(name.to_owned()).or_insert_with(|| SecretString::from(value.clone()));
            }
        }
        Ok(Self { resolved })
    }

    /// [`Self::resolve`] with Secrets Manager and SSM in `region` (at `endpoint`, an emulator),
    /// with a function's credentials ([`Clients::in_lambda`]: the SDK's default chain, STS and
    /// all, is never linked into a function's binary).
    pub async fn from_secrets_manager(region: &str, endpoint: Option<&str>) -> Result<Self, ConfigError> {
        let named = SECRET_VARIABLES.iter().any(|name| var(&format!("{name}_SECRET")).is_some()) || var(MODEL_KEY_SECRET).is_some();
        if !named {
            return Ok(Self::env());
        }
        let secrets = Clients::in_lambda(region, endpoint).platform_secrets();
        Self::resolve(var, |id| {
            let secrets = secrets.clone();
            async move { secrets.value(&id).await }
        })
        .await
    }
}

/// What one AI call of a model costs by default, in USD (a call: a few thousand tokens of
/// prompt and context, a few hundred of answer, at the providers' list prices), by the model
/// name's prefix; the first that matches wins. No model (offline): nothing.
pub const DEFAULT_AI_CALL_COSTS: &[(&str, f64)] = &[
    ("offline", 0.0),
    ("claude-opus", 0.15),
    ("claude-sonnet", 0.04),
    ("claude-haiku", 0.01),
    ("claude-3-haiku", 0.003),
    ("gpt-4o-mini", 0.002),
    ("gpt-4o", 0.03),
    ("gpt-4.1-mini", 0.004),
    ("gpt-4.1", 0.03),
];

/// The model the deployment's agent calls, as `openloop_llm::model_config` picks it.
fn configured_model(var: &impl Fn(&str) -> Option<String>) -> String {
    match var("OPENLOOP_LLM").as_deref() {
        None | Some("offline") => "offline".into(),
        Some("anthropic") => var("OPENLOOP_LLM_MODEL").unwrap_or_else(|| "claude-sonnet-4-5".into()),
        // A Bedrock model id names its vendor first (`anthropic.claude-…`, `us.anthropic.…`):
        // priced by what follows it, as the vendor's own name would be.
        Some("bedrock") => {
            let id = var("OPENLOOP_BEDROCK_MODEL")
                .or_else(|| var("OPENLOOP_LLM_MODEL"))
                .unwrap_or_default();
            id.rsplit('.').next().unwrap_or_default().to_owned()
        }
        Some(_) => var("OPENLOOP_LLM_MODEL").unwrap_or_default(),
    }
}

/// The AI pricing the variables ask for, read through `var`.
pub fn ai_pricing(var: impl Fn(&str) -> Option<String>) -> Result<AiPricing, ConfigError> {
    let usd = |name: &str, value: &str| -> Result<f64, ConfigError> {
        value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 1000.0)
            .ok_or_else(|| ConfigError(format!("{name}: {value:?} is not an amount in USD")))
    };
    let model = configured_model(&var);
    let mut pricing = AiPricing::default();
    let mut configured = None;
    if let Some(costs) = var("OPENLOOP_AI_CALL_COSTS") {
        for pair in costs.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, cost) = pair
                .split_once('=')
                .ok_or_else(|| ConfigError(format!("OPENLOOP_AI_CALL_COSTS: {pair:?} is not model=usd")))?;
            let cost = usd("OPENLOOP_AI_CALL_COSTS", cost)?;
            if name.trim() == model {
                configured = Some(cost);
            }
        }
    }
    pricing.per_call_usd = configured
        .or_else(|| {
            DEFAULT_AI_CALL_COSTS
                .iter()
                .find(|(prefix, _)| model.starts_with(prefix))
                .map(|(_, c)| *c)
        })
        .unwrap_or(pricing.per_call_usd);
    if let Some(alert) = var("OPENLOOP_AI_COST_ALERT_USD") {
        pricing.alert_daily_usd = usd("OPENLOOP_AI_COST_ALERT_USD", &alert)?;
    }
    Ok(pricing)
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// In Lambda there are no defaults for secrets: a missing one is a deployment error.
fn in_lambda() -> bool {
    var("AWS_LAMBDA_FUNCTION_NAME").is_some()
}

fn secret(vars: &Vars, name: &str, local_default: &str) -> Result<SecretString, ConfigError> {
    match vars.get(name) {
        Some(v) => Ok(SecretString::from(v)),
        None if in_lambda() => Err(ConfigError(format!("{name} must be set (in AWS: {name}_SECRET names its secret)"))),
        None => Ok(SecretString::from(local_default.to_owned())),
    }
}

/// A setting that has a local default of "none" but none in Lambda: unset there, it is a
/// deployment error, refused at start rather than served open (the inbound-text topic: without
/// it any correctly signed SNS topic — anyone's — would be read as members' texts).
fn required_in_lambda(name: &str, value: Option<String>, lambda: bool) -> Result<Option<String>, ConfigError> {
    match value {
        None if lambda => Err(ConfigError(format!(
            "{name} must be set in Lambda: it names the only SNS topic whose messages are read"
        ))),
        value => Ok(value),
    }
}

pub fn queue_env(queue: QueueName) -> String {
    format!("OPENLOOP_{}_QUEUE_URL", queue.as_str().to_ascii_uppercase())
}

impl Config {
    /// From the environment alone (the local runtime, the tests, the admin CLI).
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_vars(&Vars::env())
    }

    /// From the environment with the platform's secrets as `vars` read them.
    pub fn from_vars(vars: &Vars) -> Result<Self, ConfigError> {
        let from = var("OPENLOOP_FROM_EMAIL").unwrap_or_else(|| "outreach@mail.openloop.local".into());
        let from_email = Email::parse(&from).map_err(|e| ConfigError(format!("OPENLOOP_FROM_EMAIL: {e}")))?;
        let http_addr = var("OPENLOOP_HTTP_ADDR").unwrap_or_else(|| "127.0.0.1:8787".into());
        Ok(Self {
            table: var("OPENLOOP_TABLE").unwrap_or_else(|| "openloop".into()),
            queue_urls: QueueName::ALL.into_iter().filter_map(|q| Some((q, var(&queue_env(q))?))).collect(),
            event_bus: var("OPENLOOP_EVENT_BUS").unwrap_or_else(|| "openloop".into()),
            from_email,
            reply_domain: var("OPENLOOP_REPLY_DOMAIN").unwrap_or_else(|| "replies.openloop.local".into()),
            public_url: var("OPENLOOP_PUBLIC_URL").unwrap_or_else(|| format!("http://{http_addr}")),
            signing_key: secret(vars, "OPENLOOP_SIGNING_KEY", "local-signing-key")?,
            admin_token: secret(vars, "OPENLOOP_ADMIN_TOKEN", "local-admin-token")?,
            inbound_token: secret(vars, "OPENLOOP_INBOUND_TOKEN", "local-inbound-token")?,
            region: var("AWS_REGION")
                .or_else(|| var("AWS_DEFAULT_REGION"))
                .unwrap_or_else(|| "us-east-1".into()),
            endpoint: var("AWS_ENDPOINT_URL"),
            priority_rules: Arc::new(priority_rules()?),
            ses_configuration_set: var("OPENLOOP_SES_CONFIGURATION_SET"),
            pushpress: pushpress(vars)?,
            mail_events_topic_arn: var("OPENLOOP_MAIL_EVENTS_TOPIC_ARN"),
            inbound_sms_topic_arn: required_in_lambda(
                "OPENLOOP_INBOUND_SMS_TOPIC_ARN",
                var("OPENLOOP_INBOUND_SMS_TOPIC_ARN"),
                in_lambda(),
            )?,
            inbound_mail_bucket: var("OPENLOOP_INBOUND_MAIL_BUCKET")
                .unwrap_or_else(|| format!("{}-inbound-mail", var("OPENLOOP_PREFIX").unwrap_or_else(|| "openloop".into()))),
            ai_pricing: ai_pricing(|name| vars.get(name))?,
            kms_key_id: match var("OPENLOOP_KMS_KEY_ID") {
                None if in_lambda() => {
                    return Err(ConfigError(
                        "OPENLOOP_KMS_KEY_ID must be set in Lambda: it names the KMS key that seals the gyms' secrets".into(),
                    ));
                }
                key => key,
            },
        })
    }

    /// The SDK clients for this configuration's region and endpoint, with the SDK's whole
    /// credentials chain (the local runtime, the admin CLI, the tests).
    pub async fn clients(&self) -> Clients {
        Clients::load(&self.region, self.endpoint.as_deref()).await
    }

    /// A Lambda function's SDK clients: the runtime's credentials only
    /// ([`Clients::in_lambda`]), which keeps the default chain's code out of its binary.
    pub fn lambda_clients(&self) -> Clients {
        Clients::in_lambda(&self.region, self.endpoint.as_deref())
    }

    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            from_email: self.from_email.clone(),
            reply_domain: self.reply_domain.clone(),
            public_url: self.public_url.clone(),
            signing_key: SigningKey::new(self.signing_key.expose_secret().as_bytes().to_vec()),
            priority_rules: self.priority_rules.clone(),
            ai_pricing: self.ai_pricing,
        }
    }
}

/// The PushPress connector, if `OPENLOOP_PUSHPRESS_BASE_URL` is set. `OPENLOOP_PUSHPRESS_API_KEY`
/// is the key of accounts without their own; without it only accounts that brought a key
/// (`pushpress` in their settings) are connected.
fn pushpress(vars: &Vars) -> Result<Option<PushPress>, ConfigError> {
    let Some(base) = var("OPENLOOP_PUSHPRESS_BASE_URL") else {
        return Ok(None);
    };
    let key = vars.get("OPENLOOP_PUSHPRESS_API_KEY").map(SecretString::from);
    let mut config = PushPressConfig::new(&base, key).map_err(|e| ConfigError(format!("OPENLOOP_PUSHPRESS_BASE_URL: {e}")))?;
    if let Some(secs) = var("OPENLOOP_PUSHPRESS_TIMEOUT_SECS") {
        let secs: u64 = secs
            .parse()
            .map_err(|_| ConfigError("OPENLOOP_PUSHPRESS_TIMEOUT_SECS must be a whole number of seconds".into()))?;
        config.timeout = std::time::Duration::from_secs(secs.max(1));
    }
    PushPress::new(config).map(Some).map_err(ConfigError)
}

/// `OPENLOOP_PRIORITY_RULES` (a TOML file) or the shipped `rules/priority.toml`; a file that
/// does not parse stops the start with the reason.
fn priority_rules() -> Result<PriorityRules, ConfigError> {
    match var("OPENLOOP_PRIORITY_RULES") {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| ConfigError(format!("OPENLOOP_PRIORITY_RULES={path}: {e}")))?;
            PriorityRules::parse(&text).map_err(|e| ConfigError(format!("OPENLOOP_PRIORITY_RULES={path}: {e}")))
        }
        None => PriorityRules::parse(openloop_core::rails::priority_rules::DEFAULT_RULES).map_err(|e| ConfigError(e.to_string())),
    }
}

/// The ports on AWS: the DynamoDB store, SQS, EventBridge and SES, and the PushPress connector
/// if configured. The store comes back on its own too, for a caller that needs it directly
/// (the warm-up read, a test's seeding, a bench's request counts).
pub fn ports(config: &Config, clients: &Clients, clock: Arc<dyn Clock>, agent: Arc<dyn Agent>) -> (EnginePorts, DynamoStore) {
    let store = DynamoStore::new(clients.dynamodb.clone(), config.table.clone()).with_keyring(keyring(config, clients));
    let ports = EnginePorts {
        store: Arc::new(store.clone()),
        queue: Arc::new(clients.queues(config.queue_urls.clone())),
        mailer: Arc::new(clients.mailer(config.region.clone(), config.ses_configuration_set.clone())),
        agent,
        bus: Arc::new(clients.event_bus(config.event_bus.clone())),
        clock,
        connector: config
            .pushpress
            .clone()
            .map(|p| Arc::new(p) as Arc<dyn openloop_core::members::connector::Connector>),
        sending_domains: Some(Arc::new(clients.sending_domains(config.region.clone()))),
        dns: Some(Arc::new(openloop_aws::dns::DnsOverHttps::new(var("OPENLOOP_DNS_URL")))),
    };
    (ports, store)
}

/// What seals the gyms' secrets: KMS with `OPENLOOP_KMS_KEY_ID`, else (locally) the local keyring.
pub fn keyring(config: &Config, clients: &Clients) -> Arc<dyn openloop_core::ports::Keyring> {
    match &config.kms_key_id {
        Some(key) => Arc::new(clients.kms_keyring(key.clone())),
        None => Arc::new(openloop_core::kernel::sealed::LocalKeyring::default()),
    }
}

/// Bedrock Runtime for `OPENLOOP_LLM=bedrock`: the clients' region and credentials,
/// `OPENLOOP_BEDROCK_URL`'s endpoint if set (a local server); nothing retried inside a call
/// (the agent's policy retries).
pub fn bedrock_client(shared: &aws_config::SdkConfig, endpoint: &str) -> openloop_llm::bedrock::Bedrock {
    Arc::new(Converse(openloop_aws::bedrock::BedrockRuntime::new(shared.clone(), endpoint)))
}

/// The signed request (`openloop_aws`) under the model agent's Converse (`openloop_llm`).
#[derive(Debug)]
struct Converse(openloop_aws::bedrock::BedrockRuntime);

#[async_trait::async_trait]
impl openloop_llm::bedrock::ConverseCall for Converse {
    async fn converse(
        &self,
        model: &str,
        body: &serde_json::Value,
    ) -> Result<openloop_llm::bedrock::ConverseAnswer, openloop_llm::bedrock::NoAnswer> {
        match self.0.converse(model, body).await {
            Ok(a) => Ok(openloop_llm::bedrock::ConverseAnswer {
                status: a.status,
                retry_after: a.retry_after,
                error_type: a.error_type,
                body: a.body,
            }),
            Err(n) => Err(openloop_llm::bedrock::NoAnswer {
                timed_out: n.timed_out,
                why: n.why,
            }),
        }
    }
}

/// The model configuration `vars` ask for, with Bedrock's client when it is Bedrock.
fn with_bedrock(config: Option<openloop_llm::ModelConfig>, clients: &Clients) -> Option<openloop_llm::ModelConfig> {
    config.map(|mut c| {
        if c.provider == openloop_llm::Provider::Bedrock {
            c.bedrock = Some(bedrock_client(clients.sdk_config(), &c.base_url));
        }
        c
    })
}

/// The agent `OPENLOOP_LLM` names (`openloop_llm`), read through `vars`; Bedrock's through
/// these clients.
pub fn agent(vars: &Vars, clients: &Clients) -> Result<Arc<dyn Agent>, ConfigError> {
    let config = openloop_llm::model_config(|name| vars.get(name)).map_err(ConfigError)?;
    openloop_llm::agent(with_bedrock(config, clients)).map_err(ConfigError)
}

/// The evaluator `OPENLOOP_EVALUATOR` names: `None` for the offline one.
pub fn evaluator(vars: &Vars, clients: &Clients) -> Result<Option<Arc<dyn openloop_core::ports::Evaluator>>, ConfigError> {
    let Some(config) = with_bedrock(openloop_llm::evaluator_config(|name| vars.get(name)).map_err(ConfigError)?, clients) else {
        return Ok(None);
    };
    let evaluator = openloop_llm::ModelEvaluator::new(config).map_err(ConfigError)?;
    Ok(Some(Arc::new(evaluator)))
}

/// The engine on AWS: [`ports`] and the configuration's engine settings.
pub fn engine(config: &Config, clients: &Clients, clock: Arc<dyn Clock>, agent: Arc<dyn Agent>) -> (Engine, DynamoStore) {
    let (ports, store) = ports(config, clients, clock, agent);
    let sms = Arc::new(clients.sms());
    let engine = Engine::new(ports, config.engine_config())
        .with_webhook_transport(Arc::new(crate::webhook_transport::HttpWebhookTransport::new(false)))
        .with_sms(sms);
    (engine, store)
}

/// What a Lambda function starts with: its configuration, the platform's secrets read from
/// Secrets Manager or SSM (`{NAME}_SECRET`), its clients and its agent.
pub struct Start {
    pub config: Config,
    pub vars: Vars,
    pub clients: Clients,
}

impl Start {
    /// Read at init; a secret that cannot be read stops the start.
    pub async fn from_env() -> Result<Self, ConfigError> {
        let region = var("AWS_REGION")
            .or_else(|| var("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| "us-east-1".into());
        let endpoint = var("AWS_ENDPOINT_URL");
        let vars = Vars::from_secrets_manager(&region, endpoint.as_deref()).await?;
        let config = Config::from_vars(&vars)?;
        let clients = config.lambda_clients();
        Ok(Self { config, vars, clients })
    }

    pub fn agent(&self) -> Result<Arc<dyn Agent>, ConfigError> {
        agent(&self.vars, &self.clients)
    }

    pub fn evaluator(&self) -> Result<Option<Arc<dyn openloop_core::ports::Evaluator>>, ConfigError> {
        evaluator(&self.vars, &self.clients)
    }
}

/// What every Lambda `main` does at init: configuration from the environment and the
/// platform's secrets, the clients, and the engine on AWS with the real clock and the agent
/// `OPENLOOP_LLM` names.
pub async fn engine_from_env() -> Result<(Config, Engine), ConfigError> {
    engine_from_start(Start::from_env().await?).await
}

/// [`engine_from_env`] from a [`Start`] already read (the evaluation function's, which also
/// takes its evaluator from it).
pub async fn engine_from_start(start: Start) -> Result<(Config, Engine), ConfigError> {
    let agent = start.agent()?;
    let Start { config, clients, .. } = start;
    let (engine, store) = engine(&config, &clients, Arc::new(openloop_core::ports::SystemClock), agent);
    // Pay the TLS handshake at init, not on the first event (a failure here is not fatal); the
    // store shares the engine's client, so its connection is the engine's.
    if let Err(e) = store.system_config().await {
        tracing::warn!(error = %e, "warm-up read failed");
    }
    Ok((config, engine))
}

#[cfg(test)]
mod tests {
    /// Issue 47: in Lambda the inbound-text topic is required, so no signed topic of anyone's
    /// is read as members' texts; locally it may be unset.
    #[test]
    fn the_inbound_text_topic_is_required_in_lambda() {
        let name = "OPENLOOP_INBOUND_SMS_TOPIC_ARN";
        let refused = super::required_in_lambda(name, None, true).expect_err("unset in Lambda");
        assert!(refused.0.contains(name), "{}", refused.0);
        assert_eq!(super::required_in_lambda(name, None, false).ok(), Some(None), "locally: unset");
        let topic = Some("arn:aws:sns:us-east-1:123456789012:inbound-sms".to_owned());
        assert_eq!(super::required_in_lambda(name, topic.clone(), true).ok(), Some(topic));
    }

    use super::*;

    /// Issue 46, point 4: a variable may name its secret instead of holding it; the model's key
    /// is one secret for whichever provider; a secret that cannot be read stops the start,
    /// naming the variable, never a value.
    #[tokio::test]
    async fn secrets_named_by_variables_are_read_once_at_start_up() {
        let env: HashMap<&str, &str> = HashMap::from([
            ("OPENLOOP_SIGNING_KEY_SECRET", "arn:aws:secretsmanager:us-east-1:1:secret:signing"),
            ("OPENLOOP_ADMIN_TOKEN_SECRET", "ssm:/openloop/admin-token"),
            ("OPENLOOP_LLM_API_KEY_SECRET", "llm-key"),
        ]);
        let store: HashMap<&str, &str> = HashMap::from([
            ("arn:aws:secretsmanager:us-east-1:1:secret:signing", "signing-key-from-the-secret"),
            ("ssm:/openloop/admin-token", "admin-token-from-ssm"),
            ("llm-key", "sk-model-key"),
        ]);
        let read = |id: String| {
            let found = store
                .get(id.as_str())
                .map(|v| (*v).to_owned())
                .ok_or_else(|| format!("{id}: not found"));
            async move { found }
        };
        let vars = Vars::resolve(|name| env.get(name).map(|v| (*v).to_owned()), read)
            .await
            .expect("resolved");
        assert_eq!(vars.get("OPENLOOP_SIGNING_KEY").as_deref(), Some("signing-key-from-the-secret"));
        assert_eq!(vars.get("OPENLOOP_ADMIN_TOKEN").as_deref(), Some("admin-token-from-ssm"));
        assert_eq!(vars.get("ANTHROPIC_API_KEY").as_deref(), Some("sk-model-key"));
        assert_eq!(vars.get("OPENAI_API_KEY").as_deref(), Some("sk-model-key"));
        assert!(!format!("{vars:?}").contains("sk-model-key"), "never printed");
        let config = Config::from_vars(&vars).expect("config");
        assert_eq!(config.signing_key.expose_secret(), "signing-key-from-the-secret");
        let missing: HashMap<&str, &str> = HashMap::from([("OPENLOOP_INBOUND_TOKEN_SECRET", "gone")]);
        let refused = Vars::resolve(|name| missing.get(name).map(|v| (*v).to_owned()), read)
            .await
            .expect_err("unreadable");
        assert!(
            refused.0.contains("OPENLOOP_INBOUND_TOKEN_SECRET") && refused.0.contains("gone"),
            "{}",
            refused.0
        );
    }

    fn pricing(vars: &[(&str, &str)]) -> Result<AiPricing, ConfigError> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        ai_pricing(|name| vars.get(name).cloned())
    }

    #[test]
    fn the_configured_models_cost_per_call_is_its_own_or_its_default() {
        let offline = pricing(&[]).expect("offline");
        assert_eq!((offline.per_call_usd, offline.alert_daily_usd), (0.0, 10.0), "no model, no spend");
        let sonnet = pricing(&[("OPENLOOP_LLM", "anthropic")]).expect("default model");
        assert_eq!(sonnet.per_call_usd, 0.04, "the default Anthropic model's default");
        let opus = pricing(&[("OPENLOOP_LLM", "anthropic"), ("OPENLOOP_LLM_MODEL", "claude-opus-4-1")]).expect("opus");
        assert_eq!(opus.per_call_usd, 0.15);
        let own = pricing(&[
            ("OPENLOOP_LLM", "openai"),
            ("OPENLOOP_LLM_MODEL", "llama-3.1-8b"),
            ("OPENLOOP_AI_CALL_COSTS", "gpt-4o=0.5, llama-3.1-8b=0.001"),
            ("OPENLOOP_AI_COST_ALERT_USD", "2.5"),
        ])
        .expect("configured");
        assert_eq!((own.per_call_usd, own.alert_daily_usd), (0.001, 2.5));
        let unknown = pricing(&[("OPENLOOP_LLM", "openai"), ("OPENLOOP_LLM_MODEL", "mystery")]).expect("unknown");
        assert_eq!(
            unknown.per_call_usd,
            AiPricing::default().per_call_usd,
            "an unknown model: the generic estimate"
        );
        for bad in ["gpt-4o", "gpt-4o=-1", "gpt-4o=lots"] {
            assert!(pricing(&[("OPENLOOP_AI_CALL_COSTS", bad)]).is_err(), "{bad}");
        }
    }
}

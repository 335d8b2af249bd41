//! The model-backed agent: one HTTP exchange per port call, with a timeout and a few retries.
//!
//! Transient failures (429, 5xx, timeouts, refused connections) are retried with exponential
//! backoff by the policy the connector shares ([`RetryPolicy`]), at most
//! [`ModelConfig::max_attempts`] attempts in all; a `retry-after` the server sends is honoured
//! when it is short, and ends the call when it is longer than [`ModelConfig::max_retry_after`]
//! (a Lambda should not sleep for a minute; the engine escalates instead). Any other 4xx — a bad key, a bad model name — fails at once, since
//! retrying cannot help. The API key never appears in a log line, a `Debug` print or an error:
//! it is a [`SecretString`], and provider error bodies are scrubbed of it before they are
//! quoted.

use std::time::Duration;

use async_trait::async_trait;
use openloop_core::conversation::reply::ReplyEvaluation;
use openloop_core::kernel::limits::MODEL_ERROR_EXCERPT_CHARS;
use openloop_core::kernel::retry::{Attempt, GaveUp, RetryPolicy, excerpt, retry_after};
use openloop_core::ports::{
    Agent, AgentError, CompletionRequest, DraftRequest, Drafted, GoalProgress, PlanDecision, PlanRequest, ReplyRequest,
};

use secrecy::{ExposeSecret, SecretString};

use crate::answer;
use crate::wire::Provider;

/// The model used with `OPENLOOP_LLM=anthropic` when `OPENLOOP_LLM_MODEL` is unset.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// Everything a [`ModelAgent`] needs. `Debug` shows the key as redacted (secrecy's doing).
#[derive(Clone, Debug)]
pub struct ModelConfig {
    pub provider: Provider,
    pub base_url: String,
    pub api_key: SecretString,
    pub model: String,
    /// Anthropic requires a cap on the answer's length; our JSON answers are short.
    pub max_tokens: u32,
    /// For each attempt, from connecting until the whole body is read.
    pub timeout: Duration,
    pub max_attempts: u32,
    /// The wait before the second attempt; doubled before each later one.
    pub backoff: Duration,
    /// The longest `retry-after` waited for.
    pub max_retry_after: Duration,
    /// Bedrock's client (`Provider::Bedrock` only), made by the composition root with the
    /// function's credentials.
    pub bedrock: Option<crate::bedrock::Bedrock>,
}

impl ModelConfig {
    /// The defaults for a provider: 30 s per attempt, 3 attempts, 0.5 s then 1 s between them.
    pub fn new(provider: Provider, base_url: impl Into<String>, api_key: SecretString, model: impl Into<String>) -> Self {
        Self {
            provider,
            base_url: base_url.into(),
            api_key,
            model: model.into(),
            max_tokens: 1024,
            timeout: Duration::from_secs(30),
            max_attempts: 3,
            backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(5),
            bedrock: None,
        }
    }

    /// Bedrock's Converse with `model` (a model id or inference profile) through `client`.
    pub fn bedrock(client: crate::bedrock::Bedrock, model: impl Into<String>) -> Self {
        Self {
            bedrock: Some(client),
            ..Self::new(Provider::Bedrock, String::new(), SecretString::from(String::new()), model)
        }
    }
}

/// The `Agent` over a model API.
pub struct ModelAgent {
    config: ModelConfig,
    http: reqwest::Client,
}

impl ModelAgent {
    pub fn new(config: ModelConfig) -> Result<Self, String> {
        if config.provider == Provider::Bedrock && config.bedrock.is_none() {
            return Err("OPENLOOP_LLM=bedrock needs Bedrock's client (the composition root makes it)".into());
        }
        // reqwest takes the process's rustls crypto (ring; `openloop_aws::tls`).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("could not build the HTTP client: {e}"))?;
        Ok(Self { config, http })
    }

    /// One system + user exchange; the model's text, or why there is none.
    pub(crate) async fn complete(&self, system: &str, user: &str) -> Result<String, AgentError> {
        let c = &self.config;
        let provider = c.provider.name();
        let policy = RetryPolicy {
            max_attempts: c.max_attempts,
            backoff: c.backoff,
            max_retry_after: c.max_retry_after,
        };
        let retried = policy
            .run(
                || self.attempt(system, user),
                tokio::time::sleep,
                |attempt, why, wait| {
                    tracing::warn!(provider, attempt, failure = %self.redact(why), wait_ms = wait.as_millis() as u64, "model call failed; retrying");
                },
            )
            .await;
        retried.map_err(|gave_up| match gave_up {
            GaveUp::Fatal(why) => self.error(why),
            GaveUp::WaitTooLong { why, asked } => {
                self.error(format!("{why}; the server asks to wait {}s, longer than we wait", asked.as_secs()))
            }
            GaveUp::Exhausted { attempts, last } => self.error(format!("gave up after {attempts} attempts: {last}")),
        })
    }

    async fn attempt(&self, system: &str, user: &str) -> Result<String, Attempt<String>> {
        let c = &self.config;
        if let Some(client) = &c.bedrock {
            return crate::bedrock::converse(client, c, system, user).await;
        }
        let sent = c.provider.request(&self.http, c, system, user).timeout(c.timeout).send().await;
        let response = match sent {
            Ok(r) => r,
            Err(e) => return Err(transport_failure(&e)),
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(response.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok()));
            let body = response.text().await.unwrap_or_default();
            let why = format!(
                "{} answered {status}: {}",
                c.provider.name(),
                excerpt(&body, MODEL_ERROR_EXCERPT_CHARS)
            );
            return Err(Attempt::failed_status(status.as_u16(), why, retry_after, |why| why));
        }
        let body: serde_json::Value = match response.json().await {
            Ok(b) => b,
            // A body cut off by the timeout is as transient as a timeout before the headers.
            Err(e) if e.is_timeout() => return Err(transport_failure(&e)),
            Err(e) => return Err(Attempt::Fatal(format!("the response is not JSON: {e}"))),
        };
        c.provider.answer_text(&body).map_err(Attempt::Fatal)
    }

    fn error(&self, why: String) -> AgentError {
        AgentError(self.redact(&why))
    }

    /// Provider error bodies are quoted in errors and logs; should one ever echo the key, it
    /// is cut out here.
    fn redact(&self, text: &str) -> String {
        let key = self.config.api_key.expose_secret();
        if key.is_empty() {
            text.to_owned()
        } else {
            text.replace(key, "[redacted]")
        }
    }

    pub(crate) fn refused(&self, what: &str, e: answer::AnswerError) -> AgentError {
        tracing::warn!(provider = self.config.provider.name(), what, error = %e, "model answer refused");
        self.error(format!("{what}: {e}"))
    }
}

fn transport_failure(e: &reqwest::Error) -> Attempt<String> {
    // reqwest's Display names the URL (never the key, which travels in a header).
    Attempt::no_answer(e.is_timeout(), e.is_connect() || e.is_request() || e.is_body(), e, |why| why)
}

#[async_trait]
impl Agent for ModelAgent {
    async fn draft(&self, request: &DraftRequest) -> Result<Drafted, AgentError> {
        let text = self.complete(&answer::draft_system(request), &answer::draft_user(request)).await?;
        answer::draft(&text, request).map_err(|e| self.refused("draft", e))
    }

    async fn evaluate_reply(&self, request: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        let system = if request.system_prompt.trim().is_empty() {
            answer::fallback_system(&request.business_name, &request.profile)
        } else {
            request.system_prompt.clone()
        };
        let text = self.complete(&system, &answer::reply_user(request)).await?;
        answer::reply_evaluation(&text, request).map_err(|e| self.refused("reply evaluation", e))
    }

    async fn evaluate_completion(&self, request: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        let system = if request.system_prompt.trim().is_empty() {
            "You judge, skeptically, whether a gym's outreach task reached its goal.".to_owned()
        } else {
            request.system_prompt.clone()
        };
        let text = self.complete(&system, &answer::completion_user(request)).await?;
        answer::goal_progress(&text, request).map_err(|e| self.refused("completion evaluation", e))
    }

    async fn plan_next(&self, request: &PlanRequest) -> Result<PlanDecision, AgentError> {
        let system = if request.system_prompt.trim().is_empty() {
            "You plan, one careful step at a time, how a gym reaches a goal with one of its members.".to_owned()
        } else {
            request.system_prompt.clone()
        };
        let text = self.complete(&system, &answer::plan_user(request)).await?;
        answer::plan_decision(&text, request).map_err(|e| self.refused("plan", e))
    }
}

//! Amazon Bedrock's Converse API (`OPENLOOP_LLM=bedrock`), under the function's IAM role: no
//! key, and the members' words stay in the operator's account and region. One exchange is one
//! `Converse` call (`POST /model/{modelId}/converse`): the system prompt as a `system` text
//! block, the request as one user message, `inferenceConfig.maxTokens` as the cap; the answer is
//! the text blocks of `output.message.content`, refused when the model stopped for any reason
//! but the end of its turn or a stop sequence (cut off at `max_tokens`, filtered, a guardrail, a
//! tool call). Then the same checks as every model's answer (`answer.rs`).
//!
//! This module holds Converse's JSON; the signed request is the composition root's
//! ([`ConverseCall`], `openloop_aws::bedrock`), so no AWS SDK service client is linked for one
//! call (a service crate is hundreds of KB in every binary). Nothing retries inside the call:
//! the agent's policy retries throttling, 5xx, timeouts and lost connections, as for the other
//! providers.

use std::sync::Arc;

use serde_json::{Value, json};

use openloop_core::kernel::limits::MODEL_ERROR_EXCERPT_CHARS;
use openloop_core::kernel::retry::{Attempt, excerpt, retry_after};

use crate::model::ModelConfig;

/// What Bedrock answered one signed Converse request.
pub struct ConverseAnswer {
    pub status: u16,
    /// `Retry-After`, if it came.
    pub retry_after: Option<String>,
    /// `X-Amzn-ErrorType`, if it came (an error's code).
    pub error_type: Option<String>,
    pub body: String,
}

/// No answer came: whether it timed out, and why.
pub struct NoAnswer {
    pub timed_out: bool,
    pub why: String,
}

/// One signed `POST /model/{model}/converse` with `body` (SigV4, service `bedrock`).
#[async_trait::async_trait]
pub trait ConverseCall: Send + Sync + std::fmt::Debug {
    async fn converse(&self, model: &str, body: &Value) -> Result<ConverseAnswer, NoAnswer>;
}

/// Bedrock's caller, as the composition root made it.
pub type Bedrock = Arc<dyn ConverseCall>;

/// One Converse exchange: the model's text, or why there is none.
pub(crate) async fn converse(client: &Bedrock, config: &ModelConfig, system: &str, user: &str) -> Result<String, Attempt<String>> {
    let body = json!({
        "system": [{"text": system}],
        "messages": [{"role": "user", "content": [{"text": user}]}],
        "inferenceConfig": {"maxTokens": config.max_tokens},
    });
    let answer = match tokio::time::timeout(config.timeout, client.converse(&config.model, &body)).await {
        Err(_) => return Err(Attempt::no_answer(true, true, "no answer from Bedrock", |why| why)),
        Ok(Err(none)) => {
            return Err(Attempt::no_answer(none.timed_out, true, format!("Bedrock: {}", none.why), |why| {
                why
            }));
        }
        Ok(Ok(answer)) => answer,
    };
    let json: Option<Value> = serde_json::from_str(&answer.body).ok();
    if !(200..300).contains(&answer.status) {
        let message = json.as_ref().and_then(|j| j["message"].as_str()).unwrap_or_default();
        let code = answer
            .error_type
            .as_deref()
            .map(|t| t.split(':').next().unwrap_or(t))
            .unwrap_or("error");
        let why = format!(
            "bedrock answered {}: {code} {}",
            answer.status,
            excerpt(message, MODEL_ERROR_EXCERPT_CHARS)
        );
        return Err(Attempt::failed_status(
            answer.status,
            why,
            retry_after(answer.retry_after.as_deref()),
            |why| why,
        ));
    }
    let Some(json) = json else {
        return Err(Attempt::Fatal(format!(
            "the response is not Converse's JSON (status {})",
            answer.status
        )));
    };
    match json["stopReason"].as_str() {
        Some("end_turn" | "stop_sequence") => {}
        Some("max_tokens") => return Err(Attempt::Fatal("the answer was cut off at max_tokens".into())),
        Some(other) => return Err(Attempt::Fatal(format!("the model stopped for {other}"))),
        None => return Err(Attempt::Fatal("the response is not Converse's JSON (no stopReason)".into())),
    }
    let content = json["output"]["message"]["content"]
        .as_array()
        .ok_or_else(|| Attempt::Fatal("the response has no output message".into()))?;
    let text: Vec<&str> = content.iter().filter_map(|b| b["text"].as_str()).collect();
    if text.is_empty() {
        return Err(Attempt::Fatal("the response has no text block".into()));
    }
    Ok(text.concat())
}

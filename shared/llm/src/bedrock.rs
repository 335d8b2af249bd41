//! Amazon Bedrock's Converse API (`OPENLOOP_LLM=bedrock`), through the AWS SDK under the
//! function's IAM role: no key, and the members' words stay in the operator's account and
//! region. One exchange is one `Converse` call (`POST /model/{modelId}/converse`): the system
//! prompt as a `system` text block, the request as one user message, `inferenceConfig.maxTokens`
//! as the cap; the answer is the text blocks of `output.message.content`, refused when the model
//! stopped for any reason but the end of its turn or a stop sequence (cut off at `max_tokens`,
//! filtered, a guardrail, a tool call). Then the same checks as every model's answer
//! (`answer.rs`).
//!
//! The SDK's own retries are off (the client is built so by `openloop-edge`): the agent's policy
//! retries throttling, 5xx, timeouts and lost connections, as for the other providers.

pub use aws_sdk_bedrockruntime as sdk;
use aws_sdk_bedrockruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::types::{ContentBlock, ConversationRole, InferenceConfiguration, Message, StopReason, SystemContentBlock};

use openloop_core::kernel::limits::MODEL_ERROR_EXCERPT_CHARS;
use openloop_core::kernel::retry::{Attempt, excerpt, retry_after};

use crate::model::ModelConfig;

/// One Converse exchange: the model's text, or why there is none.
pub(crate) async fn converse(client: &sdk::Client, config: &ModelConfig, system: &str, user: &str) -> Result<String, Attempt<String>> {
    let message = Message::builder()
        .role(ConversationRole::User)
        .content(ContentBlock::Text(user.to_owned()))
        .build()
        .map_err(|e| Attempt::Fatal(format!("the request: {e}")))?;
    let sent = client
        .converse()
        .model_id(&config.model)
        .system(SystemContentBlock::Text(system.to_owned()))
        .messages(message)
        .inference_config(
            InferenceConfiguration::builder()
                .max_tokens(i32::try_from(config.max_tokens).unwrap_or(i32::MAX))
                .build(),
        )
        .send();
    let answer = match tokio::time::timeout(config.timeout, sent).await {
        Err(_) => return Err(Attempt::no_answer(true, true, "no answer from Bedrock", |why| why)),
        Ok(Err(e)) => return Err(failure(e)),
        Ok(Ok(answer)) => answer,
    };
    match answer.stop_reason() {
        StopReason::EndTurn | StopReason::StopSequence => {}
        StopReason::MaxTokens => return Err(Attempt::Fatal("the answer was cut off at max_tokens".into())),
        other => return Err(Attempt::Fatal(format!("the model stopped for {}", other.as_str()))),
    }
    let message = answer
        .output()
        .and_then(|o| o.as_message().ok())
        .ok_or_else(|| Attempt::Fatal("the response has no output message".into()))?;
    let text: Vec<&str> = message
        .content()
        .iter()
        .filter_map(|b| b.as_text().ok())
        .map(String::as_str)
        .collect();
    if text.is_empty() {
        return Err(Attempt::Fatal("the response has no text block".into()));
    }
    Ok(text.concat())
}

/// An SDK failure as an attempt's: a status Bedrock answered is judged as any provider's
/// (429 and 5xx retried, other 4xx final), no answer is retried, an answer the SDK could not
/// read is final.
fn failure<E: ProvideErrorMetadata + std::fmt::Debug>(
    e: SdkError<E, aws_sdk_bedrockruntime::config::http::HttpResponse>,
) -> Attempt<String> {
    match &e {
        SdkError::TimeoutError(_) => Attempt::no_answer(true, true, "Bedrock timed out", |why| why),
        SdkError::DispatchFailure(failure) => {
            let why = if failure.is_timeout() { "timed out" } else { "could not connect" };
            Attempt::no_answer(failure.is_timeout(), true, format!("Bedrock: {why}"), |why| why)
        }
        SdkError::ServiceError(context) => {
            let raw = context.raw();
            let status = raw.status().as_u16();
            let error = context.err();
            let why = format!(
                "bedrock answered {status}: {} {}",
                error.code().unwrap_or("error"),
                excerpt(error.message().unwrap_or_default(), MODEL_ERROR_EXCERPT_CHARS)
            );
            Attempt::failed_status(status, why, retry_after(raw.headers().get("retry-after")), |why| why)
        }
        SdkError::ResponseError(context) => {
            let status = context.raw().status().as_u16();
            if status == 429 || (500..600).contains(&status) {
                Attempt::failed_status(status, format!("bedrock answered {status}"), None, |why| why)
            } else {
                Attempt::Fatal(format!("the response is not Converse's JSON (status {status})"))
            }
        }
        other => Attempt::Fatal(format!("bedrock: {other:?}")),
    }
}

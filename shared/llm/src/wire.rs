//! The two HTTP wire formats a model agent speaks: the Anthropic Messages API and OpenAI-compatible
//! chat completions (Bedrock's Converse goes through the AWS SDK, `bedrock.rs`). Each call is one system message and one user message; the answer is the
//! model's text. Everything about URLs, headers and JSON bodies of a provider lives here, so the
//! agent above it only deals in prompts and text.

use reqwest::RequestBuilder;
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use crate::model::ModelConfig;

/// Which wire format, and so which URL, headers and body shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// `POST {base}/v1/messages`, key in `x-api-key`.
    Anthropic,
    /// `POST {base}/chat/completions` (the base usually ends in `/v1`), key as a bearer token.
    OpenAi,
    /// Amazon Bedrock's Converse API through the AWS SDK, under the function's role
    /// (`bedrock.rs`): no base URL, no key.
    Bedrock,
}

/// The version of the Messages API whose shapes this module writes and reads.
const ANTHROPIC_VERSION: &str = "2023-06-01";

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Bedrock => "bedrock",
        }
    }

    fn url(self, base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        match self {
            Provider::Anthropic => format!("{base}/v1/messages"),
            Provider::OpenAi | Provider::Bedrock => format!("{base}/chat/completions"),
        }
    }

    /// The request for one exchange; the caller adds the timeout and sends it.
    pub fn request(self, http: &reqwest::Client, config: &ModelConfig, system: &str, user: &str) -> RequestBuilder {
        let (api_key, model) = (&config.api_key, &config.model);
        let post = http.post(self.url(&config.base_url));
        match self {
            Provider::Anthropic => post
                .header("x-api-key", api_key.expose_secret())
                .header("anthropic-version", ANTHROPIC_VERSION)
                .json(&json!({
                    "model": model,
                    "max_tokens": config.max_tokens,
                    "system": system,
                    "messages": [{"role": "user", "content": user}],
                })),
            // No max_tokens or temperature: OpenAI-compatible servers disagree on both names and
            // ranges (newer OpenAI models refuse `max_tokens`), and the defaults suffice.
            // (Bedrock never comes here: `bedrock.rs` speaks through the SDK.)
            Provider::OpenAi | Provider::Bedrock => post.bearer_auth(api_key.expose_secret()).json(&json!({
                "model": model,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
            })),
        }
    }

    /// The model's text from a successful response body.
    pub fn answer_text(self, body: &Value) -> Result<String, String> {
        match self {
            Provider::Anthropic => {
                let blocks = body
                    .get("content")
                    .and_then(Value::as_array)
                    .ok_or("the response has no content array")?;
                let text: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str).is_none_or(|t| t == "text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                if text.is_empty() {
                    return Err("the response has no text block".into());
                }
                if body.get("stop_reason").and_then(Value::as_str) == Some("max_tokens") {
                    return Err("the answer was cut off at max_tokens".into());
                }
                Ok(text.concat())
            }
            Provider::OpenAi | Provider::Bedrock => {
                let choice = body.get("choices").and_then(|c| c.get(0)).ok_or("the response has no choices")?;
                if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
                    return Err("the answer was cut off at the length limit".into());
                }
                choice
                    .pointer("/message/content")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| "the first choice has no message content".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_text_blocks_are_joined_and_tool_blocks_skipped() {
        let body = json!({"content": [
            {"type": "text", "text": "{\"a\":"},
            {"type": "tool_use", "id": "x", "input": {}},
            {"type": "text", "text": " 1}"},
        ], "stop_reason": "end_turn"});
        assert_eq!(Provider::Anthropic.answer_text(&body).as_deref(), Ok("{\"a\": 1}"));
    }

    #[test]
    fn a_truncated_answer_is_refused() {
        let anthropic = json!({"content": [{"type": "text", "text": "{\"a\":"}], "stop_reason": "max_tokens"});
        assert!(Provider::Anthropic.answer_text(&anthropic).is_err());
        let openai = json!({"choices": [{"message": {"content": "{\"a\":"}, "finish_reason": "length"}]});
        assert!(Provider::OpenAi.answer_text(&openai).is_err());
    }

    #[test]
    fn openai_refusals_without_content_are_errors() {
        let body = json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
        assert!(Provider::OpenAi.answer_text(&body).is_err());
        assert!(Provider::OpenAi.answer_text(&json!({"choices": []})).is_err());
    }

    #[test]
    fn urls_follow_each_providers_layout() {
        assert_eq!(
            Provider::Anthropic.url("https://api.anthropic.com/"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            Provider::OpenAi.url("http://localhost:11434/v1"),
            "http://localhost:11434/v1/chat/completions"
        );
    }
}

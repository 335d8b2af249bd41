//! # openloop-llm — the AI behind the core's `Agent` port
//!
//! Two kinds of agent, chosen by `OPENLOOP_LLM` ([`from_env`]):
//!
//! - [`OfflineAgent`], the deterministic default when no model is configured. It writes plain,
//!   short drafts from the task type, the cadence's tone and the business profile, and never
//!   invents facts; it reads replies and goal progress conservatively (see [`offline`]),
//!   escalating whenever it is unsure.
//! - [`ModelAgent`] (`anthropic`, `openai` or `bedrock`), which asks a model over HTTP ([`wire`]
//!   holds the two HTTP wire formats, [`bedrock`] Bedrock's Converse, signed by the composition root) for one JSON object per call and refuses any answer that is malformed or
//!   names what the request did not offer ([`answer`]). Its errors make the engine escalate.
//!
//! The evaluation function's evaluator is chosen apart, by `OPENLOOP_EVALUATOR`
//! ([`evaluator_from_env`]): the offline statistics in the core by default, or
//! [`ModelEvaluator`] ([`evaluator`]) on the same model.
//!
//! A model that is asked for but not fully configured is a configuration error naming the
//! missing variable, never a silent fallback to the offline agent.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use openloop_core::conversation::messages;
use openloop_core::conversation::reply::ReplyEvaluation;
use openloop_core::ports::{
    Agent, AgentError, CompletionRequest, DraftRequest, Drafted, GoalProgress, PlanDecision, PlanRequest, ReplyRequest,
};
use openloop_core::task::Draft;
use secrecy::SecretString;

/// How sure the offline agent is of its drafts: at or above every type's threshold.
pub const OFFLINE_DRAFT_CONFIDENCE: u8 = 95;

pub mod answer;
pub mod bedrock;
pub mod evaluator;
pub mod guidance;
pub mod model;
pub mod offline;
pub mod wire;

pub use evaluator::ModelEvaluator;
pub use model::{ModelAgent, ModelConfig};
pub use wire::Provider;

/// Which agent `OPENLOOP_LLM` selects (see the README's configuration table). Bedrock's
/// needs its SDK client: the composition root (`openloop_edge::config::agent`) makes it and
/// calls [`agent`]; here it is an error naming that.
pub fn from_env() -> Result<Arc<dyn Agent>, String> {
    agent(model_config(|name| std::env::var(name).ok())?)
}

/// The agent of a model configuration (`None`: the offline one).
pub fn agent(config: Option<ModelConfig>) -> Result<Arc<dyn Agent>, String> {
    match config {
        None => Ok(Arc::new(OfflineAgent)),
        Some(config) => Ok(Arc::new(ModelAgent::new(config)?)),
    }
}

/// The evaluator `OPENLOOP_EVALUATOR` selects: `None` for `offline` (the default: the engine
/// keeps its offline evaluator), a [`ModelEvaluator`] on `OPENLOOP_LLM`'s model for `model`.
pub fn evaluator_from_env() -> Result<Option<Arc<dyn openloop_core::ports::Evaluator>>, String> {
    evaluator_config(|name| std::env::var(name).ok())?
        .map(|config| Ok(Arc::new(ModelEvaluator::new(config)?) as Arc<dyn openloop_core::ports::Evaluator>))
        .transpose()
}

/// The model the evaluator should use, read through `var`; `None` means the offline one.
pub fn evaluator_config(var: impl Fn(&str) -> Option<String>) -> Result<Option<ModelConfig>, String> {
    match var("OPENLOOP_EVALUATOR").as_deref().map(str::trim) {
        None | Some("") | Some("offline") => Ok(None),
        Some("model") => match model_config(var)? {
            Some(config) => Ok(Some(config)),
            None => Err("OPENLOOP_EVALUATOR=model needs a model: set OPENLOOP_LLM to anthropic, openai or bedrock".into()),
        },
        Some(other) => Err(format!("OPENLOOP_EVALUATOR={other:?} is not one of offline, model")),
    }
}

/// The model configuration the variables ask for, read through `var`; `None` means offline.
pub fn model_config(var: impl Fn(&str) -> Option<String>) -> Result<Option<ModelConfig>, String> {
    let get = |name: &str| var(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let required = |name: &str, why: &str| get(name).ok_or_else(|| format!("{name} is not set; {why}"));
    let provider = match get("OPENLOOP_LLM").as_deref() {
        None | Some("offline") => return Ok(None),
        Some("anthropic") => Provider::Anthropic,
        Some("openai") => Provider::OpenAi,
        Some("bedrock") => Provider::Bedrock,
        Some(other) => return Err(format!("OPENLOOP_LLM={other:?} is not one of offline, anthropic, openai, bedrock")),
    };
    let mut config = match provider {
        Provider::Anthropic => ModelConfig::new(
            provider,
            get("ANTHROPIC_BASE_URL").unwrap_or_else(|| model::DEFAULT_ANTHROPIC_BASE_URL.to_owned()),
            SecretString::from(required("ANTHROPIC_API_KEY", "OPENLOOP_LLM=anthropic needs the API key")?),
            get("OPENLOOP_LLM_MODEL").unwrap_or_else(|| model::DEFAULT_ANTHROPIC_MODEL.to_owned()),
        ),
        Provider::OpenAi => ModelConfig::new(
            provider,
            required(
                "OPENAI_BASE_URL",
                "OPENLOOP_LLM=openai needs the server's base URL (e.g. https://api.openai.com/v1)",
            )?,
            SecretString::from(required("OPENAI_API_KEY", "OPENLOOP_LLM=openai needs the API key")?),
            required("OPENLOOP_LLM_MODEL", "OPENLOOP_LLM=openai needs the model name")?,
        ),
        // No key and no base URL: the function's role, Bedrock's regional endpoint (or
        // OPENLOOP_BEDROCK_URL's, which the composition root gives the client).
        Provider::Bedrock => ModelConfig {
            base_url: get("OPENLOOP_BEDROCK_URL").unwrap_or_default(),
            ..ModelConfig::new(
                provider,
                String::new(),
                SecretString::from(String::new()),
                get("OPENLOOP_BEDROCK_MODEL").or_else(|| get("OPENLOOP_LLM_MODEL")).ok_or_else(|| {
                    "OPENLOOP_BEDROCK_MODEL is not set; OPENLOOP_LLM=bedrock needs the model id (e.g. anthropic.claude-3-5-haiku-20241022-v1:0)"
                        .to_owned()
                })?,
            )
        },
    };
    let base_url_needed = provider != Provider::Bedrock || !config.base_url.is_empty();
    if base_url_needed && !(config.base_url.starts_with("https://") || config.base_url.starts_with("http://")) {
        return Err(format!(
            "the {} base URL {:?} is not an http(s) URL",
            provider.name(),
            config.base_url
        ));
    }
    if let Some(secs) = get("OPENLOOP_LLM_TIMEOUT_SECS") {
        let secs: u64 = secs
            .parse()
            .ok()
            .filter(|s| *s > 0)
            .ok_or_else(|| format!("OPENLOOP_LLM_TIMEOUT_SECS={secs:?} is not a positive number of seconds"))?;
        config.timeout = Duration::from_secs(secs);
    }
    Ok(Some(config))
}

/// The deterministic, conservative agent.
pub struct OfflineAgent;

#[async_trait]
impl Agent for OfflineAgent {
    /// The offline agent writes from its own templates and the owner's words, nothing
    /// invented: it is as sure of them as any type's threshold asks.
    async fn draft(&self, request: &DraftRequest) -> Result<Drafted, AgentError> {
        Ok(Drafted {
            draft: offline_draft(request)?,
            confidence: OFFLINE_DRAFT_CONFIDENCE,
        })
    }

    async fn evaluate_reply(&self, request: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        Ok(offline::evaluate_reply(request))
    }

    async fn evaluate_completion(&self, request: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        Ok(offline::evaluate_completion(request))
    }

    async fn plan_next(&self, request: &PlanRequest) -> Result<PlanDecision, AgentError> {
        Ok(offline::plan_next(request))
    }
}

/// The offline agent's draft: the message template of the request's type and touch — the
/// owner's if they wrote one — rendered from the member's facts and the gym's profile; with the
/// owner's guidance, the guided answer saying their words. Never the task's goal.
fn offline_draft(r: &DraftRequest) -> Result<Draft, AgentError> {
    let def = openloop_core::task::task_type::definition(&r.task_type);
    if let Some(own) = r.context.get("owners_voice").filter(|_| r.touch > 0) {
        return owners_voice_draft(def.key, r, own);
    }
    let guidance = r.context.get("owner_guidance").and_then(|g| g.as_str()).map(as_message);
    let key = messages::draft_key(def, r.touch, guidance.is_some());
    let mut draft = write(
        def.key,
        &key,
        &r.message,
        r.member_first_name.as_deref(),
        &r.profile,
        &r.business_name,
        guidance.as_deref(),
    )
    .map_err(AgentError)?;
    if guidance.is_some() {
        // An answer stays in its thread under the task's subject.
        draft.subject = String::new();
    }
    Ok(draft)
}

/// A follow-up in a thread whose first touch the owner rewrote (`own`: the message they
/// approved): the type's guided template saying a line that refers back to what they wrote
/// (`messages::owners_voice`), under their subject. The owner reviews it before it goes.
fn owners_voice_draft(task_type: &str, r: &DraftRequest, own: &serde_json::Value) -> Result<Draft, AgentError> {
    let owners = Draft {
        subject: own["subject"].as_str().unwrap_or_default().to_owned(),
        body: own["body"].as_str().unwrap_or_default().to_owned(),
    };
    let line = messages::owners_voice::follow_up(Some(&owners));
    // The guided template is the shipped one: the owner's own follow-up template is canned
    // words too, which this thread does without.
    let inputs = messages::MessageInputs {
        owner_template: None,
        ..r.message.clone()
    };
    let mut draft = write(
        task_type,
        messages::GUIDED,
        &inputs,
        r.member_first_name.as_deref(),
        &r.profile,
        &r.business_name,
        Some(&line),
    )
    .map_err(AgentError)?;
    draft.subject = owners.subject;
    Ok(draft)
}

/// Render the template `(task_type, key)`: the owner's when they wrote one (the shipped one if
/// the owner's does not render for this member, which the owner's preview could not foresee),
/// else the shipped one.
pub(crate) fn write(
    task_type: &str,
    key: &str,
    message: &messages::MessageInputs,
    first_name: Option<&str>,
    profile: &openloop_core::owner::account::Profile,
    business_name: &str,
    instructions: Option<&str>,
) -> Result<Draft, String> {
    let mut member = message.member.clone();
    if member.first_name.is_none() {
        member.first_name = first_name.map(str::to_owned);
    }
    let inputs = messages::Inputs {
        member: &member,
        profile,
        business_name,
        instructions,
    };
    let shipped = || messages::render(&messages::template_for(task_type, key, None, message.variant), &inputs);
    match &message.owner_template {
        Some(own) => messages::render(own, &inputs).or_else(|e| {
            tracing::warn!(task_type, touch = key, error = %e, "the owner's template did not render; the shipped one is used");
            shipped()
        }),
        None => shipped(),
    }
}

/// The owner's instruction as words to the member (`guidance.rs`): "Tell her we can freeze
/// her membership" becomes "We can freeze your membership."
fn as_message(guidance: &str) -> String {
    guidance::to_member(guidance)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openloop_core::owner::account::Profile;

    #[test]
    fn the_evaluator_is_offline_unless_a_model_is_asked_for_and_configured() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        assert!(evaluator_config(vars(&[])).expect("default").is_none());
        assert!(
            evaluator_config(vars(&[("OPENLOOP_EVALUATOR", "offline"), ("OPENLOOP_LLM", "anthropic")]))
                .expect("offline")
                .is_none()
        );
        let needs_model = evaluator_config(vars(&[("OPENLOOP_EVALUATOR", "model")])).expect_err("no model");
        assert!(needs_model.contains("OPENLOOP_LLM"), "{needs_model}");
        assert!(evaluator_config(vars(&[("OPENLOOP_EVALUATOR", "clever")])).is_err());
        let model = evaluator_config(vars(&[
            ("OPENLOOP_EVALUATOR", "model"),
            ("OPENLOOP_LLM", "openai"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_API_KEY", "sk"),
            ("OPENLOOP_LLM_MODEL", "m"),
        ]))
        .expect("model")
        .expect("a model");
        assert_eq!(model.model, "m");
    }

    fn request(task_type: &str, touch: u32) -> DraftRequest {
        DraftRequest {
            task_type: task_type.into(),
            goal: "Confirm the new class times".into(),
            member_first_name: Some("Sarah".into()),
            profile: Profile {
                display_name: Some("CrossFit Renegade".into()),
                owner_first_name: Some("Mike".into()),
                sign_off: Some("Coach Mike".into()),
                ..Profile::default()
            },
            business_name: "CrossFit Renegade".into(),
            touch,
            tone: "friendly_urgent".into(),
            touches_remaining: 2,
            context: serde_json::Value::Null,
            system_prompt: String::new(),
            message: Default::default(),
        }
    }

    fn config(vars: &[(&str, &str)]) -> Result<Option<ModelConfig>, String> {
        let vars: std::collections::HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        model_config(|name| vars.get(name).cloned())
    }

    #[test]
    fn offline_is_the_default() {
        assert!(config(&[]).expect("config").is_none());
        assert!(
            config(&[("OPENLOOP_LLM", "offline"), ("ANTHROPIC_API_KEY", "k")])
                .expect("config")
                .is_none()
        );
        assert!(config(&[("OPENLOOP_LLM", "gpt")]).is_err());
    }

    #[test]
    fn anthropic_needs_only_its_key() {
        let c = config(&[("OPENLOOP_LLM", "anthropic"), ("ANTHROPIC_API_KEY", "sk-ant-secret")])
            .expect("config")
            .expect("a model");
        assert_eq!(
            (c.provider, c.base_url.as_str(), c.model.as_str()),
            (
                Provider::Anthropic,
                model::DEFAULT_ANTHROPIC_BASE_URL,
                model::DEFAULT_ANTHROPIC_MODEL
            )
        );
        assert_eq!(c.timeout, Duration::from_secs(30));
        assert!(!format!("{c:?}").contains("sk-ant-secret"), "the key is never Debug-printed");
        let missing = config(&[("OPENLOOP_LLM", "anthropic")]).expect_err("no key");
        assert!(missing.contains("ANTHROPIC_API_KEY"), "{missing}");
    }

    #[test]
    fn openai_names_each_missing_variable() {
        let all = [
            ("OPENLOOP_LLM", "openai"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
            ("OPENAI_API_KEY", "k"),
            ("OPENLOOP_LLM_MODEL", "llama-3.1-8b"),
            ("OPENLOOP_LLM_TIMEOUT_SECS", "12"),
        ];
        let c = config(&all).expect("config").expect("a model");
        assert_eq!((c.provider, c.model.as_str()), (Provider::OpenAi, "llama-3.1-8b"));
        assert_eq!(c.timeout, Duration::from_secs(12));
        for missing in ["OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENLOOP_LLM_MODEL"] {
            let vars: Vec<(&str, &str)> = all.iter().copied().filter(|(k, _)| *k != missing).collect();
            let error = config(&vars).expect_err(missing);
            assert!(error.contains(missing), "{error}");
        }
        let mut bad = all.to_vec();
        bad[4] = ("OPENLOOP_LLM_TIMEOUT_SECS", "soon");
        assert!(config(&bad).expect_err("bad timeout").contains("OPENLOOP_LLM_TIMEOUT_SECS"));
    }

    #[test]
    fn bedrock_needs_only_a_model_id_and_no_key() {
        let c = config(&[
            ("OPENLOOP_LLM", "bedrock"),
            ("OPENLOOP_BEDROCK_MODEL", "anthropic.claude-3-5-haiku-20241022-v1:0"),
        ])
        .expect("config")
        .expect("a model");
        assert_eq!(
            (c.provider, c.model.as_str()),
            (Provider::Bedrock, "anthropic.claude-3-5-haiku-20241022-v1:0")
        );
        assert_eq!(c.base_url, "", "Bedrock's regional endpoint");
        let named = config(&[("OPENLOOP_LLM", "bedrock"), ("OPENLOOP_LLM_MODEL", "amazon.nova-lite-v1:0")])
            .expect("config")
            .expect("a model");
        assert_eq!(named.model, "amazon.nova-lite-v1:0", "OPENLOOP_LLM_MODEL names it too");
        let local = config(&[
            ("OPENLOOP_LLM", "bedrock"),
            ("OPENLOOP_BEDROCK_MODEL", "m"),
            ("OPENLOOP_BEDROCK_URL", "http://127.0.0.1:9"),
        ])
        .expect("config")
        .expect("a model");
        assert_eq!(local.base_url, "http://127.0.0.1:9");
        let missing = config(&[("OPENLOOP_LLM", "bedrock")]).expect_err("no model id");
        assert!(missing.contains("OPENLOOP_BEDROCK_MODEL"), "{missing}");
        let bad = config(&[
            ("OPENLOOP_LLM", "bedrock"),
            ("OPENLOOP_BEDROCK_MODEL", "m"),
            ("OPENLOOP_BEDROCK_URL", "ftp://x"),
        ]);
        assert!(bad.is_err(), "an endpoint that is not http(s)");
        let no_client = ModelAgent::new(
            config(&[("OPENLOOP_LLM", "bedrock"), ("OPENLOOP_BEDROCK_MODEL", "m")])
                .expect("c")
                .expect("m"),
        );
        assert!(no_client.is_err(), "Bedrock's agent needs the client the composition root makes");
    }

    #[tokio::test]
    async fn drafts_greet_the_member_and_sign_as_the_gym() {
        let draft = OfflineAgent.draft(&request("payment_recovery", 0)).await.expect("draft").draft;
        assert!(draft.body.starts_with("Hi Sarah,"));
        assert!(draft.body.ends_with("Coach Mike"));
        assert!(!draft.subject.is_empty());
    }

    /// No type's offline draft says the task's goal, whatever the touch; each greets
    /// the member by first name ("Hi there" without one) and signs as the gym.
    #[tokio::test]
    async fn no_offline_draft_says_the_tasks_goal() {
        for (task_type, touch) in messages::keys() {
            let Some(n) = touch
                .strip_prefix("follow_up_")
                .map(|n| n.parse::<u32>().expect("n"))
                .or((touch == "first").then_some(0))
            else {
                continue;
            };
            let mut r = request(task_type, n);
            r.goal = "Dana cancelled 12 days ago, citing a busy schedule".into();
            let draft = OfflineAgent.draft(&r).await.expect("draft").draft;
            let text = format!("{}\n{}", draft.subject, draft.body).to_lowercase();
            for word in ["cancelled", "citing", "busy", "schedule", "12", "ago"] {
                assert!(!text.contains(word), "{task_type}/{touch} says {word:?}: {text}");
            }
            assert!(draft.body.starts_with("Hi Sarah,"), "{task_type}/{touch}");
            assert!(draft.body.ends_with("Coach Mike"), "{task_type}/{touch}");
            r.member_first_name = None;
            let nameless = OfflineAgent.draft(&r).await.expect("draft").draft;
            assert!(nameless.body.starts_with("Hi there,"), "{task_type}/{touch}");
        }
    }

    #[tokio::test]
    async fn the_owners_template_is_written_from_and_a_broken_one_falls_back_to_the_shipped_one() {
        let mut r = request("win_back", 0);
        r.message.owner_template = Some(messages::TemplateText {
            subject: "Come back, {{ member.first_name }}".into(),
            body: "{{ greeting }}! The door is open.\n\n{{ sign_off }}".into(),
        });
        let draft = OfflineAgent.draft(&r).await.expect("draft").draft;
        assert_eq!(draft.subject, "Come back, Sarah");
        assert_eq!(draft.body, "Hi Sarah! The door is open.\n\nCoach Mike");
        r.message.owner_template = Some(messages::TemplateText {
            subject: "x".into(),
            body: "{{ member.first_name + 1 }}".into(),
        });
        let shipped = OfflineAgent.draft(&r).await.expect("draft").draft;
        assert_eq!(shipped.subject, "Hello from CrossFit Renegade");
    }

    /// Issue 42: the owner rewrote Alex's first mail by hand; the next touch follows it
    /// instead of the canned "Just following up on my last note".
    #[tokio::test]
    async fn a_follow_up_after_the_owners_rewrite_refers_back_to_their_words() {
        let mut r = request("churn_risk", 1);
        r.context = serde_json::json!({"owners_voice": {"subject": "Your shoulder",
            "body": "Hi Sarah,\n\nIs your shoulder still bugging you? We can work around it.\n\nRosa"}});
        let draft = OfflineAgent.draft(&r).await.expect("draft").draft;
        assert!(
            draft.body.starts_with("Hi Sarah,") && draft.body.ends_with("Coach Mike"),
            "{}",
            draft.body
        );
        assert!(draft.body.contains("\"Is your shoulder still bugging you?\""), "{}", draft.body);
        assert!(!draft.body.contains("Just following up"), "{}", draft.body);
        assert_eq!(draft.subject, "Your shoulder");
    }

    #[tokio::test]
    async fn the_owners_guidance_becomes_the_answer_in_the_gyms_voice() {
        let mut r = request("churn_risk", 1);
        r.context = serde_json::json!({"owner_guidance": "tell her that the Saturday class starts at 9am"});
        let drafted = OfflineAgent.draft(&r).await.expect("draft");
        assert_eq!(drafted.confidence, OFFLINE_DRAFT_CONFIDENCE);
        let draft = drafted.draft;
        assert_eq!(draft.body, "Hi Sarah,\n\nThe Saturday class starts at 9am.\n\nCoach Mike");
        assert_eq!(as_message("We open at 6 on Sundays!"), "We open at 6 on Sundays!");
    }

    /// The owner's note about the member is said to the member, never pasted.
    #[tokio::test]
    async fn the_owners_note_about_her_reaches_her_in_her_own_person() {
        let mut r = request("churn_risk", 1);
        let note = "Congratulate her on the baby! Tell her we can freeze her membership";
        r.context = serde_json::json!({ "owner_guidance": note });
        let body = OfflineAgent.draft(&r).await.expect("draft").draft.body;
        assert!(
            body.contains("Congratulations on the baby! We can freeze your membership."),
            "{body}"
        );
        assert!(!body.contains(note) && !body.contains("Tell her"), "{body}");
    }
}

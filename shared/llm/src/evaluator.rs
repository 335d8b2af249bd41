//! The model evaluator: the same shared record the
//! offline evaluator reads — codes, counts, hours, lengths, the owner's edits by kind, the
//! account's thresholds; never a message, a name or an id beyond the task's own — handed to a
//! model with a business-neutral prompt, and its answer read like every other model answer:
//! one JSON object of a stated shape, checked strictly, refused whole when any suggestion in it
//! is malformed (a kind its change does not match, a confidence outside 0–100, a task type we
//! do not have, a threshold outside its safe bounds, more than [`MAX_SUGGESTIONS`]).
//!
//! Selected with `OPENLOOP_EVALUATOR=model` beside `OPENLOOP_LLM` (its provider and model); the
//! offline evaluator stays the default. The engine counts each call against the account's AI
//! calls for the day ([`Evaluator::uses_ai`]).

use async_trait::async_trait;
use openloop_core::learning::evaluator::{ClosedTask, MAX_SUGGESTIONS, WINDOW_DAYS};
use openloop_core::learning::suggestion::{ProposedChange, Strength, SuggestionDraft, SuggestionKind};
use openloop_core::owner::calibration::{Calibration, Threshold};
use openloop_core::ports::{AgentError, Evaluator};
use openloop_core::task::task_type;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::answer::{AnswerError, json_object};
use crate::model::{ModelAgent, ModelConfig};

/// Characters of a suggestion's title and body at most.
const MAX_TITLE_CHARS: usize = 120;
const MAX_BODY_CHARS: usize = 1_500;
/// Characters of a proposed memory, instruction, guidance or criterion at most.
const MAX_CHANGE_CHARS: usize = 1_000;
/// Bytes of a suggestion's evidence (as JSON) at most.
const MAX_EVIDENCE_BYTES: usize = 4_000;

/// The system message: what the evaluator is and what it may propose, for any business.
pub const SYSTEM: &str = "You evaluate the completed work of an AI agent that writes to the clients of one small business \
on the owner's behalf. You are given the structural record of its recently closed tasks (codes, counts, hours, lengths, \
outcomes; never message text or names) and must propose improvements the owner will review, each resting on evidence in \
that record. You have no rules about any kind of business: reason only from the data.\n\n\
You may propose five kinds of change:\n\
- memory: a fact about this business the agent should remember (e.g. when its clients answer).\n\
- prompt: a targeted instruction for the agent's messages, for all agents (\"*\") or one.\n\
- skill: guidance for handling one task type's situations.\n\
- rubric: criteria a good result of one task type meets.\n\
- calibration: the risk scan's no-check-in gap (risk_gap_days) or a raise of the confidence the agent needs to send \
without review (confidence_raise), when flagged clients turned out fine or confident work was corrected.\n\n\
Propose nothing for expected outcomes, for ambiguous single data points, or about safety, compliance or infrastructure. \
Every number you cite must be countable from the record. Fewer, well-supported suggestions are better than many.";

/// The user message: the record and the answer's shape.
pub fn user(tasks: &[ClosedTask], calibration: &Calibration) -> String {
    let records: Vec<Value> = tasks
        .iter()
        .map(|t| {
            let mut record = serde_json::to_value(&t.shared).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut record {
                map.remove("contributor");
                map.insert("task_id".into(), json!(t.task_id.to_string()));
                map.insert("owner_edits".into(), json!(t.edits.iter().map(|e| e.as_str()).collect::<Vec<_>>()));
            }
            record
        })
        .collect();
    let types: Vec<&str> = task_type::REGISTRY.iter().map(|d| d.key).collect();
    let (gap_low, gap_high) = Threshold::RiskGapDays.bounds();
    let (raise_low, raise_high) = Threshold::ConfidenceRaise.bounds();
    format!(
        "The business's closed tasks of the last {WINDOW_DAYS} days ({n}), as JSON records (first_touch_hour is the \
         business's local hour; turns > 0 means the client answered):\n{records}\n\n\
         Current thresholds: risk_gap_days {gap} (allowed {gap_low}-{gap_high}), confidence_raise {raise} (allowed \
         {raise_low}-{raise_high}).\nTask types: {types}.\n\n\
         Answer with ONE JSON object and nothing else, of this shape (at most {MAX_SUGGESTIONS} suggestions, none is fine):\n\
         {{\"suggestions\": [{{\"kind\": \"memory\" | \"prompt\" | \"skill\" | \"rubric\" | \"calibration\",\n \
         \"title\": \"short, for the owner\", \"body\": \"what you found and why it matters, with the counts\",\n \
         \"evidence\": {{\"sample_count\": an integer, and the counts and rates you used}},\n \
         \"strength\": \"weak\" | \"moderate\" | \"strong\", \"confidence\": an integer from 0 to 100,\n \
         \"change\": one of {{\"content\": \"the memory\"}} (memory), {{\"agent\": \"*\", \"instruction\": \"...\"}} (prompt), \
         {{\"task_type\": \"...\", \"guidance\": \"...\"}} (skill), {{\"task_type\": \"...\", \"criteria\": [\"...\"]}} (rubric), \
         {{\"threshold\": \"risk_gap_days\" | \"confidence_raise\", \"value\": an integer}} (calibration)}}]}}",
        n = tasks.len(),
        records = Value::Array(records),
        gap = calibration.risk_gap_days,
        raise = calibration.confidence_raise,
        types = types.join(", "),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    suggestions: Vec<Proposed>,
}

#[derive(Deserialize)]
struct Proposed {
    kind: SuggestionKind,
    title: String,
    body: String,
    evidence: Value,
    strength: Strength,
    confidence: f64,
    change: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryChange {
    content: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptChange {
    agent: String,
    #[serde(default)]
    task_type: Option<String>,
    instruction: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillChange {
    task_type: String,
    guidance: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RubricChange {
    task_type: String,
    criteria: Vec<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrationChange {
    threshold: Threshold,
    value: u16,
}

fn invalid(why: impl Into<String>) -> AnswerError {
    AnswerError::Invalid(why.into())
}

fn change_of<T: serde::de::DeserializeOwned>(kind: &str, value: Value) -> Result<T, AnswerError> {
    serde_json::from_value(value).map_err(|e| AnswerError::Shape(format!("a {kind} suggestion's change: {e}")))
}

fn text(field: &str, value: &str, max: usize) -> Result<String, AnswerError> {
    let trimmed = value.trim();
    let chars = trimmed.chars().count();
    if chars == 0 || chars > max {
        return Err(invalid(format!("{field} must be 1-{max} characters")));
    }
    Ok(trimmed.to_owned())
}

fn known_type(task_type: &str) -> Result<String, AnswerError> {
    task_type::lookup(task_type)
        .map(|d| d.key.to_owned())
        .ok_or_else(|| invalid(format!("{task_type:?} is not a task type")))
}

/// The model's suggestions, checked; any malformed one refuses the whole answer.
pub fn suggestions(answer: &str, calibration: &Calibration) -> Result<Vec<SuggestionDraft>, AnswerError> {
    let a: Answer = serde_json::from_value(json_object(answer)?).map_err(|e| AnswerError::Shape(e.to_string()))?;
    if a.suggestions.len() > MAX_SUGGESTIONS {
        return Err(invalid(format!("{} suggestions; at most {MAX_SUGGESTIONS}", a.suggestions.len())));
    }
    a.suggestions.into_iter().map(|p| suggestion(p, calibration)).collect()
}

fn suggestion(p: Proposed, calibration: &Calibration) -> Result<SuggestionDraft, AnswerError> {
    let title = text("title", &p.title, MAX_TITLE_CHARS)?;
    let body = text("body", &p.body, MAX_BODY_CHARS)?;
    if !(p.confidence.is_finite() && p.confidence.fract() == 0.0 && (0.0..=100.0).contains(&p.confidence)) {
        return Err(invalid(format!("confidence {} is not an integer from 0 to 100", p.confidence)));
    }
    if !p.evidence.is_object() || p.evidence.to_string().len() > MAX_EVIDENCE_BYTES {
        return Err(invalid(format!(
            "evidence must be an object of counts and rates, at most {MAX_EVIDENCE_BYTES} bytes"
        )));
    }
    let (change, identity) = match p.kind {
        SuggestionKind::Memory => {
            let c: MemoryChange = change_of("memory", p.change)?;
            let content = text("the memory", &c.content, MAX_CHANGE_CHARS)?;
            (
                ProposedChange::Memory {
                    content: content.clone(),
                    category: Some("pattern".into()),
                },
                content,
            )
        }
        SuggestionKind::Prompt => {
            let c: PromptChange = change_of("prompt", p.change)?;
            let instruction = text("the instruction", &c.instruction, MAX_CHANGE_CHARS)?;
            let task_type = c.task_type.as_deref().map(known_type).transpose()?;
            let agent = text("the agent", &c.agent, 40)?;
            let identity = format!("{agent}:{}:{instruction}", task_type.as_deref().unwrap_or("*"));
            (
                ProposedChange::Prompt {
                    agent,
                    task_type,
                    instruction,
                },
                identity,
            )
        }
        SuggestionKind::Skill => {
            let c: SkillChange = change_of("skill", p.change)?;
            let task_type = known_type(&c.task_type)?;
            let guidance = text("the guidance", &c.guidance, MAX_CHANGE_CHARS)?;
            let identity = format!("{task_type}:{guidance}");
            (ProposedChange::Skill { task_type, guidance }, identity)
        }
        SuggestionKind::Rubric => {
            let c: RubricChange = change_of("rubric", p.change)?;
            let task_type = known_type(&c.task_type)?;
            if c.criteria.is_empty() {
                return Err(invalid("a rubric needs at least one criterion"));
            }
            let criteria = c
                .criteria
                .iter()
                .map(|x| text("a criterion", x, MAX_CHANGE_CHARS))
                .collect::<Result<Vec<_>, _>>()?;
            let identity = format!("{task_type}:{}", criteria.join("|"));
            (ProposedChange::Rubric { task_type, criteria }, identity)
        }
        SuggestionKind::Calibration => {
            let c: CalibrationChange = change_of("calibration", p.change)?;
            calibration
                .with(c.threshold, c.value)
                .map_err(|e| invalid(format!("the calibration: {}", e.message)))?;
            if calibration.get(c.threshold) == c.value {
                return Err(invalid(format!("{} is already {}", c.threshold.as_str(), c.value)));
            }
            let identity = format!("{}:{}>{}", c.threshold.as_str(), calibration.get(c.threshold), c.value);
            (
                ProposedChange::Calibration {
                    threshold: c.threshold,
                    value: c.value,
                },
                identity,
            )
        }
        // Offered from the owner's own approvals (`engine/learning/autopilot.rs`), never by a model.
        SuggestionKind::Autopilot => return Err(invalid("an autopilot suggestion is not the evaluator's to make")),
    };
    let kind = serde_json::to_value(p.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    Ok(SuggestionDraft {
        kind: p.kind,
        title,
        body,
        evidence: p.evidence,
        strength: p.strength,
        confidence: p.confidence as u8,
        // The same proposal in another run is the same finding, however it is titled.
        fingerprint: format!("model:{kind}:{}", fingerprint_of(&identity)),
        change,
    })
}

/// A short stable digest of a proposal's identity (lower-cased, spaces collapsed).
fn fingerprint_of(identity: &str) -> String {
    use sha2::Digest;
    let normal = identity.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
    let digest = sha2::Sha256::digest(normal.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The evaluator over a model API (the agent's provider and model).
pub struct ModelEvaluator {
    model: ModelAgent,
}

impl ModelEvaluator {
    pub fn new(config: ModelConfig) -> Result<Self, String> {
        Ok(Self {
            model: ModelAgent::new(config)?,
        })
    }
}

#[async_trait]
impl Evaluator for ModelEvaluator {
    async fn evaluate(&self, tasks: &[ClosedTask], calibration: &Calibration) -> Result<Vec<SuggestionDraft>, AgentError> {
        let text = self.model.complete(SYSTEM, &user(tasks, calibration)).await?;
        suggestions(&text, calibration).map_err(|e| self.model.refused("evaluation", e))
    }

    fn uses_ai(&self) -> bool {
        true
    }
}

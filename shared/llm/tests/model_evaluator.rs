//! The model evaluator against a fake OpenAI-compatible API (wiremock): what it is asked (the
//! business-neutral prompt over the shared record, no message text), how a good answer becomes
//! suggestions, and that a malformed answer is refused whole.

use std::time::Duration;

use openloop_core::kernel::ids::TaskId;
use openloop_core::learning::evaluator::ClosedTask;
use openloop_core::learning::interaction::SharedOutcome;
use openloop_core::learning::suggestion::{ProposedChange, Strength, SuggestionKind};
use openloop_core::owner::calibration::{Calibration, Threshold};
use openloop_core::ports::Evaluator;
use openloop_llm::{ModelConfig, ModelEvaluator, Provider};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn answer(content: &Value) -> ResponseTemplate {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content.to_string()}, "finish_reason": "stop"}],
    });
    ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json")
}

async fn evaluator_answering(content: Value) -> (MockServer, ModelEvaluator) {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(answer(&content)).mount(&server).await;
    let mut config = ModelConfig::new(
        Provider::OpenAi,
        format!("{}/v1", server.uri()),
        SecretString::from("sk-test"),
        "test-model",
    );
    config.timeout = Duration::from_secs(10);
    config.max_attempts = 1;
    (server, ModelEvaluator::new(config).expect("evaluator"))
}

fn closed(hour: i8, replied: bool) -> ClosedTask {
    ClosedTask {
        task_id: TaskId::generate("2026-11-02T14:00:00Z".parse().expect("time")),
        shared: SharedOutcome {
            trigger: "cron_analysis".into(),
            business_type: Some("yoga_studio".into()),
            flagged_gap_days: Some(15),
            contributor: Some("0123456789abcdef01234567".into()),
            ..openloop_core::testing::sample_shared_outcome(hour, replied)
        },
        edits: Vec::new(),
        template_version: None,
    }
}

fn a_good_answer() -> Value {
    json!({"suggestions": [
        {"kind": "memory", "title": "Clients answer in the evening",
         "body": "12 of 12 evening messages were answered, 0 of 12 morning ones.",
         "evidence": {"sample_count": 24, "evening": {"sent": 12, "replied": 12}, "morning": {"sent": 12, "replied": 0}},
         "strength": "strong", "confidence": 85,
         "change": {"content": "Clients here answer messages sent after 5pm."}},
        {"kind": "rubric", "title": "Keep the first line about the client",
         "body": "Answered messages opened with the client.", "evidence": {"sample_count": 24},
         "strength": "weak", "confidence": 40,
         "change": {"task_type": "churn_risk", "criteria": ["Open with the client, not the business."]}},
        {"kind": "calibration", "title": "Flag later", "body": "Most flagged clients came back.",
         "evidence": {"sample_count": 24, "came_back_unprompted": 20}, "strength": "moderate", "confidence": 60,
         "change": {"threshold": "risk_gap_days", "value": 21}},
    ]})
}

#[tokio::test]
async fn the_model_is_asked_with_a_business_neutral_prompt_over_the_shared_record_and_its_answer_becomes_suggestions() {
    let (server, evaluator) = evaluator_answering(a_good_answer()).await;
    assert!(evaluator.uses_ai(), "an AI call, counted by the engine");
    let tasks: Vec<ClosedTask> = (0..12).map(|_| closed(19, true)).chain((0..12).map(|_| closed(9, false))).collect();
    let found = evaluator.evaluate(&tasks, &Calibration::default()).await.expect("evaluated");

    assert_eq!(found.len(), 3);
    assert_eq!(
        (found[0].kind, found[0].strength, found[0].confidence),
        (SuggestionKind::Memory, Strength::Strong, 85)
    );
    assert_eq!(found[0].evidence["evening"]["replied"], 12);
    assert_eq!(
        found[1].change,
        ProposedChange::Rubric {
            task_type: "churn_risk".into(),
            criteria: vec!["Open with the client, not the business.".into()]
        }
    );
    assert_eq!(
        found[2].change,
        ProposedChange::Calibration {
            threshold: Threshold::RiskGapDays,
            value: 21
        }
    );
    assert!(found.iter().all(|d| d.fingerprint.starts_with("model:")), "{found:?}");

    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 1, "one call per evaluation");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("json");
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(system.contains("You have no rules about any kind of business"), "{system}");
    let words: Vec<String> = system
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_owned)
        .collect();
    for word in ["gym", "gyms", "member", "members", "yoga", "fitness"] {
        assert!(!words.iter().any(|w| w == word), "business-neutral: {word} in\n{system}");
    }
    assert!(
        user.contains("\"first_touch_hour\":19") && user.contains("risk_gap_days 14"),
        "{user}"
    );
    assert!(
        !user.contains("0123456789abcdef01234567"),
        "no pseudonym is needed to evaluate one account"
    );
}

#[tokio::test]
async fn a_malformed_answer_is_refused_whole() {
    let mut wrong_kind = a_good_answer();
    wrong_kind["suggestions"][0]["change"] = json!({"instruction": "Send in the evening."});
    let mut unsafe_gap = a_good_answer();
    unsafe_gap["suggestions"][2]["change"]["value"] = json!(90);
    let mut fraction = a_good_answer();
    fraction["suggestions"][0]["confidence"] = json!(0.85);
    let mut unknown_type = a_good_answer();
    unknown_type["suggestions"][1]["change"]["task_type"] = json!("yoga_retreat");
    let mut bulky = a_good_answer();
    bulky["suggestions"][0]["evidence"]["notes"] = json!("x".repeat(5_000));
    let mut too_many = a_good_answer();
    let more = too_many["suggestions"][0].clone();
    too_many["suggestions"].as_array_mut().expect("array").push(more);
    for (what, bad) in [
        ("a memory whose change is a prompt's", wrong_kind),
        ("a gap outside its safe bounds", unsafe_gap),
        ("a confidence of 0-1", fraction),
        ("a task type we do not have", unknown_type),
        ("more than 3", too_many),
        ("evidence past its bound", bulky),
        ("prose", json!("I think they like evenings")),
    ] {
        let (_, evaluator) = evaluator_answering(bad).await;
        let refused = evaluator.evaluate(&[closed(19, true)], &Calibration::default()).await;
        assert!(refused.is_err(), "{what}: {refused:?}");
    }
    let (_, evaluator) = evaluator_answering(json!({"suggestions": []})).await;
    assert_eq!(
        evaluator.evaluate(&[], &Calibration::default()).await.expect("none").len(),
        0,
        "none is an answer"
    );
}

//! The black-box check of the learning loop's prompts: the runtime's agent is the OpenAI-compatible model adapter,
//! pointed at a fake model API (wiremock) that answers in the provider's wire format and keeps
//! every request. A business memory and an owner's prompt addition, once saved through the
//! contract, are in the system prompt of the next first draft, follow-up and reply evaluation,
//! beside the task type's skill (and the follow-up's own section of it); a second trigger for
//! the open task reaches the follow-up's prompt; the completion evaluation that follows the
//! reply is given every layer: base rules, skill, memories, additions, goal and the member's
//! other open tasks. A timing suggestion the owner accepts is in the next draft's prompt; one
//! dismissed changes nothing.

use std::sync::Arc;
use std::time::Duration;

use openloop_llm::{ModelAgent, ModelConfig, Provider};
use openloop_tests::{Client, Stack, events};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::morning;

const MEMORY: &str = "Members here like being called athletes.";
const ADDITION: &str = "Always mention the Saturday community workout.";
/// From `skills/payment_recovery.md`: the skill itself, and its follow-up section.
const SKILL: &str = "Most failed payments are an expired card";
/// From `skills/_base.md`: the rules every task type inherits.
const BASE_RULES: &str = "# Base — rules for every task type";
/// The goal of another open task about the same member.
const OTHER_TASK_GOAL: &str = "Welcome Sarah to the new Saturday class";
const FOLLOW_UP_SECTION: &str = "a reminder that the payment is still open";

/// One chat completion whose assistant message is `content`.
fn completion(content: Value) -> ResponseTemplate {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content.to_string()}, "finish_reason": "stop"}],
    });
    ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json")
}

/// The system and user messages of every request the fake model received, in order.
async fn asked(server: &MockServer) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    for request in server.received_requests().await.unwrap_or_default() {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let text = |role: &str| {
            body["messages"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["role"] == role))
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_owned()
        };
        seen.push((text("system"), text("user")));
    }
    seen
}

#[tokio::test]
async fn what_the_owner_taught_is_in_every_prompt_the_model_is_given() {
    let server = MockServer::start().await;
    // The first draft, then the follow-up's in other words (a repeat would not be sent).
    Mock::given(method("POST"))
        .and(body_string_contains("Write the message."))
        .respond_with(completion(json!({
            "subject": "About your membership",
            "body": "Hi Sarah, the last payment did not go through. Could you take a look this week? Coach Mike",
            "confidence": 95,
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("Write the message."))
        .respond_with(completion(json!({
            "subject": "About your membership",
            "body": "Hi Sarah, just checking you saw my note about the payment. Coach Mike",
            "confidence": 95,
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("A member replied in this task's conversation"))
        .respond_with(completion(json!({
            "action": "wait", "outcome": null, "confidence": 85, "reasoning": "She will update the card.",
            "reply": null, "wait_days": 2, "suggest_suppression": false, "provisional": false,
            "unanswered_question": null, "other_subject": null,
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("Judge how far this task is towards its goal"))
        .respond_with(completion(json!({
            "progress_pct": 40, "current_outcome": "acknowledged", "confidence": 70,
            "evidence_type": "verbal_commitment", "evidence": "She said she would update the card.",
            "recommended_action": "wait_and_verify", "milestones": [], "risks": ["the card may fail again"],
        })))
        .mount(&server)
        .await;
    let mut config = ModelConfig::new(
        Provider::OpenAi,
        format!("{}/v1", server.uri()),
        SecretString::from("sk-test"),
        "test-model",
    );
    config.timeout = Duration::from_secs(10);
    config.backoff = Duration::from_millis(5);
    config.max_attempts = 1;
    let stack = Stack::start_with_agent("model-prompts", Arc::new(ModelAgent::new(config).expect("agent"))).await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;

    // The owner teaches: a memory and an addition for every agent.
    let (status, memory) = stack.post("/api/v1/memories", &gym.token, json!({"content": MEMORY})).await;
    assert_eq!(status, 201, "{memory}");
    let addition = json!({"agent_overrides": [{"agent": "*", "prompt_additions": ADDITION}]});
    let (status, settings) = stack
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&gym.token), Some(addition))
        .await;
    assert_eq!(status, 200, "{settings}");

    // A failed payment: the model writes the first draft.
    let email = stack.sarahs_payment_failed(&gym, &day0.to_string()).await;
    stack.run().await;
    let (_, list) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let id = list["tasks"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {list}"))
        .to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;

    // A second failed payment while the task is open joins it (spec §7.7) rather than being
    // dropped, and the follow-up's draft is told about it.
    let mut second = events::payment_failed("m_1", &day0.to_string());
    second["data"]["amount"] = json!(40);
    let (status, _) = stack.webhook(&gym, "evt_payment_2", second).await;
    assert_eq!(status, 202);

    // The follow-up, when it is due: the model writes it too.
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let next = task["next_action_at"].as_str().unwrap_or_else(|| panic!("{task}")).to_owned();
    stack.set_clock(&next).await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 2, "the first touch and the follow-up: {mail:?}");

    // Another open task about Sarah (the owner's, drafted by hand: no model call), which the
    // completion evaluation must know of to keep to its own subject.
    let (status, other) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "onboarding", "member_id": "m_1", "goal": OTHER_TASK_GOAL,
                   "draft": {"subject": "Saturday", "body": "Hi Sarah, see you Saturday! Coach Mike"}}),
        )
        .await;
    assert_eq!(status, 201, "{other}");

    // The member answers: the model reads the reply, then judges the task's progress.
    let (status, body) = stack
        .inbound(&Client::reply_to(
            &mail[1],
            "reply-1@example.net",
            "Thanks, I'll update my card tonight.",
        ))
        .await;
    assert!(status < 300, "{status}: {body}");
    stack.run().await;

    let prompts = asked(&server).await;
    let of = |user_starts: &str| -> Vec<&String> {
        prompts
            .iter()
            .filter(|(_, user)| user.starts_with(user_starts))
            .map(|(system, _)| system)
            .collect()
    };
    let drafts = of("Write the message.");
    let replies = of("A member replied in this task's conversation");
    let completions = of("Judge how far this task is towards its goal");
    assert_eq!(
        (drafts.len(), replies.len(), completions.len()),
        (2, 1, 1),
        "first draft, follow-up, reply, completion: {prompts:#?}"
    );
    for (what, system) in [
        ("first draft", drafts[0]),
        ("follow-up", drafts[1]),
        ("reply evaluation", replies[0]),
    ] {
        for (layer, text) in [
            ("the memory", MEMORY),
            ("the owner's addition", ADDITION),
            ("the type's skill", SKILL),
        ] {
            assert!(system.contains(text), "{what}: {layer} is missing from\n{system}");
        }
    }
    // The completion evaluation's system prompt is the composed one, every layer of it.
    let goal = task["goal"].as_str().unwrap_or_else(|| panic!("{task}")).to_owned();
    for (layer, text) in [
        ("the base rules", BASE_RULES),
        ("the type's skill", SKILL),
        ("the memory", MEMORY),
        ("the owner's addition", ADDITION),
        ("the goal", goal.as_str()),
        ("the member's other open task", OTHER_TASK_GOAL),
    ] {
        assert!(
            completions[0].contains(text),
            "completion evaluation: {layer} is missing from\n{}",
            completions[0]
        );
    }
    assert!(
        drafts[1].contains("merged_triggers") && drafts[1].contains("evt_payment_2"),
        "the follow-up knows of the second failed payment:\n{}",
        drafts[1]
    );
    assert!(
        drafts[1].contains(FOLLOW_UP_SECTION),
        "the follow-up has the skill's follow-up section:\n{}",
        drafts[1]
    );
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(task["memories_used"], json!([memory["id"]]), "{task}");
}

/// The check with the model adapter: a month of evening sends answered and morning
/// ones not becomes a timing suggestion (the offline evaluator, the default); accepting it
/// puts its memory in the next draft's prompt; dismissing another account's changes nothing.
#[tokio::test]
async fn an_accepted_timing_suggestion_is_in_the_next_prompt_and_a_dismissed_one_is_not() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("Write the message."))
        .respond_with(completion(json!({
            "subject": "We miss you", "body": "Hi Sam, see you at the 6pm class? Coach Mike", "confidence": 90,
        })))
        .mount(&server)
        .await;
    let mut config = ModelConfig::new(
        Provider::OpenAi,
        format!("{}/v1", server.uri()),
        SecretString::from("sk-test"),
        "test-model",
    );
    config.max_attempts = 1;
    let stack = Stack::start_with_agent("model-prompts-timing", Arc::new(ModelAgent::new(config).expect("agent"))).await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;
    for (who, base) in [(&gym, 0), (&other, 1_000)] {
        let account: openloop_core::kernel::ids::AccountId = who.id.parse().expect("account id");
        for i in 0..12 {
            crate::learning::seeded_closed_task(&stack, account, base + i, 2 + 2 * i as i64, 24, true).await;
            crate::learning::seeded_closed_task(&stack, account, base + 100 + i, 3 + 2 * i as i64, 14, false).await;
        }
        stack.member(who, "m_sam", "Sam", day0).await;
    }
    // The weekly run evaluates every account.
    stack
        .set_clock(&(day0 + jiff::SignedDuration::from_hours(24 * 8)).to_string())
        .await;
    let ran = stack.run().await;
    assert_eq!(ran["evaluation"]["suggested"], 2, "one each: {ran}");

    let suggestion = |token: String| {
        let stack = &stack;
        async move {
            let (_, listed) = stack.get("/api/v1/suggestions", &token).await;
            listed["suggestions"][0]["id"].as_str().unwrap_or_default().to_owned()
        }
    };
    let ours = suggestion(gym.token.clone()).await;
    let (status, _) = stack
        .post(&format!("/api/v1/suggestions/{ours}/accept"), &gym.token, json!({}))
        .await;
    assert_eq!(status, 200);
    let theirs = suggestion(other.token.clone()).await;
    let (status, _) = stack
        .post(&format!("/api/v1/suggestions/{theirs}/dismiss"), &other.token, json!({}))
        .await;
    assert_eq!(status, 200);

    for who in [&gym, &other] {
        let (status, task) = stack
            .post(
                "/api/v1/tasks",
                &who.token,
                json!({"task_type": "churn_risk", "member_id": "m_sam", "goal": "Bring Sam back", "confidence": 80}),
            )
            .await;
        assert_eq!(status, 201, "{task}");
    }
    let drafts: Vec<String> = asked(&server)
        .await
        .into_iter()
        .filter(|(_, user)| user.starts_with("Write the message."))
        .map(|(system, _)| system)
        .collect();
    assert_eq!(drafts.len(), 2, "{drafts:#?}");
    let memory = "answer messages sent after 5pm";
    assert!(drafts[0].contains(memory), "accepted: in the next prompt\n{}", drafts[0]);
    assert!(!drafts[1].contains(memory), "dismissed: nothing changed\n{}", drafts[1]);
}

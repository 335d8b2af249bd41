//! The model agent against a fake model API (wiremock) that speaks each provider's wire
//! format: what is sent (URL, headers, body), how good answers are read, and that rate limits,
//! server errors, timeouts and malformed answers end in an error (the engine escalates) rather
//! than an action.

use std::time::Duration;

use openloop_core::conversation::reply::ReplyAction;
use openloop_core::owner::account::Profile;
use openloop_core::ports::{Agent, CompletionRequest, DraftRequest, EvidenceType, RecommendedAction, ReplyRequest};
use openloop_core::task::{ConversationMessage, Role};
use openloop_llm::{ModelAgent, ModelConfig, Provider};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-7f3a9c-do-not-leak";

/// Scripted answers of the fake model API.
struct Answer;

impl Answer {
    fn ok(provider: Provider, text: &str) -> ResponseTemplate {
        let body = match provider {
            Provider::Anthropic => json!({
                "id": "msg_01", "type": "message", "role": "assistant", "model": "test-model",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 10},
            }),
            // Bedrock's Converse has a fake of its own (`tests/src/bedrock.rs`).
            Provider::OpenAi | Provider::Bedrock => json!({
                "id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            }),
        };
        Self::status(200, &body.to_string())
    }

    fn status(status: u16, body: &str) -> ResponseTemplate {
        ResponseTemplate::new(status).set_body_raw(body.to_owned(), "application/json")
    }
}

/// A request as the fake received it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    headers: wiremock::http::HeaderMap,
    body: Value,
}

struct Stub {
    server: MockServer,
    agent: ModelAgent,
}

impl Stub {
    async fn seen(&self) -> Vec<Seen> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|r| Seen {
                path: r.url.path().to_owned(),
                body: serde_json::from_slice(&r.body).unwrap_or(Value::Null),
                headers: r.headers,
            })
            .collect()
    }
}

/// A fake serving `answers` in order, one per request, and an agent pointed at it with fast
/// backoff.
async fn stub(provider: Provider, answers: Vec<ResponseTemplate>) -> Stub {
    stub_with(provider, answers, |_| {}).await
}

async fn stub_with(provider: Provider, answers: Vec<ResponseTemplate>, adjust: impl FnOnce(&mut ModelConfig)) -> Stub {
    let server = MockServer::start().await;
    for answer in answers {
        Mock::given(method("POST"))
            .respond_with(answer)
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    let base = match provider {
        Provider::Anthropic => server.uri(),
        Provider::OpenAi | Provider::Bedrock => format!("{}/v1", server.uri()),
    };
    let mut config = ModelConfig::new(provider, base, SecretString::from(KEY), "test-model");
    config.timeout = Duration::from_secs(10);
    config.backoff = Duration::from_millis(10);
    adjust(&mut config);
    Stub {
        server,
        agent: ModelAgent::new(config).expect("agent"),
    }
}

const PROVIDERS: [Provider; 2] = [Provider::Anthropic, Provider::OpenAi];

fn profile() -> Profile {
    Profile {
        display_name: Some("CrossFit Renegade".into()),
        owner_first_name: Some("Mike".into()),
        sign_off: Some("Coach Mike".into()),
        ..Profile::default()
    }
}

fn draft_request() -> DraftRequest {
    DraftRequest {
        task_type: "churn_risk".into(),
        goal: "Get Sarah back into the gym".into(),
        member_first_name: Some("Sarah".into()),
        profile: profile(),
        business_name: "CrossFit Renegade".into(),
        touch: 1,
        tone: "friendly".into(),
        touches_remaining: 1,
        context: json!({"owner_guidance": "tell her the Saturday class starts at 9am"}),
        system_prompt: "SYSTEM PROMPT: never mention billing.".into(),
        message: Default::default(),
    }
}

fn conversation() -> Vec<ConversationMessage> {
    vec![ConversationMessage {
        id: ulid::Ulid::new(),
        at: "2026-11-20T10:00:00Z".parse().expect("time"),
        role: Role::Agent,
        content: "Hi Sarah, we haven't seen you lately. Everything alright?".into(),
        original: None,
    }]
}

fn reply_request() -> ReplyRequest {
    ReplyRequest {
        task_type: "churn_risk".into(),
        goal: "Get Sarah back into the gym".into(),
        outcome_codes: vec!["retained".into(), "verbal_commitment".into(), "churned".into()],
        member_first_name: Some("Sarah".into()),
        profile: profile(),
        business_name: "CrossFit Renegade".into(),
        system_prompt: "SYSTEM PROMPT: you are the retention skill of CrossFit Renegade.".into(),
        conversation: conversation(),
        reply: "I'll be there Monday at 6!".into(),
        messages_left: 2,
        turns_left: 3,
        days_left: 10,
        message: Default::default(),
        facts: Vec::new(),
    }
}

fn completion_request() -> CompletionRequest {
    CompletionRequest {
        task_type: "onboarding".into(),
        goal: "Three check-ins in the first month".into(),
        judgment_criteria: None,
        outcome_codes: vec!["habit_formed".into(), "unresponsive".into()],
        system_prompt: "SYSTEM PROMPT: you judge onboarding.".into(),
        conversation: conversation(),
        evidence: json!({"signals": [{"signal": "checkin", "at": "2026-11-21T07:00:00Z"}]}),
    }
}

const GOOD_REPLY: &str = r#"{"action": "close", "outcome": "verbal_commitment", "confidence": 72,
  "reasoning": "She names a day and time.", "reply": null, "wait_days": null,
  "suggest_suppression": false, "provisional": true, "unanswered_question": null, "other_subject": null}"#;

const GOOD_PROGRESS: &str = r#"{"progress_pct": 33, "current_outcome": "unresponsive", "confidence": 80,
  "evidence_type": "partial_signal", "evidence": "one check-in of three",
  "recommended_action": "continue",
  "milestones": [{"name": "first checkin", "hit": true, "hit_at": "2026-11-21T07:00:00Z"},
                 {"name": "second checkin", "hit": false, "hit_at": null}],
  "risks": ["may lapse after the first week"]}"#;

fn header<'a>(seen: &'a Seen, name: &str) -> &'a str {
    seen.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// The system and user messages as each wire format carries them.
fn messages(provider: Provider, seen: &Seen) -> (String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    match provider {
        Provider::Anthropic => (text(&seen.body["system"]), text(&seen.body["messages"][0]["content"])),
        Provider::OpenAi | Provider::Bedrock => (
            text(&seen.body["messages"][0]["content"]),
            text(&seen.body["messages"][1]["content"]),
        ),
    }
}

#[tokio::test]
async fn anthropic_requests_carry_the_key_version_model_and_one_user_message() {
    let s = stub(Provider::Anthropic, vec![Answer::ok(Provider::Anthropic, GOOD_REPLY)]).await;
    s.agent.evaluate_reply(&reply_request()).await.expect("evaluation");
    let seen = s.seen().await;
    let [request] = seen.as_slice() else {
        panic!("one request expected, got {seen:?}")
    };
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(header(request, "x-api-key"), KEY);
    assert_eq!(header(request, "anthropic-version"), "2023-06-01");
    assert_eq!(header(request, "content-type"), "application/json");
    assert_eq!(header(request, "authorization"), "");
    assert_eq!(request.body["model"], "test-model");
    assert!(request.body["max_tokens"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(request.body["messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(request.body["messages"][0]["role"], "user");
}

#[tokio::test]
async fn openai_requests_carry_a_bearer_key_and_system_then_user_messages() {
    let s = stub(Provider::OpenAi, vec![Answer::ok(Provider::OpenAi, GOOD_REPLY)]).await;
    s.agent.evaluate_reply(&reply_request()).await.expect("evaluation");
    let seen = s.seen().await;
    let [request] = seen.as_slice() else {
        panic!("one request expected, got {seen:?}")
    };
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(header(request, "authorization"), format!("Bearer {KEY}"));
    assert_eq!(header(request, "x-api-key"), "");
    assert_eq!(request.body["model"], "test-model");
    let roles: Vec<&str> = request.body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["system", "user"]);
}

#[tokio::test]
async fn a_good_draft_is_read_and_the_owners_guidance_is_in_the_system_message() {
    for provider in PROVIDERS {
        let text = r#"{"subject": "", "body": "Hi Sarah,\n\nThe Saturday class starts at 9am.\n\nCoach Mike", "confidence": 88}"#;
        let s = stub(provider, vec![Answer::ok(provider, text)]).await;
        let drafted = s.agent.draft(&draft_request()).await.expect("draft");
        assert_eq!(drafted.confidence, 88, "{provider:?}");
        let draft = drafted.draft;
        assert_eq!(
            draft.body, "Hi Sarah,\n\nThe Saturday class starts at 9am.\n\nCoach Mike",
            "{provider:?}"
        );
        assert_eq!(draft.subject, "");
        let (system, user) = messages(provider, &s.seen().await[0]);
        assert!(
            system.contains("tell her the Saturday class starts at 9am"),
            "{provider:?}: {system}"
        );
        assert!(system.contains("Coach Mike"), "{provider:?}: {system}");
        assert!(
            system.starts_with("SYSTEM PROMPT: never mention billing."),
            "{provider:?}: the composed prompt comes first: {system}"
        );
        assert!(user.contains("Sarah"), "{provider:?}: {user}");
    }
}

#[tokio::test]
async fn a_good_reply_evaluation_is_read_with_the_requests_system_prompt() {
    for provider in PROVIDERS {
        let s = stub(provider, vec![Answer::ok(provider, GOOD_REPLY)]).await;
        let e = s.agent.evaluate_reply(&reply_request()).await.expect("evaluation");
        assert_eq!(
            (e.action, e.outcome.as_deref(), e.confidence, e.provisional),
            (ReplyAction::Close, Some("verbal_commitment"), 72, true),
            "{provider:?}"
        );
        let (system, user) = messages(provider, &s.seen().await[0]);
        assert_eq!(system, reply_request().system_prompt);
        assert!(user.contains("I'll be there Monday at 6!"), "{provider:?}: {user}");
        assert!(user.contains("\"verbal_commitment\""), "the offered codes are listed: {user}");
    }
}

#[tokio::test]
async fn a_good_goal_progress_is_read() {
    for provider in PROVIDERS {
        let s = stub(provider, vec![Answer::ok(provider, GOOD_PROGRESS)]).await;
        let p = s.agent.evaluate_completion(&completion_request()).await.expect("progress");
        assert_eq!(
            (p.progress_pct, p.current_outcome.as_str(), p.evidence_type, p.recommended_action),
            (33, "unresponsive", EvidenceType::PartialSignal, RecommendedAction::Continue),
            "{provider:?}"
        );
        assert_eq!(p.milestones.len(), 2);
        assert!(p.milestones[0].hit_at.is_some());
        let (system, user) = messages(provider, &s.seen().await[0]);
        assert_eq!(system, completion_request().system_prompt);
        assert!(user.contains("checkin"), "the evidence is shown: {user}");
    }
}

#[tokio::test]
async fn an_answer_in_fences_with_prose_around_it_is_read() {
    let text = format!("Here is my evaluation:\n```json\n{GOOD_REPLY}\n```\nHope this helps!");
    let s = stub(Provider::Anthropic, vec![Answer::ok(Provider::Anthropic, &text)]).await;
    let e = s.agent.evaluate_reply(&reply_request()).await.expect("evaluation");
    assert_eq!(e.action, ReplyAction::Close);
}

#[tokio::test]
async fn a_rate_limit_is_retried_after_the_time_the_server_asks() {
    for provider in PROVIDERS {
        let limited = Answer::status(429, r#"{"error": {"type": "rate_limit_error"}}"#).insert_header("retry-after", "1");
        let s = stub(provider, vec![limited, Answer::ok(provider, GOOD_REPLY)]).await;
        let started = std::time::Instant::now();
        let e = s.agent.evaluate_reply(&reply_request()).await.expect("evaluation after the retry");
        assert_eq!(e.action, ReplyAction::Close);
        assert_eq!(s.seen().await.len(), 2, "{provider:?}");
        assert!(started.elapsed() >= Duration::from_secs(1), "retry-after honoured");
    }
}

#[tokio::test]
async fn a_long_retry_after_ends_the_call_instead_of_waiting() {
    let limited = Answer::status(429, "{}").insert_header("retry-after", "120");
    let s = stub(Provider::Anthropic, vec![limited, Answer::ok(Provider::Anthropic, GOOD_REPLY)]).await;
    let error = s.agent.evaluate_reply(&reply_request()).await.expect_err("no minute-long sleep");
    assert_eq!(s.seen().await.len(), 1);
    assert!(error.to_string().contains("120"), "{error}");
}

#[tokio::test]
async fn three_server_errors_are_an_error_after_three_attempts() {
    for provider in PROVIDERS {
        let overloaded = Answer::status(500, r#"{"error": {"type": "api_error", "message": "overloaded"}}"#);
        let s = stub(
            provider,
            vec![overloaded.clone(), overloaded.clone(), overloaded, Answer::ok(provider, GOOD_REPLY)],
        )
        .await;
        let error = s.agent.draft(&draft_request()).await.expect_err("three failures");
        assert_eq!(s.seen().await.len(), 3, "{provider:?}: at most three attempts");
        assert!(error.to_string().contains("500"), "{error}");
        assert!(!error.to_string().contains(KEY));
    }
}

#[tokio::test]
async fn a_client_error_is_not_retried_and_an_echoed_key_is_redacted() {
    for provider in PROVIDERS {
        let body = format!(r#"{{"error": {{"message": "invalid x-api-key {KEY}"}}}}"#);
        let s = stub(provider, vec![Answer::status(401, &body), Answer::ok(provider, GOOD_REPLY)]).await;
        let error = s.agent.evaluate_reply(&reply_request()).await.expect_err("unauthorised");
        assert_eq!(s.seen().await.len(), 1, "{provider:?}: a 4xx other than 429 is final");
        let message = error.to_string();
        assert!(message.contains("401") && message.contains("[redacted]"), "{message}");
        assert!(!message.contains(KEY), "{message}");
    }
}

#[tokio::test]
async fn a_model_that_does_not_answer_in_time_is_an_error() {
    let slow = Answer::ok(Provider::OpenAi, GOOD_REPLY).set_delay(Duration::from_secs(3));
    let s = stub_with(Provider::OpenAi, vec![slow.clone(), slow.clone(), slow], |c| {
        c.timeout = Duration::from_millis(200);
    })
    .await;
    let started = std::time::Instant::now();
    let error = s.agent.evaluate_reply(&reply_request()).await.expect_err("timed out");
    assert!(error.to_string().contains("timed out"), "{error}");
    assert_eq!(s.seen().await.len(), 3, "timeouts are retried");
    assert!(started.elapsed() < Duration::from_secs(3), "each attempt stops at the timeout");
    assert!(!error.to_string().contains(KEY));
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_an_error() {
    // A port that was just free: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let mut config = ModelConfig::new(Provider::Anthropic, format!("http://{addr}"), SecretString::from(KEY), "m");
    config.backoff = Duration::from_millis(10);
    let error = ModelAgent::new(config)
        .expect("agent")
        .evaluate_reply(&reply_request())
        .await
        .expect_err("nobody listening");
    assert!(error.to_string().contains("3 attempts"), "{error}");
}

#[tokio::test]
async fn malformed_or_invalid_answers_are_errors_never_actions() {
    let invalid = [
        ("prose", "I think she will come back on Monday.".to_owned()),
        ("truncated", r#"{"action": "close", "outcome": "verbal_comm"#.to_owned()),
        ("not offered", GOOD_REPLY.replace("\"verbal_commitment\"", "\"gave_up\"")),
        ("unknown action", GOOD_REPLY.replace("\"close\"", "\"celebrate\"")),
        ("confidence out of range", GOOD_REPLY.replace("72", "172")),
        ("confidence as a fraction", GOOD_REPLY.replace("72", "0.72")),
        ("close without outcome", GOOD_REPLY.replace("\"verbal_commitment\"", "null")),
        ("reply without text", GOOD_REPLY.replace("\"close\"", "\"reply\"")),
        ("two answers", format!("{GOOD_REPLY}\nor\n{GOOD_REPLY}")),
    ];
    for provider in PROVIDERS {
        for (what, text) in &invalid {
            let s = stub(provider, vec![Answer::ok(provider, text)]).await;
            let result = s.agent.evaluate_reply(&reply_request()).await;
            assert!(result.is_err(), "{provider:?} {what}: {result:?}");
            assert_eq!(s.seen().await.len(), 1, "{what}: a bad answer is not retried");
        }
    }
    let s = stub(
        Provider::Anthropic,
        vec![Answer::ok(
            Provider::Anthropic,
            &GOOD_PROGRESS.replace("\"unresponsive\"", "\"retained\""),
        )],
    )
    .await;
    assert!(
        s.agent.evaluate_completion(&completion_request()).await.is_err(),
        "a goal outcome not offered"
    );
    let s = stub(
        Provider::OpenAi,
        vec![Answer::ok(Provider::OpenAi, r#"{"subject": "Hi", "body": "  "}"#)],
    )
    .await;
    assert!(s.agent.draft(&draft_request()).await.is_err(), "an empty draft");
    let s = stub(Provider::OpenAi, vec![Answer::status(200, "<html>gateway</html>")]).await;
    assert!(s.agent.draft(&draft_request()).await.is_err(), "a body that is not JSON");
}

//! The model agent on Amazon Bedrock (`OPENLOOP_LLM=bedrock`): Bedrock Runtime's Converse API
//! through the AWS SDK, with the client the composition root makes
//! (`openloop_edge::config::bedrock_client`), against a local server that speaks Converse's
//! wire format and checks every request's SigV4 signature (`openloop_tests::bedrock`). What is
//! sent (the model id in the path, the system block, one user message, the token cap, signed
//! with the role's credentials and no key), how a good answer is read, and that throttling,
//! server errors, a bad signature and malformed answers end in an error — the engine escalates —
//! never an action, as with the other providers (`shared/llm/tests/model_stub.rs`).

use std::time::Duration;

use openloop_core::conversation::reply::ReplyAction;
use openloop_core::owner::account::Profile;
use openloop_core::ports::{Agent, DraftRequest, ReplyRequest};
use openloop_core::task::{ConversationMessage, Role};
use openloop_llm::{ModelAgent, ModelConfig};
use openloop_tests::bedrock::{ACCESS_KEY, Answer, FakeBedrock, REGION, SECRET_KEY, SESSION_TOKEN};
use serde_json::json;

const MODEL: &str = "anthropic.claude-3-5-haiku-20241022-v1:0";

const GOOD_REPLY: &str = r#"{"action": "close", "outcome": "verbal_commitment", "confidence": 72,
  "reasoning": "She names a day and time.", "reply": null, "wait_days": null,
  "suggest_suppression": false, "provisional": true, "unanswered_question": null, "other_subject": null}"#;

/// The agent at `fake`, signing with `secret` (the fake knows [`SECRET_KEY`]), fast backoff.
fn agent_signing_with(fake: &FakeBedrock, secret: &str) -> ModelAgent {
    let credentials = aws_sdk_dynamodb::config::Credentials::new(ACCESS_KEY, secret, Some(SESSION_TOKEN.into()), None, "test");
    let shared = aws_config::SdkConfig::builder()
        .behavior_version(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new(REGION))
        .credentials_provider(aws_sdk_dynamodb::config::SharedCredentialsProvider::new(credentials))
        .http_client(openloop_aws::sdk_http::client())
        .build();
    let mut config = ModelConfig::bedrock(openloop_edge::config::bedrock_client(&shared, &fake.url), MODEL);
    config.timeout = Duration::from_secs(10);
    config.backoff = Duration::from_millis(10);
    ModelAgent::new(config).expect("agent")
}

fn agent(fake: &FakeBedrock) -> ModelAgent {
    agent_signing_with(fake, SECRET_KEY)
}

fn profile() -> Profile {
    Profile {
        display_name: Some("CrossFit Renegade".into()),
        owner_first_name: Some("Mike".into()),
        sign_off: Some("Coach Mike".into()),
        ..Profile::default()
    }
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
        conversation: vec![ConversationMessage {
            id: ulid::Ulid::new(),
            at: "2026-11-20T10:00:00Z".parse().expect("time"),
            role: Role::Agent,
            content: "Hi Sarah, we haven't seen you lately. Everything alright?".into(),
            original: None,
        }],
        reply: "I'll be there Monday at 6!".into(),
        messages_left: 2,
        turns_left: 3,
        days_left: 10,
        message: Default::default(),
        facts: Vec::new(),
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

#[tokio::test]
async fn a_converse_request_is_signed_by_the_role_and_carries_the_model_system_block_and_one_user_message() {
    let fake = FakeBedrock::start(vec![Answer::text(GOOD_REPLY)]).await;
    let evaluation = agent(&fake).evaluate_reply(&reply_request()).await.expect("evaluation");
    assert_eq!(evaluation.action, ReplyAction::Close);
    assert!(fake.refused().is_empty(), "{:?}", fake.refused());
    let seen = fake.seen();
    let [request] = seen.as_slice() else {
        panic!("one request expected, got {seen:?}")
    };
    assert_eq!(request.model_id, MODEL, "the model id, in the path");
    let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(header("authorization").starts_with("AWS4-HMAC-SHA256 Credential=AKIDBEDROCKTEST/"));
    assert_eq!(header("x-api-key"), "", "no key: the role signs");
    assert_eq!(
        request.body["system"][0]["text"],
        "SYSTEM PROMPT: you are the retention skill of CrossFit Renegade."
    );
    let messages = request.body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    assert!(
        messages[0]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("I'll be there Monday at 6!")),
        "{messages:?}"
    );
    assert!(request.body["inferenceConfig"]["maxTokens"].as_u64().is_some_and(|t| t > 0));
}

#[tokio::test]
async fn a_good_draft_is_read_from_the_text_blocks() {
    let text = r#"{"subject": "", "body": "Hi Sarah,\n\nThe Saturday class starts at 9am.\n\nCoach Mike", "confidence": 88}"#;
    let fake = FakeBedrock::start(vec![Answer::text(text)]).await;
    let drafted = agent(&fake).draft(&draft_request()).await.expect("draft");
    assert_eq!(drafted.confidence, 88);
    assert_eq!(drafted.draft.body, "Hi Sarah,\n\nThe Saturday class starts at 9am.\n\nCoach Mike");
    let seen = fake.seen();
    assert!(
        seen[0].body["system"][0]["text"]
            .as_str()
            .is_some_and(|s| s.contains("tell her the Saturday class starts at 9am")),
        "the owner's guidance is in the system block"
    );
}

#[tokio::test]
async fn a_request_signed_with_another_secret_is_refused_and_never_retried() {
    let fake = FakeBedrock::start(vec![Answer::text(GOOD_REPLY)]).await;
    let error = agent_signing_with(&fake, "not-the-roles-secret")
        .evaluate_reply(&reply_request())
        .await
        .expect_err("a bad signature");
    assert!(error.to_string().contains("403"), "{error}");
    assert_eq!(fake.refused().len(), 1, "a 403 is final: {:?}", fake.refused());
    assert!(fake.refused()[0].contains("signature does not match"), "{:?}", fake.refused());
    assert!(fake.seen().is_empty());
}

#[tokio::test]
async fn throttling_is_retried_and_server_errors_end_after_three_attempts() {
    let throttled = Answer::error(429, "ThrottlingException", "Too many requests").with_retry_after("1");
    let fake = FakeBedrock::start(vec![throttled, Answer::text(GOOD_REPLY)]).await;
    let started = std::time::Instant::now();
    let evaluation = agent(&fake).evaluate_reply(&reply_request()).await.expect("after the retry");
    assert_eq!(evaluation.action, ReplyAction::Close);
    assert_eq!(fake.seen().len(), 2);
    assert!(started.elapsed() >= Duration::from_secs(1), "retry-after honoured");

    let down = Answer::error(503, "ServiceUnavailableException", "busy");
    let fake = FakeBedrock::start(vec![down.clone(), down.clone(), down, Answer::text(GOOD_REPLY)]).await;
    let error = agent(&fake).draft(&draft_request()).await.expect_err("three failures");
    assert_eq!(fake.seen().len(), 3, "at most three attempts");
    assert!(error.to_string().contains("503"), "{error}");

    let fake = FakeBedrock::start(vec![
        Answer::error(400, "ValidationException", "The model id is invalid"),
        Answer::text(GOOD_REPLY),
    ])
    .await;
    let error = agent(&fake).evaluate_reply(&reply_request()).await.expect_err("a 4xx");
    assert_eq!(fake.seen().len(), 1, "a 4xx other than 429 is final");
    assert!(error.to_string().contains("ValidationException"), "{error}");
}

#[tokio::test]
async fn malformed_or_invalid_answers_are_errors_never_actions() {
    let invalid = [
        ("prose", Answer::text("I think she will come back on Monday.")),
        ("truncated", Answer::text(r#"{"action": "close", "outcome": "verbal_comm"#)),
        (
            "not offered",
            Answer::text(&GOOD_REPLY.replace("\"verbal_commitment\"", "\"gave_up\"")),
        ),
        ("unknown action", Answer::text(&GOOD_REPLY.replace("\"close\"", "\"celebrate\""))),
        ("confidence out of range", Answer::text(&GOOD_REPLY.replace("72", "172"))),
        ("confidence as a fraction", Answer::text(&GOOD_REPLY.replace("72", "0.72"))),
        (
            "close without outcome",
            Answer::text(&GOOD_REPLY.replace("\"verbal_commitment\"", "null")),
        ),
        ("reply without text", Answer::text(&GOOD_REPLY.replace("\"close\"", "\"reply\""))),
        ("two answers", Answer::text(&format!("{GOOD_REPLY}\nor\n{GOOD_REPLY}"))),
        ("cut off at max_tokens", Answer::stopped(GOOD_REPLY, "max_tokens")),
        ("a guardrail intervened", Answer::stopped(GOOD_REPLY, "guardrail_intervened")),
        ("content filtered", Answer::stopped(GOOD_REPLY, "content_filtered")),
        (
            "no text block",
            Answer::body(json!({
                "output": {"message": {"role": "assistant", "content": []}},
                "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 0, "totalTokens": 1},
            })),
        ),
        (
            "no output",
            Answer::body(json!({"stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 0, "totalTokens": 1}})),
        ),
        (
            "no stop reason",
            Answer::body(json!({"output": {"message": {"role": "assistant", "content": [{"text": GOOD_REPLY}]}}})),
        ),
        ("a body that is not JSON", Answer::raw("<html>gateway</html>")),
    ];
    for (what, answer) in invalid {
        let fake = FakeBedrock::start(vec![answer, Answer::text(GOOD_REPLY)]).await;
        let result = agent(&fake).evaluate_reply(&reply_request()).await;
        assert!(result.is_err(), "{what}: {result:?}");
        assert_eq!(fake.seen().len(), 1, "{what}: a bad answer is not retried");
    }
    let fake = FakeBedrock::start(vec![Answer::text(r#"{"subject": "Hi", "body": "  "}"#)]).await;
    assert!(agent(&fake).draft(&draft_request()).await.is_err(), "an empty draft");
}

/// Black-box: the stack with its agent on Bedrock (through the fake Converse server) drafts a
/// failed payment's first touch, and the mail the owner approves is the model's, every request
/// signed.
#[tokio::test]
async fn a_gyms_first_touch_is_drafted_by_bedrock_and_mailed_as_approved() {
    let body = "Hi Sarah, the last payment did not go through. Could you take a look this week? Coach Mike";
    let draft = json!({"subject": "About your membership", "body": body, "confidence": 95}).to_string();
    let fake = FakeBedrock::start((0..5).map(|_| Answer::text(&draft)).collect()).await;
    let stack = openloop_tests::Stack::start_with_agent("bedrock", std::sync::Arc::new(agent(&fake))).await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.sarahs_payment_failed(&gym, &day0.to_string()).await;
    stack.run().await;
    let (_, list) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let id = list["tasks"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {list}"))
        .to_owned();
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert!(
        task.to_string().contains("the last payment did not go through"),
        "Bedrock's draft: {task}"
    );
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert!(format!("{mail:?}").contains("the last payment did not go through"), "{mail:?}");
    assert!(!fake.seen().is_empty() && fake.refused().is_empty(), "signed: {:?}", fake.refused());
    assert!(fake.seen().iter().all(|s| s.model_id == MODEL));
}

//! Text messages through CONTRACT.md ("Text messages") on the local runtime: the engine's AWS
//! adapter talks to the runtime's fake End User Messaging SMS (`/_local/outbox?channel=sms`),
//! members text back through `/_local/inbound-sms`. Consent decides who is texted; STOP and
//! plain refusals stop at once; HELP is answered; quiet hours hold a text to the morning; a
//! text reply is read like a mail reply; the owner's critical alert reaches their phone.

use jiff::SignedDuration;
use openloop_tests::{Account, Stack, reasons};
use serde_json::{Value, json};

use crate::morning;

/// The gym's number texts leave from.
const OURS: &str = "+18885550100";

async fn task(stack: &Stack, gym: &Account, id: &str) -> Value {
    let (status, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(status, 200, "{task}");
    task
}

async fn settings(stack: &Stack, gym: &Account, patch: Value) -> Value {
    let (status, body) = stack
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&gym.token), Some(patch))
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// A gym with texts turned on.
async fn texting_gym(stack: &Stack) -> Account {
    let gym = stack.create_account("manual").await;
    let body = settings(
        stack,
        &gym,
        json!({"sms": {"enabled": true, "origination_identity": OURS, "daily_limit": 20}}),
    )
    .await;
    assert_eq!(
        (body["sms"]["enabled"].as_bool(), body["sms"]["origination_identity"].as_str()),
        (Some(true), Some(OURS)),
        "{body}"
    );
    gym
}

/// A member with a phone (and an address unless `email` is false); returns the address.
async fn member(stack: &Stack, gym: &Account, id: &str, phone: &str, email: bool) -> Option<String> {
    let at = stack.now().await.to_string();
    let address = email.then(|| format!("{id}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-"));
    let mut data = json!({"member_id": id, "first_name": "Sam", "status": "active", "joined_at": "2025-06-01T00:00:00Z",
        "monthly_value": 150, "phone": phone});
    if let Some(address) = &address {
        data["email"] = json!(address);
    }
    let (status, body) = stack
        .webhook(
            gym,
            &format!("evt_{id}"),
            json!({"type": "member.created", "timestamp": at, "data": data}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    address
}

async fn consent(stack: &Stack, gym: &Account, id: &str, sms: bool) -> Value {
    let (status, body) = stack
        .post(
            &format!("/api/v1/members/{id}/consent"),
            &gym.token,
            json!({"sms": sms, "source": "owner"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn texts_to(stack: &Stack, phone: &str) -> Vec<Value> {
    let path = format!("/_local/outbox?channel=sms&to={}", phone.replace('+', "%2B"));
    let (status, body) = stack.call(reqwest::Method::GET, &path, None, None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

async fn text_in(stack: &Stack, from: &str, body: &str) -> Value {
    let (status, outcome) = stack
        .call(
            reqwest::Method::POST,
            "/_local/inbound-sms",
            None,
            Some(json!({"from": from, "to": OURS, "body": body})),
        )
        .await;
    assert_eq!(status, 202, "{outcome}");
    outcome
}

/// Given texts turned on, a member with consent gets the text touch (naming the gym, saying
/// how to stop, within two segments), one without consent gets mail only, and one with a
/// phone and consent but no address is reached by text alone. The scorecard counts them.
#[tokio::test]
async fn a_member_with_consent_gets_a_text_and_one_without_gets_mail_only() {
    let stack = Stack::start("sms-consent").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    let yes = member(&stack, &gym, "m_yes", "+15555550101", true).await.unwrap_or_default();
    let no = member(&stack, &gym, "m_no", "+15555550102", true).await.unwrap_or_default();
    member(&stack, &gym, "m_phone", "+15555550103", false).await;
    let recorded = consent(&stack, &gym, "m_yes", true).await;
    assert_eq!(
        (
            recorded["sms"].as_bool(),
            recorded["source"].as_str(),
            recorded["has_phone"].as_bool()
        ),
        (Some(true), Some("owner"), Some(true)),
        "{recorded}"
    );
    assert!(recorded["at"].as_str().is_some(), "{recorded}");
    consent(&stack, &gym, "m_phone", true).await;
    for id in ["m_yes", "m_no", "m_phone"] {
        stack.approved_task(&gym, "ad_hoc", id).await;
    }
    stack.run().await;

    let texted = texts_to(&stack, "+15555550101").await;
    assert_eq!(texted.len(), 1, "{texted:?}");
    let body = texted[0]["body"].as_str().unwrap_or_default();
    assert!(body.starts_with("CrossFit Renegade: "), "{body}");
    assert!(body.ends_with("Reply STOP to opt out."), "{body}");
    let segments = texted[0]["segments"].as_u64().unwrap_or(99);
    assert!((1..=2).contains(&segments), "{texted:?}");
    assert!(texted[0]["sent_at"].as_str().is_some());
    assert!(stack.outbox_to(&yes).await.is_empty(), "the text was the touch");

    assert!(texts_to(&stack, "+15555550102").await.is_empty(), "no consent, no text");
    assert_eq!(stack.outbox_to(&no).await.len(), 1, "mail only");

    assert_eq!(texts_to(&stack, "+15555550103").await.len(), 1, "no address: text alone");

    let (status, card) = stack.get("/api/v1/scorecard", &gym.token).await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(
        (card["texts_sent"].as_u64(), card["messages_sent"].as_u64()),
        (Some(2), Some(3)),
        "{card}"
    );
    assert!(card["text_segments"].as_u64().is_some_and(|s| s >= 2), "{card}");

    // Consent's refusals keep CONTRACT.md's error shape.
    let (status, body) = stack
        .post(
            "/api/v1/members/m_yes/consent",
            &gym.token,
            json!({"sms": true, "source": "rumour"}),
        )
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_consent")), "{body}");
    let (status, body) = stack
        .post(
            "/api/v1/members/m_nobody/consent",
            &gym.token,
            json!({"sms": true, "source": "owner"}),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    assert!(body["error"]["code"].is_string(), "{body}");
    stack.running.stop();
}

/// One weekly cap over both channels: with `member_weekly_limit` 1, a member texted this
/// week gets no mail from another task; the text counts in its task's message budget.
#[tokio::test]
async fn one_weekly_cap_covers_texts_and_mail_and_the_budget_counts_texts() {
    let stack = Stack::start("sms-cap").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    settings(&stack, &gym, json!({"member_weekly_limit": 1})).await;
    let email = member(&stack, &gym, "m_cap", "+15555550151", true).await.unwrap_or_default();
    consent(&stack, &gym, "m_cap", true).await;
    let texted = stack.approved_task(&gym, "ad_hoc", "m_cap").await;
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550151").await.len(), 1);
    let t = task(&stack, &gym, &texted).await;
    assert_eq!(t["budget"]["messages_used"], 1, "{t}");
    // churn_risk's first touch is mail (rules/texts.toml): held by the week's one message.
    let mailed = stack.approved_task(&gym, "churn_risk", "m_cap").await;
    stack.set_clock(&(day0 + SignedDuration::from_hours(24)).to_string()).await;
    stack.run().await;
    assert!(stack.outbox_to(&email).await.is_empty(), "the text used the week's one message");
    assert!(reasons(&task(&stack, &gym, &mailed).await).contains(&"member_weekly_limit"));
    stack.running.stop();
}

/// Given two texted members, a text "stop" and a text "please don't text me again" each stop
/// their member at once: the task cancelled as opted out, no more texts, no new task.
#[tokio::test]
async fn a_text_stop_and_a_plain_refusal_each_suppress_the_member_at_once() {
    let stack = Stack::start("sms-stop").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    let mut tasks = Vec::new();
    for (id, phone) in [("m_stop", "+15555550111"), ("m_words", "+15555550112")] {
        member(&stack, &gym, id, phone, true).await;
        consent(&stack, &gym, id, true).await;
        tasks.push(stack.approved_task(&gym, "ad_hoc", id).await);
    }
    stack.run().await;
    for (phone, words, id) in [
        ("+15555550111", "stop", &tasks[0]),
        ("+15555550112", "please don't text me again", &tasks[1]),
    ] {
        assert_eq!(texts_to(&stack, phone).await.len(), 1);
        let outcome = text_in(&stack, phone, words).await;
        assert_eq!(outcome["status"], "stopped", "{words}: {outcome}");
        let t = task(&stack, &gym, id).await;
        assert_eq!(
            (t["status"].as_str(), t["outcome"].as_str()),
            (Some("cancelled"), Some("opted_out")),
            "{words}: {t}"
        );
    }
    // Nothing more: a new task is refused, and days later no text has gone.
    let (status, body) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "ad_hoc", "member_id": "m_stop", "goal": "Check in"}),
        )
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("member_suppressed")), "{body}");
    stack.set_clock(&(day0 + SignedDuration::from_hours(24 * 8)).to_string()).await;
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550111").await.len(), 1);
    assert_eq!(texts_to(&stack, "+15555550112").await.len(), 1);
    // The owner reads the stops in words on every page: no keyword codes, no text addresses.
    let codes = crate::pages_in_words::codes_on_pages(&stack, &gym, &[]).await;
    assert!(codes.iter().all(|c| c.starts_with("no link")), "{codes:#?}");
    stack.running.stop();
}

/// HELP gets the gym's name and how to stop; START after a STOP turns texts back on.
#[tokio::test]
async fn help_gets_its_answer_and_start_resubscribes() {
    let stack = Stack::start("sms-help").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    member(&stack, &gym, "m_help", "+15555550121", true).await;
    consent(&stack, &gym, "m_help", true).await;
    let id = stack.approved_task(&gym, "ad_hoc", "m_help").await;
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550121").await.len(), 1);

    let outcome = text_in(&stack, "+15555550121", "HELP").await;
    assert_eq!(outcome["status"], "helped", "{outcome}");
    let texts = texts_to(&stack, "+15555550121").await;
    assert_eq!(texts.len(), 2, "{texts:?}");
    let help = texts[1]["body"].as_str().unwrap_or_default();
    assert!(
        help.contains("CrossFit Renegade") && help.contains("Reply STOP to opt out"),
        "{help}"
    );
    assert_eq!(task(&stack, &gym, &id).await["status"], "waiting", "HELP is not a reply");

    assert_eq!(text_in(&stack, "+15555550121", "STOP").await["status"], "stopped");
    let outcome = text_in(&stack, "+15555550121", "START").await;
    assert_eq!(outcome["status"], "started", "{outcome}");
    let texts = texts_to(&stack, "+15555550121").await;
    assert!(
        texts.last().and_then(|t| t["body"].as_str()).is_some_and(|b| b.contains("again")),
        "{texts:?}"
    );
    stack.running.stop();
}

/// A member's question by text is read like one by mail (to the owner, with the question, the
/// member told by text at once that the owner will answer); the owner's answer goes back by
/// text — and, given at 21:30 local, waits for 8:00.
#[tokio::test]
async fn a_text_reply_is_read_like_mail_and_a_text_due_at_half_past_nine_waits_for_morning() {
    let stack = Stack::start("sms-reply").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    // The mail window open all day: only the texts' quiet hours hold the answer.
    settings(&stack, &gym, json!({"send_window_start": 0, "send_window_end": 24})).await;
    let email = member(&stack, &gym, "m_q", "+15555550131", true).await.unwrap_or_default();
    consent(&stack, &gym, "m_q", true).await;
    let id = stack.approved_task(&gym, "ad_hoc", "m_q").await;
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550131").await.len(), 1);

    let outcome = text_in(&stack, "+15555550131", "Do you still run the Saturday 9am class?").await;
    assert_eq!(outcome["status"], "stored", "{outcome}");
    let escalated = task(&stack, &gym, &id).await;
    assert_eq!(
        (escalated["status"].as_str(), escalated["outcome_reason"].as_str()),
        (Some("escalated"), Some("member_question_needs_owner")),
        "{escalated}"
    );
    assert!(
        escalated["messages"].as_array().is_some_and(|m| m
            .iter()
            .any(|m| m["role"] == "member" && m["content"] == "Do you still run the Saturday 9am class?")),
        "{escalated}"
    );
    stack.run().await;
    let held = texts_to(&stack, "+15555550131").await;
    assert_eq!(held.len(), 2, "the holding reply, at once: {held:?}");
    assert!(held[1]["body"].as_str().is_some_and(|b| b.contains("get back to you")), "{held:?}");

    // The next day at 21:30 in New York the owner answers.
    let late = day0 + SignedDuration::from_hours(24) + SignedDuration::from_mins(12 * 60 + 30);
    stack.set_clock(&late.to_string()).await;
    let (status, resumed) = stack
        .post(
            &format!("/api/v1/tasks/{id}/guidance"),
            &gym.token,
            json!({"text": "Tell her yes, Saturdays at 9 with Coach Dana"}),
        )
        .await;
    assert_eq!(status, 200, "{resumed}");
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550131").await.len(), 2, "nothing at 21:30");
    let waiting = task(&stack, &gym, &id).await;
    assert!(reasons(&waiting).contains(&"text_quiet_hours"), "{waiting}");
    let due = stack.due_at(&gym, &id).await;
    let local = due.to_zoned(openloop_tests::new_york());
    assert_eq!((local.hour(), local.minute()), (8, 0), "the next morning: {due}");
    assert!(due > late);

    stack.run_when_due(&gym, &id).await;
    let texts = texts_to(&stack, "+15555550131").await;
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(
        texts[2]["body"]
            .as_str()
            .is_some_and(|b| b.contains("Saturdays at 9 with Coach Dana")),
        "{texts:?}"
    );
    assert!(stack.outbox_to(&email).await.is_empty(), "the conversation stays on texts");
    let codes = crate::pages_in_words::codes_on_pages(&stack, &gym, &[]).await;
    assert!(
        codes.iter().all(|c| c.starts_with("no link")),
        "a texted conversation in words: {codes:#?}"
    );
    stack.running.stop();
}

/// A gym in New York, a member the owner says lives in Los Angeles: at 09:00 in New York
/// (06:00 there) the member's text waits for 8:00 in Los Angeles, while a New York member's
/// goes at once. The consent record and the member show the zone, the state and the hours; a
/// Florida member's hours end at 20:00; a zone that is not one is refused and changes nothing.
#[tokio::test]
async fn a_member_in_los_angeles_is_texted_on_los_angeles_time() {
    let stack = Stack::start("sms-zone").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    member(&stack, &gym, "m_la", "+15555550171", true).await;
    member(&stack, &gym, "m_ny", "+15555550172", true).await;
    let (status, recorded) = stack
        .post(
            "/api/v1/members/m_la/consent",
            &gym.token,
            json!({"sms": true, "source": "owner", "time_zone": "America/Los_Angeles"}),
        )
        .await;
    assert_eq!(status, 200, "{recorded}");
    assert_eq!(
        (
            recorded["time_zone"].as_str(),
            recorded["time_zone_source"].as_str(),
            recorded["text_hours"].as_str()
        ),
        (Some("America/Los_Angeles"), Some("member"), Some("8:00–21:00")),
        "{recorded}"
    );
    let ny = consent(&stack, &gym, "m_ny", true).await;
    assert_eq!(
        (ny["time_zone"].as_str(), ny["time_zone_source"].as_str()),
        (Some("America/New_York"), Some("gym")),
        "{ny}"
    );
    let la = stack.approved_task(&gym, "ad_hoc", "m_la").await;
    stack.approved_task(&gym, "ad_hoc", "m_ny").await;
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550172").await.len(), 1, "09:00 in New York");
    assert!(texts_to(&stack, "+15555550171").await.is_empty(), "06:00 in Los Angeles");
    let waiting = task(&stack, &gym, &la).await;
    assert!(reasons(&waiting).contains(&"text_quiet_hours"), "{waiting}");
    let due = stack.due_at(&gym, &la).await;
    let local = due.to_zoned(jiff::tz::TimeZone::get("America/Los_Angeles").unwrap_or_else(|e| panic!("{e}")));
    assert_eq!((local.hour(), local.minute()), (8, 0), "8:00 in Los Angeles: {due}");
    stack.run_when_due(&gym, &la).await;
    assert_eq!(texts_to(&stack, "+15555550171").await.len(), 1, "8:00 in Los Angeles");

    // The member's page shows the same; a Florida member's hours end at 20:00, three texts
    // about one subject a day at most.
    let (status, detail) = stack.get("/api/v1/members/m_la", &gym.token).await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(
        (detail["texts"]["time_zone"].as_str(), detail["texts"]["consent"]["sms"].as_bool()),
        (Some("America/Los_Angeles"), Some(true)),
        "{detail}"
    );
    let (status, florida) = stack
        .post(
            "/api/v1/members/m_ny/consent",
            &gym.token,
            json!({"sms": true, "source": "owner", "state": "Florida"}),
        )
        .await;
    assert_eq!(status, 200, "{florida}");
    assert_eq!(
        (
            florida["state"].as_str(),
            florida["time_zone_source"].as_str(),
            florida["text_hours"].as_str(),
            florida["texts_per_24h"].as_u64()
        ),
        (Some("FL"), Some("state"), Some("8:00–20:00"), Some(3)),
        "{florida}"
    );
    let (status, refused) = stack
        .post(
            "/api/v1/members/m_la/consent",
            &gym.token,
            json!({"sms": false, "source": "owner", "time_zone": "America/Atlantis"}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("invalid_timezone")),
        "{refused}"
    );
    let (_, detail) = stack.get("/api/v1/members/m_la", &gym.token).await;
    assert_eq!(
        (detail["texts"]["time_zone"].as_str(), detail["texts"]["consent"]["sms"].as_bool()),
        (Some("America/Los_Angeles"), Some(true)),
        "nothing changed: {detail}"
    );
    stack.running.stop();
}

/// With `email_and_sms` and an `owner_phone`, a member's question no fact of the gym answers
/// goes to the owner at once by mail and by text as well, outside quiet hours, once the
/// member has been told by text that the owner will answer.
#[tokio::test]
async fn a_members_question_for_the_owner_reaches_their_phone() {
    let stack = Stack::start("sms-owner-question").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    let owner = stack.give_owner_address(&gym).await;
    settings(
        &stack,
        &gym,
        json!({"owner_notification_channel": "email_and_sms", "owner_phone": "+15555550198"}),
    )
    .await;
    member(&stack, &gym, "m_ask", "+15555550142", true).await;
    consent(&stack, &gym, "m_ask", true).await;
    let id = stack.approved_task(&gym, "ad_hoc", "m_ask").await;
    stack.run().await;

    // The next morning (a member gets one message a day).
    stack.set_clock(&morning(2).to_string()).await;
    text_in(&stack, "+15555550142", "Is there a sauna?").await;
    stack.run().await;
    let t = task(&stack, &gym, &id).await;
    assert_eq!(
        (t["status"].as_str(), t["outcome_reason"].as_str()),
        (Some("escalated"), Some("member_question_needs_owner")),
        "{t}"
    );
    let alerts = texts_to(&stack, "+15555550198").await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(!stack.outbox_to(&owner).await.is_empty(), "mailed too");
    let told = texts_to(&stack, "+15555550142").await;
    assert_eq!(told.len(), 2, "the first text and the holding reply: {told:?}");
}

/// With `email_and_sms` and an `owner_phone`, a critical escalation (a member's legal threat
/// by text) reaches the owner's phone as well as their inbox.
#[tokio::test]
async fn the_owners_critical_alert_reaches_their_phone() {
    let stack = Stack::start("sms-owner").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    let owner = stack.give_owner_address(&gym).await;
    let body = settings(
        &stack,
        &gym,
        json!({"owner_notification_channel": "email_and_sms", "owner_phone": "+15555550199"}),
    )
    .await;
    assert_eq!(body["owner_phone"], "+15555550199", "{body}");
    member(&stack, &gym, "m_legal", "+15555550141", true).await;
    consent(&stack, &gym, "m_legal", true).await;
    let id = stack.approved_task(&gym, "ad_hoc", "m_legal").await;
    stack.run().await;
    assert!(texts_to(&stack, "+15555550199").await.is_empty(), "nothing critical yet");

    text_in(&stack, "+15555550141", "You will hear from my lawyer about this.").await;
    let t = task(&stack, &gym, &id).await;
    assert_eq!(t["outcome_reason"], "legal_threat", "{t}");
    let alerts = texts_to(&stack, "+15555550199").await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(
        alerts[0]["body"].as_str().is_some_and(|b| b.contains("CrossFit Renegade")),
        "{alerts:?}"
    );
    assert!(!stack.outbox_to(&owner).await.is_empty(), "mailed too");
    // A bad phone is refused in CONTRACT.md's shape.
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"owner_phone": "555-0199"})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_owner_phone")),
        "{body}"
    );
    stack.running.stop();
}

/// `POST /webhooks/inbound-sms` as AWS delivers it: a member's text in a signed SNS
/// notification of the inbound-text topic. A forged or tampered one is `401` and changes
/// nothing; the genuine one is read (here a STOP); its redelivery is a duplicate.
#[tokio::test]
async fn a_signed_sns_notification_of_a_text_is_read_and_a_forged_one_refused() {
    let stack = Stack::start("sms-sns").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = texting_gym(&stack).await;
    member(&stack, &gym, "m_sns", "+15555550161", true).await;
    consent(&stack, &gym, "m_sns", true).await;
    let id = stack.approved_task(&gym, "ad_hoc", "m_sns").await;
    stack.run().await;
    assert_eq!(texts_to(&stack, "+15555550161").await.len(), 1);

    // The webhooks function's router over the same engine, trusting the test's signer.
    let signer = openloop_tests::sns::SnsSigner::start().await;
    let state = std::sync::Arc::new(openloop_fn_webhooks::WebhooksState {
        engine: stack.running.engine.clone(),
        inbound_token: secrecy::SecretString::from(stack.inbound_token.clone()),
        accept_wall_clock: true,
        sms_notifications: signer.verifier(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let url = format!(
        "http://{}/webhooks/inbound-sms",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, openloop_fn_webhooks::router(state)).await;
    });
    let post = |body: Value| {
        let url = url.clone();
        async move {
            let response = openloop_aws::tls::client()
                .post(&url)
                .header("content-type", "text/plain; charset=UTF-8")
                .body(body.to_string())
                .send()
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let text = json!({"originationNumber": "+15555550161", "destinationNumber": OURS, "messageKeyword": "KEYWORD_123",
        "messageBody": "STOP", "inboundMessageId": "0b8e2a1c-2f5d-4b7e-9c1a-5d2f8e7b6a11", "previousPublishedMessageId": "x"})
    .to_string();

    let mut forged = signer.notification(&text, 2);
    forged["Message"] = json!(text.replace("STOP", "START"));
    let (status, body) = post(forged).await;
    assert_eq!((status, body["error"]["code"].is_string()), (401, true), "{body}");
    assert_eq!(task(&stack, &gym, &id).await["status"], "waiting", "a forged text changes nothing");

    let genuine = signer.notification(&text, 2);
    let (status, body) = post(genuine.clone()).await;
    assert_eq!((status, body["status"].as_str()), (202, Some("stopped")), "{body}");
    let t = task(&stack, &gym, &id).await;
    assert_eq!(
        (t["status"].as_str(), t["outcome"].as_str()),
        (Some("cancelled"), Some("opted_out")),
        "{t}"
    );
    let (status, body) = post(genuine).await;
    assert_eq!((status, body["status"].as_str()), (202, Some("duplicate")), "{body}");
    server.abort();
    stack.running.stop();
}

/// Issue 47: a text number belongs to one account. Given gym A texting from its number, when
/// gym B names the same number (in another spelling's case too) it is refused with 409
/// `sms_number_taken` in CONTRACT.md's shape and B's settings are unchanged; and when both
/// gyms text the same phone (B from its own number), the member's STOP to A's number stops
/// A's task and A's texts only — B's task is untouched.
#[tokio::test]
async fn a_text_number_belongs_to_one_account_and_a_stop_lands_only_on_its_owners_task() {
    let stack = Stack::start("sms-walls").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let a = texting_gym(&stack).await;
    let b = stack.create_account("manual").await;
    for taken in [OURS] {
        let (status, body) = stack
            .call(
                reqwest::Method::PUT,
                "/api/v1/settings",
                Some(&b.token),
                Some(json!({"sms": {"enabled": true, "origination_identity": taken}})),
            )
            .await;
        assert_eq!((status, body["error"]["code"].as_str()), (409, Some("sms_number_taken")), "{body}");
        assert!(body["error"]["message"].is_string(), "{body}");
    }
    let (_, unchanged) = stack.get("/api/v1/settings", &b.token).await;
    assert_eq!(
        (
            unchanged["sms"]["enabled"].as_bool(),
            unchanged["sms"]["origination_identity"].as_str()
        ),
        (Some(false), None),
        "nothing changed: {unchanged}"
    );
    settings(
        &stack,
        &b,
        json!({"sms": {"enabled": true, "origination_identity": "+18885550200", "daily_limit": 20}}),
    )
    .await;

    let phone = "+15555550171";
    member(&stack, &a, "m_both", phone, true).await;
    member(&stack, &b, "m_both", phone, true).await;
    consent(&stack, &a, "m_both", true).await;
    consent(&stack, &b, "m_both", true).await;
    let a_task = stack.approved_task(&a, "ad_hoc", "m_both").await;
    stack.run().await;
    let b_task = stack.approved_task(&b, "ad_hoc", "m_both").await;
    stack.run().await;
    assert_eq!(texts_to(&stack, phone).await.len(), 2, "one text from each gym");

    let outcome = text_in(&stack, phone, "STOP").await;
    assert_eq!(outcome["status"], "stopped", "{outcome}");
    let t = task(&stack, &a, &a_task).await;
    assert_eq!(
        (t["status"].as_str(), t["outcome"].as_str()),
        (Some("cancelled"), Some("opted_out")),
        "{t}"
    );
    assert_eq!(task(&stack, &b, &b_task).await["status"], "waiting", "B's task is B's");
    let new_task = json!({"task_type": "churn_risk", "member_id": "m_both", "goal": "Check in"});
    let (status, body) = stack.post("/api/v1/tasks", &a.token, new_task.clone()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("member_suppressed")),
        "A's member stopped: {body}"
    );
    let (status, body) = stack.post("/api/v1/tasks", &b.token, new_task).await;
    assert_eq!(status, 201, "B's member did not: {body}");
    stack.running.stop();
}

/// The SAM template declares the inbound-text topic, its subscription to the webhook, the
/// environment that names it, and grants texts (to the functions that send them).
#[test]
fn the_template_declares_the_text_topic_and_the_permission_to_send_texts() {
    let template = include_str!("../../infra/template.yaml");
    for needed in [
        "InboundSmsTopic:\n    Type: AWS::SNS::Topic",
        "Principal: {Service: sms-voice.amazonaws.com}",
        "Endpoint: !Sub \"${PublicUrl}/webhooks/inbound-sms\"",
        "OPENLOOP_INBOUND_SMS_TOPIC_ARN: !Ref InboundSmsTopic",
        "Path: /webhooks/inbound-sms",
    ] {
        assert!(template.contains(needed), "{needed}");
    }
    // Which functions may text is what each was seen to ask for: `tests/emulator/roles.rs`.
    assert!(template.contains("Action: sms-voice:SendTextMessage"), "texts are granted");
}

/// A check-in of `id` at the clock's time, as the gym's system sends it.
async fn checks_in(stack: &Stack, gym: &Account, id: &str, n: usize) {
    let at = stack.now().await.to_string();
    let event = json!({"type": "checkin.created", "timestamp": at, "data": {"member_id": id, "checked_in_at": at}});
    let (status, body) = stack.webhook(gym, &format!("evt_{id}_in_{n}"), event).await;
    assert_eq!(status, 202, "{body}");
}

/// The open to-dos that name `id`.
async fn todos_of(stack: &Stack, gym: &Account, id: &str) -> Vec<Value> {
    let (status, body) = stack.get("/api/v1/todos?status=open", &gym.token).await;
    assert_eq!(status, 200, "{body}");
    body["todos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["member"]["id"] == id)
        .cloned()
        .collect()
}

/// Given the owner's own trigger (a check-in opens a message) and two members known by
/// phone only — one who agreed to texts, one who did not — when each checks in, then each
/// gets a task like any member: the one with consent is reached by text, the other is put on
/// the owner's call list with their number, and never texted.
#[tokio::test]
async fn an_owners_trigger_reaches_a_member_known_by_phone_only() {
    let stack = Stack::start("sms-phone-only-trigger").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = texting_gym(&stack).await;
    let (txt, call) = (("m_txt", "+15555550181"), ("m_call", "+15555550182"));
    for (id, phone) in [txt, call] {
        member(&stack, &gym, id, phone, false).await;
    }
    consent(&stack, &gym, txt.0, true).await;
    let body = json!({"event": "checkin.created", "task_type": "ad_hoc", "goal": "Ask how their class went",
        "reentry": "once"});
    let (status, trigger) = stack.post("/api/v1/triggers", &gym.token, body).await;
    assert_eq!(status, 201, "{trigger}");
    for (id, _) in [txt, call] {
        checks_in(&stack, &gym, id, 1).await;
    }
    stack.run().await;
    for (id, _) in [txt, call] {
        let (status, tasks) = stack.get(&format!("/api/v1/tasks?member_id={id}"), &gym.token).await;
        assert_eq!(status, 200, "{tasks}");
        let opened: Vec<&Value> = tasks["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["task_type"] == "ad_hoc")
            .collect();
        assert_eq!(opened.len(), 1, "{id}: the trigger opened a task: {tasks}");
        let task_id = opened[0]["id"].as_str().unwrap_or_default();
        let (status, approved) = stack.post(&format!("/api/v1/tasks/{task_id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{id}: {approved}");
    }
    stack.run().await;
    let texted = texts_to(&stack, txt.1).await;
    assert_eq!(texted.len(), 1, "consent: a text: {texted:?}");
    assert!(
        texted[0]["body"].as_str().is_some_and(|b| b.ends_with("Reply STOP to opt out.")),
        "{texted:?}"
    );
    assert!(texts_to(&stack, call.1).await.is_empty(), "no consent, no text");
    let calls = todos_of(&stack, &gym, call.0).await;
    assert_eq!(calls.len(), 1, "no consent: the call list: {calls:?}");
    assert_eq!(calls[0]["member"]["phone"], call.1, "{calls:?}");
    assert!(
        todos_of(&stack, &gym, txt.0).await.is_empty(),
        "the texted member is not on the call list"
    );
}

/// Given two members known by phone only who stopped coming three weeks ago — one who agreed
/// to texts, one who did not — then the morning brief names both among the members at risk,
/// like any member; once the risk scan's tasks are approved, the one with consent is texted
/// and the brief puts the other on the owner's call list, with their number.
#[tokio::test]
async fn the_brief_counts_members_known_by_phone_only() {
    let stack = Stack::start("sms-phone-only-brief").await;
    // The clock only moves forward: the members' history starts tomorrow.
    let day0 = morning(62);
    stack.set_clock(&(day0 - SignedDuration::from_hours(24 * 60)).to_string()).await;
    let gym = texting_gym(&stack).await;
    let owner = stack.give_owner_address(&gym).await;
    let (txt, call) = (("m_txt", "+15555550183"), ("m_call", "+15555550184"));
    // Their visits' milestones are not this test's: only the risk scan's tasks open.
    let (status, off) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/triggers/checkin_milestone",
            Some(&gym.token),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(status, 200, "{off}");
    for (id, phone) in [txt, call] {
        member(&stack, &gym, id, phone, false).await;
    }
    consent(&stack, &gym, txt.0, true).await;
    // Twice a week for five weeks, then nothing for three.
    for i in 0..10 {
        let at = day0 - SignedDuration::from_hours(24 * (56 - 3 * i64::from(i)));
        stack.set_clock(&at.to_string()).await;
        for (id, _) in [txt, call] {
            checks_in(&stack, &gym, id, usize::try_from(i).unwrap_or_default()).await;
        }
    }
    stack.set_clock(&day0.to_string()).await;
    stack.run().await;
    let (status, brief) = stack.get("/api/v1/brief", &gym.token).await;
    assert_eq!(status, 200, "{brief}");
    for (id, _) in [txt, call] {
        assert!(
            brief["at_risk"].as_array().into_iter().flatten().any(|m| m["member_id"] == id),
            "{id} is at risk in the brief: {brief}"
        );
    }
    for (id, _) in [txt, call] {
        let (_, tasks) = stack.get(&format!("/api/v1/tasks?member_id={id}"), &gym.token).await;
        let churn: Vec<&Value> = tasks["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["task_type"] == "churn_risk")
            .collect();
        assert_eq!(churn.len(), 1, "{id}: the risk scan opened its task: {tasks}");
        let task_id = churn[0]["id"].as_str().unwrap_or_default();
        let (status, approved) = stack.post(&format!("/api/v1/tasks/{task_id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{id}: {approved}");
    }
    stack.run().await;
    assert_eq!(texts_to(&stack, txt.1).await.len(), 1, "consent: a text");
    assert!(texts_to(&stack, call.1).await.is_empty(), "no consent, no text");
    let (_, brief) = stack.get("/api/v1/brief", &gym.token).await;
    let listed: Vec<&Value> = brief["todos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["what"].as_str().is_some_and(|w| w.contains("not agreed to texts")))
        .collect();
    // (Their ten visits' milestone reviews, never approved, are on the call list too.)
    assert_eq!(listed.len(), 1, "the brief's call list names them: {brief}");
    assert_eq!(
        (&listed[0]["member"]["id"], &listed[0]["member"]["phone"]),
        (&json!(call.0), &json!(call.1)),
        "{brief}"
    );
    // The next morning's mail (brief_hour 7) carries the call with the number to dial, even
    // where the call is the first thing to do.
    let next_morning = openloop_tests::nine_in_new_york(
        day0.to_zoned(openloop_tests::new_york())
            .date()
            .tomorrow()
            .unwrap_or_else(|e| panic!("{e}")),
    ) - SignedDuration::from_mins(110);
    stack.set_clock(&next_morning.to_string()).await;
    stack.run().await;
    stack.run().await;
    let mails = stack.outbox_to(&owner).await;
    let brief = mails
        .iter()
        .filter_map(|m| m["text"].as_str())
        .rfind(|t| t.contains("Your morning brief"))
        .unwrap_or_else(|| panic!("a morning brief: {mails:?}"));
    assert!(
        brief.lines().any(|l| l.contains("not agreed to texts") && l.contains(call.1)),
        "{brief}"
    );
}

//! Hostile and careless input: whatever a tenant or a stranger sends, no header is
//! forged, no number the store cannot hold is kept, and nothing changes on a refusal.

use openloop_tests::{Stack, events};
use reqwest::Method;
use serde_json::{Value, json};

async fn put_settings(stack: &Stack, token: &str, body: Value) -> (u16, Value) {
    stack.call(Method::PUT, "/api/v1/settings", Some(token), Some(body)).await
}

#[tokio::test]
async fn header_bearing_settings_with_line_breaks_are_refused_and_change_nothing() {
    let stack = Stack::start("hostile-headers").await;
    let gym = stack.create_account("manual").await;
    let (_, before) = stack.get("/api/v1/settings", &gym.token).await;
    for injected in [
        "G\r\nReply-To: a@evil.example",
        "G\nBcc: all@evil.example",
        "G\r\n\r\nbody",
        "G\u{2028}X-Evil: 1",
    ] {
        for field in ["display_name", "owner_first_name", "business_type", "contact_website"] {
            let (status, error) = put_settings(&stack, &gym.token, json!({"profile": {field: injected}})).await;
            assert_eq!(
                (status, error["error"]["code"].as_str()),
                (422, Some("invalid_profile")),
                "{field}: {error}"
            );
        }
    }
    let (status, error) = stack
        .post(
            "/api/v1/accounts",
            &stack.admin_token,
            json!({"name": "Gym\r\nBcc: all@evil.example"}),
        )
        .await;
    assert_eq!((status, error["error"]["code"].as_str()), (422, Some("invalid_name")), "{error}");
    let (_, after) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(before, after, "a refused update changes nothing");
    stack.running.stop();
}

#[tokio::test]
async fn numbers_beyond_what_a_gym_means_are_refused() {
    let stack = Stack::start("hostile-numbers").await;
    let gym = stack.create_account("manual").await;
    for price in [json!(1e126), json!(-1), json!(100_000.01)] {
        let (status, error) = put_settings(&stack, &gym.token, json!({"avg_membership_price": price})).await;
        assert_eq!(
            (status, error["error"]["code"].as_str()),
            (422, Some("invalid_avg_membership_price")),
            "{price}: {error}"
        );
    }
    let (status, _) = put_settings(&stack, &gym.token, json!({"avg_membership_price": 149.0})).await;
    assert_eq!(status, 200);
    let at = stack.now().await.to_string();
    let mut rich = events::member_created("m_1", "ana@example.com", "Ana", &at);
    rich["data"]["monthly_value"] = json!(1e126);
    let (status, error) = stack.webhook(&gym, "evt_rich", rich).await;
    assert_eq!((status, error["error"]["code"].as_str()), (422, Some("invalid_event")), "{error}");
    let mut forged = events::member_created("m_2", "bo@example.com", "Bo\r\nBcc: all@evil.example", &at);
    forged["data"]["monthly_value"] = json!(150);
    let (status, error) = stack.webhook(&gym, "evt_name", forged).await;
    assert_eq!((status, error["error"]["code"].as_str()), (422, Some("invalid_event")), "{error}");
    stack.running.stop();
}

#[tokio::test]
async fn a_misspelt_profile_key_is_refused_instead_of_wiping_the_profile() {
    let stack = Stack::start("hostile-profile").await;
    let gym = stack.create_account("manual").await;
    let (status, _) = put_settings(&stack, &gym.token, json!({"profile": {"display_name": "Harbour Gym"}})).await;
    assert_eq!(status, 200);
    let (status, error) = put_settings(&stack, &gym.token, json!({"profile": {"dispaly_name": "Oops"}})).await;
    assert_eq!(status, 422, "{error}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["profile"]["display_name"], "Harbour Gym", "{settings}");
    stack.running.stop();
}

#[tokio::test]
async fn addresses_are_parsed_strictly_at_every_entry_point() {
    let stack = Stack::start("hostile-addresses").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await.to_string();
    for (i, bad) in [
        "ana\u{0}@example.com",
        "a\u{200b}na@example.com",
        "ａｎａ@example.com",
        ".ana@example.com",
        "ana@-example.com",
        "an..a@example.com",
    ]
    .into_iter()
    .enumerate()
    {
        let (status, error) = stack
            .webhook(&gym, &format!("evt_{i}"), events::member_created("m_1", bad, "Ana", &at))
            .await;
        assert_eq!(status, 422, "webhook {bad:?}: {error}");
        let (status, error) = put_settings(&stack, &gym.token, json!({"owner_email": bad})).await;
        assert_eq!(status, 422, "owner_email {bad:?}: {error}");
        let (status, error) = stack.post("/api/v1/suppressions", &gym.token, json!({"email": bad})).await;
        assert_eq!(
            (status, error["error"]["code"].as_str()),
            (422, Some("invalid_email")),
            "suppression {bad:?}: {error}"
        );
    }
    stack.running.stop();
}

/// Given a first touch, when the member answers from a phone with a 3 MB photo attached, the
/// reply is stored (named attachment, not its bytes) instead of refused as too large.
#[tokio::test]
async fn a_reply_with_a_phone_photo_is_stored_and_the_photo_only_named() {
    use base64::Engine as _;
    let stack = Stack::start("hostile-photo").await;
    let day0 = openloop_tests::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_photo", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_photo").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    let plain = openloop_tests::Client::reply_to(&mail[0], "photo-1@mail.example.net", "Here is my new PR, see you Monday at 6pm!");
    let (headers, text) = plain
        .split_once("Content-Type: text/plain; charset=utf-8\r\n\r\n")
        .expect("the reply's shape");
    let photo = base64::engine::general_purpose::STANDARD.encode(vec![0xA5u8; 3 * 1024 * 1024]);
    let raw = format!(
        "{headers}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n--b1\r\n\
         Content-Type: image/jpeg; name=\"IMG_0042.jpg\"\r\nContent-Disposition: attachment; filename=\"IMG_0042.jpg\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{photo}\r\n--b1--\r\n"
    );
    assert!(raw.len() > 4 * 1024 * 1024);
    let (status, body) = stack.inbound(&raw).await;
    assert_eq!((status, body["status"].as_str()), (202, Some("stored")), "{body}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let member_said: Vec<&str> = task["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "member")
                .filter_map(|m| m["content"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        member_said,
        ["Here is my new PR, see you Monday at 6pm!\n\n[attached, not kept: IMG_0042.jpg]"],
        "{task}"
    );
    stack.running.stop();
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_refused_even_where_no_body_is_read() {
    let stack = Stack::start("hostile-body").await;
    let gym = stack.create_account("manual").await;
    let big = "x".repeat(300 * 1024);
    for path in [
        "/api/v1/tasks/01JD0000000000000000000000/skip",
        "/api/v1/tasks/01JD0000000000000000000000/cancel",
        "/api/v1/tasks",
    ] {
        let response = openloop_aws::tls::client()
            .post(format!("{}{path}", stack.url))
            .bearer_auth(&gym.token)
            .body(big.clone())
            .send()
            .await
            .expect("a response");
        assert_eq!(response.status().as_u16(), 413, "{path}");
        let error: Value = response.json().await.expect("a JSON error");
        assert_eq!(error["error"]["code"], "body_too_large", "{path}: {error}");
    }
    stack.running.stop();
}

/// Given a first touch, when someone other than the member answers through the genuine reply
/// address — "stop", or a commitment — nothing acts for the member: no suppression, no close;
/// the reply is kept and the task goes to the owner with the sender named.
#[tokio::test]
async fn a_strangers_reply_is_kept_but_never_acts_for_the_member() {
    let stack = Stack::start("hostile-stranger").await;
    let day0 = openloop_tests::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    for (i, words) in ["STOP", "I'll be there Monday at 6pm!"].into_iter().enumerate() {
        let member = format!("m_stranger_{i}");
        let email = stack.member(&gym, &member, "Sam", day0).await;
        stack.run().await;
        let id = stack.approved_task(&gym, "churn_risk", &member).await;
        stack.run().await;
        let mail = stack.outbox_to(&email).await;
        let genuine = openloop_tests::Client::reply_to(&mail[0], &format!("stranger-{i}@mail.example.net"), words);
        let forged = genuine.replacen(&format!("From: Member <{email}>"), "From: Someone <someone.else@example.org>", 1);
        assert_ne!(genuine, forged);
        let (status, body) = stack.inbound(&forged).await;
        assert_eq!((status, body["status"].as_str()), (202, Some("stored")), "{body}");
        let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
        assert_eq!(task["status"], "escalated", "{words}: {task}");
        assert!(openloop_tests::reasons(&task).contains(&"reply_from_another_sender"), "{task}");
        let shown = task["messages"].as_array().cloned().unwrap_or_default();
        assert!(
            shown.iter().any(|m| m["content"]
                .as_str()
                .is_some_and(|c| c.contains("someone.else@example.org") && c.contains(words))),
            "the reply is kept with its sender: {shown:?}"
        );
        assert!(
            !shown.iter().any(|m| m["role"] == "member"),
            "nothing is the member's words: {shown:?}"
        );
        let (status, _) = stack
            .call(Method::DELETE, &format!("/api/v1/suppressions/{email}"), Some(&gym.token), None)
            .await;
        assert_eq!(status, 404, "{words}: the member was not suppressed");
    }
    stack.running.stop();
}

/// Given a first touch, when the member's words sit under a signature marker (so reading
/// keeps less than a sentence), the whole message is stored beside the reading and is what
/// the agent reads: the commitment in it still closes the task.
#[tokio::test]
async fn when_reading_keeps_too_little_the_whole_message_is_kept_and_read() {
    let stack = Stack::start("reply-original").await;
    let day0 = openloop_tests::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_orig", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_orig").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    let (status, body) = stack
        .inbound(&openloop_tests::Client::reply_to(
            &mail[0],
            "orig-1@mail.example.net",
            "Hi\r\n--\r\nSee you Monday at 6pm!",
        ))
        .await;
    assert_eq!((status, body["status"].as_str()), (202, Some("stored")), "{body}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let said = task["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "member").cloned())
        .expect("the reply");
    assert_eq!(said["content"], "Hi", "{said}");
    assert!(
        said["original"].as_str().is_some_and(|o| o.contains("See you Monday at 6pm!")),
        "{said}"
    );
    assert_eq!(task["status"], "completed", "the agent read the whole message: {task}");
    stack.running.stop();
}

#[tokio::test]
async fn a_task_made_before_its_member_event_sends_once_the_event_is_in() {
    let stack = Stack::start("late-member").await;
    openloop_tests::late_member_event_still_gets_the_first_touch(&stack).await;
    stack.running.stop();
}

/// Every route, sent a malformed body (and the wrong method, and a path that does not
/// exist), answers in the contract's error shape — never an empty or plain-text body.
#[tokio::test]
async fn every_route_answers_malformed_input_in_the_contracts_error_shape() {
    let stack = Stack::start("hostile-shapes").await;
    let gym = stack.create_account("manual").await;
    let task = "01JD0000000000000000000000";
    let routes: &[(&str, String)] = &[
        ("POST", "/api/v1/accounts".into()),
        ("POST", "/api/v1/admin/pause".into()),
        ("POST", "/api/v1/admin/resume".into()),
        ("POST", format!("/api/v1/admin/accounts/{}/pause", gym.id)),
        ("POST", "/api/v1/pause".into()),
        ("POST", "/api/v1/resume".into()),
        ("POST", "/api/v1/tasks".into()),
        ("POST", format!("/api/v1/tasks/{task}/approve")),
        ("POST", format!("/api/v1/tasks/{task}/skip")),
        ("POST", format!("/api/v1/tasks/{task}/cancel")),
        ("POST", format!("/api/v1/tasks/{task}/resolve")),
        ("POST", format!("/api/v1/tasks/{task}/guidance")),
        ("POST", format!("/api/v1/tasks/{task}/subtasks")),
        ("POST", "/api/v1/tasks/batch".into()),
        ("PUT", "/api/v1/settings".into()),
        ("POST", "/api/v1/suppressions".into()),
        ("DELETE", "/api/v1/suppressions/not-an-address".into()),
        ("POST", "/api/v1/recurring".into()),
        ("DELETE", "/api/v1/recurring/not-an-id".into()),
        ("GET", "/api/v1/tasks?limit=abc".into()),
        ("GET", "/api/v1/activity?cursor=%00".into()),
        ("GET", "/api/v1/metrics?from=yesterday".into()),
        ("GET", "/api/v1/nothing-here".into()),
        ("PATCH", "/api/v1/settings".into()),
        ("POST", format!("/webhooks/pushpress/{}", gym.id)),
        ("POST", "/webhooks/pushpress/not-an-account".into()),
        ("POST", "/webhooks/inbound-email".into()),
        ("POST", "/unsubscribe".into()),
    ];
    for (method, path) in routes {
        let method = Method::from_bytes(method.as_bytes()).expect("a method");
        let response = stack
            .http
            .request(method.clone(), format!("{}{path}", stack.url))
            .bearer_auth(&gym.token)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .expect("a response");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        if status < 400 {
            continue;
        }
        let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{method} {path}: {status} is not JSON: {text:?}"));
        assert!(
            body["error"]["code"].as_str().is_some_and(|c| !c.is_empty()) && body["error"]["message"].is_string(),
            "{method} {path}: {status} {body}"
        );
    }
    stack.running.stop();
}

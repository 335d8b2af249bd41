//! The conversation loop through CONTRACT.md with the test clock (spec §6.5, §17, §19.2,
//! §19.5, §22): a member's reply reaches its task through `POST /webhooks/inbound-email`, the
//! offline agent reads it, and the owner steps in with guidance.

use jiff::SignedDuration;
use openloop_tests::{Account, Client, Stack, reasons};
use serde_json::{Value, json};

use crate::morning;

async fn task(stack: &Stack, gym: &Account, id: &str) -> Value {
    let (status, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(status, 200, "{task}");
    task
}

/// Given a churn-risk mail, when the member answers with a day and a time, then the task
/// closes as the type's verbal commitment — provisional, until a check-in confirms it.
#[tokio::test]
async fn a_dated_yes_closes_as_a_provisional_verbal_commitment() {
    let stack = Stack::start("conv-yes").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_yes", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_yes").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1);

    let (status, body) = stack
        .inbound(&Client::reply_to(
            &mail[0],
            "yes-1@mail.example.net",
            "Sorry, crazy month! See you Monday at 6pm.",
        ))
        .await;
    assert_eq!((status, body["status"].as_str()), (202, Some("stored")), "{body}");
    let done = task(&stack, &gym, &id).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str(), done["outcome_reason"].as_str()),
        (Some("completed"), Some("verbal_commitment"), Some("verbal_commitment")),
        "{done}"
    );
    assert_eq!(done["provisional"], true, "{done}");
    let messages = done["messages"].as_array().cloned().unwrap_or_default();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "member" && m["content"] == "Sorry, crazy month! See you Monday at 6pm."),
        "the reply is in the conversation without the quoted mail: {messages:?}"
    );
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "no answer needed");
    stack.running.stop();
}

/// Given a member with two open tasks, when they write "stop", then they are suppressed, both
/// tasks are cancelled as opted out, and nothing more reaches them — ever.
#[tokio::test]
async fn stop_suppresses_the_member_and_cancels_all_their_tasks() {
    let stack = Stack::start("conv-stop").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_stop", "Sam", day0).await;
    stack.run().await;
    let churn = stack.approved_task(&gym, "churn_risk", "m_stop").await;
    let win_back = stack.approved_task(&gym, "win_back", "m_stop").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "one message a day");

    let (status, _) = stack.inbound(&Client::reply_to(&mail[0], "stop-1@mail.example.net", "STOP")).await;
    assert_eq!(status, 202);
    for id in [&churn, &win_back] {
        let t = task(&stack, &gym, id).await;
        assert_eq!(
            (t["status"].as_str(), t["outcome"].as_str()),
            (Some("cancelled"), Some("opted_out")),
            "{t}"
        );
    }
    for n in 1..=10 {
        stack.set_clock(&(day0 + SignedDuration::from_hours(24 * n)).to_string()).await;
        stack.run().await;
    }
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "no acknowledgment, no follow-up");
    stack.running.stop();
}

/// Given a member's question the agent cannot answer, then the task goes to the owner with
/// the question; the owner's guidance resumes it and the answer reaches the member in the
/// same thread.
#[tokio::test]
async fn a_question_escalates_and_the_owners_guidance_is_sent() {
    let stack = Stack::start("conv-question").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_q", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_q").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;

    let (status, _) = stack
        .inbound(&Client::reply_to(
            &mail[0],
            "q-1@mail.example.net",
            "Do you still run the Saturday 9am class?",
        ))
        .await;
    assert_eq!(status, 202);
    let escalated = task(&stack, &gym, &id).await;
    assert_eq!(escalated["status"], "escalated", "{escalated}");
    assert_eq!(escalated["outcome_reason"], "member_question_needs_owner");
    assert!(
        escalated["escalation"]["question"]
            .as_str()
            .is_some_and(|q| q.contains("Saturday 9am")),
        "{escalated}"
    );

    let (status, resumed) = stack
        .post(
            &format!("/api/v1/tasks/{id}/guidance"),
            &gym.token,
            json!({"text": "Tell her yes, Saturdays at 9 with Coach Dana, and she can bring a friend"}),
        )
        .await;
    assert_eq!((status, resumed["status"].as_str()), (200, Some("executing")), "{resumed}");
    // The member was told at once that the owner would answer; the owner's answer goes the
    // same day (an answer to the member is not held by their one message a day).
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 3, "{mail:?}");
    assert!(
        mail[1]["text"].as_str().is_some_and(|t| t.contains("get back to you soon")),
        "the holding reply: {:?}",
        mail[1]
    );
    assert_eq!(mail[1]["in_reply_to"], "q-1@mail.example.net", "threaded on the member's message");
    assert!(
        mail[2]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Yes, Saturdays at 9 with Coach Dana, and you can bring a friend.")),
        "{:?}",
        mail[2]
    );
    assert_eq!(mail[2]["sent_at"], mail[1]["sent_at"], "{mail:?}");
    assert!(
        mail[2]["references"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r == "q-1@mail.example.net")),
        "in the member's thread: {:?}",
        mail[2]
    );
    let after = task(&stack, &gym, &id).await;
    assert_eq!(after["status"], "waiting");
    let log = reasons(&after);
    for step in [
        "member_replied",
        "member_question_needs_owner",
        "owner_provided_guidance",
        "guidance_drafted",
        "message_sent",
    ] {
        assert!(log.contains(&step), "{step} in {log:?}");
    }
    assert!(after["messages"].as_array().is_some_and(|m| m.iter().any(|m| m["role"] == "owner")));
    stack.running.stop();
}

/// §19.5: a reply about another subject (money, on a churn-risk task) goes to the owner.
#[tokio::test]
async fn a_reply_about_another_subject_goes_to_the_owner() {
    let stack = Stack::start("conv-wrong-task").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_wrong", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_wrong").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    let (status, _) = stack
        .inbound(&Client::reply_to(
            &mail[0],
            "w-1@mail.example.net",
            "My card was stolen, I'm getting a new one for the payment.",
        ))
        .await;
    assert_eq!(status, 202);
    let t = task(&stack, &gym, &id).await;
    assert_eq!(
        (t["status"].as_str(), t["outcome_reason"].as_str()),
        (Some("escalated"), Some("reply_about_another_subject")),
        "{t}"
    );
    stack.running.stop();
}

/// Given a forged reply address, then nothing changes: 202, routed nowhere; and a request
/// without the inbound token or with junk is refused.
#[tokio::test]
async fn a_forged_reply_address_changes_nothing() {
    let stack = Stack::start("conv-forged").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_forged", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_forged").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    let before = task(&stack, &gym, &id).await;

    let genuine = Client::reply_to(&mail[0], "f-1@mail.example.net", "STOP");
    let reply_to = mail[0]["reply_to"].as_str().unwrap_or_default();
    let (token, domain) = reply_to.split_once('@').unwrap_or_default();
    // The last character changed (to one it is not: a token may end in `x`).
    let other = if token.ends_with('x') { 'y' } else { 'x' };
    let altered = format!("{}{other}@{domain}", &token[..token.len() - 1]);
    let (status, body) = stack.inbound(&genuine.replace(reply_to, &altered)).await;
    assert_eq!((status, body["status"].as_str()), (202, Some("unrouted")), "{body}");
    assert_eq!(task(&stack, &gym, &id).await, before, "nothing changed");

    let (status, body) = stack
        .call(reqwest::Method::POST, "/webhooks/inbound-email", Some("wrong-token"), None)
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("unauthorized")), "{body}");
    let (status, body) = stack.inbound("this is not an e-mail").await;
    assert_eq!(status, 400, "{body}");
    stack.running.stop();
}

/// §19.2: given a win-back that went dormant, when the member writes back weeks later, then
/// the task wakes and the conversation loop reads the reply.
#[tokio::test]
async fn a_reply_wakes_a_dormant_task() {
    let stack = Stack::start("conv-dormant").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_dorm", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "win_back", "m_dorm").await;
    stack.run().await;
    for n in [3, 13, 34, 40] {
        stack
            .set_clock(&(day0 + SignedDuration::from_hours(24 * n) + SignedDuration::from_mins(n)).to_string())
            .await;
        stack.run().await;
    }
    let dormant = task(&stack, &gym, &id).await;
    assert_eq!(dormant["status"], "dormant", "{dormant}");
    let mail = stack.outbox_to(&email).await;
    let (status, _) = stack
        .inbound(&Client::reply_to(
            mail.last().unwrap_or(&Value::Null),
            "d-1@mail.example.net",
            "Sorry, I've been traveling. I'm back and want to rejoin - can I come Monday at 6pm?",
        ))
        .await;
    assert_eq!(status, 202);
    let woke = task(&stack, &gym, &id).await;
    assert!(reasons(&woke).contains(&"member_replied_while_dormant"), "{woke}");
    assert_ne!(woke["status"], "dormant", "{woke}");
    stack.running.stop();
}

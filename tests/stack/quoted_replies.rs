//! Replies quoted the way real mail clients quote, through `POST /webhooks/inbound-email`
//! with raw RFC 5322 messages answering the very mail the member received: the gym's own
//! words — its message, the unsubscribe footer, the sign-off — are never read as the
//! member's, so "ok" is never a stop, while a polite request to be taken off the list is.

use jiff::Timestamp;
use openloop_tests::{Account, Stack};
use serde_json::Value;

use crate::morning;

/// A member with one churn-risk mail received; the mail (an outbox entry) and the task's id.
async fn mailed(stack: &Stack, gym: &Account, member: &str, day0: Timestamp) -> (Value, String, String) {
    let email = stack.member(gym, member, "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(gym, "churn_risk", member).await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert!(
        mail[0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("To stop receiving these emails"),
        "the mail carries the product's footer: {}",
        mail[0]
    );
    (mail[0].clone(), id, email)
}

/// The raw reply to `mail` with `body` as the member's client wrote it.
fn raw_reply(mail: &Value, message_id: &str, body: &str) -> String {
    let field = |name: &str| mail[name].as_str().unwrap_or_default().to_owned();
    format!(
        "From: Sam <{}>\r\nTo: {}\r\nSubject: Re: {}\r\nMessage-ID: <{message_id}>\r\nIn-Reply-To: <{}>\r\n\
         References: <{}>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}\r\n",
        field("to"),
        field("reply_to"),
        field("subject"),
        field("message_id"),
        field("message_id"),
        body.replace('\n', "\r\n"),
    )
}

/// `text` re-wrapped at 40 columns with no quote marks, as some plain-text clients send it.
fn rewrapped(text: &str) -> String {
    let mut out = String::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + word.len() + 1 > 40 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

async fn task(stack: &Stack, gym: &Account, id: &str) -> Value {
    let (status, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(status, 200, "{task}");
    task
}

/// Given mails whose quoted part the reader cannot recognise by its marks (a header in a
/// language it does not know, the gym's lines without `>`, re-wrapped; an Outlook block),
/// when the member answers "ok" or "thanks!", then they are not suppressed: the task waits,
/// and the conversation holds only their words.
#[tokio::test]
async fn ok_under_the_gyms_unmarked_words_is_not_a_stop() {
    let stack = Stack::start("quoted-ok").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let cases = [("m_plain", "ok", "plain"), ("m_outlook", "thanks!", "outlook")];
    for (member, words, client) in cases {
        let (mail, id, _) = mailed(&stack, &gym, member, day0).await;
        let sent = mail["text"].as_str().unwrap_or_default();
        let body = match client {
            "plain" => format!("{words}\n\nCrossFit kirjutas 2.11.2026 09:05:\n\n{}", rewrapped(sent)),
            _ => format!(
                "{words}\n\n-----Original Message-----\nFrom: {} <{}>\nSent: Monday, November 2, 2026 9:05 AM\n\
                 To: Sam <{}>\nSubject: {}\n\n{sent}",
                "The gym",
                mail["from"].as_str().unwrap_or_default(),
                mail["to"].as_str().unwrap_or_default(),
                mail["subject"].as_str().unwrap_or_default(),
            ),
        };
        let (status, body) = stack
            .inbound(&raw_reply(&mail, &format!("{member}-1@mail.example.net"), &body))
            .await;
        assert_eq!((status, body["status"].as_str()), (202, Some("stored")), "{client}: {body}");
        let t = task(&stack, &gym, &id).await;
        assert_ne!(t["status"].as_str(), Some("cancelled"), "{client}: \"{words}\" is not a stop: {t}");
        assert_ne!(t["outcome"].as_str(), Some("opted_out"), "{client}: {t}");
        let messages = t["messages"].as_array().cloned().unwrap_or_default();
        let said: Vec<&Value> = messages.iter().filter(|m| m["role"] == "member").collect();
        assert_eq!(said.len(), 1, "{client}: {messages:?}");
        assert_eq!(
            said[0]["content"].as_str(),
            Some(words),
            "{client}: only the member's words: {messages:?}"
        );
        assert!(said[0].get("original").is_none_or(Value::is_null), "{client}: {messages:?}");
        // Not suppressed: the owner can still open a task for them.
        let (status, created) = stack
            .post(
                "/api/v1/tasks",
                &gym.token,
                serde_json::json!({"task_type": "win_back", "member_id": member, "goal": "Bring them back", "confidence": 80}),
            )
            .await;
        assert_eq!(status, 201, "{client}: {created}");
    }
    stack.running.stop();
}

/// Given the same mail, when the member asks politely to be taken off the list above Gmail's
/// quote, then they are suppressed and the task is cancelled as opted out; a commitment
/// wrapped in where they have been, under an Outlook block, closes as a commitment.
#[tokio::test]
async fn a_polite_request_to_be_taken_off_the_list_stops_and_a_wrapped_commitment_commits() {
    let stack = Stack::start("quoted-stop").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let (mail, id, _) = mailed(&stack, &gym, "m_off", day0).await;
    let sent = mail["text"].as_str().unwrap_or_default();
    let quoted: String = sent.lines().map(|l| format!("> {l}\n")).collect();
    let body = format!(
        "Hi, could you please take me off your list? Thanks.\n\nOn Mon, Nov 2, 2026 at 9:05 AM The gym <{}> wrote:\n{quoted}",
        mail["from"].as_str().unwrap_or_default()
    );
    let (status, _) = stack.inbound(&raw_reply(&mail, "off-1@mail.example.net", &body)).await;
    assert_eq!(status, 202);
    let t = task(&stack, &gym, &id).await;
    assert_eq!(
        (t["status"].as_str(), t["outcome"].as_str()),
        (Some("cancelled"), Some("opted_out")),
        "{t}"
    );

    let (mail, id, _) = mailed(&stack, &gym, "m_away", day0).await;
    let sent = mail["text"].as_str().unwrap_or_default();
    let body = format!(
        "I've been travelling for work the past two weeks but I'll be back on Monday\n\n\
         -----Original Message-----\nFrom: The gym <{}>\nSent: Monday, November 2, 2026 9:05 AM\nSubject: {}\n\n{sent}",
        mail["from"].as_str().unwrap_or_default(),
        mail["subject"].as_str().unwrap_or_default(),
    );
    let (status, _) = stack.inbound(&raw_reply(&mail, "away-1@mail.example.net", &body)).await;
    assert_eq!(status, 202);
    let t = task(&stack, &gym, &id).await;
    assert_eq!(
        (t["status"].as_str(), t["outcome"].as_str()),
        (Some("completed"), Some("verbal_commitment")),
        "{t}"
    );
    stack.running.stop();
}

//! SES's notifications as the signals function receives them in AWS — SNS envelopes on the
//! signals queue: a member reply from SES receiving reaches its task, and a hard bounce stops
//! every task about the address.

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use base64::Engine as _;
use openloop_core::task::{Role, TaskStatus};
use openloop_tests::Scratch;
use serde_json::json;

use crate::concurrency::{approved_task, sent_to, sqs_event};

/// One SQS record holding `message` as SNS wraps it.
fn from_sns(message: serde_json::Value) -> SqsEvent {
    let envelope = json!({"Type": "Notification", "MessageId": "sns-1", "TopicArn": "arn:aws:sns:us-east-1:123456789012:mail-events",
        "Message": message.to_string(), "Timestamp": "2026-11-02T14:00:00.000Z"});
    let mut record = SqsMessage::default();
    record.message_id = Some("sqs-1".into());
    record.body = Some(envelope.to_string());
    let mut event = SqsEvent::default();
    event.records.push(record);
    event
}

#[tokio::test]
async fn a_reply_from_ses_receiving_reaches_its_task_through_the_signals_queue() {
    let scratch = Scratch::new("ses-received");
    let (engine, _, _) = scratch.engine(None).await;
    let (item, email) = approved_task(&engine).await;
    openloop_fn_execute::handle(&engine, sqs_event(&item, 1)).await;
    let reply_to = format!(
        "reply+{}@{}",
        engine.config.signing_key.reply_token(&item.task_id),
        engine.config.reply_domain
    );
    let raw = format!(
        "From: <{email}>\r\nTo: <{reply_to}>\r\nSubject: Re: Checking in\r\nMessage-ID: <ses-in-1@mail.example.net>\r\n\
         Content-Type: text/plain\r\n\r\nSee you Monday at 6pm\r\n"
    );
    let notification = json!({"notificationType": "Received", "mail": {"destination": [reply_to]},
        "receipt": {"action": {"type": "SNS", "encoding": "BASE64"}},
        "content": base64::engine::general_purpose::STANDARD.encode(raw)});
    let response = openloop_fn_signals::handle(&engine, from_sns(notification)).await;
    assert!(response.batch_item_failures.is_empty(), "{response:?}");
    let history = engine
        .store
        .task_history(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("task"));
    assert!(
        history
            .messages
            .iter()
            .any(|m| m.role == Role::Member && m.content == "See you Monday at 6pm")
    );
    assert_eq!(history.task.status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_hard_bounce_suppresses_the_address_and_cancels_its_tasks() {
    let scratch = Scratch::new("ses-bounce");
    let (engine, _, _) = scratch.engine(None).await;
    let (item, email) = approved_task(&engine).await;
    openloop_fn_execute::handle(&engine, sqs_event(&item, 1)).await;
    assert_eq!(sent_to(&email).await, 1);
    let sent = engine
        .store
        .outbound(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let soft = json!({"notificationType": "Bounce", "bounce": {"bounceType": "Transient", "bouncedRecipients": [{"emailAddress": email}]},
        "mail": {"messageId": "ses-1", "commonHeaders": {"messageId": format!("<{}>", sent[0].message_id)}}});
    openloop_fn_signals::handle(&engine, from_sns(soft)).await;
    let task = engine
        .store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(task.map(|t| t.status), Some(TaskStatus::Waiting), "a soft bounce stops nothing");

    let hard = json!({"notificationType": "Bounce", "bounce": {"bounceType": "Permanent", "bouncedRecipients": [{"emailAddress": email}]},
        "mail": {"messageId": "ses-1", "commonHeaders": {"messageId": format!("<{}>", sent[0].message_id)}}});
    let response = openloop_fn_signals::handle(&engine, from_sns(hard)).await;
    assert!(response.batch_item_failures.is_empty(), "{response:?}");
    let task = engine
        .store
        .get_task(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("task"));
    assert_eq!((task.status, task.outcome.as_deref()), (TaskStatus::Cancelled, Some("opted_out")));
    let address = openloop_core::ids::Email::parse(&email).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        engine
            .store
            .is_suppressed(item.account_id, &address)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
}

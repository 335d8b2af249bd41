//! SES's notifications as the signals function receives them in AWS — signed SNS envelopes on
//! the signals queue: a member reply from SES receiving reaches its task (inside the
//! notification, or stored in the inbound-mail bucket when it is large), a hard bounce stops
//! every task about the address, and an envelope that is unsigned, forged or altered is never
//! processed.

use std::sync::Arc;

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use base64::Engine as _;
use openloop_aws::dynamo::DynamoStore;
use openloop_core::engine::Engine;
use openloop_core::ports::prelude::*;
use openloop_core::task::work::WorkItem;
use openloop_core::task::{Role, Task, TaskStatus};
use openloop_fn_signals::MailIntake;
use openloop_tests::Scratch;
use openloop_tests::sns::SnsSigner;
use serde_json::{Value, json};

use crate::concurrency::{approved_task, sent_to, sqs_event};

/// One SQS record with `body`.
fn record(body: String) -> SqsEvent {
    let mut record = SqsMessage::default();
    record.message_id = Some("sqs-1".into());
    record.body = Some(body);
    let mut event = SqsEvent::default();
    event.records.push(record);
    event
}

/// One SQS record holding `message` as SNS wraps and signs it.
fn from_sns(signer: &SnsSigner, message: &Value, version: u8) -> SqsEvent {
    record(signer.notification(&message.to_string(), version).to_string())
}

/// What every test here starts from: the signals function's mail intake (the signer's
/// certificate, the scratch bucket) and a task whose first mail went out.
struct Sent {
    engine: Engine,
    /// The engine's store, read directly.
    store: DynamoStore,
    signer: SnsSigner,
    mail: MailIntake,
    s3: openloop_aws::s3::S3Bucket,
    item: WorkItem,
    /// The member's address.
    email: String,
    // Last: dropping it removes the test's resources.
    scratch: Scratch,
}

impl Sent {
    async fn start(name: &str) -> Self {
        let scratch = Scratch::new(name);
        let (engine, store, _) = scratch.engine(None).await;
        let signer = SnsSigner::start().await;
        let clients = openloop_tests::clients(&openloop_tests::test_config()).await;
        let s3 = clients.bucket(scratch.names.inbound_mail_bucket.clone());
        let mail = MailIntake {
            verifier: signer.verifier(),
            stored: Arc::new(clients.stored_mail(scratch.names.inbound_mail_bucket.clone())),
        };
        let (item, email) = approved_task(&engine, &store).await;
        openloop_fn_execute::handle(&engine, sqs_event(&item, 1)).await;
        Self {
            engine,
            store,
            signer,
            mail,
            s3,
            item,
            email,
            scratch,
        }
    }

    /// The member's answer to the first mail: its reply address and the raw message.
    fn reply(&self, body: &str) -> (String, String) {
        member_reply(&self.scratch.reply_address(&self.item.task_id), &self.email, body)
    }

    /// Hand one SQS event to the signals function; the records it failed.
    async fn signals(&self, event: SqsEvent) -> usize {
        openloop_fn_signals::handle(&self.engine, &self.mail, event)
            .await
            .batch_item_failures
            .len()
    }

    async fn task(&self) -> Task {
        self.store
            .get_task(self.item.account_id, self.item.task_id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("task"))
    }

    /// What the member wrote into the conversation, oldest first.
    async fn member_messages(&self) -> Vec<String> {
        let history = self
            .store
            .task_history(self.item.account_id, self.item.task_id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("task"));
        history
            .messages
            .into_iter()
            .filter(|m| m.role == Role::Member)
            .map(|m| m.content)
            .collect()
    }
}

/// A member's answer to the task's first mail (sent with `reply_to`), as raw RFC 5322.
fn member_reply(reply_to: &str, email: &str, body: &str) -> (String, String) {
    let reply_to = reply_to.to_owned();
    let raw = format!(
        "From: <{email}>\r\nTo: <{reply_to}>\r\nSubject: Re: Checking in\r\nMessage-ID: <{}@mail.example.net>\r\n\
         Content-Type: text/plain\r\n\r\n{body}\r\n",
        ulid::Ulid::new()
    );
    (reply_to, raw)
}

#[tokio::test]
async fn a_reply_from_ses_receiving_reaches_its_task_through_the_signals_queue() {
    let t = Sent::start("ses-received").await;
    let (reply_to, raw) = t.reply("See you Monday at 6pm");
    let notification = json!({"notificationType": "Received", "mail": {"destination": [reply_to]},
        "receipt": {"action": {"type": "SNS", "encoding": "BASE64"}},
        "content": base64::engine::general_purpose::STANDARD.encode(raw)});
    assert_eq!(t.signals(from_sns(&t.signer, &notification, 1)).await, 0);
    assert_eq!(t.member_messages().await, ["See you Monday at 6pm"]);
    assert_eq!(t.task().await.status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_large_reply_stored_in_s3_by_the_receipt_rule_reaches_its_task_and_its_raw_copy_goes() {
    let t = Sent::start("ses-s3").await;
    let bucket = t.scratch.names.inbound_mail_bucket.clone();
    // Past SNS's 150 KB: the body carries a large attachment-like tail after the words.
    let (reply_to, raw) = t.reply("See you Monday at 6pm");
    let raw = raw.replace(
        "Content-Type: text/plain\r\n\r\n",
        &format!("X-Padding: {}\r\nContent-Type: text/plain\r\n\r\n", "x".repeat(200 * 1024)),
    );
    let key = format!("inbound/{}", ulid::Ulid::new());
    t.s3.put(&key, raw.into_bytes()).await.unwrap_or_else(|e| panic!("put object: {e}"));
    let notification = json!({"notificationType": "Received", "mail": {"destination": [reply_to]},
        "receipt": {"action": {"type": "S3", "topicArn": openloop_tests::sns::TOPIC_ARN,
            "bucketName": bucket, "objectKeyPrefix": "inbound/", "objectKey": key}}});
    assert_eq!(t.signals(from_sns(&t.signer, &notification, 2)).await, 0);
    assert_eq!(t.member_messages().await, ["See you Monday at 6pm"]);
    // Its raw copy is gone once the reply is in the conversation, and the notification
    // delivered again finds it gone and changes nothing.
    let gone = t.mail.stored.fetch(&bucket, &key).await;
    assert!(matches!(gone, Err(openloop_core::ports::StoredMailError::NotFound(_))), "{gone:?}");
    assert_eq!(t.signals(from_sns(&t.signer, &notification, 2)).await, 0);
    assert_eq!(t.member_messages().await, ["See you Monday at 6pm"]);

    // A notification naming an object that is not there stores nothing and is not retried.
    let missing = json!({"notificationType": "Received", "mail": {"destination": [reply_to]},
        "receipt": {"action": {"type": "S3", "bucketName": bucket, "objectKey": "inbound/none"}}});
    assert_eq!(t.signals(from_sns(&t.signer, &missing, 2)).await, 0);
    assert_eq!(t.member_messages().await.len(), 1);
}

#[tokio::test]
async fn unsigned_forged_or_altered_envelopes_are_never_processed() {
    let t = Sent::start("ses-forged").await;
    let (reply_to, raw) = t.reply("See you Monday at 6pm");
    let notification = json!({"notificationType": "Received", "mail": {"destination": [reply_to]},
        "receipt": {"action": {"type": "SNS", "encoding": "BASE64"}},
        "content": base64::engine::general_purpose::STANDARD.encode(&raw)});

    let mut altered = t.signer.notification(&notification.to_string(), 2);
    let forged_raw = raw.replace("See you Monday at 6pm", "Cancel everything");
    altered["Message"] = json!(
        json!({"notificationType": "Received", "mail": {"destination": [reply_to]},
        "receipt": {"action": {"type": "SNS", "encoding": "BASE64"}},
        "content": base64::engine::general_purpose::STANDARD.encode(&forged_raw)})
        .to_string()
    );
    let mut unsigned = t.signer.notification(&notification.to_string(), 1);
    if let Some(fields) = unsigned.as_object_mut() {
        fields.remove("Signature");
        fields.remove("SignatureVersion");
    }
    let other_key = SnsSigner::start().await;
    let mut foreign_cert = other_key.notification(&notification.to_string(), 1);
    foreign_cert["SigningCertURL"] = json!("https://attacker.example/SimpleNotificationService-x.pem");
    other_key.sign(&mut foreign_cert, 1);
    let bare = notification.to_string();
    for body in [altered.to_string(), unsigned.to_string(), foreign_cert.to_string(), bare] {
        assert_eq!(t.signals(record(body)).await, 1, "rejected towards the dead-letter queue");
    }
    assert!(t.member_messages().await.is_empty(), "nothing reached the task");
    assert_eq!(t.task().await.status, TaskStatus::Waiting);

    // The genuine envelope still passes afterwards (the certificate is cached).
    assert_eq!(t.signals(from_sns(&t.signer, &notification, 2)).await, 0);
    assert_eq!(t.member_messages().await, ["See you Monday at 6pm"]);
}

#[tokio::test]
async fn a_hard_bounce_suppresses_the_address_and_cancels_its_tasks() {
    let t = Sent::start("ses-bounce").await;
    assert_eq!(sent_to(&t.email).await, 1);
    let sent = t
        .store
        .outbound(t.item.account_id, t.item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let bounce = |kind: &str| {
        json!({"notificationType": "Bounce", "bounce": {"bounceType": kind, "bouncedRecipients": [{"emailAddress": t.email}]},
            "mail": {"messageId": "ses-1", "commonHeaders": {"messageId": format!("<{}>", sent[0].message_id)}}})
    };
    t.signals(from_sns(&t.signer, &bounce("Transient"), 1)).await;
    assert_eq!(t.task().await.status, TaskStatus::Waiting, "a soft bounce stops nothing");

    assert_eq!(t.signals(from_sns(&t.signer, &bounce("Permanent"), 2)).await, 0);
    let task = t.task().await;
    assert_eq!((task.status, task.outcome.as_deref()), (TaskStatus::Cancelled, Some("opted_out")));
    let address = openloop_core::kernel::ids::Email::parse(&t.email).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        t.store
            .is_suppressed(t.item.account_id, &address)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
}

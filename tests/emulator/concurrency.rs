//! Many concurrent `execute` invocations on the same due task — as duplicate SQS deliveries
//! and overlapping ticks produce — send exactly one mail and leave a consistent version.

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use openloop_aws::dynamo::DynamoStore;
use openloop_core::engine::{Engine, NewTask};
use openloop_core::kernel::ids::MemberId;
use openloop_core::members::member::MemberFacts;
use openloop_core::ports::prelude::*;
use openloop_core::rails::gate::GateContext;
use openloop_core::task::work::WorkItem;
use openloop_core::task::{Draft, TaskStatus, TriggerType};
use openloop_tests::Scratch;

/// A gym and an approved task for a member with a unique address (its facts seeded into
/// `store`, the engine's); returns (item, email).
pub async fn approved_task(engine: &Engine, store: &DynamoStore) -> (WorkItem, String) {
    let account = crate::loop_fixtures::gym(engine, "Race Gym").await;
    let member = MemberId::parse("m_race").unwrap_or_else(|e| panic!("{e}"));
    let email = format!("race+{}@example.com", account.id.to_string().to_ascii_lowercase());
    let mut facts = MemberFacts::new(member.clone());
    facts.email = Some(openloop_core::kernel::ids::Email::parse(&email).unwrap_or_else(|e| panic!("{e}")));
    facts.first_name = Some("Riley".into());
    facts.version = 1;
    store
        .save_member_facts(account.id, &facts)
        .await
        .unwrap_or_else(|e| panic!("facts: {e}"));
    let created = engine
        .create_task(
            &account,
            NewTask {
                task_type: "churn_risk".into(),
                member_id: member,
                goal: "Re-engage Riley".into(),
                confidence: Some(80),
                draft: Some(Draft {
                    subject: "Checking in".into(),
                    body: "Hi Riley, we miss you!".into(),
                }),
                trigger_type: TriggerType::Manual,
                trigger_event_id: None,
                gate: GateContext::default(),
                context: serde_json::Value::Null,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("task: {e}"));
    let task = created.task().clone();
    let approved = engine
        .approve(account.id, task.id, None)
        .await
        .unwrap_or_else(|e| panic!("approve: {e}"));
    let item = WorkItem {
        account_id: account.id,
        task_id: task.id,
        due_at: approved.next_action_at.unwrap_or(approved.created_at),
    };
    (item, email)
}

pub fn sqs_event(item: &WorkItem, copies: usize) -> SqsEvent {
    let mut event = SqsEvent::default();
    for i in 0..copies {
        let mut record = SqsMessage::default();
        record.message_id = Some(format!("copy-{i}"));
        record.body = Some(serde_json::to_string(item).unwrap_or_default());
        event.records.push(record);
    }
    event
}

pub async fn sent_to(email: &str) -> usize {
    openloop_tests::ses_accepted().await.iter().filter(|m| m.to == email).count()
}

#[tokio::test]
async fn concurrent_executions_of_one_task_send_exactly_one_mail() {
    let scratch = Scratch::new("race");
    let (engine, store, _) = scratch.engine(None).await;
    let (item, email) = approved_task(&engine, &store).await;

    // 8 invocations at once, each with a batch holding the same item 4 times.
    let runs = (0..8).map(|_| openloop_fn_execute::handle(&engine, sqs_event(&item, 4)));
    let responses = futures::future::join_all(runs).await;
    assert!(
        responses.iter().all(|r| r.batch_item_failures.is_empty()),
        "losing a race is not a failure: {responses:?}"
    );

    assert_eq!(sent_to(&email).await, 1, "exactly one mail");
    let history = store
        .task_history(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("task"));
    let task = &history.task;
    assert_eq!(task.status, TaskStatus::Waiting);
    assert_eq!((task.touch, task.budget.messages_used), (1, 1));
    // Every version bump has exactly one log entry: create, approve, claim, reserve, sent.
    assert_eq!(task.version, 5);
    assert_eq!(history.log.len() as u64, task.version, "{:?}", history.log);
    assert_eq!(history.outbound.len(), 1);
}

/// The same member reply delivered six times at once — as a mail provider's retries and SNS
/// redeliveries can — while followup workers race on the task: the reply is stored once and
/// read once, and every change has its log entry.
#[tokio::test]
async fn a_reply_delivered_many_times_at_once_is_stored_and_read_once() {
    let scratch = Scratch::new("reply-race");
    let (engine, store, _) = scratch.engine(None).await;
    let (item, email) = approved_task(&engine, &store).await;
    openloop_fn_execute::handle(&engine, sqs_event(&item, 1)).await;
    assert_eq!(sent_to(&email).await, 1);
    let sent = store
        .outbound(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let reply_to = scratch.reply_address(&item.task_id);
    let raw = format!(
        "From: Riley <{email}>\r\nTo: {reply_to}\r\nSubject: Re: Checking in\r\nMessage-ID: <race-reply@mail.example.net>\r\n\
         In-Reply-To: <{}>\r\nContent-Type: text/plain\r\n\r\nSee you Monday at 6pm!\r\n",
        sent[0].message_id
    );
    let deliveries = (0..6).map(|_| engine.receive_reply(raw.as_bytes()));
    let workers = (0..3).map(|_| openloop_fn_followup::handle(&engine, sqs_event(&item, 2)));
    let (outcomes, _) = futures::future::join(futures::future::join_all(deliveries), futures::future::join_all(workers)).await;
    let stored = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(openloop_core::engine::InboundOutcome::Stored { .. })))
        .count();
    assert_eq!(stored, 1, "{outcomes:?}");
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");

    let history = store
        .task_history(item.account_id, item.task_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("task"));
    let members = history
        .messages
        .iter()
        .filter(|m| m.role == openloop_core::task::Role::Member)
        .count();
    assert_eq!(members, 1, "stored once: {:?}", history.messages);
    assert_eq!(
        (history.task.status, history.task.outcome.as_deref(), history.task.budget.turns_used),
        (TaskStatus::Completed, Some("verbal_commitment"), 1),
        "read once"
    );
    assert_eq!(history.log.len() as u64, history.task.version, "{:?}", history.log);
    assert_eq!(sent_to(&email).await, 1, "nothing more was sent");
}

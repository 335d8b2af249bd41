//! What the loop races on DynamoDB (`loops.rs`, `loops_rest.rs`, `loops_step.rs`) share: an
//! account made as the API makes one (also the other races' gym, [`gym`]), six members with
//! their facts, a task opened by hand, and each member's check-in at a time.

use std::sync::Arc;

use openloop_aws::dynamo::DynamoStore;
use openloop_core::engine::{AccountSecrets, Engine, NewAccount, NewTask};
use openloop_core::kernel::ids::{Email, MemberId};
use openloop_core::members::event::{MemberEvent, MemberStatus, SignalEnvelope, WebhookEvent};
use openloop_core::members::member::MemberFacts;
use openloop_core::owner::account::Account;
use openloop_core::ports::prelude::*;
use openloop_core::task::TriggerType;
use openloop_local::clock::TestClock;
use openloop_tests::{Scratch, unique_prefix};

/// A loop race's engine on its own table, and an account named `name` in New York.
pub async fn race_account(scratch: &Scratch, name: &str) -> (Engine, DynamoStore, Arc<TestClock>, Account) {
    let (engine, store, clock) = scratch.engine(None).await;
    let account = gym(&engine, name).await;
    (engine, store, clock, account)
}

/// An account named `name` in New York, made as the API makes one (its own token hash).
pub async fn gym(engine: &Engine, name: &str) -> Account {
    let secrets = AccountSecrets {
        api_token: "t".into(),
        api_token_hash: unique_prefix("hash"),
        webhook_secret: "whsec_dGVzdA==".into(),
    };
    let input: NewAccount =
        serde_json::from_value(serde_json::json!({"name": name, "timezone": "America/New_York"})).unwrap_or_else(|e| panic!("{e}"));
    engine
        .create_account(input, secrets)
        .await
        .unwrap_or_else(|e| panic!("account: {e}"))
}

/// Six members `m_{prefix}0` … `m_{prefix}5` of `status`, called `first_name`, their facts
/// saved; with an address unless `email` is false.
pub async fn six_members(
    store: &DynamoStore,
    account: &Account,
    prefix: &str,
    status: MemberStatus,
    first_name: &str,
    email: bool,
) -> Vec<MemberId> {
    let mut members = Vec::new();
    for i in 0..6 {
        let member = MemberId::parse(&format!("m_{prefix}{i}")).unwrap_or_else(|e| panic!("{e}"));
        let mut facts = MemberFacts::new(member.clone());
        facts.status = Some(status);
        facts.first_name = Some(first_name.into());
        if email {
            facts.email = Email::parse(&format!("{}@example.com", member.as_str().replace('_', "-"))).ok();
        }
        facts.version = 1;
        store
            .save_member_facts(account.id, &facts)
            .await
            .unwrap_or_else(|e| panic!("facts: {e}"));
        members.push(member);
    }
    members
}

/// A task of `task_type` for `member` opened by hand, sure of itself, with no draft.
pub fn by_hand(task_type: &str, member: &MemberId, goal: &str) -> NewTask {
    NewTask {
        task_type: task_type.into(),
        member_id: member.clone(),
        goal: goal.into(),
        confidence: Some(90),
        draft: None,
        trigger_type: TriggerType::Manual,
        trigger_event_id: None,
        gate: Default::default(),
        context: serde_json::Value::Null,
    }
}

/// Each member's check-in at `now`, as the webhook delivers it.
pub fn checkins(account: &Account, members: &[MemberId], now: jiff::Timestamp) -> Vec<SignalEnvelope> {
    members
        .iter()
        .map(|member| SignalEnvelope {
            account_id: account.id,
            webhook_id: format!("checkin-{member}"),
            received_at: now,
            event: WebhookEvent {
                timestamp: now,
                event: MemberEvent::CheckinCreated {
                    member_id: member.clone(),
                    checked_in_at: now,
                    class_name: None,
                },
            },
        })
        .collect()
}

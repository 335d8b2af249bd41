//! A write DynamoDB applied whose answer was lost — a 500 after the write, which DynamoDB can
//! answer — and which the SDK's own retry then meets: the store recognises its own earlier
//! attempt every time. Before, a webhook's claim read its own item as "already claimed" and
//! the delivery was answered 202 duplicate and never stored; the brief's notice was skipped
//! as "already made"; a task's creation came back as a conflict.
//!
//! The store talks to the emulator through a proxy of this test's that forwards every
//! request and, for the first request carrying a marker, throws the emulator's answer away
//! and answers 500 instead.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use jiff::SignedDuration;
use openloop_aws::dynamo::DynamoStore;
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::members::member::MemberFacts;
use openloop_core::ports::prelude::*;
use openloop_core::task::TaskStatus;
use openloop_core::task::reason::Reason;
use openloop_core::task::transition::{Why, created};
use openloop_core::testing::sample_task_for;
use openloop_tests::Scratch;
use openloop_tests::fault_proxy::{Upstream, dynamodb_error};

#[derive(Clone)]
struct Proxy {
    upstream: String,
    client: reqwest::Client,
    /// Markers whose first request loses its answer; taken when used.
    lose: Arc<Mutex<Vec<String>>>,
    /// How many answers were lost.
    lost: Arc<Mutex<u32>>,
    /// Markers whose first transaction is cancelled as conflicting with another one on its
    /// items (nothing applied); taken when used.
    conflict: Arc<Mutex<Vec<String>>>,
}

async fn forward(State(proxy): State<Proxy>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let text = String::from_utf8_lossy(&body).into_owned();
    let conflicted = {
        let mut markers = proxy.conflict.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match markers
            .iter()
            .position(|m| text.contains(m.as_str()) && text.contains("TransactItems"))
        {
            Some(at) => {
                markers.remove(at);
                true
            }
            None => false,
        }
    };
    if conflicted {
        // Another transaction is writing the first item (a creation's active-task guard), as
        // DynamoDB answers it: that item's reason `TransactionConflict`, the others' `None`.
        let items = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|b| b["TransactItems"].as_array().map(Vec::len))
            .unwrap_or(1);
        let reasons: Vec<serde_json::Value> = (0..items)
            .map(|i| match i {
                0 => serde_json::json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}),
                _ => serde_json::json!({"Code": "None"}),
            })
            .collect();
        let body = serde_json::json!({"__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled", "CancellationReasons": reasons});
        return (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/x-amz-json-1.0")],
            body.to_string(),
        )
            .into_response();
    }
    let Some(answer) = Upstream::ask(&proxy.client, &proxy.upstream, method, &uri, &headers, body).await else {
        return (StatusCode::BAD_GATEWAY, "the emulator did not answer").into_response();
    };
    let lose = {
        let mut markers = proxy.lose.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match markers.iter().position(|m| text.contains(m.as_str())) {
            Some(at) if answer.status.is_success() => {
                markers.remove(at);
                true
            }
            _ => false,
        }
    };
    if lose {
        *proxy.lost.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        return dynamodb_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "com.amazonaws.dynamodb.v20120810#InternalServerError",
            "the answer was lost",
        );
    }
    answer.answer()
}

/// A store on `table` whose requests go through a losing proxy; the proxy's markers and count.
async fn lossy_store(clients: &openloop_edge::config::Clients, table: &str) -> (DynamoStore, Proxy) {
    let proxy = Proxy {
        upstream: openloop_tests::endpoint(),
        client: reqwest::Client::new(),
        lose: Arc::default(),
        lost: Arc::default(),
        conflict: Arc::default(),
    };
    let app = axum::Router::new().fallback(forward).with_state(proxy.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = clients.dynamodb.config().to_builder().endpoint_url(url).build();
    (DynamoStore::new(aws_sdk_dynamodb::Client::from_conf(config), table), proxy)
}

fn lose_next(proxy: &Proxy, marker: &str) {
    proxy
        .lose
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(marker.to_owned());
}

fn lost(proxy: &Proxy) -> u32 {
    *proxy.lost.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[tokio::test]
async fn a_write_applied_whose_answer_was_lost_is_recognised_as_our_own() {
    let scratch = Scratch::new("lost-answers");
    let (config, clients) = scratch.provision().await;
    let (store, proxy) = lossy_store(&clients, &config.table).await;
    let now = openloop_tests::morning(1);

    // A webhook's claim: the first delivery is claimed, though its answer was lost; the
    // sender's own redelivery is the duplicate.
    lose_next(&proxy, "evt_lost_answer_1");
    let week = now + SignedDuration::from_hours(24 * 7);
    assert!(
        store
            .claim_webhook("pushpress", "evt_lost_answer_1", now, week)
            .await
            .expect("claim"),
        "our own claim, applied once"
    );
    assert_eq!(lost(&proxy), 1, "the answer was lost, and the SDK tried again");
    assert!(
        !store
            .claim_webhook("pushpress", "evt_lost_answer_1", now, week)
            .await
            .expect("again"),
        "a redelivery is still a duplicate"
    );

    // A task's creation, one transaction: created once, not a conflict.
    let account = AccountId::generate(now);
    let member = MemberId::parse("m_lost_answer").expect("member");
    let task = sample_task_for(account, member.clone(), TaskStatus::PendingReview, now);
    lose_next(&proxy, &task.id.to_string());
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("created once, though its answer was lost");
    assert_eq!(lost(&proxy), 2);
    let stored = store.get_task(account, task.id).await.expect("read").expect("stored");
    assert_eq!(stored.version, task.version);

    // A member's facts, a conditional update: saved, not a lost race.
    let mut facts = MemberFacts::new(member.clone());
    facts.first_name = Some("Ana".into());
    facts.version = 1;
    lose_next(&proxy, "m_lost_answer");
    store.save_member_facts(account, &facts).await.expect("saved once");
    assert_eq!(lost(&proxy), 3);
    let (read, _) = store.get_member(account, &member).await.expect("read").expect("stored");
    assert_eq!(read.first_name.as_deref(), Some("Ana"));

    // Someone else's write is still a conflict: a second version 1 of the facts.
    assert!(store.save_member_facts(account, &facts).await.is_err(), "not ours");
}

/// Issue 47: a transaction cancelled because another was writing its items
/// (`TransactionConflict`) says nothing of that other one, which may yet fail. It is a race to
/// try again, never "a task is already active" or "already claimed": before, a creation whose
/// guard met a conflict came back as `ActiveTask`, and the member's event opened nothing.
#[tokio::test]
async fn a_transaction_cancelled_by_a_conflicting_one_is_a_race_to_try_again() {
    let scratch = Scratch::new("tx-conflict");
    let (config, clients) = scratch.provision().await;
    let (store, proxy) = lossy_store(&clients, &config.table).await;
    let now = openloop_tests::morning(1);
    let account = AccountId::generate(now);
    let member = MemberId::parse("m_conflict").expect("member");
    let task = sample_task_for(account, member, TaskStatus::PendingReview, now);
    let why = created(&task, Why::new(Reason::ManualModeRequiresReview));
    proxy
        .conflict
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(task.id.to_string());
    let refused = store.create_task(&task, &why, &[]).await;
    assert!(
        matches!(
            refused,
            Err(openloop_core::kernel::error::StoreError::Conflict(
                openloop_core::kernel::error::Conflict::Version
            ))
        ),
        "a race, not a held guard: {refused:?}"
    );
    assert!(store.get_task(account, task.id).await.expect("read").is_none(), "nothing applied");
    store.create_task(&task, &why, &[]).await.expect("the second try opens it");
}

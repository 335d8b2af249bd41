//! A task's loops through CONTRACT.md: the task's view shows the open loops `GET
//! /api/v1/loops` lists for it, its next step is due at the first of their deadlines, and a
//! payment resolved meets its goal loop — the task settles, what it still waited on closes
//! with it, and no follow-up goes.

use jiff::{SignedDuration, Timestamp};
use openloop_tests::Stack;
use serde_json::{Value, json};

use crate::morning;

fn deadline(l: &Value) -> Timestamp {
    l["deadline"].as_str().and_then(|d| d.parse().ok()).unwrap_or_else(|| panic!("{l}"))
}

#[tokio::test]
async fn the_tasks_view_shows_the_loops_it_waits_on_and_a_payment_resolved_settles_them() {
    let stack = Stack::start("loops-step").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_pay", "Pat", morning(1)).await;
    let id = stack.approved_task(&gym, "payment_recovery", "m_pay").await;
    stack.run().await;
    let (status, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!((status, task["touch"].as_u64()), (200, Some(1)), "the first touch went: {task}");

    // The view's open loops are the task's records, as the loops endpoint lists them.
    let shown = task["open_loops"].as_array().cloned().unwrap_or_else(|| panic!("{task}"));
    let (status, body) = stack.get("/api/v1/loops?status=open&member_id=m_pay", &gym.token).await;
    assert_eq!(status, 200, "{body}");
    let listed = body["loops"].as_array().cloned().unwrap_or_default();
    assert_eq!((shown.len(), listed.len()), (2, 2), "{shown:?} {listed:?}");
    for l in &listed {
        assert_eq!(l["task_id"], id.as_str());
        let view = shown
            .iter()
            .find(|s| s["id"] == l["id"])
            .unwrap_or_else(|| panic!("{l} not in {shown:?}"));
        assert_eq!(
            (&view["expects"], &view["on_deadline"], deadline(view)),
            (&l["expects"], &l["on_deadline"], deadline(l))
        );
    }
    let first = shown.iter().map(deadline).min();
    assert_eq!(
        Some(stack.due_at(&gym, &id).await),
        first,
        "the next step is due at the first deadline"
    );
    assert!(shown.iter().any(|l| l["expects"] == "payment_resolved"), "{shown:?}");

    // The payment goes through: its loop is met and the task settles.
    let at = (stack.now().await + SignedDuration::from_hours(2)).to_string();
    stack.set_clock(&at).await;
    let (status, body) = stack
        .webhook(
            &gym,
            "evt_paid",
            json!({"type": "payment.succeeded", "timestamp": at, "data": {"member_id": "m_pay", "amount": 89.0, "currency": "USD", "paid_at": at}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    let (_, body) = stack.get("/api/v1/loops?member_id=m_pay", &gym.token).await;
    let all = body["loops"].as_array().cloned().unwrap_or_default();
    let goal = all
        .iter()
        .find(|l| l["expects"] == "payment_resolved")
        .unwrap_or_else(|| panic!("{all:?}"));
    assert_eq!(
        (goal["status"].as_str(), goal["met_by"].as_str()),
        (Some("met"), Some("payment.succeeded:evt_paid"))
    );
    let reply = all.iter().find(|l| l["expects"] == "reply").unwrap_or_else(|| panic!("{all:?}"));
    assert_eq!(reply["status"], "expired", "what the task waited on closes with it: {all:?}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (task["status"].as_str(), task["outcome"].as_str()),
        (Some("completed"), Some("recovered")),
        "{task}"
    );
    assert!(task.get("open_loops").is_none(), "nothing left open: {task}");

    // Past every deadline: no follow-up.
    let past = (stack.now().await + SignedDuration::from_hours(24 * 10)).to_string();
    stack.set_clock(&past).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "only the first touch went");
}

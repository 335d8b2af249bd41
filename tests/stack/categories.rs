//! Task categories beyond e-mail through CONTRACT.md and the test clock: a recurring
//! template spawns a research task that writes its report; a staff to-do reminds and escalates.

use openloop_tests::{Stack, reasons};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn a_recurring_template_spawns_research_that_reports_and_completes() {
    let stack = Stack::start("recurring").await;
    let gym = stack.create_account("manual").await;

    let (status, bad) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "monthly_churn_analysis", "cron": "every month"}),
        )
        .await;
    assert_eq!((status, bad["error"]["code"].as_str()), (422, Some("invalid_cron")), "{bad}");
    let (status, template) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "monthly_churn_analysis", "cron": "0 9 * * *", "max_instances": 3}),
        )
        .await;
    assert_eq!(status, 201, "{template}");
    let next_at = template["next_at"].as_str().expect("next_at").to_owned();

    stack.set_clock(&next_at).await;
    stack.run().await;
    let (_, list) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let tasks = list["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 1, "one instance: {list}");
    assert_eq!(tasks[0]["task_type"], "monthly_churn_analysis");
    assert_eq!(tasks[0]["draft"], serde_json::Value::Null, "research drafts no e-mail");
    let id = tasks[0]["id"].as_str().expect("id").to_owned();

    let (status, approved) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{approved}");
    stack.run().await;
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["outcome"], "insufficient_data", "a new gym has nothing to report on yet");
    assert!(
        done["deliverable"]["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("# Churn analysis")),
        "{done}"
    );

    let (_, templates) = stack.get("/api/v1/recurring", &gym.token).await;
    assert_eq!(templates["templates"][0]["instances_created"], 1, "{templates}");
    let template_id = template["id"].as_str().expect("id");
    let (status, _) = stack
        .call(Method::DELETE, &format!("/api/v1/recurring/{template_id}"), Some(&gym.token), None)
        .await;
    assert_eq!(status, 200);
    let (status, _) = stack
        .call(Method::DELETE, &format!("/api/v1/recurring/{template_id}"), Some(&gym.token), None)
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_staff_todo_reminds_then_escalates_without_mailing_anyone() {
    let stack = Stack::start("staff-todo").await;
    let gym = stack.create_account("manual").await;
    let (status, created) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "staff_call_member", "member_id": "m_call", "goal": "Call Dana about her shoulder"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, started) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(started["status"], "waiting", "{started}");

    let start = jiff::Timestamp::now();
    for day in [1, 2, 3] {
        stack
            .set_clock(&(start + jiff::SignedDuration::from_hours(24 * day + 1)).to_string())
            .await;
        stack.run().await;
    }
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(done["status"], "escalated", "{done}");
    let reasons: Vec<&str> = done["log"]
        .as_array()
        .expect("log")
        .iter()
        .filter_map(|l| l["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"staff_todo_reminder"), "{reasons:?}");
    assert_eq!(done["budget"]["messages_used"], 0, "a to-do never messages the member");
}

/// Given an approved win-back with a required staff call added as its subtask, when the call
/// is made, then the parent completes at the next run — and nobody was mailed. A subtask of an
/// unknown parent is 404, and `requirement` belongs to subtasks only.
#[tokio::test]
async fn a_parent_task_completes_when_its_required_subtask_does() {
    let stack = Stack::start("subtasks").await;
    // Inside the send window, so that no mail means none was due.
    stack.set_clock(&crate::morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_parent", "Alex", stack.now().await).await;
    let parent = stack.approved_task(&gym, "win_back", "m_parent").await;
    let call = json!({"task_type": "staff_call_member", "member_id": "m_parent", "goal": "Call Alex", "requirement": "required"});
    let (status, sub) = stack
        .post(&format!("/api/v1/tasks/{parent}/subtasks"), &gym.token, call.clone())
        .await;
    assert_eq!(status, 201, "{sub}");
    assert_eq!(
        (sub["parent_id"].as_str(), sub["requirement"].as_str()),
        (Some(parent.as_str()), Some("required"))
    );
    let sub_id = sub["id"].as_str().expect("id").to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{sub_id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, waiting) = stack.get(&format!("/api/v1/tasks/{parent}"), &gym.token).await;
    assert_eq!(waiting["status"], "waiting", "{waiting}");
    assert_eq!(waiting["subtask_ids"], json!([sub_id]));

    let (status, _) = stack
        .post(
            &format!("/api/v1/tasks/{sub_id}/resolve"),
            &gym.token,
            json!({"outcome": "completed"}),
        )
        .await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, done) = stack.get(&format!("/api/v1/tasks/{parent}"), &gym.token).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str()),
        (Some("completed"), Some("subtasks_completed")),
        "{done}"
    );
    assert!(
        stack.outbox_to(&email).await.is_empty(),
        "a parent and a to-do never mail the member"
    );

    let unknown = ulid::Ulid::new();
    let (status, body) = stack
        .post(&format!("/api/v1/tasks/{unknown}/subtasks"), &gym.token, call.clone())
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = stack.post("/api/v1/tasks", &gym.token, call).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_requirement")),
        "{body}"
    );
}

/// Given two members, when the owner makes one churn batch for both, then the parent (about
/// the whole business) lists a subtask per member, and once approved each member gets their
/// own mail; a batch with no members is refused.
#[tokio::test]
async fn a_batch_gives_each_member_their_own_subtask() {
    let stack = Stack::start("batch").await;
    let now = crate::morning(1);
    stack.set_clock(&now.to_string()).await;
    let gym = stack.create_account("manual").await;
    let emails = [
        stack.member(&gym, "m_batch_1", "Ana", now).await,
        stack.member(&gym, "m_batch_2", "Ben", now).await,
    ];
    let body = json!({"task_type": "churn_risk", "member_ids": ["m_batch_1", "m_batch_2"], "goal": "Invite them to the open gym", "confidence": 80});
    let (status, batch) = stack.post("/api/v1/tasks/batch", &gym.token, body).await;
    assert_eq!(status, 201, "{batch}");
    assert_eq!(batch["parent"]["member"]["id"], "_account", "{batch}");
    assert_eq!(batch["parent"]["subtask_ids"].as_array().map(Vec::len), Some(2), "{batch}");
    assert_eq!(batch["refused"], json!([]));
    for subtask in batch["subtasks"].as_array().expect("subtasks") {
        let id = subtask["id"].as_str().expect("id");
        let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200);
    }
    stack.run().await;
    for email in &emails {
        assert_eq!(stack.outbox_to(email).await.len(), 1, "{email}");
    }
    let empty = json!({"task_type": "churn_risk", "member_ids": [], "goal": "Nobody"});
    let (status, body) = stack.post("/api/v1/tasks/batch", &gym.token, empty).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_member_ids")),
        "{body}"
    );
}

/// Given an owner's goal with `"planning": "agent"` and the offline agent, when it runs, then
/// the agent adds one reviewed step at a time — the outreach first; after the owner skips it, a
/// staff call — and once the owner records the call as done the goal is met. The parent never
/// mails anyone.
#[tokio::test]
async fn the_agent_plans_a_goal_one_reviewed_step_at_a_time() {
    let stack = Stack::start("planning").await;
    stack.set_clock(&crate::morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_planned", "Robin", stack.now().await).await;
    let body = json!({"task_type": "ad_hoc", "member_id": "m_planned", "goal": "Get Robin back to the 7am class", "planning": "agent"});
    let (status, parent) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{parent}");
    assert_eq!(
        (parent["planning"].as_str(), &parent["draft"]),
        (Some("agent"), &serde_json::Value::Null)
    );
    let id = parent["id"].as_str().expect("id").to_owned();
    let (status, approved) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{approved}");
    stack.run().await;

    let (_, planned) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert!(reasons(&planned).contains(&"agent_planned_step"), "{planned}");
    let first = planned["subtask_ids"][0].as_str().expect("a first step").to_owned();
    let (_, step) = stack.get(&format!("/api/v1/tasks/{first}"), &gym.token).await;
    assert_eq!(step["status"], "pending_review", "the agent's step waits for the owner: {step}");
    assert!(
        ["churn_risk", "lead_followup", "win_back", "payment_recovery"].contains(&step["task_type"].as_str().unwrap_or_default()),
        "{step}"
    );
    let (status, _) = stack.post(&format!("/api/v1/tasks/{first}/skip"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;

    let (_, replanned) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let second = replanned["subtask_ids"][1].as_str().expect("a second step").to_owned();
    let (_, call) = stack.get(&format!("/api/v1/tasks/{second}"), &gym.token).await;
    assert_eq!(
        (call["task_type"].as_str(), call["requirement"].as_str()),
        (Some("staff_call_member"), Some("required"))
    );
    let (status, _) = stack
        .post(
            &format!("/api/v1/tasks/{second}/resolve"),
            &gym.token,
            json!({"outcome": "completed"}),
        )
        .await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(stack.outbox_to(&email).await.is_empty(), "nobody mailed the member");
}

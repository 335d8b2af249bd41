//! Automation tasks and the action executor through the owner API as
//! CONTRACT.md describes it.

use openloop_tests::{Stack, reasons};
use serde_json::json;

/// Given the owner API, when automation tasks are created, then bad action lists are refused
/// with clear codes, a good one is shown on the task, and once approved the internal actions
/// run and the task completes — tags included, kept by Openloop since PushPress has none —
/// while a status change is refused because PushPress offers no such call.
#[tokio::test]
async fn automation_tasks_are_made_and_run_through_the_api() {
    let stack = Stack::start("actions-api").await;
    let gym = stack.create_account("manual").await;
    for (body, code) in [
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Tidy up"}),
            "actions_required",
        ),
        (
            json!({"task_type": "churn_risk", "member_id": "m_a", "goal": "Bring back", "actions": [{"type": "tag_member", "tag": "vip"}]}),
            "actions_not_allowed",
        ),
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Mail", "actions": [{"type": "send_email"}]}),
            "unsupported_action",
        ),
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Go", "actions": [{"type": "launch"}]}),
            "unknown_action_type",
        ),
        (
            json!({"task_type": "member_update", "member_id": "m_a", "goal": "Freeze", "actions": [{"type": "update_member_status", "status": "frozen"}]}),
            "unsupported_action",
        ),
    ] {
        let (status, error) = stack.post("/api/v1/tasks", &gym.token, body).await;
        assert_eq!((status, error["error"]["code"].as_str()), (422, Some(code)), "{error}");
    }
    let (_, none) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(none["tasks"].as_array().map(Vec::len), Some(0), "refusals create nothing: {none}");

    let body = json!({"task_type": "member_update", "member_id": "m_a", "goal": "Note the freeze",
        "actions": [{"type": "log_note", "text": "Asked to freeze in December"}, {"type": "research_member"}]});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["status"], "pending_review");
    assert_eq!(
        created["actions"][0],
        json!({"type": "log_note", "text": "Asked to freeze in December"})
    );
    let id = created["id"].as_str().expect("id").to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, done) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (done["status"].as_str(), done["outcome"].as_str()),
        (Some("completed"), Some("executed")),
        "{done}"
    );
    let messages: Vec<&str> = done["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(messages.iter().any(|m| m.contains("Asked to freeze in December")), "{messages:?}");

    let body = json!({"task_type": "member_update", "member_id": "m_b", "goal": "Tag",
        "actions": [{"type": "tag_member", "tag": "vip"}]});
    let (_, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    let id = created["id"].as_str().expect("id").to_owned();
    stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    stack.run().await;
    let (_, tagged) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(tagged["status"], "completed", "no PushPress needed: {tagged}");
    assert!(!reasons(&tagged).contains(&"no_connector_configured"), "{tagged}");
    assert!(tagged.to_string().contains("in Openloop"), "{tagged}");
}

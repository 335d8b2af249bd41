//! The learning loop through CONTRACT.md (issue 16): business memories are kept per account,
//! refused when malformed, deleted once, and the next AI call of a task about the member
//! reads them — the task view names the memories its last call used.

use openloop_tests::Stack;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn a_memory_the_owner_saves_is_used_by_the_next_draft_and_stays_in_its_account() {
    let stack = Stack::start("learning-memories").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;
    stack.member(&gym, "m_sam", "Sam", day0).await;
    stack.run().await;

    let (status, business) = stack
        .post(
            "/api/v1/memories",
            &gym.token,
            json!({"content": "Members here answer evening messages.", "category": "pattern"}),
        )
        .await;
    assert_eq!(status, 201, "{business}");
    assert_eq!(
        (
            business["source"].as_str(),
            business["confidence"].as_u64(),
            business["member_id"].is_null()
        ),
        (Some("owner"), Some(100), true),
        "{business}"
    );
    let (status, about_sam) = stack
        .post(
            "/api/v1/memories",
            &gym.token,
            json!({"content": "Sam is back from a knee injury.", "member_id": "m_sam", "expires_at": "2030-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(status, 201, "{about_sam}");
    for bad in [
        json!({"content": ""}),
        json!({"content": "x".repeat(1_001)}),
        json!({"content": "ok", "expires_at": "2020-01-01T00:00:00Z"}),
        json!({"content": "ok", "member_id": "not a member id"}),
        json!({"content": "ok", "surprise": true}),
    ] {
        let (status, body) = stack.post("/api/v1/memories", &gym.token, bad.clone()).await;
        assert!(matches!(status, 400 | 422), "{bad} → {status} {body}");
        assert!(body["error"]["code"].is_string(), "the contract's error shape: {body}");
    }
    let (status, listed) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = listed["memories"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids.len(), 2, "only what was valid was kept: {listed}");
    let (_, elsewhere) = stack.get("/api/v1/memories", &other.token).await;
    assert_eq!(elsewhere["memories"], json!([]), "another account sees none");
    let business_id = business["id"].as_str().unwrap_or_default();
    let (status, _) = stack
        .call(Method::DELETE, &format!("/api/v1/memories/{business_id}"), Some(&other.token), None)
        .await;
    assert_eq!(status, 404, "another account cannot delete it");

    // The first draft of a task about Sam is the agent's: it read both memories.
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_sam", "goal": "Bring Sam back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap_or_default();
    let (_, view) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let mut used: Vec<&str> = view["memories_used"]
        .as_array()
        .map(|m| m.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    used.sort_unstable();
    let mut expected = vec![business_id, about_sam["id"].as_str().unwrap_or_default()];
    expected.sort_unstable();
    assert_eq!(used, expected, "{view}");

    let (status, body) = stack
        .call(Method::DELETE, &format!("/api/v1/memories/{business_id}"), Some(&gym.token), None)
        .await;
    assert_eq!(status, 204, "{body}");
    let (status, _) = stack
        .call(Method::DELETE, &format!("/api/v1/memories/{business_id}"), Some(&gym.token), None)
        .await;
    assert_eq!(status, 404, "deleted once");
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "win_back", "member_id": "m_sam", "goal": "Win Sam back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    assert_eq!(
        task["memories_used"],
        json!([about_sam["id"]]),
        "a deleted memory is never read again: {task}"
    );
}

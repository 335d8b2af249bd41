//! Plans on the dashboard and in the API: a plan-mode task shows its steps; the
//! owner edits a step, reorders, removes one, or has the agent plan again — through `PUT
//! /api/v1/tasks/{id}/plan`, `POST /api/v1/tasks/{id}/plan/replan` and the task page's forms
//! (with the session's CSRF token) — and each change is kept as feedback; dry-run tasks wear
//! their badge on the task page and in the review queue.

use openloop_tests::{Stack, morning, reasons};
use serde_json::{Value, json};

use crate::dashboard::sign_in;

fn steps(task: &Value) -> Vec<String> {
    task["plan"]["steps"]
        .as_array()
        .map(|s| s.iter().map(|s| s["description"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

async fn call(stack: &Stack, method: reqwest::Method, path: &str, token: &str, body: Value) -> (u16, Value) {
    stack.call(method, path, Some(token), Some(body)).await
}

#[tokio::test]
async fn the_owner_edits_reorders_removes_and_replans_a_plan_through_the_api() {
    let stack = Stack::start("plans-api").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let rival = stack.create_account("manual").await;
    stack.member(&gym, "m_pia", "Pia", day0).await;
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_pia", "goal": "Bring Pia back", "execution_mode": "plan",
                "draft": {"subject": "We miss you", "body": "Hi Pia, come back soon."}}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap_or_default().to_owned();
    let before = steps(&task);
    assert_eq!(before.len(), 3, "{task}");
    let version = task["version"].as_u64().unwrap_or_default();
    let plan = format!("/api/v1/tasks/{id}/plan");

    // Bad input changes nothing: an unknown step, a step twice, no step, another account.
    for body in [
        json!({"steps": [{"step_number": 9}]}),
        json!({"steps": [{"step_number": 1}, {"step_number": 1}]}),
        json!({"steps": []}),
        json!({"steps": [{"step_number": 1, "description": ""}]}),
    ] {
        let (status, error) = call(&stack, reqwest::Method::PUT, &plan, &gym.token, body).await;
        assert_eq!(status, 422, "{error}");
        assert_eq!(error["error"]["code"], "invalid_plan", "{error}");
    }
    let (status, error) = call(
        &stack,
        reqwest::Method::PUT,
        &plan,
        &rival.token,
        json!({"steps": [{"step_number": 1}]}),
    )
    .await;
    assert_eq!(status, 404, "{error}");
    let (_, unchanged) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(unchanged["version"].as_u64(), Some(version), "nothing changed: {unchanged}");

    // Step 1 rewritten, steps 2 and 1 swapped, step 3 removed: in one edit.
    let edit = json!({"version": version, "steps": [
        {"step_number": 2},
        {"step_number": 1, "draft_content": "Subject: Your spot is waiting\n\nPia, Thursday 6pm still has your name on it."},
    ]});
    let (status, edited) = call(&stack, reqwest::Method::PUT, &plan, &gym.token, edit.clone()).await;
    assert_eq!(status, 200, "{edited}");
    assert_eq!(steps(&edited), [before[1].clone(), before[0].clone()]);
    assert_eq!(edited["plan"]["steps"][0]["step_number"], 1);
    assert_eq!(
        edited["plan"]["steps"][0]["timing"], task["plan"]["steps"][0]["timing"],
        "timing stays with the position"
    );
    assert_eq!(edited["budget"]["messages_max"], 2, "{edited}");
    let changes: Vec<&str> = edited["plan"]["feedback"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["change"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(changes, ["edited", "removed", "reordered"], "{edited}");
    assert!(reasons(&stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await.1).contains(&"owner_edited_plan"));
    // The same edit on the old version: the task changed since.
    let (status, stale) = call(&stack, reqwest::Method::PUT, &plan, &gym.token, edit).await;
    assert_eq!((status, stale["error"]["code"].as_str()), (409, Some("stale_version")), "{stale}");

    let (status, replanned) = stack
        .post(
            &format!("{plan}/replan"),
            &gym.token,
            json!({"instructions": "Don't mention the promotion, just check in"}),
        )
        .await;
    assert_eq!(status, 200, "{replanned}");
    assert_eq!(steps(&replanned).len(), 3, "a new plan: {replanned}");
    assert_eq!(replanned["budget"]["messages_max"], 3, "{replanned}");
    let last = &replanned["plan"]["feedback"][3];
    assert_eq!(
        (last["kind"].as_str(), last["edited"].as_str()),
        (Some("instruction"), Some("Don't mention the promotion, just check in"))
    );
    let (status, error) = stack
        .post(&format!("{plan}/replan"), &gym.token, json!({"instructions": " "}))
        .await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (422, Some("invalid_instructions")),
        "{error}"
    );

    // Approved, the plan no longer changes.
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let (status, late) = call(
        &stack,
        reqwest::Method::PUT,
        &plan,
        &gym.token,
        json!({"steps": [{"step_number": 1}]}),
    )
    .await;
    assert_eq!((status, late["error"]["code"].as_str()), (409, Some("invalid_state")), "{late}");
    let (status, late) = stack
        .post(&format!("{plan}/replan"), &gym.token, json!({"instructions": "again"}))
        .await;
    assert_eq!(status, 409, "{late}");
    stack.running.stop();
}

#[tokio::test]
async fn the_task_page_shows_the_plan_and_its_forms_change_it_with_the_sessions_csrf() {
    let stack = Stack::start("plans-app").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_pia", "Pia", day0).await;
    stack.member(&gym, "m_dry", "Dru", day0).await;
    let (_, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_pia", "goal": "Bring Pia back", "execution_mode": "plan",
                "draft": {"subject": "We miss you", "body": "Hi Pia, come back soon."}}),
        )
        .await;
    let id = task["id"].as_str().unwrap_or_default().to_owned();
    let (status, dry) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_dry", "goal": "Bring Dru back", "execution_mode": "dry_run",
                "draft": {"subject": "Hi", "body": "Hi Dru"}}),
        )
        .await;
    assert_eq!(status, 201, "{dry}");
    let dry = dry["id"].as_str().unwrap_or_default().to_owned();

    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get(&format!("/app/tasks/{id}")).await;
    assert_eq!(status, 200);
    for n in 1..=3 {
        assert!(page.contains(&format!("data-plan-step=\"{n}\"")), "step {n} shown: {page}");
    }
    for verb in ["Save step", "Move up", "Move down", "Remove step", "Plan again"] {
        assert!(page.contains(&format!(">{verb}</button>")), "{verb}: {page}");
    }
    assert!(page.contains("data-mode>plan<"), "the plan badge: {page}");
    let (_, dry_page) = owner.get(&format!("/app/tasks/{dry}")).await;
    assert!(dry_page.contains("data-mode>dry run<"), "the dry-run badge on its page: {dry_page}");
    let (_, review) = owner.get("/app/review").await;
    assert!(
        review.contains("data-mode>dry run<"),
        "the dry-run badge in the review queue: {review}"
    );

    let version = task["version"].as_u64().unwrap_or_default().to_string();
    // Without the session's CSRF token nothing changes.
    let (status, _) = owner
        .post(&format!("/app/tasks/{id}/plan/steps/3/remove"), &[("version", version.as_str())])
        .await;
    assert_eq!(status, 403);
    let (status, to) = owner
        .post(
            &format!("/app/tasks/{id}/plan/steps/1/save"),
            &[
                ("csrf", &owner.csrf),
                ("version", version.as_str()),
                ("description", "A short personal note"),
                ("draft_content", "Subject: Hey Pia\r\n\r\nPia, your spot is waiting."),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, format!("/app/tasks/{id}?done=plan_edited").as_str()));
    // The page's old version: refused in words, nothing changed.
    let (status, page) = owner
        .post_page(
            &format!("/app/tasks/{id}/plan/steps/1/down"),
            &[("csrf", &owner.csrf), ("version", version.as_str())],
        )
        .await;
    assert_eq!(status, 409, "{page}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let version = task["version"].as_u64().unwrap_or_default().to_string();
    assert_eq!(steps(&task)[0], "A short personal note");
    assert_eq!(task["draft"]["subject"], "Hey Pia", "the first step is the first message: {task}");
    assert_eq!(task["draft"]["body"], "Pia, your spot is waiting.");

    let (status, _) = owner
        .post(
            &format!("/app/tasks/{id}/plan/steps/1/down"),
            &[("csrf", &owner.csrf), ("version", version.as_str())],
        )
        .await;
    assert_eq!(status, 303);
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(steps(&task)[1], "A short personal note", "moved down: {task}");
    let version = task["version"].as_u64().unwrap_or_default().to_string();
    let (status, _) = owner
        .post(
            &format!("/app/tasks/{id}/plan/steps/3/remove"),
            &[("csrf", &owner.csrf), ("version", version.as_str())],
        )
        .await;
    assert_eq!(status, 303);
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(steps(&task).len(), 2, "removed: {task}");
    let (status, to) = owner
        .post(
            &format!("/app/tasks/{id}/plan/replan"),
            &[("csrf", &owner.csrf), ("instructions", "Keep it to two lines")],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, format!("/app/tasks/{id}?done=replanned").as_str()));
    let (_, page) = owner.get(&format!("/app/tasks/{id}?done=replanned")).await;
    assert!(page.contains("You asked for a new plan: Keep it to two lines"), "{page}");
    assert!(page.contains("You removed step 3"), "{page}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let kinds: Vec<&str> = task["plan"]["feedback"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["change"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(kinds, ["edited", "edited", "reordered", "removed", "replanned"], "{task}");
    stack.running.stop();
}

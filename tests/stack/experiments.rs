//! Message experiments through CONTRACT.md ("Honest lift"): an accepted skill suggestion run as
//! an experiment splits the new tasks between its current and proposed versions (each task
//! says which), `GET /api/v1/experiments` reports both with the lift's interval; a planted win
//! is offered and kept when the owner says so; one that shows nothing ends at its time limit
//! with its change undone. What cannot run as an experiment is refused in the error shape.

use jiff::SignedDuration;
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::learning::suggestion::{ProposedChange, Strength, Suggestion, SuggestionDraft, SuggestionKind};
use openloop_tests::{Account, Stack};
use serde_json::{Value, json};

/// A pending suggestion of `kind` proposing `change`, as the evaluator would have made it
/// (seeded in the store: the weeks of closed tasks behind it cannot be lived here).
pub(crate) async fn seeded_suggestion(
    stack: &Stack,
    gym: &Account,
    kind: SuggestionKind,
    change: ProposedChange,
    fingerprint: &str,
) -> String {
    let account: AccountId = gym.id.parse().expect("account id");
    let now = stack.now().await;
    let draft = SuggestionDraft {
        kind,
        title: format!("Try: {fingerprint}"),
        body: "From the closed tasks.".into(),
        evidence: json!({}),
        strength: Strength::Strong,
        confidence: 90,
        fingerprint: fingerprint.into(),
        change,
    };
    let s = Suggestion::new(account, draft, "weekly_batch", openloop_core::kernel::ids::new_ulid(now), now);
    assert!(stack.running.store.create_suggestion(&s).await.expect("suggest"));
    s.id.to_string()
}

fn skill() -> ProposedChange {
    ProposedChange::Skill {
        task_type: "churn_risk".into(),
        guidance: "Mention the new 6am class by name.".into(),
    }
}

/// `n` closed churn-risk tasks of `variant` in `experiment`, `won` of them retained (seeded).
async fn seeded_results(stack: &Stack, gym: &Account, experiment: &str, variant: &str, n: usize, won: usize) {
    use openloop_core::task::TaskStatus;
    use openloop_core::task::commit::TaskCommit;
    use openloop_core::task::experiment::{ExperimentArm, Variant};
    use openloop_core::task::reason::Reason;
    use openloop_core::task::transition::{Why, created, transition};
    let account: AccountId = gym.id.parse().expect("account id");
    let store = stack.running.store.clone();
    let now = stack.now().await;
    for i in 0..n {
        let member = MemberId::parse(&format!("m_{variant}_{i}")).expect("member");
        let mut task = openloop_core::testing::sample_task_for(account, member, TaskStatus::Waiting, now);
        task.task_type = "churn_risk".into();
        task.experiment = Some(ExperimentArm {
            experiment_id: experiment.parse().expect("experiment id"),
            variant: if variant == "proposed" {
                Variant::Proposed
            } else {
                Variant::Current
            },
        });
        store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        let (to, outcome) = if i < won {
            (TaskStatus::Completed, "retained")
        } else {
            (TaskStatus::Cancelled, "unresponsive")
        };
        let (done, log) = transition(&task, to, now, Why::new(Reason::MessageSent).outcome(outcome)).expect("close");
        store.commit(&TaskCommit::new(done, log)).await.expect("close");
    }
}

async fn experiments(stack: &Stack, gym: &Account) -> Vec<Value> {
    let (status, body) = stack.get("/api/v1/experiments", &gym.token).await;
    assert_eq!(status, 200, "{body}");
    body["experiments"].as_array().cloned().unwrap_or_default()
}

async fn started(stack: &Stack, gym: &Account) -> (String, String) {
    let sid = seeded_suggestion(stack, gym, SuggestionKind::Skill, skill(), "skill:churn:6am").await;
    let (status, accepted) = stack
        .post(&format!("/api/v1/suggestions/{sid}/accept"), &gym.token, json!({}))
        .await;
    assert_eq!((status, accepted["status"].as_str()), (200, Some("applied")), "{accepted}");
    let (status, experiment) = stack
        .post(&format!("/api/v1/suggestions/{sid}/experiment"), &gym.token, json!({}))
        .await;
    assert_eq!(status, 201, "{experiment}");
    assert_eq!(
        (experiment["status"].as_str(), experiment["suggestion_id"].as_str()),
        (Some("running"), Some(sid.as_str()))
    );
    (sid, experiment["id"].as_str().unwrap_or_default().to_owned())
}

/// Given an accepted skill suggestion, when the owner runs it as an experiment and opens 30
/// churn-risk tasks, each task names its version and both versions get some; the experiment
/// reports both. A planted win, once the hourly run has seen it, is offered; the owner keeps it.
#[tokio::test]
async fn an_experiment_splits_new_tasks_reports_both_versions_and_a_planted_win_is_kept() {
    let stack = Stack::start("experiments-split").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;

    // Refusals, in the error shape, nothing started.
    let pending = seeded_suggestion(&stack, &gym, SuggestionKind::Skill, skill(), "skill:pending").await;
    let (status, body) = stack
        .post(&format!("/api/v1/suggestions/{pending}/experiment"), &gym.token, json!({}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("suggestion_not_applied")),
        "{body}"
    );
    let memory = ProposedChange::Memory {
        content: "Members like the 6am class.".into(),
        category: None,
    };
    let memory = seeded_suggestion(&stack, &gym, SuggestionKind::Memory, memory, "memory:6am").await;
    let (status, _) = stack
        .post(&format!("/api/v1/suggestions/{memory}/accept"), &gym.token, json!({}))
        .await;
    assert_eq!(status, 200);
    let (status, body) = stack
        .post(&format!("/api/v1/suggestions/{memory}/experiment"), &gym.token, json!({}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("experiment_not_supported")),
        "{body}"
    );
    let (status, body) = stack
        .post("/api/v1/suggestions/01ARZ3NDEKTSV4RRFFQ69G5FAV/experiment", &gym.token, json!({}))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{body}");
    assert!(experiments(&stack, &gym).await.is_empty());

    let (sid, id) = started(&stack, &gym).await;
    let (status, body) = stack
        .post(&format!("/api/v1/suggestions/{sid}/experiment"), &gym.token, json!({}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("experiment_running")),
        "{body}"
    );
    let (status, _) = stack
        .post(&format!("/api/v1/suggestions/{sid}/experiment"), &other.token, json!({}))
        .await;
    assert_eq!(status, 404, "another account's suggestion is not found");
    assert!(experiments(&stack, &other).await.is_empty(), "another account sees none of it");

    // New tasks: each names its version; both versions get some.
    let mut versions = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..30 {
        let member = format!("m_exp_{i}");
        stack.member(&gym, &member, "Sam", day0).await;
        let (status, task) = stack
            .post(
                "/api/v1/tasks",
                &gym.token,
                json!({"task_type": "churn_risk", "member_id": member, "goal": "Bring them back", "confidence": 80}),
            )
            .await;
        assert_eq!(status, 201, "{task}");
        assert_eq!(task["experiment"]["experiment_id"].as_str(), Some(id.as_str()), "{task}");
        *versions
            .entry(task["experiment"]["variant"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
    }
    assert_eq!(
        versions.keys().map(String::as_str).collect::<Vec<_>>(),
        ["current", "proposed"],
        "{versions:?}"
    );
    assert!(versions.values().all(|n| (5..=25).contains(n)), "about half and half: {versions:?}");
    let listed = experiments(&stack, &gym).await;
    let e = &listed[0];
    assert_eq!(
        (e["id"].as_str(), e["status"].as_str()),
        (Some(id.as_str()), Some("running")),
        "{e}"
    );
    let names: Vec<&str> = e["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(names, ["current", "proposed"], "{e}");
    assert!(e["verdict"].as_str().unwrap_or_default().starts_with("not enough tasks yet"), "{e}");

    // A planted win: 40 proposed, 30 retained; 40 current, 12. The hourly run offers it.
    seeded_results(&stack, &gym, &id, "proposed", 40, 30).await;
    seeded_results(&stack, &gym, &id, "current", 40, 12).await;
    stack.set_clock(&(day0 + SignedDuration::from_hours(2)).to_string()).await;
    stack.run().await;
    let e = experiments(&stack, &gym).await[0].clone();
    assert_eq!(e["status"], "won", "{e}");
    assert_eq!(
        e["variants"],
        json!([{"name": "current", "n": 40, "succeeded": 12, "rate": 0.3}, {"name": "proposed", "n": 40, "succeeded": 30, "rate": 0.75}]),
        "{e}"
    );
    assert!(e["ci95"][0].as_f64().unwrap_or_default() > 0.0, "{e}");
    assert!(
        e["verdict"].as_str().unwrap_or_default().starts_with("the proposed version wins"),
        "{e}"
    );
    let (_, notices) = stack.get("/api/v1/notifications", &gym.token).await;
    assert!(notices.to_string().contains("A message experiment has a winner"), "{notices}");

    let (status, kept) = stack.post(&format!("/api/v1/experiments/{id}/keep"), &gym.token, json!({})).await;
    assert_eq!((status, kept["status"].as_str()), (200, Some("kept")), "{kept}");
    let (status, body) = stack.post(&format!("/api/v1/experiments/{id}/end"), &gym.token, json!({})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("experiment_decided")),
        "{body}"
    );
    stack.member(&gym, "m_after", "Sam", day0).await;
    let (_, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_after", "goal": "Bring them back", "confidence": 80}),
        )
        .await;
    assert!(task["experiment"].is_null(), "kept: no more split: {task}");
}

/// Given a running experiment whose versions do equally well, when its 60 days pass, the
/// hourly run ends it and the suggestion's change is undone: the current version stays.
#[tokio::test]
async fn an_experiment_without_a_win_ends_at_its_time_limit_and_nothing_changes() {
    let stack = Stack::start("experiments-limit").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let (sid, id) = started(&stack, &gym).await;
    seeded_results(&stack, &gym, &id, "proposed", 40, 20).await;
    seeded_results(&stack, &gym, &id, "current", 40, 20).await;
    stack.set_clock(&(day0 + SignedDuration::from_hours(24 * 10)).to_string()).await;
    stack.run().await;
    assert_eq!(experiments(&stack, &gym).await[0]["status"], "running", "not before its time limit");

    stack.set_clock(&(day0 + SignedDuration::from_hours(24 * 61)).to_string()).await;
    stack.run().await;
    let e = experiments(&stack, &gym).await[0].clone();
    assert_eq!(e["status"], "ended", "{e}");
    assert!(
        e["verdict"]
            .as_str()
            .unwrap_or_default()
            .starts_with("ended without a win; the current version stays"),
        "{e}"
    );
    let (_, applied) = stack.get("/api/v1/suggestions?status=applied", &gym.token).await;
    assert!(!applied.to_string().contains(&sid), "the change is undone: {applied}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert!(settings["learned"].is_null() || settings["learned"] == json!([]), "{settings}");
}

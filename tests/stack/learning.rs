//! The learning loop through CONTRACT.md: business memories are kept per account,
//! refused when malformed, deleted once, and the next AI call of a task about the member
//! reads them — the task view names the memories its last call used.

use jiff::SignedDuration;
use openloop_core::kernel::ids::{AccountId, MemberId};
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

/// A closed task of `account` created `days_ago`, whose first message left at `utc_hour` that
/// day and was answered or not (seeded in the store: a month of history cannot be lived here).
pub(crate) async fn seeded_closed_task(stack: &Stack, account: AccountId, i: usize, days_ago: i64, utc_hour: i64, answered: bool) {
    use openloop_core::task::TaskStatus;
    use openloop_core::task::commit::TaskCommit;
    use openloop_core::task::reason::Reason;
    use openloop_core::task::transition::{Why, created, record, transition};
    let store = stack.running.store.clone();
    let now = stack.now().await;
    let day = (now - SignedDuration::from_hours(24 * days_ago))
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .expect("utc")
        .timestamp();
    let member = MemberId::parse(&format!("m_seed_{i}")).expect("member");
    let task = openloop_core::testing::sample_task_for(account, member, TaskStatus::Waiting, day);
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    let sent_at = day + SignedDuration::from_hours(utc_hour);
    let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
    sent.touch = 1;
    sent.execution_started_at = Some(sent_at);
    sent.budget.turns_used = u32::from(answered);
    store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
    let to = if answered { TaskStatus::Completed } else { TaskStatus::Cancelled };
    let (done, log) = transition(&sent, to, sent_at + SignedDuration::from_hours(48), Why::new(Reason::MessageSent)).expect("close");
    store.commit(&TaskCommit::new(done, log)).await.expect("close");
}

/// The check: a month with a dozen evening sends all answered (19:00 in New York) and
/// a dozen morning ones (09:00) none. A task's close fires the evaluation; the owner sees one
/// timing suggestion whose evidence is the data, accepts it, and the next draft reads it; a
/// second account sees none of it.
#[tokio::test]
async fn a_month_of_evening_replies_becomes_a_suggestion_the_owner_accepts_into_the_next_prompt() {
    let stack = Stack::start("learning-suggestions").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let other = stack.create_account("manual").await;
    let account: AccountId = gym.id.parse().expect("account id");
    for i in 0..12 {
        seeded_closed_task(&stack, account, i, 2 + 2 * i as i64, 24, true).await;
        seeded_closed_task(&stack, account, 100 + i, 3 + 2 * i as i64, 14, false).await;
    }
    stack.member(&gym, "m_sam", "Sam", day0).await;
    stack.run().await;
    let (_, none_yet) = stack.get("/api/v1/suggestions", &gym.token).await;
    assert_eq!(none_yet["suggestions"], json!([]), "nothing has fired the evaluation yet");

    // A task closes (the owner cancels one in review): TaskClosed fires the evaluation.
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "win_back", "member_id": "m_sam", "goal": "Win Sam back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap_or_default();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let ran = stack.run().await;
    assert_eq!(ran["evaluation"]["suggested"], 1, "{ran}");

    let (status, listed) = stack.get("/api/v1/suggestions?status=pending", &gym.token).await;
    assert_eq!(status, 200, "{listed}");
    let suggestions = listed["suggestions"].as_array().cloned().unwrap_or_default();
    assert_eq!(suggestions.len(), 1, "{listed}");
    let timing = &suggestions[0];
    assert_eq!(
        (timing["kind"].as_str(), timing["status"].as_str()),
        (Some("memory"), Some("pending"))
    );
    assert_eq!(timing["strength"], "strong");
    for (group, replied) in [("evening", 12), ("morning", 0)] {
        assert_eq!(timing["evidence"][group]["sent"], 12, "{timing}");
        assert_eq!(timing["evidence"][group]["replied"], replied, "{timing}");
    }
    let (_, theirs) = stack.get("/api/v1/suggestions", &other.token).await;
    assert_eq!(theirs["suggestions"], json!([]), "a second account sees none of it");
    let (status, bad) = stack.get("/api/v1/suggestions?status=maybe", &gym.token).await;
    assert_eq!((status, bad["error"]["code"].as_str()), (422, Some("invalid_status")));
    let sid = timing["id"].as_str().unwrap_or_default();
    let (status, _) = stack
        .post(&format!("/api/v1/suggestions/{sid}/accept"), &other.token, json!({}))
        .await;
    assert_eq!(status, 404, "another account cannot accept it");

    let (status, accepted) = stack
        .post(&format!("/api/v1/suggestions/{sid}/accept"), &gym.token, json!({}))
        .await;
    assert_eq!((status, accepted["status"].as_str()), (200, Some("applied")), "{accepted}");
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    let saved = memories["memories"][0].clone();
    assert_eq!(saved["source"], "evaluator", "{memories}");
    let (status, next) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_sam", "goal": "Bring Sam back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{next}");
    assert_eq!(next["memories_used"], json!([saved["id"]]), "the next draft read it: {next}");
    let (_, applied) = stack.get("/api/v1/suggestions?status=applied", &gym.token).await;
    assert_eq!(applied["suggestions"].as_array().map(Vec::len), Some(1));
}

/// The cross-business evaluation through the contract: three gyms of one type, each with a week of evening
/// sends answered and morning ones not; when the month turns, the monthly evaluation finds the
/// pattern, each gym's settings say its data helped one, and the gym that stopped sharing
/// before the run is neither counted nor credited.
#[tokio::test]
async fn the_monthly_evaluation_credits_each_business_whose_data_helped_a_pattern() {
    let stack = Stack::start("learning-network").await;
    // The 15th of next month (the clock only moves forward), so the week lies in one month.
    let first_of = |t: jiff::Timestamp, months: i64| {
        t.to_zoned(jiff::tz::TimeZone::UTC)
            .date()
            .first_of_month()
            .checked_add(jiff::Span::new().months(months))
            .expect("date")
            .to_zoned(jiff::tz::TimeZone::UTC)
            .expect("utc")
            .timestamp()
    };
    let day0 = first_of(crate::morning(1), 1) + SignedDuration::from_hours(24 * 14 + 13);
    stack.set_clock(&day0.to_string()).await;
    let mut gyms = Vec::new();
    for _ in 0..4 {
        let gym = stack.create_account("manual").await;
        let (status, body) = stack
            .call(
                Method::PUT,
                "/api/v1/settings",
                Some(&gym.token),
                Some(json!({"profile": {"business_type": "CrossFit box"}})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let account: AccountId = gym.id.parse().expect("account id");
        for i in 0..4 {
            seeded_closed_task(&stack, account, i, 3 + i as i64, 24, true).await;
            seeded_closed_task(&stack, account, 100 + i, 3 + i as i64, 14, false).await;
        }
        gyms.push(gym);
    }
    let private = gyms.pop().expect("a fourth gym");
    let (status, _) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&private.token),
            Some(json!({"share_learning": false})),
        )
        .await;
    assert_eq!(status, 200);
    let (_, before) = stack.get("/api/v1/settings", &gyms[0].token).await;
    assert_eq!(before["learning_patterns_helped"], 0, "{before}");

    // The month turns: its records are evaluated across businesses.
    let next_month = first_of(day0, 1) + SignedDuration::from_hours(4);
    stack.set_clock(&next_month.to_string()).await;
    let ran = stack.run().await;
    let monthly = &ran["monthly_evaluation"];
    assert_eq!(
        (monthly["withheld"].as_u64(), monthly["patterns"].as_u64()),
        (Some(8), Some(1)),
        "{ran}"
    );
    for gym in &gyms {
        let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
        assert_eq!(settings["learning_patterns_helped"], 1, "{settings}");
    }
    let owner = crate::dashboard::sign_in(&stack, &gyms[0]).await;
    let (_, page) = owner.get("/app/settings").await;
    assert!(page.contains("Your data helped 1 pattern across gyms."), "{page}");
    let (_, theirs) = stack.get("/api/v1/settings", &private.token).await;
    assert_eq!(
        theirs["learning_patterns_helped"], 0,
        "an account that does not share is not credited"
    );
}

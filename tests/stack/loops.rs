//! Open loops and triggers through CONTRACT.md ("Open loops and triggers"): a sent touch shows
//! an open loop with its deadline; a lead's booking without a check-in opens a no-show
//! follow-up; a trigger made through the API opens a task after its delay and not again
//! inside its re-entry window; a built-in trigger switched off opens nothing; a dry run
//! counts without creating.

use jiff::{SignedDuration, Timestamp};
use openloop_tests::{Account, Stack};
use serde_json::{Value, json};

use crate::morning;

async fn loops(stack: &Stack, gym: &Account, query: &str) -> Vec<Value> {
    let (status, body) = stack.get(&format!("/api/v1/loops{query}"), &gym.token).await;
    assert_eq!(status, 200, "{body}");
    body["loops"].as_array().cloned().unwrap_or_default()
}

async fn tasks_of(stack: &Stack, gym: &Account, member: &str) -> Vec<Value> {
    let (status, body) = stack.get(&format!("/api/v1/tasks?member_id={member}"), &gym.token).await;
    assert_eq!(status, 200, "{body}");
    body["tasks"].as_array().cloned().unwrap_or_default()
}

async fn event(stack: &Stack, gym: &Account, id: &str, kind: &str, data: Value) {
    let at = stack.now().await.to_string();
    let (status, body) = stack.webhook(gym, id, json!({"type": kind, "timestamp": at, "data": data})).await;
    assert_eq!(status, 202, "{body}");
}

async fn checkin(stack: &Stack, gym: &Account, id: &str, member: &str) {
    let at = stack.now().await.to_string();
    event(
        stack,
        gym,
        id,
        "checkin.created",
        json!({"member_id": member, "checked_in_at": at, "class_name": "WOD"}),
    )
    .await;
}

async fn later(stack: &Stack, by: SignedDuration) -> Timestamp {
    let to = stack.now().await + by;
    stack.set_clock(&to.to_string()).await;
    stack.run().await;
    to
}

#[tokio::test]
async fn a_sent_touch_shows_an_open_loop_with_its_deadline_and_a_checkin_meets_its_goal() {
    let stack = Stack::start("loops-touch").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_loop", "Lou", morning(1)).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_loop").await;
    stack.run().await;
    let (_, sent) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(sent["touch"], 1, "the first touch went: {sent}");

    let open = loops(&stack, &gym, "?status=open&member_id=m_loop").await;
    let reply = open.iter().find(|l| l["expects"] == "reply").unwrap_or_else(|| panic!("{open:?}"));
    assert_eq!(reply["task_id"], id.as_str());
    assert_eq!(reply["on_deadline"], "follow_up");
    let deadline: Timestamp = reply["deadline"]
        .as_str()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(deadline, stack.due_at(&gym, &id).await, "a reply is expected by the follow-up");
    assert!(
        open.iter().any(|l| l["expects"] == "checkin" && l["task_id"] == id.as_str()),
        "{open:?}"
    );

    checkin(&stack, &gym, "evt_checkin", "m_loop").await;
    stack.run().await;
    let met = loops(&stack, &gym, "?status=met").await;
    assert_eq!(met.len(), 1, "{met:?}");
    assert_eq!(
        (met[0]["expects"].as_str(), met[0]["met_by"].as_str()),
        (Some("checkin"), Some("checkin.created:evt_checkin"))
    );
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(task["status"], "completed", "{task}");

    let (status, body) = stack.get("/api/v1/loops?status=pending", &gym.token).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_status")), "{body}");
}

#[tokio::test]
async fn a_leads_reservation_without_a_checkin_opens_a_no_show_follow_up() {
    let stack = Stack::start("loops-trial").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    // The risk scan's own lead follow-up is switched off: only the booking's loop acts here.
    let (status, off) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/triggers/new_lead",
            Some(&gym.token),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(status, 200, "{off}");
    let at = stack.now().await.to_string();
    for lead in ["m_came", "m_missed"] {
        let email = format!("{lead}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-");
        event(
            &stack,
            &gym,
            &format!("evt_{lead}"),
            "member.created",
            json!({"member_id": lead, "email": email, "first_name": "Lee", "status": "lead", "joined_at": at}),
        )
        .await;
        let class = (stack.now().await + SignedDuration::from_hours(26)).to_string();
        event(
            &stack,
            &gym,
            &format!("evt_book_{lead}"),
            "trial.booked",
            json!({"member_id": lead, "booked_for": class}),
        )
        .await;
    }
    stack.run().await;
    let open = loops(&stack, &gym, "?status=open").await;
    assert_eq!(open.len(), 2, "{open:?}");
    assert!(open.iter().all(|l| l["expects"] == "trial_attended"), "{open:?}");

    // One comes to the class; the other does not.
    later(&stack, SignedDuration::from_hours(26)).await;
    checkin(&stack, &gym, "evt_came", "m_came").await;
    later(&stack, SignedDuration::from_hours(6)).await;

    let missed = tasks_of(&stack, &gym, "m_missed").await;
    assert_eq!(missed.len(), 1, "{missed:?}");
    assert_eq!(missed[0]["task_type"], "lead_followup");
    assert!(
        tasks_of(&stack, &gym, "m_came").await.is_empty(),
        "the lead who came gets no no-show follow-up"
    );
    assert_eq!(loops(&stack, &gym, "?member_id=m_came").await[0]["status"], "met");
    assert_eq!(loops(&stack, &gym, "?member_id=m_missed").await[0]["status"], "expired");
}

#[tokio::test]
async fn a_trigger_made_through_the_api_opens_a_task_after_its_delay_and_not_again_inside_its_reentry_window() {
    let stack = Stack::start("loops-trigger").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_yoga", "Yara", morning(1)).await;
    let body = json!({"event": "checkin.created", "filter": {"class_name": "wod", "monthly_value": {"min": 100}},
        "task_type": "staff_call_member", "goal": "Call after their class", "delay_hours": 2, "reentry": "after_days", "reentry_days": 7});
    let (status, trigger) = stack.post("/api/v1/triggers", &gym.token, body).await;
    assert_eq!(status, 201, "{trigger}");
    assert_eq!(
        (
            trigger["builtin"].as_bool(),
            trigger["enabled"].as_bool(),
            trigger["fired_count"].as_u64()
        ),
        (Some(false), Some(true), Some(0))
    );
    let tid = trigger["id"].as_str().unwrap_or_default().to_owned();

    // The check-in sets it off; the task waits for the delay.
    checkin(&stack, &gym, "evt_c1", "m_yoga").await;
    stack.run().await;
    assert!(tasks_of(&stack, &gym, "m_yoga").await.is_empty(), "nothing before the delay");
    later(&stack, SignedDuration::from_hours(2)).await;
    let opened = tasks_of(&stack, &gym, "m_yoga").await;
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["task_type"], "staff_call_member");
    let first = opened[0]["id"].as_str().unwrap_or_default().to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{first}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);

    // Inside the re-entry window another check-in opens nothing.
    later(&stack, SignedDuration::from_hours(24)).await;
    checkin(&stack, &gym, "evt_c2", "m_yoga").await;
    later(&stack, SignedDuration::from_hours(3)).await;
    assert_eq!(tasks_of(&stack, &gym, "m_yoga").await.len(), 1, "not again within 7 days");

    // After it, again.
    later(&stack, SignedDuration::from_hours(24 * 7)).await;
    checkin(&stack, &gym, "evt_c3", "m_yoga").await;
    later(&stack, SignedDuration::from_hours(3)).await;
    assert_eq!(tasks_of(&stack, &gym, "m_yoga").await.len(), 2, "again after the window");

    let (_, list) = stack.get("/api/v1/triggers", &gym.token).await;
    let row = list["triggers"]
        .as_array()
        .and_then(|t| t.iter().find(|r| r["id"] == tid.as_str()).cloned())
        .unwrap_or_default();
    assert_eq!(row["fired_count"], 2, "{list}");

    // Switched off, it does nothing; removed, it is gone.
    let (status, off) = stack
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/triggers/{tid}"),
            Some(&gym.token),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!((status, off["enabled"].as_bool()), (200, Some(false)), "{off}");
    let (status, _) = stack
        .call(reqwest::Method::DELETE, &format!("/api/v1/triggers/{tid}"), Some(&gym.token), None)
        .await;
    assert_eq!(status, 204);
    let (status, body) = stack
        .call(reqwest::Method::DELETE, &format!("/api/v1/triggers/{tid}"), Some(&gym.token), None)
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{body}");
}

#[tokio::test]
async fn a_disabled_built_in_trigger_opens_nothing_and_a_dry_run_creates_nothing() {
    let stack = Stack::start("loops-builtin").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let (_, list) = stack.get("/api/v1/triggers", &gym.token).await;
    let rows = list["triggers"].as_array().cloned().unwrap_or_default();
    assert!(
        rows.iter()
            .any(|r| r["id"] == "payment_failed" && r["builtin"] == true && r["enabled"] == true),
        "{list}"
    );

    // A built-in row takes only its switch, and is never removed.
    let put = |body: Value| {
        stack.call(
            reqwest::Method::PUT,
            "/api/v1/triggers/payment_failed",
            Some(&gym.token),
            Some(body),
        )
    };
    let (status, body) = put(json!({"task_type": "ad_hoc"})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("builtin_trigger")), "{body}");
    let (status, body) = stack
        .call(reqwest::Method::DELETE, "/api/v1/triggers/payment_failed", Some(&gym.token), None)
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("builtin_trigger")), "{body}");
    let (status, off) = put(json!({"enabled": false})).await;
    assert_eq!((status, off["enabled"].as_bool()), (200, Some(false)), "{off}");

    let at = stack.now().await.to_string();
    stack.sarahs_payment_failed(&gym, &at).await;
    stack.run().await;
    assert!(tasks_of(&stack, &gym, "m_1").await.is_empty(), "a disabled built-in opens nothing");

    // Back on, the next failure opens payment recovery, and the firing is counted.
    put(json!({"enabled": true})).await;
    event(
        &stack,
        &gym,
        "evt_fail2",
        "payment.failed",
        json!({"member_id": "m_1", "amount": 150, "currency": "USD", "failed_at": at}),
    )
    .await;
    stack.run().await;
    let opened = tasks_of(&stack, &gym, "m_1").await;
    assert_eq!(opened.len(), 1, "{opened:?}");
    let (_, list) = stack.get("/api/v1/triggers", &gym.token).await;
    let row = list["triggers"]
        .as_array()
        .and_then(|t| t.iter().find(|r| r["id"] == "payment_failed").cloned())
        .unwrap_or_default();
    assert_eq!(row["fired_count"], 1, "{row}");

    // A dry run of a new row over the last 30 days: Sarah's failure, nothing created.
    let (status, trigger) = stack
        .post(
            "/api/v1/triggers",
            &gym.token,
            json!({"event": "payment.failed", "task_type": "staff_call_member", "reentry": "once", "enabled": false}),
        )
        .await;
    assert_eq!(status, 201, "{trigger}");
    let tid = trigger["id"].as_str().unwrap_or_default();
    let (status, dry) = stack.post(&format!("/api/v1/triggers/{tid}/dry-run"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(dry["would_open"], 1, "{dry}");
    assert_eq!(dry["members"][0]["id"], "m_1", "{dry}");
    assert_eq!(tasks_of(&stack, &gym, "m_1").await.len(), 1, "a dry run creates nothing");
    let (status, body) = stack.post("/api/v1/triggers/nope/dry-run", &gym.token, json!({})).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn the_settings_page_lists_the_triggers_and_switches_one_off() {
    let stack = Stack::start("loops-page").await;
    let gym = stack.create_account("manual").await;
    let owner = crate::dashboard::sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/settings").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("data-trigger-id=\"payment_failed\""), "{page}");
    assert!(page.contains("Switch off"), "{page}");

    let (status, location) = owner
        .post(
            "/app/settings/triggers/payment_failed",
            &[("csrf", &owner.csrf), ("enabled", "off")],
        )
        .await;
    assert_eq!((status, location.as_str()), (303, "/app/settings?done=trigger_off"));
    let (_, list) = stack.get("/api/v1/triggers", &gym.token).await;
    let row = list["triggers"]
        .as_array()
        .and_then(|t| t.iter().find(|r| r["id"] == "payment_failed").cloned())
        .unwrap_or_default();
    assert_eq!(row["enabled"], false, "{row}");
    let (_, page) = owner.get("/app/settings").await;
    assert!(page.contains("Switch on"), "the row now offers to switch it back on");

    // Without the session's CSRF token nothing changes.
    let (status, _) = owner.post("/app/settings/triggers/payment_failed", &[("enabled", "on")]).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_paused_task_takes_no_step_until_resumed_and_run_now_makes_it_due_at_once() {
    let stack = Stack::start("loops-pause").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_pause", "Pat", morning(1)).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_pause").await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "the first touch");
    let due = stack.due_at(&gym, &id).await;

    let (status, paused) = stack.post(&format!("/api/v1/tasks/{id}/pause"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{paused}");
    assert!(paused["paused_at"].is_string(), "{paused}");
    stack.set_clock(&(due + SignedDuration::from_hours(1)).to_string()).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "a paused task takes no step");

    let (status, resumed) = stack.post(&format!("/api/v1/tasks/{id}/resume"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{resumed}");
    assert!(resumed.get("paused_at").is_none(), "{resumed}");
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 2, "resumed, its overdue follow-up goes");

    // Run now, a day later: the next follow-up without waiting for its day (the member's
    // one mail a day and the send window still hold).
    stack.set_clock(&(due + SignedDuration::from_hours(25)).to_string()).await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 2, "nothing is due yet");
    let (status, ran) = stack.post(&format!("/api/v1/tasks/{id}/run-now"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{ran}");
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 3, "run now made the next step due at once");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let reasons = openloop_tests::reasons(&task);
    for reason in ["owner_paused", "owner_resumed", "owner_ran_now"] {
        assert!(reasons.contains(&reason), "{reason} logged: {reasons:?}");
    }

    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let (status, body) = stack.post(&format!("/api/v1/tasks/{id}/pause"), &gym.token, json!({})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("invalid_state")), "{body}");
}

#[tokio::test]
async fn a_recurring_template_pauses_resumes_runs_now_and_lists_its_runs() {
    let stack = Stack::start("loops-recurring").await;
    let gym = stack.create_account("manual").await;
    let (status, template) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "monthly_churn_analysis", "cron": "0 9 * * *", "max_instances": 5}),
        )
        .await;
    assert_eq!(status, 201, "{template}");
    let tid = template["id"].as_str().unwrap_or_default().to_owned();
    let next_at = template["next_at"].as_str().unwrap_or_default().to_owned();

    let (status, paused) = stack.post(&format!("/api/v1/recurring/{tid}/pause"), &gym.token, json!({})).await;
    assert_eq!((status, paused["paused"].as_bool()), (200, Some(true)), "{paused}");
    stack.set_clock(&next_at).await;
    stack.run().await;
    let (_, runs) = stack.get(&format!("/api/v1/recurring/{tid}/runs"), &gym.token).await;
    assert_eq!(runs["runs"], json!([]), "a paused template spawns nothing: {runs}");

    let (status, ran) = stack.post(&format!("/api/v1/recurring/{tid}/run-now"), &gym.token, json!({})).await;
    assert_eq!((status, ran["instances_created"].as_u64()), (200, Some(1)), "{ran}");
    let (status, resumed) = stack.post(&format!("/api/v1/recurring/{tid}/resume"), &gym.token, json!({})).await;
    assert_eq!((status, resumed["paused"].as_bool()), (200, Some(false)), "{resumed}");
    let resumed_next: Timestamp = resumed["next_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{resumed}"));
    assert!(resumed_next > stack.now().await, "the missed occurrence is not made up: {resumed}");

    let (_, runs) = stack.get(&format!("/api/v1/recurring/{tid}/runs"), &gym.token).await;
    let runs = runs["runs"].as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (runs[0]["found"].as_u64(), runs[0]["opened"].as_u64()),
        (Some(1), Some(1)),
        "{runs:?}"
    );
    assert_eq!(runs[0]["notified"], "owner", "the instance went to the owner's review");
    assert!(runs[0]["at"].is_string());

    let (status, body) = stack
        .post("/api/v1/recurring/01ARZ3NDEKTSV4RRFFQ69G5FAV/pause", &gym.token, json!({}))
        .await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn a_template_on_change_tells_the_owner_only_when_its_result_changes() {
    let stack = Stack::start("loops-notify").await;
    let gym = stack.create_account("manual").await;
    let (status, template) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "monthly_churn_analysis", "cron": "0 9 1 * *", "notify": "on_change"}),
        )
        .await;
    assert_eq!((status, template["notify"].as_str()), (201, Some("on_change")), "{template}");
    let tid = template["id"].as_str().unwrap_or_default().to_owned();
    let told = || async {
        let (_, feed) = stack.get("/api/v1/notifications", &gym.token).await;
        feed.to_string().matches("schedule ran").count()
    };
    // The first run opens the analysis: news. The second finds it still open: changed, news.
    // The third finds the same: nothing new to say.
    for expected in [1, 2, 2] {
        let (status, body) = stack.post(&format!("/api/v1/recurring/{tid}/run-now"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(told().await, expected);
    }
    let (_, runs) = stack.get(&format!("/api/v1/recurring/{tid}/runs"), &gym.token).await;
    let notified: Vec<_> = runs["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| r["notified"].clone())
        .collect();
    assert_eq!(notified, vec![Value::Null, json!("owner"), json!("owner")], "newest first: {runs}");
}

//! The owner's day through CONTRACT.md ("The owner's day") and the dashboard over HTTP: a
//! staff call becomes a to-do that is logged, snoozed and done; a check-in clears one; the
//! brief follows the account's state. The real browser's walk of `/app/todos` is in
//! `dashboard_browser.rs`.

use openloop_tests::{Account, Stack};
use serde_json::{Value, json};

use crate::dashboard::sign_in;

/// Sam (`m_sam`), with a phone, and an owner's staff call to him; returns the task's id.
async fn staff_call(stack: &Stack, gym: &Account) -> String {
    let at = stack.now().await.to_string();
    let email = format!("sam+{}@example.com", gym.id.to_ascii_lowercase());
    let event = json!({"type": "member.created", "timestamp": at, "data": {"member_id": "m_sam", "email": email, "first_name": "Sam",
        "status": "active", "joined_at": "2025-06-01T00:00:00Z", "monthly_value": 150, "phone": "+15555550100"}});
    let (status, body) = stack.webhook(gym, "evt_sam", event).await;
    assert_eq!(status, 202, "{body}");
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "staff_call_member", "member_id": "m_sam", "goal": "Call Sam about his knee"}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    task["id"].as_str().unwrap_or_default().to_owned()
}

/// A later day (`days` ahead of the stack's clock, in the gym's time zone), as a snooze takes it.
async fn days_ahead(stack: &Stack, days: i64) -> String {
    let today = stack.now().await.to_zoned(openloop_tests::new_york()).date();
    today
        .checked_add(jiff::Span::new().days(days))
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string()
}

async fn todos(stack: &Stack, gym: &Account, status: &str) -> Vec<Value> {
    let (code, body) = stack.get(&format!("/api/v1/todos?status={status}"), &gym.token).await;
    assert_eq!(code, 200, "{body}");
    body["todos"].as_array().cloned().unwrap_or_default()
}

/// Given an owner's staff call, the to-do is listed at once with the member's phone; a
/// contact is logged, it is snoozed out of the open list, and done settles the task.
#[tokio::test]
async fn a_staff_call_becomes_a_todo_that_is_logged_snoozed_and_done() {
    let stack = Stack::start("day-todos").await;
    let gym = stack.create_account("manual").await;
    let task_id = staff_call(&stack, &gym).await;
    let open = todos(&stack, &gym, "open").await;
    assert_eq!(open.len(), 1, "{open:?}");
    let todo = &open[0];
    assert_eq!(
        (
            todo["task_id"].as_str(),
            todo["kind"].as_str(),
            todo["what"].as_str(),
            todo["status"].as_str()
        ),
        (Some(task_id.as_str()), Some("call"), Some("Call Sam about his knee"), Some("open"))
    );
    assert_eq!(
        todo["member"],
        json!({"id": "m_sam", "name": "Sam", "phone": "+15555550100", "email": format!("sam+{}@example.com", gym.id.to_ascii_lowercase())})
    );
    assert!(
        todo["due_at"].is_string() && todo["contacts"] == json!([]) && todo.get("outcome").is_none(),
        "{todo}"
    );
    let id = todo["id"].as_str().unwrap_or_default().to_owned();

    let (status, logged) = stack
        .post(
            &format!("/api/v1/todos/{id}/contact"),
            &gym.token,
            json!({"kind": "call", "result": "no_answer", "note": "voicemail"}),
        )
        .await;
    assert_eq!(status, 200, "{logged}");
    assert_eq!(logged["contacts"][0]["result"], "no_answer");
    assert_eq!(logged["contacts"][0]["note"], "voicemail");
    let (status, body) = stack
        .post(
            &format!("/api/v1/todos/{id}/contact"),
            &gym.token,
            json!({"kind": "pigeon", "result": "reached"}),
        )
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_body")), "{body}");

    let (status, snoozed) = stack
        .post(
            &format!("/api/v1/todos/{id}/snooze"),
            &gym.token,
            json!({"until": days_ahead(&stack, 3).await}),
        )
        .await;
    assert_eq!((status, snoozed["status"].as_str()), (200, Some("snoozed")), "{snoozed}");
    assert!(snoozed["snoozed_until"].is_string());
    assert!(todos(&stack, &gym, "open").await.is_empty(), "snoozed out of the open list");
    assert_eq!(todos(&stack, &gym, "snoozed").await.len(), 1);
    let (status, body) = stack.get("/api/v1/todos?status=later", &gym.token).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_status")));
    let (status, body) = stack
        .post(&format!("/api/v1/todos/{id}/snooze"), &gym.token, json!({"until": "yesterday"}))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_until")));

    // Another account sees none of it.
    let other = stack.create_account("manual").await;
    assert!(todos(&stack, &other, "snoozed").await.is_empty());
    let (status, _) = stack.post(&format!("/api/v1/todos/{id}/done"), &other.token, json!({})).await;
    assert_eq!(status, 404);

    let (status, done) = stack
        .post(
            &format!("/api/v1/todos/{id}/done"),
            &gym.token,
            json!({"outcome": "completed", "note": "he's fine"}),
        )
        .await;
    assert_eq!(
        (status, done["status"].as_str(), done["outcome"].as_str()),
        (200, Some("done"), Some("completed"))
    );
    let (_, task) = stack.get(&format!("/api/v1/tasks/{task_id}"), &gym.token).await;
    assert_eq!(task["outcome"], "completed", "{task}");
    assert_eq!(todos(&stack, &gym, "done").await.len(), 1);
}

/// Given a staff call the owner accepted, when Sam checks in, then the to-do is done by
/// itself and says so, and the call closes as `member_returned`.
#[tokio::test]
async fn a_checkin_clears_the_call_by_itself() {
    let stack = Stack::start("day-checkin").await;
    let gym = stack.create_account("manual").await;
    let task_id = staff_call(&stack, &gym).await;
    let (status, _) = stack.post(&format!("/api/v1/tasks/{task_id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    stack.run().await;
    let at = stack.now().await.to_string();
    let (status, _) = stack
        .webhook(
            &gym,
            "evt_in",
            json!({"type": "checkin.created", "timestamp": at, "data": {"member_id": "m_sam", "checked_in_at": at}}),
        )
        .await;
    assert_eq!(status, 202);
    assert!(todos(&stack, &gym, "open").await.is_empty());
    let done = todos(&stack, &gym, "done").await;
    assert_eq!(done[0]["outcome"], "member_checked_in", "{done:?}");
    assert!(
        done[0]["note"]
            .as_str()
            .is_some_and(|n| n.starts_with("Done by itself: Sam checked in")),
        "{done:?}"
    );
    let (_, task) = stack.get(&format!("/api/v1/tasks/{task_id}"), &gym.token).await;
    assert_eq!(
        (task["status"].as_str(), task["outcome"].as_str()),
        (Some("completed"), Some("member_returned"))
    );
}

/// `/app/todos`: each to-do with `data-todo-id`, a `tel:` link, and the three buttons, each
/// the API's operation behind the session's CSRF token.
#[tokio::test]
async fn the_call_list_page_logs_snoozes_and_completes_a_todo() {
    let stack = Stack::start("day-todos-page").await;
    let gym = stack.create_account("manual").await;
    staff_call(&stack, &gym).await;
    let id = todos(&stack, &gym, "open").await[0]["id"].as_str().unwrap_or_default().to_owned();
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/todos").await;
    assert_eq!(status, 200, "{page}");
    for needle in [
        format!("data-todo-id=\"{id}\""),
        "href=\"tel:+15555550100\"".to_owned(),
        ">Log contact</button>".to_owned(),
        ">Snooze</button>".to_owned(),
        ">Done</button>".to_owned(),
    ] {
        assert!(page.contains(&needle), "{needle}: {page}");
    }
    let contact = format!("/app/todos/{id}/contact");
    let (status, _) = owner.post(&contact, &[("kind", "call"), ("result", "reached")]).await;
    assert_eq!(status, 403, "CSRF");
    let (status, to) = owner
        .post(
            &contact,
            &[
                ("csrf", &owner.csrf),
                ("kind", "call"),
                ("result", "reached"),
                ("note", "<b>ok</b>"),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/todos?done=contact"));
    let (_, page) = owner.get(&to).await;
    assert!(
        page.contains("&#60;b&#62;ok&#60;/b&#62;") && page.contains("role=\"status\">Contact logged."),
        "{page}"
    );
    let (status, _) = owner
        .post(
            &format!("/app/todos/{id}/snooze"),
            &[("csrf", &owner.csrf), ("until", &days_ahead(&stack, 7).await)],
        )
        .await;
    assert_eq!(status, 303);
    let (_, page) = owner.get("/app/todos").await;
    assert!(!page.contains(&format!("data-todo-id=\"{id}\"")), "snoozed: {page}");
    let (_, page) = owner.get("/app/todos?status=snoozed").await;
    assert!(page.contains(&format!("data-todo-id=\"{id}\"")), "{page}");
    let (status, _) = owner
        .post(&format!("/app/todos/{id}/done"), &[("csrf", &owner.csrf), ("outcome", "completed")])
        .await;
    assert_eq!(status, 303);
    let done = todos(&stack, &gym, "done").await;
    assert_eq!(done[0]["contacts"][0]["note"], "<b>ok</b>");
    let (status, _) = owner.get("/app/todos?status=later").await;
    assert_eq!(status, 422);
}

/// `GET /api/v1/brief` follows the account's state: empty for a new gym; then a staff call's
/// to-do comes first among the actions, a failing payment the agent is on is listed with its
/// task, a member gone 30 days is at risk; `/app/today` shows the same; at `brief_hour` the
/// owner gets one morning mail and no daily summary.
#[tokio::test]
async fn the_brief_follows_the_accounts_state_and_is_mailed_once_at_brief_hour() {
    let stack = Stack::start("day-brief").await;
    let gym = stack.create_account("manual").await;
    let owner_address = stack.give_owner_address(&gym).await;
    let (status, empty) = stack.get("/api/v1/brief", &gym.token).await;
    assert_eq!(status, 200, "{empty}");
    let today = empty["date"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        empty,
        json!({"date": today, "actions": [], "todos": [], "at_risk": [], "payments": [],
            "yesterday": {"retained": 0, "recovered": 0, "replies": 0, "escalations": 0, "sent": 0},
            "planned_today": 0, "review_expired": 0, "more": {"todos": 0, "at_risk": 0, "payments": 0}})
    );
    let (status, body) = stack.get("/api/v1/brief?date=tomorrow", &gym.token).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_date")));

    let now = stack.now().await;
    stack.sarahs_payment_failed(&gym, &now.to_string()).await;
    staff_call(&stack, &gym).await;
    let gone = (now - jiff::SignedDuration::from_hours(24 * 30)).to_string();
    stack
        .member(&gym, "m_gone", "Gina", now - jiff::SignedDuration::from_hours(24 * 400))
        .await;
    let (status, _) = stack
        .webhook(
            &gym,
            "evt_gone_in",
            json!({"type": "checkin.created", "timestamp": gone, "data": {"member_id": "m_gone", "checked_in_at": gone}}),
        )
        .await;
    assert_eq!(status, 202);

    let (_, brief) = stack.get("/api/v1/brief", &gym.token).await;
    let actions = brief["actions"].as_array().cloned().unwrap_or_default();
    assert!(actions.len() <= 3, "{brief}");
    assert_eq!(
        (actions[0]["kind"].as_str(), actions[0]["title"].as_str()),
        (Some("todo"), Some("Call Sam about his knee")),
        "{brief}"
    );
    assert!(actions[0]["todo_id"].is_string() && actions[0]["task_id"].is_string());
    assert!(actions.iter().any(|a| a["kind"] == "review"), "tasks wait for approval: {brief}");
    assert_eq!(brief["todos"][0]["member"]["phone"], "+15555550100", "a Todo: {brief}");
    assert_eq!(brief["payments"][0]["member_id"], "m_1");
    assert!(brief["payments"][0]["task_id"].is_string(), "the agent is on it: {brief}");
    let at_risk = &brief["at_risk"][0];
    assert_eq!(
        (
            at_risk["member_id"].as_str(),
            at_risk["days_since_checkin"].as_i64(),
            at_risk["monthly_value"].as_f64()
        ),
        (Some("m_gone"), Some(30), Some(150.0)),
        "{brief}"
    );

    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/today").await;
    assert_eq!(status, 200, "{page}");
    for needle in [
        "Do this now",
        "Call Sam about his knee",
        "Payment trouble",
        "Sarah",
        "Gina",
        "30 days",
        "href=\"tel:+15555550100\"",
    ] {
        assert!(page.contains(needle), "{needle}: {page}");
    }

    // The next morning at 07:10 in New York (brief_hour 7): one mail, the brief.
    let next_morning = openloop_tests::nine_in_new_york(
        now.to_zoned(openloop_tests::new_york())
            .date()
            .tomorrow()
            .unwrap_or_else(|e| panic!("{e}")),
    ) - jiff::SignedDuration::from_mins(110);
    stack.set_clock(&next_morning.to_string()).await;
    stack.run().await;
    stack.run().await;
    let mails = stack.outbox_to(&owner_address).await;
    let briefs: Vec<&Value> = mails
        .iter()
        .filter(|m| m["text"].as_str().is_some_and(|t| t.contains("Your morning brief")))
        .collect();
    assert_eq!(briefs.len(), 1, "{mails:?}");
    assert!(
        briefs[0]["subject"]
            .as_str()
            .is_some_and(|s| s.contains("Today: Call Sam about his knee")),
        "{:?}",
        briefs[0]
    );
    assert!(
        !mails
            .iter()
            .any(|m| m["subject"].as_str().is_some_and(|s| s.contains("daily summary"))),
        "one mail a day, not two"
    );
}

/// A closed task comes back within its window (`409 invalid_state` when open or too late);
/// a thumbs-down takes a reason.
#[tokio::test]
async fn a_closed_task_reopens_and_a_thumbs_down_keeps_its_reason() {
    let stack = Stack::start("day-reopen").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await;
    stack.member(&gym, "m_early", "Eli", now).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_early").await;
    let reopen = format!("/api/v1/tasks/{id}/reopen");
    let (status, body) = stack.post(&reopen, &gym.token, json!({"reason": "not done"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("invalid_state")),
        "open: {body}"
    );
    let (status, _) = stack
        .post(&format!("/api/v1/tasks/{id}/resolve"), &gym.token, json!({"outcome": "retained"}))
        .await;
    assert_eq!(status, 200);
    let (status, task) = stack.post(&reopen, &gym.token, json!({"reason": "she never came"})).await;
    assert_eq!((status, task["status"].as_str()), (200, Some("escalated")), "{task}");
    assert!(task["outcome"].is_null(), "{task}");

    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let feedback = format!("/api/v1/tasks/{id}/feedback");
    let (status, body) = stack
        .post(&feedback, &gym.token, json!({"rating": "down", "reason": "bogus"}))
        .await;
    assert_eq!(status, 422, "{body}");
    let (status, rated) = stack
        .post(
            &feedback,
            &gym.token,
            json!({"rating": "down", "reason": "wrong_tone", "comment": "too formal"}),
        )
        .await;
    assert_eq!((status, rated["feedback"]["reason"].as_str()), (200, Some("wrong_tone")), "{rated}");

    stack
        .set_clock(&(stack.now().await + jiff::SignedDuration::from_hours(24 * 60)).to_string())
        .await;
    let (status, body) = stack.post(&reopen, &gym.token, json!({"reason": "too late"})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("invalid_state")), "{body}");
}

/// `/app/conversations`: a conversation the agent started is listed with its last message
/// and its next step; the type filter narrows the list; an unknown type is refused.
#[tokio::test]
async fn conversations_in_progress_are_listed_with_their_last_message_and_next_step() {
    let stack = Stack::start("day-conversations").await;
    let day0 = openloop_tests::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_talk", "Tess", day0).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_talk").await;
    // 09:00 in New York: inside the first touch's hours, so it leaves at once.
    stack.run().await;
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(task["touch"], 1, "{task}");
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/conversations").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&format!("data-task-id=\"{id}\"")), "{page}");
    assert!(page.contains("Tess") && page.contains("Next: next step by the agent"), "{page}");
    let (_, page) = owner.get("/app/conversations?type=win_back").await;
    assert!(!page.contains(&format!("data-task-id=\"{id}\"")), "filtered: {page}");
    let (_, page) = owner.get("/app/conversations?type=churn_risk").await;
    assert!(page.contains(&format!("data-task-id=\"{id}\"")), "{page}");
    let (status, _) = owner.get("/app/conversations?type=bogus").await;
    assert_eq!(status, 422);
}

/// The churn report adds up against the members and the tasks: three members at the start of
/// the month, one cancels (with her reason), one task retains a member; the page shows the same.
#[tokio::test]
async fn the_churn_report_adds_up_against_the_members_and_tasks() {
    let stack = Stack::start("day-churn").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await;
    for (id, first) in [("m_a", "Ann"), ("m_b", "Bea"), ("m_c", "Cal")] {
        stack.member(&gym, id, first, now).await;
    }
    // Stamped after her member.created, so her status is the newer word.
    let at = (now + jiff::SignedDuration::from_secs(1)).to_string();
    let (status, _) = stack
        .webhook(
            &gym,
            "evt_b_leaves",
            json!({"type": "member.status_changed", "timestamp": at, "data": {"member_id": "m_b", "status": "cancelled",
                "previous_status": "active", "cancellation_reason": "moving away"}}),
        )
        .await;
    assert_eq!(status, 202);
    let id = stack.approved_task(&gym, "churn_risk", "m_a").await;
    let (status, _) = stack
        .post(&format!("/api/v1/tasks/{id}/resolve"), &gym.token, json!({"outcome": "retained"}))
        .await;
    assert_eq!(status, 200);
    let month = now.to_zoned(openloop_tests::new_york()).strftime("%Y-%m").to_string();
    let (status, report) = stack.get(&format!("/api/v1/reports/churn?month={month}"), &gym.token).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(
        (
            report["month"].as_str(),
            report["members_start"].as_u64(),
            report["members_end"].as_u64(),
            report["joined"].as_u64(),
            report["cancelled"].as_u64()
        ),
        (Some(month.as_str()), Some(3), Some(2), Some(0), Some(1)),
        "{report}"
    );
    assert_eq!(report["churn_rate"].as_f64(), Some(0.3333));
    assert_eq!(report["trend"].as_array().map(Vec::len), Some(12));
    // Her own reason first, then what the risk scan would have seen in her: no check-in ever.
    assert_eq!(
        report["reasons"],
        json!([{"reason": "moving away", "count": 1, "source": "cancellation"},
            {"reason": "risk scan: never checked in", "count": 1, "source": "risk_scan"}]),
        "{report}"
    );
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(report["saved_by_openloop"], 1);
    assert_eq!(
        report["revenue_retained"].as_f64(),
        Some(task["attributed_value"].as_f64().unwrap_or(0.0)),
        "{task}"
    );
    let (status, body) = stack.get("/api/v1/reports/churn?month=2026-13", &gym.token).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_month")));

    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get(&format!("/app/reports/churn?month={month}")).await;
    assert_eq!(status, 200, "{page}");
    for needle in [
        "data-field=\"members_start\">3<",
        "data-field=\"cancelled\">1<",
        "33.3%",
        "<strong>moving away: 1</strong>",
        "\u{201c}moving away\u{201d}: 1",
        "risk scan: never checked in: 1",
    ] {
        assert!(page.contains(needle), "{needle}: {page}");
    }
    // The month by its name, on the page and in its 12-month trend, never as `YYYY-MM`.
    let in_words = now.to_zoned(openloop_tests::new_york()).strftime("%B %Y").to_string();
    assert!(page.contains(&format!("Churn report · {in_words}")), "{page}");
    assert!(page.contains(&format!("<td>{in_words}</td>")), "{page}");
    let visible = page.replace(&format!("value=\"{month}\""), "");
    assert!(!visible.contains(&month), "the month as a code: {page}");
}

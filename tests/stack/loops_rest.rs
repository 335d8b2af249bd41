//! Open loops and triggers through CONTRACT.md, the rest: one check-in meets the loops of two
//! tasks at once and neither deadline fires afterwards; a row of the owner's on Openloop's own
//! `task_closed` opens its task (and dry-runs); a win reaches the owner as good news when its
//! schedule's policy asks (`on_win`), and `never` tells nothing; an overdue to-do is escalated
//! at its loop's deadline; a schedule that keeps finding nothing backs off.

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

async fn task(stack: &Stack, gym: &Account, id: &str) -> Value {
    let (status, body) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn checkin(stack: &Stack, gym: &Account, id: &str, member: &str) {
    let at = stack.now().await.to_string();
    let body = json!({"type": "checkin.created", "timestamp": at, "data": {"member_id": member, "checked_in_at": at}});
    let (status, body) = stack.webhook(gym, id, body).await;
    assert_eq!(status, 202, "{body}");
}

async fn later(stack: &Stack, by: SignedDuration) -> Timestamp {
    let to = stack.now().await + by;
    stack.set_clock(&to.to_string()).await;
    stack.run().await;
    to
}

/// The titles of the owner's notices.
async fn notices(stack: &Stack, gym: &Account) -> Vec<String> {
    let (status, feed) = stack.get("/api/v1/notifications", &gym.token).await;
    assert_eq!(status, 200, "{feed}");
    let list = feed
        .as_object()
        .and_then(|o| o.values().find_map(Value::as_array))
        .cloned()
        .unwrap_or_default();
    list.iter().filter_map(|n| n["title"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn one_checkin_meets_the_loops_of_two_tasks_and_neither_deadline_fires_afterwards() {
    let stack = Stack::start("loops-two").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_both", "Bo", morning(1)).await;
    let churn = stack.approved_task(&gym, "churn_risk", "m_both").await;
    let lead = stack.approved_task(&gym, "lead_followup", "m_both").await;
    stack.run().await;
    // One mail a day to a member: the second task's first touch goes the next morning.
    for day in 2..5 {
        if task(&stack, &gym, &churn).await["touch"] != 0 && task(&stack, &gym, &lead).await["touch"] != 0 {
            break;
        }
        stack.set_clock(&morning(day).to_string()).await;
        stack.run().await;
    }
    let goal_loops = |all: &[Value], id: &str| {
        all.iter()
            .filter(|l| l["task_id"] == id && l["expects"] == "checkin")
            .cloned()
            .collect::<Vec<_>>()
    };
    let open = loops(&stack, &gym, "?status=open&member_id=m_both").await;
    assert_eq!(
        (goal_loops(&open, &churn).len(), goal_loops(&open, &lead).len()),
        (1, 1),
        "each task waits for a check-in: {open:?}"
    );
    let sent = stack.outbox_to(&email).await.len();

    checkin(&stack, &gym, "evt_both", "m_both").await;
    stack.run().await;
    let met = loops(&stack, &gym, "?status=met&member_id=m_both").await;
    for id in [&churn, &lead] {
        let mine = goal_loops(&met, id);
        assert_eq!(mine.len(), 1, "{met:?}");
        assert_eq!(mine[0]["met_by"], "checkin.created:evt_both");
    }

    // Past every deadline: nothing expires of theirs, nothing more is sent.
    later(&stack, SignedDuration::from_hours(24 * 40)).await;
    let all = loops(&stack, &gym, "?member_id=m_both").await;
    for id in [&churn, &lead] {
        assert!(
            goal_loops(&all, id).iter().all(|l| l["status"] == "met"),
            "the met loops stay met: {all:?}"
        );
        assert_eq!(task(&stack, &gym, id).await["status"], "completed");
    }
    assert_eq!(stack.outbox_to(&email).await.len(), sent, "no follow-up after the check-in");
}

#[tokio::test]
async fn a_row_on_task_closed_made_through_the_api_opens_its_task_when_a_matching_task_closes() {
    let stack = Stack::start("loops-own-events").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_gave_up", "Gil", morning(1)).await;
    let body = json!({"event": "task_closed", "filter": {"task_type": "churn_risk", "task_status": "cancelled"},
        "task_type": "staff_call_member", "goal": "Call them yourself", "reentry": "once"});
    let (status, trigger) = stack.post("/api/v1/triggers", &gym.token, body).await;
    assert_eq!((status, trigger["event"].as_str()), (201, Some("task_closed")), "{trigger}");
    let tid = trigger["id"].as_str().unwrap_or_default().to_owned();

    let churn = stack.approved_task(&gym, "churn_risk", "m_gave_up").await;
    let (status, _) = stack.post(&format!("/api/v1/tasks/{churn}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let open: Vec<Value> = tasks_of(&stack, &gym, "m_gave_up")
        .await
        .into_iter()
        .filter(|t| t["status"] != "cancelled")
        .collect();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["task_type"], "staff_call_member");

    let (status, dry) = stack.post(&format!("/api/v1/triggers/{tid}/dry-run"), &gym.token, json!({})).await;
    assert_eq!((status, dry["would_open"].as_u64()), (200, Some(1)), "{dry}");
    assert_eq!(dry["members"][0]["id"], "m_gave_up", "{dry}");

    let (status, body) = stack
        .post(
            "/api/v1/triggers",
            &gym.token,
            json!({"event": "task.exploded", "task_type": "staff_call_member", "reentry": "once"}),
        )
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_event")), "{body}");
}

#[tokio::test]
async fn a_win_reaches_the_owner_as_good_news_under_on_win_and_never_tells_nothing() {
    let stack = Stack::start("loops-wins").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let mut ids = Vec::new();
    for (member, notify) in [("m_yay", "on_win"), ("m_hush", "never")] {
        stack.member(&gym, member, "Val", morning(1)).await;
        let (status, template) = stack
            .post(
                "/api/v1/recurring",
                &gym.token,
                json!({"task_type": "churn_risk", "member_id": member, "cron": "0 9 1 * *", "notify": notify}),
            )
            .await;
        assert_eq!((status, template["notify"].as_str()), (201, Some(notify)), "{template}");
        let tid = template["id"].as_str().unwrap_or_default();
        let (status, ran) = stack.post(&format!("/api/v1/recurring/{tid}/run-now"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{ran}");
        let id = tasks_of(&stack, &gym, member).await[0]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200);
        ids.push(id);
    }
    stack.run().await;
    stack.set_clock(&morning(2).to_string()).await;
    stack.run().await;
    for id in &ids {
        assert_eq!(task(&stack, &gym, id).await["touch"], 1, "the first touch went");
    }
    let good_news = |titles: Vec<String>| titles.into_iter().filter(|t| t.starts_with("Good news")).collect::<Vec<_>>();
    assert!(good_news(notices(&stack, &gym).await).is_empty());

    later(&stack, SignedDuration::from_hours(2)).await;
    checkin(&stack, &gym, "evt_yay", "m_yay").await;
    checkin(&stack, &gym, "evt_hush", "m_hush").await;
    stack.run().await;
    for id in &ids {
        assert_eq!(task(&stack, &gym, id).await["status"], "completed", "the member is back");
    }
    let news = good_news(notices(&stack, &gym).await);
    assert_eq!(news.len(), 1, "the on_win schedule's member only: {news:?}");
    assert!(news[0].contains("Val"), "{news:?}");
}

#[tokio::test]
async fn an_overdue_to_do_is_escalated_at_its_loops_deadline_once() {
    let stack = Stack::start("loops-todo").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_call", "Cal", morning(1)).await;
    let body = json!({"task_type": "staff_call_member", "member_id": "m_call", "goal": "Call Cal about their plan"});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{created}");
    let (_, todos) = stack.get("/api/v1/todos?status=open", &gym.token).await;
    let todo = todos["todos"][0].clone();
    assert_eq!(todo["task_id"], created["id"], "on the call list from its first minute: {todos}");
    let open = loops(&stack, &gym, "?status=open&member_id=m_call").await;
    let waits = open
        .iter()
        .find(|l| l["todo_id"] == todo["id"])
        .cloned()
        .unwrap_or_else(|| panic!("the to-do's loop: {open:?}"));
    assert_eq!(waits["on_deadline"], "escalate");
    let deadline: Timestamp = waits["deadline"]
        .as_str()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("{waits}"));

    let overdue = || async {
        notices(&stack, &gym)
            .await
            .into_iter()
            .filter(|t| t.starts_with("Overdue to-do"))
            .count()
    };
    stack.set_clock(&(deadline - SignedDuration::from_mins(5)).to_string()).await;
    stack.run().await;
    assert_eq!(overdue().await, 0, "not before its deadline");
    stack.set_clock(&(deadline + SignedDuration::from_mins(1)).to_string()).await;
    stack.run().await;
    later(&stack, SignedDuration::from_hours(3)).await;
    assert_eq!(overdue().await, 1, "escalated once");
    let expired = loops(&stack, &gym, "?status=expired&member_id=m_call").await;
    assert!(expired.iter().any(|l| l["todo_id"] == todo["id"]), "{expired:?}");
}

#[tokio::test]
async fn a_schedule_that_keeps_finding_nothing_backs_off_in_its_runs() {
    let stack = Stack::start("loops-backoff").await;
    let gym = stack.create_account("manual").await;
    let (status, template) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "monthly_churn_analysis", "cron": "0 9 * * *", "max_instances": 20}),
        )
        .await;
    assert_eq!(status, 201, "{template}");
    let tid = template["id"].as_str().unwrap_or_default().to_owned();
    let mut next_at = template["next_at"].as_str().unwrap_or_default().to_owned();
    // The first run opens the analysis; the next ones find it still open.
    for _ in 0..4 {
        stack.set_clock(&next_at).await;
        stack.run().await;
        let (_, list) = stack.get("/api/v1/recurring", &gym.token).await;
        let current = list
            .as_object()
            .and_then(|o| o.values().find_map(Value::as_array))
            .and_then(|all| all.iter().find(|t| t["id"] == tid.as_str()).cloned())
            .unwrap_or_else(|| panic!("{list}"));
        next_at = current["next_at"].as_str().unwrap_or_default().to_owned();
    }
    let (_, runs) = stack.get(&format!("/api/v1/recurring/{tid}/runs"), &gym.token).await;
    let every: Vec<u64> = runs["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r["every"].as_u64())
        .collect();
    assert_eq!(every, [2, 1, 1, 1], "newest first: after three idle runs, every other day: {runs}");
}

#[tokio::test]
async fn a_pushpress_leads_booking_without_a_checkin_or_with_a_no_show_opens_the_no_show_follow_up() {
    const SECRET: &str = "pp_whsec_loops";
    let stack = Stack::start("loops-pp-trial").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = crate::pushpress_webhooks::subscribed(&stack, SECRET).await;
    // The risk scan's own lead follow-up is switched off: only the bookings' loops act here.
    let (status, off) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/triggers/new_lead",
            Some(&gym.token),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(status, 200, "{off}");
    let now = stack.now().await.as_second();
    let deliver = |event: &str, created: i64, data: Value| {
        let body = json!({"event": event, "created": created, "data": data});
        let stack = &stack;
        let gym = &gym;
        async move {
            let (status, body) = stack.pushpress_delivery(gym, SECRET, &body, None).await;
            assert_eq!(status, 202, "{body}");
        }
    };
    for (n, lead) in ["usr_missed", "usr_noshow"].into_iter().enumerate() {
        let n = n as i64;
        deliver(
            "customer.created",
            now + n,
            json!({"id": lead, "companyId": "cmp_1", "name": {"first": "Lee", "last": "Ray", "nickname": null},
                "email": format!("{lead}@example.com"), "phone": null, "role": "lead", "account": {"type": "primary"}, "membershipDetails": null}),
        )
        .await;
        deliver(
            "appointment.scheduled",
            now + 10 + n,
            json!({"id": format!("apt_{lead}"), "type": {"name": "Intro"}, "customerId": lead, "staffId": "usr_coach", "startTimestamp": now + 86_400}),
        )
        .await;
    }
    stack.run().await;
    let open = loops(&stack, &gym, "?status=open").await;
    assert_eq!(open.len(), 2, "{open:?}");
    assert!(open.iter().all(|l| l["expects"] == "trial_attended"), "{open:?}");
    assert!(tasks_of(&stack, &gym, "usr_missed").await.is_empty());

    // One is reported a no-show after the class: its follow-up opens at once.
    later(&stack, SignedDuration::from_hours(25)).await;
    deliver(
        "appointment.noshowed",
        now + 90_000,
        json!({"id": "apt_usr_noshow", "type": {"name": "Intro"}, "customerId": "usr_noshow", "staffId": "usr_coach", "startTimestamp": now + 86_400}),
    )
    .await;
    stack.run().await;
    let followed = tasks_of(&stack, &gym, "usr_noshow").await;
    assert_eq!(followed.len(), 1, "{followed:?}");
    assert_eq!(followed[0]["task_type"], "lead_followup");
    assert!(
        tasks_of(&stack, &gym, "usr_missed").await.is_empty(),
        "the other's deadline has not passed"
    );

    // The other's deadline passes without a check-in: the same follow-up.
    later(&stack, SignedDuration::from_hours(4)).await;
    let missed = tasks_of(&stack, &gym, "usr_missed").await;
    assert_eq!(missed.len(), 1, "{missed:?}");
    assert_eq!(missed[0]["task_type"], "lead_followup");
    assert_eq!(tasks_of(&stack, &gym, "usr_noshow").await.len(), 1, "once each");
    let expired = loops(&stack, &gym, "?status=expired").await;
    assert_eq!(expired.len(), 2, "{expired:?}");
}

//! A new gym's first weeks through CONTRACT.md ("Good by default"): a suppressed member's
//! task is refused, connecting PushPress starts the ramp and the first scan proposes a day's
//! review capacity, most valuable first; escalations explain themselves, a legal threat at
//! once; a reply shows the goal progress.

use std::time::Duration;

use openloop_pushpress::{PushPress, PushPressConfig};
use openloop_tests::pushpress::FakePushPress;
use openloop_tests::{Account, Client, Stack, morning};
use serde_json::{Value, json};

const KEY: &str = "pp_live_firstweek_51d0";

async fn tasks(stack: &Stack, gym: &Account) -> Vec<Value> {
    let (status, body) = stack.get("/api/v1/tasks?limit=100", &gym.token).await;
    assert_eq!(status, 200, "{body}");
    body["tasks"].as_array().cloned().unwrap_or_default()
}

/// Given a member who asked to stop, when the owner opens a task for them, then it is
/// `422 member_suppressed` and nothing is created.
#[tokio::test]
async fn a_task_for_a_suppressed_member_is_refused_and_nothing_is_made() {
    let stack = Stack::start("gbd-suppressed").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_stopped", "Dana", stack.now().await).await;
    let (status, body) = stack
        .post(
            "/api/v1/suppressions",
            &gym.token,
            json!({"email": email, "reason": "member_request"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    let create = json!({"task_type": "win_back", "member_id": "m_stopped", "goal": "Dana cancelled 12 days ago, citing a busy schedule"});
    let (status, body) = stack.post("/api/v1/tasks", &gym.token, create).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("member_suppressed")), "{body}");
    assert!(body["error"]["message"].is_string());
    assert!(tasks(&stack, &gym).await.is_empty(), "nothing created");
}

/// Given a gym that connects PushPress without saying when it was onboarded, with 100 members
/// who stopped coming on plans of three prices, then the connect starts its ramp
/// (`onboarded_at` set, shadow), and the scan after the import proposes at most a day's
/// review capacity — members of the dearest plan first — and the rest on later days.
#[tokio::test]
async fn connecting_starts_the_ramp_and_the_first_scan_proposes_a_days_review_capacity() {
    let fake = FakePushPress::start(KEY).await;
    let base = fake.base.clone();
    let stack = Stack::start_with("gbd-connect", |config| {
        let mut client = PushPressConfig::new(&base, None).expect("connector config");
        client.backoff = Duration::from_millis(5);
        config.pushpress = Some(PushPress::new(client).expect("connector"));
    })
    .await;
    stack.set_clock(&morning(1).to_string()).await;
    let body = json!({"name": "Iron Temple", "timezone": "America/New_York", "execution_mode": "manual"});
    let (status, account) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    assert_eq!(status, 201, "{account}");
    let gym = Account {
        id: account["account_id"].as_str().unwrap_or_default().to_owned(),
        token: account["api_token"].as_str().unwrap_or_default().to_owned(),
        webhook_secret: account["webhook_secret"].as_str().unwrap_or_default().to_owned(),
    };
    let now = stack.now().await.as_second();
    let day = 86_400;
    fake.with(|s| {
        for i in 0..100 {
            let id = format!("usr_{i:03}");
            s.customers.push(
                json!({"id": id, "companyId": "cmp_renegade", "name": {"first": format!("First{i}"), "last": "Tester", "nickname": null},
                "email": format!("{id}@example.com"), "phone": null, "role": "member", "account": {"type": "primary"},
                "membershipDetails": {"initialMembershipStartDate": "2024-01-15"}}),
            );
            s.enrollments.push(
                json!({"id": format!("sub_{i:03}"), "customerId": id, "companyId": "cmp_renegade", "planId": format!("pln_{}", i % 3),
                "billingSchedule": {"period": "month", "interval": 1}, "status": "active", "paidUntil": null, "nextCharge": null}),
            );
            for k in 0..6 {
                let at = (now - (30 + 3 * k) * day) * 1000;
                s.checkins
                    .entry("class".to_owned())
                    .or_default()
                    .push(json!({"id": format!("chk_{i}_{k}"), "customer": id,
                    "company": "cmp_renegade", "timestamp": at, "kind": "class", "name": "WOD", "result": "success", "role": "attendee"}));
            }
        }
        for (id, name) in [("pln_0", "Unlimited"), ("pln_1", "3x a week"), ("pln_2", "Open gym")] {
            s.plans.push(
                json!({"id": id, "name": name, "companyId": "cmp_renegade", "category": {"name": "Memberships"},
                "recurrenceDetails": {"type": "recurring"}}),
            );
        }
    });
    let connect =
        json!({"plan_prices": {"pln_0": 189, "pln_1": 139, "pln_2": 89}, "pushpress": {"api_key": KEY, "company_id": "cmp_renegade"}});
    let (status, settings) = stack
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&gym.token), Some(connect))
        .await;
    assert_eq!(status, 200, "{settings}");
    let onboarded: jiff::Timestamp = settings["onboarded_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("the connect set onboarded_at: {settings}"));
    let now_then = stack.now().await;
    assert!(
        onboarded <= now_then && now_then.duration_since(onboarded) < jiff::SignedDuration::from_secs(60),
        "onboarded at the connect: {onboarded} (now {now_then})"
    );
    stack.run().await;
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_eq!(connector["status"], "connected", "{connector}");

    let proposed = tasks(&stack, &gym).await;
    assert_eq!(proposed.len(), 10, "a day's review capacity in the shadow phase: {proposed:?}");
    assert!(proposed.iter().all(|t| t["status"] == "pending_review"));
    let members: Vec<u32> = proposed
        .iter()
        .filter_map(|t| t["member"]["id"].as_str())
        .filter_map(|id| id.strip_prefix("usr_").and_then(|n| n.parse().ok()))
        .collect();
    assert!(
        members.len() == 10 && members.iter().all(|n| n % 3 == 0),
        "the dearest plan's members first: {members:?}"
    );

    let tomorrow = jiff::Timestamp::from_second(now + day).expect("time");
    stack.set_clock(&tomorrow.to_string()).await;
    stack.run().await;
    assert_eq!(tasks(&stack, &gym).await.len(), 20, "the next day's capacity, the rest later");
}

/// Given a first touch the member answers with a legal threat, then the task is escalated at
/// once with its context in the API, the owner gets an urgent notice quoting the member, and
/// the member is suppressed.
#[tokio::test]
async fn a_legal_threat_escalates_with_an_urgent_notice_and_the_context_in_the_api() {
    let stack = Stack::start("gbd-legal").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let email = stack.member(&gym, "m_angry", "Rex", stack.now().await).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_angry").await;
    stack.run().await;
    let sent = stack.outbox_to(&email).await;
    let first = sent.last().expect("the first touch");
    let raw = Client::reply_to(first, "angry-1@mail.example.net", "Email me again and I'm calling my attorney.");
    let (status, body) = stack.inbound(&raw).await;
    assert_eq!(status, 202, "{body}");

    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (task["status"].as_str(), task["outcome_reason"].as_str()),
        (Some("escalated"), Some("legal_threat")),
        "{task}"
    );
    let escalation = &task["escalation"];
    assert_eq!(escalation["reason"], "legal_threat");
    assert!(
        escalation["summary"].as_str().is_some_and(|s| s.contains("legal action")),
        "{escalation}"
    );
    assert!(
        escalation["member_words"].as_str().is_some_and(|w| w.contains("my attorney")),
        "{escalation}"
    );
    assert!(escalation["suggested_next_step"].as_str().is_some_and(|s| !s.is_empty()));
    let to_owner = stack.outbox_to(&owner).await;
    let urgent = to_owner
        .iter()
        .find(|m| m["subject"].as_str().is_some_and(|s| s.contains("Urgent")))
        .unwrap_or_else(|| panic!("an urgent mail to the owner: {to_owner:?}"));
    let text = urgent["text"].as_str().unwrap_or_default();
    assert!(text.contains("> Email me again and I'm calling my attorney."), "{text}");
    assert!(text.contains("Suggested next step:"), "{text}");

    let (status, body) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "win_back", "member_id": "m_angry", "goal": "Win them back"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("member_suppressed")),
        "suppressed: {body}"
    );
}

/// Given a member's first answer, then the task shows its goal progress in the API.
#[tokio::test]
async fn the_task_shows_goal_progress_after_the_first_answer() {
    let stack = Stack::start("gbd-progress").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_maybe", "Kim", stack.now().await).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_maybe").await;
    stack.run().await;
    let sent = stack.outbox_to(&email).await;
    let raw = Client::reply_to(sent.last().expect("mail"), "maybe-1@mail.example.net", "Been busy, maybe next week");
    let (status, body) = stack.inbound(&raw).await;
    assert_eq!(status, 202, "{body}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let progress = &task["goal_progress"];
    assert!(progress["percent"].is_u64(), "{task}");
    assert!(progress["confidence"].is_u64() && progress["evidence"].is_string(), "{progress}");
    assert!(progress["milestones"].is_array() && progress["risks"].is_array(), "{progress}");
}

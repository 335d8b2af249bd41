//! People's data, through HTTP (CONTRACT.md "People's data"): a member with a month of mail
//! and texts, a reply kept in full, a question for the owner and a to-do is exported, then
//! erased. Afterwards no API list, no page, no export and no webhook delivery names them, the
//! owner's numbers still count what was sent, a second erasure is `404`, and the same address
//! arriving again, under the same id or another, is not kept, opens nothing and is not
//! mailed.

use jiff::SignedDuration;
use openloop_tests::receiver::Receiver;
use openloop_tests::{Account, Client, Stack, events};
use reqwest::Method;
use serde_json::{Value, json};

use crate::dashboard::sign_in;
use crate::morning;

/// The gym's number texts leave from.
const OURS: &str = "+18885550100";
/// The member's phone.
const PHONE: &str = "+15555550161";

/// Every owner list and page the member could appear in, with what each answered.
async fn everything_the_owner_sees(stack: &Stack, gym: &Account, endpoint: &str) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    let deliveries = format!("/api/v1/webhook-endpoints/{endpoint}/deliveries");
    for path in [
        "/api/v1/tasks",
        "/api/v1/tasks?status=cancelled",
        "/api/v1/tasks?status=escalated",
        "/api/v1/todos",
        "/api/v1/todos?status=done",
        "/api/v1/activity",
        "/api/v1/notifications",
        "/api/v1/members",
        "/api/v1/loops",
        "/api/v1/brief",
        "/api/v1/reports/churn",
        "/api/v1/memories",
        "/api/v1/scorecard",
        "/api/v1/metrics",
        "/api/v1/webhook-endpoints",
        deliveries.as_str(),
    ] {
        let (status, body) = stack.get(path, &gym.token).await;
        assert_eq!(status, 200, "{path}: {body}");
        seen.push((path.to_owned(), body.to_string()));
    }
    let owner = sign_in(stack, gym).await;
    for path in [
        "/app",
        "/app/today",
        "/app/todos",
        "/app/review",
        "/app/escalations",
        "/app/conversations",
        "/app/members",
        "/app/notifications",
        "/app/reports/churn",
        "/app/memories",
        "/app/lift",
    ] {
        let (status, page) = owner.get(path).await;
        assert_eq!(status, 200, "{path}: {page}");
        seen.push((path.to_owned(), page));
    }
    seen
}

/// A gym with texts on, its window open all day, and an endpoint for escalations at a
/// receiver that refuses everything (so what it was sent waits in its backlog).
async fn texting_gym(stack: &Stack, receiver: &Receiver) -> (Account, String) {
    let gym = stack.create_account("manual").await;
    let settings = json!({"sms": {"enabled": true, "origination_identity": OURS, "daily_limit": 20},
        "send_window_start": 0, "send_window_end": 24});
    let (status, body) = stack.call(Method::PUT, "/api/v1/settings", Some(&gym.token), Some(settings)).await;
    assert_eq!(status, 200, "{body}");
    let (status, endpoint) = stack
        .post(
            "/api/v1/webhook-endpoints",
            &gym.token,
            json!({"url": receiver.url, "events": ["task.escalated"]}),
        )
        .await;
    assert_eq!(status, 201, "{endpoint}");
    (gym, endpoint["id"].as_str().unwrap_or_default().to_owned())
}

async fn texts_to(stack: &Stack, phone: &str) -> Vec<Value> {
    let path = format!("/_local/outbox?channel=sms&to={}", phone.replace('+', "%2B"));
    let (status, body) = stack.call(Method::GET, &path, None, None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

/// Quinn Okonkwo joins with an address, a phone and consent to texts; their address.
async fn quinn(stack: &Stack, gym: &Account) -> String {
    let email = format!("quinn+{}@example.com", gym.id.to_ascii_lowercase());
    let mut event = events::member_created("m_quinn", &email, "Quinn", &stack.now().await.to_string());
    event["data"]["phone"] = json!(PHONE);
    event["data"]["last_name"] = json!("Okonkwo");
    let (status, body) = stack.webhook(gym, "evt_quinn", event).await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    let (status, body) = stack
        .post(
            "/api/v1/members/m_quinn/consent",
            &gym.token,
            json!({"sms": true, "source": "owner"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    email
}

/// Given a month of Quinn's mail and texts — a first mail they answer by mail, follow-ups by
/// text, a question by text that escalates to the owner (a to-do, a webhook event waiting)
/// — their export holds what they wrote, another gym cannot read it, and after `DELETE`
/// nothing the owner sees names them while the owner's numbers keep what was sent.
#[tokio::test]
async fn an_erased_member_is_named_nowhere_counted_still_and_stays_suppressed() {
    let stack = Stack::start("peoples-data-erase").await;
    let receiver = Receiver::start(500).await;
    stack.set_clock(&morning(1).to_string()).await;
    let (gym, endpoint) = texting_gym(&stack, &receiver).await;
    let email = quinn(&stack, &gym).await;
    stack.member(&gym, "m_stays", "Stella", stack.now().await).await;
    stack.run().await;

    // The month: a first mail, answered by mail, kept whole in the conversation.
    let churn = stack.approved_task(&gym, "churn_risk", "m_quinn").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "the first touch: {mail:?}");
    let raw = Client::reply_to(
        &mail[0],
        "quinn-1@example.net",
        "Thanks, the shoulder surgery went fine, I will think about it",
    );
    let (status, body) = stack.inbound(&raw).await;
    assert!(status == 200 || status == 202, "{status}: {body}");
    for _ in 0..2 {
        let (_, task) = stack.get(&format!("/api/v1/tasks/{churn}"), &gym.token).await;
        if task["next_action_at"].is_string() && task["status"] != "escalated" {
            stack.run_when_due(&gym, &churn).await;
        }
    }
    // Later in the month, a question by text on a task of its own: only the owner can answer.
    let later = stack.now().await + SignedDuration::from_hours(24 * 20);
    stack.set_clock(&later.to_string()).await;
    let ask = stack.approved_task(&gym, "ad_hoc", "m_quinn").await;
    stack.run().await;
    let (status, outcome) = stack
        .call(
            Method::POST,
            "/_local/inbound-sms",
            None,
            Some(json!({"from": PHONE, "to": OURS, "body": "Do you still run the Saturday 9am class for my knee?"})),
        )
        .await;
    assert_eq!(status, 202, "{outcome}");
    stack.run().await;
    let texts = texts_to(&stack, PHONE).await;
    assert!(texts.len() >= 2, "a month of texts: {texts:?}");
    let (_, asked) = stack.get(&format!("/api/v1/tasks/{ask}"), &gym.token).await;
    assert_eq!(asked["status"], "escalated", "{asked}");
    let (_, todos) = stack.get("/api/v1/todos", &gym.token).await;
    assert!(todos.to_string().contains("Quinn"), "a to-do about them: {todos}");
    let (_, deliveries) = stack
        .get(&format!("/api/v1/webhook-endpoints/{endpoint}/deliveries"), &gym.token)
        .await;
    assert!(
        deliveries.to_string().contains(&churn) || deliveries.to_string().contains(&ask),
        "an escalation waits to be delivered: {deliveries}"
    );
    let (_, card) = stack.get("/api/v1/scorecard", &gym.token).await;

    // The export: everything held about them, what they wrote by mail and by text included.
    let (status, export) = stack.get("/api/v1/members/m_quinn/export", &gym.token).await;
    assert_eq!(status, 200, "{export}");
    let text = export.to_string();
    for held in [email.as_str(), PHONE, "Okonkwo", "shoulder surgery went fine", "Saturday 9am class"] {
        assert!(text.contains(held), "the export holds {held}: {export}");
    }
    let tasks: Vec<&str> = export["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["task"]["id"].as_str())
        .collect();
    assert!(tasks.contains(&churn.as_str()) && tasks.contains(&ask.as_str()), "{tasks:?}");
    assert!(export["todos"].as_array().is_some_and(|t| !t.is_empty()), "{export}");
    let other = stack.create_account("manual").await;
    for method in [Method::GET, Method::DELETE] {
        let path = if method == Method::GET {
            "/api/v1/members/m_quinn/export"
        } else {
            "/api/v1/members/m_quinn"
        };
        let (status, body) = stack.call(method, path, Some(&other.token), None).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_found")),
            "another gym's member: {body}"
        );
    }
    let (status, body) = stack.call(Method::DELETE, "/api/v1/members/m_nobody", Some(&gym.token), None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found")),
        "a member never known: {body}"
    );

    let mailed = stack.outbox_to(&email).await.len();
    let (status, body) = stack.call(Method::DELETE, "/api/v1/members/m_quinn", Some(&gym.token), None).await;
    assert_eq!(status, 204, "{body}");

    for path in [
        "/api/v1/members/m_quinn".to_owned(),
        "/api/v1/members/m_quinn/export".to_owned(),
        format!("/api/v1/tasks/{churn}"),
        format!("/api/v1/tasks/{ask}"),
    ] {
        let (status, body) = stack.get(&path, &gym.token).await;
        assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{path}: {body}");
    }
    for (path, answer) in everything_the_owner_sees(&stack, &gym, &endpoint).await {
        for trace in [
            email.as_str(),
            PHONE,
            "Quinn",
            "Okonkwo",
            "m_quinn",
            "shoulder surgery",
            "Saturday 9am",
        ] {
            assert!(!answer.contains(trace), "{path} still names them ({trace}): {answer}");
        }
        // The endpoint's delivery log keeps what was tried (an event's id holds its task's,
        // which now leads nowhere, and no word of the member); every other view forgets even
        // the tasks.
        if !path.ends_with("/deliveries") {
            for task in [&churn, &ask] {
                assert!(!answer.contains(task.as_str()), "{path} still names their task {task}: {answer}");
            }
        }
    }
    let (_, deliveries) = stack
        .get(&format!("/api/v1/webhook-endpoints/{endpoint}/deliveries"), &gym.token)
        .await;
    let waiting = deliveries["deliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["next_attempt_at"].is_string());
    stack
        .set_clock(&(stack.now().await + SignedDuration::from_hours(2)).to_string())
        .await;
    stack.run().await;
    let (_, tried) = stack
        .get(&format!("/api/v1/webhook-endpoints/{endpoint}/deliveries"), &gym.token)
        .await;
    assert_eq!(
        tried["deliveries"].as_array().map(Vec::len),
        deliveries["deliveries"].as_array().map(Vec::len),
        "the event that named them is not tried again ({} were waiting): {tried}",
        waiting.count()
    );
    let (_, members) = stack.get("/api/v1/members", &gym.token).await;
    assert!(members.to_string().contains("m_stays"), "the others stay: {members}");
    let (_, after) = stack.get("/api/v1/scorecard", &gym.token).await;
    assert_eq!(
        after["messages_sent"], card["messages_sent"],
        "the owner's numbers keep what was sent: {after}"
    );
    assert!(after["messages_sent"].as_u64() >= Some(3), "{after}");

    let (status, body) = stack.call(Method::DELETE, "/api/v1/members/m_quinn", Some(&gym.token), None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found")),
        "erased twice: {body}"
    );

    // The gym's system sends them again, under the same id or another: nothing is kept or
    // opened, by mail or by text.
    let at = stack.now().await.to_string();
    for (id, member) in [("evt_quinn_again", "m_quinn"), ("evt_quinn_new_id", "m_quinn_2")] {
        let mut event = events::member_created(member, &email, "Quinn", &at);
        if member == "m_quinn_2" {
            event["data"]["email"] = json!(null);
            event["data"]["phone"] = json!(PHONE);
        }
        let (status, body) = stack.webhook(&gym, id, event).await;
        assert_eq!(status, 202, "{body}");
        let (status, body) = stack.webhook(&gym, &format!("{id}_pay"), events::payment_failed(member, &at)).await;
        assert_eq!(status, 202, "{body}");
    }
    stack.run().await;
    for member in ["m_quinn", "m_quinn_2"] {
        let (status, body) = stack.get(&format!("/api/v1/members/{member}"), &gym.token).await;
        assert_eq!(status, 404, "{member} stays out: {body}");
    }
    let body = json!({"task_type": "churn_risk", "member_id": "m_quinn", "goal": "Bring them back", "confidence": 80});
    let (status, refused) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("member_suppressed")),
        "{refused}"
    );
    let (_, tasks) = stack.get("/api/v1/tasks", &gym.token).await;
    assert!(tasks["tasks"].as_array().is_some_and(Vec::is_empty), "nothing opened: {tasks}");
    stack
        .set_clock(&(stack.now().await + SignedDuration::from_hours(24)).to_string())
        .await;
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), mailed, "never mailed again");
    assert_eq!(texts_to(&stack, PHONE).await.len(), texts.len(), "never texted again");
    stack.running.stop();
}

/// Given a gym with members, a conversation, a to-do and an owner's address, when the operator
/// removes it, then it stops at once — its token and its owner's sign-in links end, what is
/// sent for it is not kept — while the operator's list says the removal is under way; once
/// the background is done it is not found, nothing of it answers, and another gym keeps all
/// of its own.
#[tokio::test]
async fn a_gym_that_leaves_stops_at_once_and_is_gone_once_the_background_is_done() {
    let stack = Stack::start_without_consumer("peoples-data-leave").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let stays = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_leaver", "Lee", stack.now().await).await;
    stack.member(&stays, "m_leaver", "Lee", stack.now().await).await;
    stack.run().await;
    let task = stack.approved_task(&gym, "churn_risk", "m_leaver").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    let call = json!({"task_type": "staff_call_member", "member_id": "m_leaver", "goal": "Call Lee about their plan"});
    let (status, body) = stack.post("/api/v1/tasks", &gym.token, call).await;
    assert_eq!(status, 201, "{body}");
    stack.run().await;

    let path = format!("/api/v1/accounts/{}", gym.id);
    let (status, body) = stack.call(Method::DELETE, &path, Some(&gym.token), None).await;
    assert_eq!(status, 401, "the operator's call, not the owner's: {body}");
    let (status, removing) = stack.call(Method::DELETE, &path, Some(&stack.admin_token), None).await;
    assert_eq!((status, removing["status"].as_str()), (202, Some("removing")), "{removing}");
    assert!(
        removing["done_by"].is_string() && removing["requested_at"].is_string(),
        "{removing}"
    );

    // At once: the owner is out, and what arrives for the gym is not kept.
    let (status, body) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(status, 401, "{body}");
    let (_, accounts) = stack.get("/api/v1/accounts", &stack.admin_token).await;
    let listed = accounts["accounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["account_id"] == gym.id.as_str())
        .cloned();
    assert!(
        listed
            .as_ref()
            .is_some_and(|a| a["removal"]["requested_at"].is_string() && a["paused"] == true),
        "{accounts}"
    );
    let (status, again) = stack.call(Method::DELETE, &path, Some(&stack.admin_token), None).await;
    assert_eq!(
        (status, &again["requested_at"]),
        (202, &removing["requested_at"]),
        "asked again, where it is: {again}"
    );

    stack.run().await;

    let (status, body) = stack.call(Method::DELETE, &path, Some(&stack.admin_token), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "done: {body}");
    let (_, accounts) = stack.get("/api/v1/accounts", &stack.admin_token).await;
    assert!(!accounts.to_string().contains(&gym.id), "no longer listed: {accounts}");
    let (status, _) = stack.get("/api/v1/members", &gym.token).await;
    assert_eq!(status, 401);
    let at = stack.now().await.to_string();
    let (status, body) = stack
        .webhook(&gym, "evt_after", events::member_created("m_after", "after@example.com", "Al", &at))
        .await;
    assert!(
        status == 401 || status == 404,
        "a removed gym's events are refused: {status} {body}"
    );
    let raw = Client::reply_to(&mail[0], "leaver-1@example.net", "Sorry I missed this");
    let (status, body) = stack.inbound(&raw).await;
    assert!(status == 200 || status == 202, "{body}");
    assert_eq!(body["status"], "unrouted", "a reply to its mail routes nowhere: {body}");
    let before = stack.outbox_to(&owner).await.len();
    let (status, _) = crate::dashboard::ask_for_link(&stack, &owner).await;
    assert!(status.is_success() || status.is_redirection(), "{status}");
    assert_eq!(stack.outbox_to(&owner).await.len(), before, "no sign-in link for a removed gym");
    let (status, _) = stack.get(&format!("/api/v1/tasks/{task}"), &stays.token).await;
    assert_eq!(status, 404);

    // The other gym keeps everything.
    let (status, member) = stack.get("/api/v1/members/m_leaver", &stays.token).await;
    assert_eq!(status, 200, "{member}");
    let (_, accounts) = stack.get("/api/v1/accounts", &stack.admin_token).await;
    assert!(accounts.to_string().contains(&stays.id), "{accounts}");
    stack.running.stop();
}

//! A new gym's first morning with no model configured, read as the owner reads it: the
//! overview's activity, the review queue, the morning brief's page and mail. Members are named
//! (or known by their address), task types by their label, money as the owner writes it; no
//! code, member id or empty line reaches them.

use openloop_tests::{Stack, morning};
use serde_json::json;

use crate::dashboard::sign_in;

/// Internal words an owner must never read on these pages.
const CODES: &[&str] = &[
    "payment_recovery",
    "churn_risk",
    "task for member",
    "confidence 0%",
    "touch 1 of",
    "Planned today: 0",
    "USD from",
    "requires review",
    "escalation trigger",
];

#[tokio::test]
async fn the_first_morning_names_members_and_reads_in_plain_words() {
    let stack = Stack::start("owner-day-one").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let now = stack.now().await.to_string();
    let chloe = format!("chloe+{}@example.com", gym.id.to_ascii_lowercase());
    let member = json!({"type": "member.created", "timestamp": now, "data": {"member_id": "m_chloe", "email": chloe,
        "first_name": "Chloe", "last_name": "Tester", "status": "active", "joined_at": "2025-06-01T00:00:00Z", "monthly_value": 1250}});
    let (status, body) = stack.webhook(&gym, "evt_chloe", member).await;
    assert_eq!(status, 202, "{body}");
    let payment = json!({"type": "payment.failed", "timestamp": now, "data": {"member_id": "m_chloe", "amount": 1250,
        "currency": "USD", "failed_at": now, "reason": "card_declined"}});
    let (status, body) = stack.webhook(&gym, "evt_pay_chloe", payment).await;
    assert_eq!(status, 202, "{body}");
    let blank = format!("blank+{}@example.com", gym.id.to_ascii_lowercase());
    let nameless = json!({"type": "member.created", "timestamp": now, "data": {"member_id": "m_blank", "email": blank,
        "first_name": "", "last_name": " ", "status": "active", "joined_at": "2025-06-01T00:00:00Z", "monthly_value": 80}});
    let (status, body) = stack.webhook(&gym, "evt_blank", nameless).await;
    assert_eq!(status, 202, "{body}");
    let task = json!({"task_type": "ad_hoc", "member_id": "m_blank", "goal": "Ask how training is going"});
    let (status, body) = stack.post("/api/v1/tasks", &gym.token, task).await;
    assert_eq!(status, 201, "{body}");
    stack.run().await;

    let owner_page = sign_in(&stack, &gym).await;
    let (status, overview) = owner_page.get("/app").await;
    assert_eq!(status, 200);
    assert!(
        overview.contains("Payment Recovery · Chloe Tester"),
        "the feed names the member: {overview}"
    );
    assert!(
        overview.contains(&format!("Custom Task · {blank}")),
        "a nameless member by address: {overview}"
    );
    assert!(!overview.contains("· m_chloe") && !overview.contains("· m_blank"), "{overview}");

    let (_, review) = owner_page.get("/app/review").await;
    assert!(
        review.contains("Recover the failed payment of $1,250.00 from "),
        "the goal in dollars: {review}"
    );
    assert!(review.contains("message 1 of "), "{review}");
    assert!(
        review.contains(&format!(">{blank} <span class=\"badge type\">Custom Task</span>")),
        "{review}"
    );

    let (_, today) = owner_page.get("/app/today").await;
    assert!(today.contains("$1,250 a month"), "{today}");
    assert!(
        today.contains("<p data-quiet-day>A quiet day: no mail sent, no replies.</p>"),
        "no column of zeros: {today}"
    );
    for page in [&overview, &review, &today] {
        for code in CODES {
            assert!(!page.contains(code), "{code:?} on a page: {page}");
        }
    }

    // The API's feed and a task's own log (`GET /api/v1/tasks/{id}`): each reason as a
    // sentence, each detail in the gym's time.
    let in_words = |entry: &serde_json::Value| {
        let (code, words) = (
            entry["reason"].as_str().unwrap_or_default(),
            entry["reason_text"].as_str().unwrap_or_default(),
        );
        assert!(!words.is_empty() && !words.contains('_') && !words.contains(code), "{entry}");
        if let Some(detail) = entry["detail_text"].as_str() {
            assert!(!detail.contains(":00Z") && !detail.contains('_'), "{entry}");
        }
    };
    let (status, feed) = stack.get("/api/v1/activity?limit=50", &gym.token).await;
    assert_eq!(status, 200, "{feed}");
    let entries = feed["activity"].as_array().cloned().unwrap_or_default();
    assert!(!entries.is_empty(), "{feed}");
    entries.iter().for_each(in_words);
    let task_id = entries[0]["task_id"].as_str().unwrap_or_default();
    let (status, task) = stack.get(&format!("/api/v1/tasks/{task_id}"), &gym.token).await;
    assert_eq!(status, 200, "{task}");
    let log = task["log"].as_array().cloned().unwrap_or_default();
    assert!(!log.is_empty(), "{task}");
    log.iter().for_each(in_words);
    assert!(
        overview.contains("This kind of task always waits for your approval")
            || overview.contains("Your account is in manual mode, so every first message waits for your approval"),
        "why a task waits, in a sentence: {overview}"
    );

    let mail = stack.outbox_to(&owner).await;
    let brief = mail
        .iter()
        .find(|m| m["text"].as_str().is_some_and(|t| t.contains("Your morning brief")))
        .unwrap_or_else(|| panic!("the morning brief: {mail:?}"));
    let text = brief["text"].as_str().unwrap_or_default();
    assert!(text.contains("- Chloe: $1,250/month"), "{text}");
    assert!(!text.contains("- : $"), "a member without a name is listed by address: {text}");
    for code in CODES {
        assert!(!text.contains(code), "{code:?} in the brief: {text}");
    }
}

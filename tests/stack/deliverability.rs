//! Deliverability through CONTRACT.md: bounces reported by SES — handed to the
//! runtime as SES publishes them (`/_local/ses-notification` stands in for SNS → SQS →
//! signals) — pause a gym's member mail once more than 10% of its last 50 sends bounced; the
//! owner sees the pause and lifts it with `POST /api/v1/resume`.

use openloop_tests::{Stack, morning};
use serde_json::json;

/// Given a gym whose first seven mails went out, when six of them hard-bounce, then its member
/// mail is paused (`GET /api/v1/pause`), the owner has a notice saying why, a new task's mail
/// waits; after `POST /api/v1/resume` it leaves.
#[tokio::test]
async fn six_bounces_in_the_last_fifty_sends_pause_the_gyms_member_mail() {
    let stack = Stack::start("bounce-pause").await;
    let gym = stack.create_account("manual").await;
    stack.set_clock(&morning(1).to_string()).await;
    let now = stack.now().await;
    let mut addresses = Vec::new();
    for i in 0..8 {
        let id = format!("m_bounce_{i}");
        addresses.push(stack.member(&gym, &id, "Sam", now).await);
        if i < 7 {
            stack.approved_task(&gym, "churn_risk", &id).await;
        }
    }
    stack.run().await;
    for (i, address) in addresses.iter().take(6).enumerate() {
        let mail = stack.outbox_to(address).await;
        assert_eq!(mail.len(), 1, "{address}");
        let message_id = mail[0]["message_id"].as_str().unwrap_or_default();
        let bounce = json!({"notificationType": "Bounce",
            "bounce": {"bounceType": "Permanent", "bouncedRecipients": [{"emailAddress": address}]},
            "mail": {"commonHeaders": {"messageId": format!("<{message_id}>")}, "destination": [address]}});
        let (status, body) = stack
            .call(reqwest::Method::POST, "/_local/ses-notification", None, Some(bounce))
            .await;
        assert_eq!(status, 200, "{body}");
        let (_, pause) = stack.get("/api/v1/pause", &gym.token).await;
        assert_eq!(pause["paused"], i == 5, "after bounce {}: {pause}", i + 1);
    }
    let (_, notices) = stack.get("/api/v1/notifications", &gym.token).await;
    assert!(
        notices.to_string().contains("Member mail is paused"),
        "the owner is told why: {notices}"
    );

    let held = stack.approved_task(&gym, "churn_risk", "m_bounce_7").await;
    stack.run().await;
    assert!(stack.outbox_to(&addresses[7]).await.is_empty(), "nothing leaves a paused gym");
    let (status, resumed) = stack.post("/api/v1/resume", &gym.token, json!({})).await;
    assert_eq!((status, resumed["paused"].as_bool()), (200, Some(false)), "{resumed}");
    stack.set_clock(&(now + jiff::SignedDuration::from_mins(90)).to_string()).await;
    stack.run().await;
    // Past the morning hours by now: the first touch goes at the next ones (spec §29.3).
    stack.run_when_due(&gym, &held).await;
    assert_eq!(stack.outbox_to(&addresses[7]).await.len(), 1, "resumed by the owner");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{held}"), &gym.token).await;
    assert_eq!(task["status"], "waiting", "{task}");
}

/// Given an owner who names their own domain in settings, then `GET /api/v1/settings` shows
/// it pending with the DNS records to publish (three DKIM CNAMEs, the MAIL FROM MX and TXT);
/// a name that is not a domain is refused and changes nothing.
#[tokio::test]
async fn the_settings_show_the_records_a_gyms_own_domain_needs() {
    let stack = Stack::start("sending-domain").await;
    let gym = stack.create_account("manual").await;
    let (status, refused) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"sending_domain": "not a domain"})),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("invalid_sending_domain")),
        "{refused}"
    );
    let (status, saved) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"sending_domain": "crossfitrenegade.com"})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["sending_domain"], "crossfitrenegade.com");
    let identity = &settings["sending_identity"];
    assert_eq!(
        (identity["status"].as_str(), identity["sends_from_domain"].as_bool()),
        (Some("pending"), Some(false)),
        "{identity}"
    );
    let kinds: Vec<&str> = identity["records"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["type"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(kinds, ["CNAME", "CNAME", "CNAME", "MX", "TXT", "TXT"], "{identity}");
    let ownership = &identity["records"][5];
    assert_eq!(
        (
            ownership["purpose"].as_str(),
            ownership["name"].as_str(),
            identity["ownership_proven"].as_bool()
        ),
        (Some("ownership"), Some("_openloop-verify.crossfitrenegade.com"), Some(false)),
        "the account's own proof of ownership: {identity}"
    );
    assert!(ownership["value"].as_str().is_some_and(|v| v.starts_with("openloop-verify=")));
}

/// Given a gym that named its domain, when another gym names the same domain (in any case),
/// then it is refused with 409 `sending_domain_taken` in the contract's error shape and its
/// settings are unchanged; the platform's own domain is refused the same way.
#[tokio::test]
async fn a_domain_another_gym_named_is_refused_with_409() {
    let stack = Stack::start("sending-domain-taken").await;
    let first = stack.create_account("manual").await;
    let second = stack.create_account("manual").await;
    let put = |token: String, domain: &'static str| {
        let stack = &stack;
        async move {
            stack
                .call(
                    reqwest::Method::PUT,
                    "/api/v1/settings",
                    Some(&token),
                    Some(json!({"sending_domain": domain})),
                )
                .await
        }
    };
    let (status, body) = put(first.token.clone(), "crossfitrenegade.com").await;
    assert_eq!(status, 200, "{body}");
    for domain in ["crossfitrenegade.com", "CrossFitRenegade.COM."] {
        let (status, refused) = put(second.token.clone(), domain).await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (409, Some("sending_domain_taken")),
            "{domain}: {refused}"
        );
    }
    let (_, settings) = stack.get("/api/v1/settings", &second.token).await;
    assert_eq!(
        (settings["sending_domain"].is_null(), settings["sending_identity"].is_null()),
        (true, true),
        "{settings}"
    );
    let from = openloop_edge::config::Config::from_env()
        .map(|c| c.from_email)
        .unwrap_or_else(|e| panic!("{e}"));
    let shared = from.as_str().rsplit_once('@').map(|(_, d)| d.to_owned());
    let (status, refused) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&second.token),
            Some(json!({"sending_domain": shared})),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (409, Some("sending_domain_taken")),
        "{shared:?}: {refused}"
    );
}

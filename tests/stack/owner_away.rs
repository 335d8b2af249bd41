//! The owner away (issue 41, CONTRACT.md "The owner away"): an owner who never signs in decides
//! from the mail. Every item of an owner mail that asks for a decision carries action links
//! `{public_url}/a/{token}`: `GET` shows the item and a button and changes nothing, only
//! `POST` acts, once; afterwards the link answers `410` saying what happened; a forged or
//! altered token is `400` and changes nothing.

use jiff::Timestamp;
use openloop_tests::{Client, Stack};
use serde_json::Value;

use crate::morning;

/// The action links under the item of an owner mail's `text` that names `who`: `(label, path)`.
fn links_under(text: &str, who: &str) -> Vec<(String, String)> {
    let block = text
        .split("\n- ")
        .find(|b| b.lines().next().is_some_and(|title| title.contains(who)))
        .unwrap_or_else(|| panic!("no item for {who} in {text}"));
    links_in(block)
}

/// Every action link of `text`: `(label, path)`.
fn links_in(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().split_once(": http"))
        .filter_map(|(label, url)| url.find("/a/").map(|i| (label.to_owned(), url[i..].to_owned())))
        .collect()
}

fn link<'a>(links: &'a [(String, String)], label: &str) -> &'a str {
    links
        .iter()
        .find(|(l, _)| l == label)
        .map(|(_, p)| p.as_str())
        .unwrap_or_else(|| panic!("no {label:?} link in {links:?}"))
}

/// A link's page, as the owner's browser (or a mail scanner) gets it: status and HTML.
async fn open(stack: &Stack, method: reqwest::Method, path: &str) -> (u16, String) {
    let response = stack
        .http
        .request(method, format!("{}{path}", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

async fn status_of(stack: &Stack, token: &str, id: &str) -> String {
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), token).await;
    task["status"].as_str().unwrap_or_default().to_owned()
}

/// A churn-risk task for `member`, waiting for review (the gym is manual).
async fn task_for(stack: &Stack, token: &str, member: &str) -> String {
    let body = serde_json::json!({"task_type": "churn_risk", "member_id": member, "goal": "Bring them back to the gym", "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", token, body).await;
    assert_eq!((status, created["status"].as_str()), (201, Some("pending_review")), "{created}");
    created["id"].as_str().unwrap_or_default().to_owned()
}

/// Given a manual gym whose owner only reads mail, when the digest names two tasks awaiting
/// review, then a scanner's `GET` of every link changes nothing; the owner's `POST` of Sam's
/// "send it" approves it and Sam is mailed; the same link again, and Sam's "skip", answer
/// `410` saying it was decided; Pat's "skip" closes Pat's task with nothing sent; an altered
/// token is `400`.
#[tokio::test]
async fn an_owner_who_never_signs_in_approves_and_skips_from_the_digests_links() {
    let stack = Stack::start("away-links").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let sam = stack.member(&gym, "m_sam", "Sam", day0).await;
    let pat = stack.member(&gym, "m_pat", "Pat", day0).await;
    let (sam_task, pat_task) = (
        task_for(&stack, &gym.token, "m_sam").await,
        task_for(&stack, &gym.token, "m_pat").await,
    );

    stack.set_clock(&stack.digest_due(&gym.token).await.to_string()).await;
    stack.run().await;
    let mail = stack.outbox_to(&owner).await;
    let digest = mail
        .iter()
        .filter_map(|m| m["text"].as_str())
        .find(|t| t.contains("your review"))
        .unwrap_or_else(|| panic!("a digest of the review items: {mail:?}"));
    let (sam_links, pat_links) = (links_under(digest, "Sam"), links_under(digest, "Pat"));
    let labels: Vec<&str> = sam_links.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["Send it as drafted", "Skip it", "Remind me tomorrow"], "{digest}");

    // A mail scanner follows every link: nothing changes.
    for (_, path) in sam_links.iter().chain(&pat_links) {
        let (status, page) = open(&stack, reqwest::Method::GET, path).await;
        assert_eq!(status, 200, "{page}");
        assert!(page.contains("<form method=\"post\""), "one button: {page}");
    }
    assert_eq!(status_of(&stack, &gym.token, &sam_task).await, "pending_review");
    let (_, page) = open(&stack, reqwest::Method::GET, link(&sam_links, "Send it as drafted")).await;
    assert!(
        page.contains("Sam") && page.contains("Subject:"),
        "names the member and shows the draft: {page}"
    );

    // An altered token acts on nothing.
    let send = link(&sam_links, "Send it as drafted");
    let altered = format!("{}{}", &send[..send.len() - 1], if send.ends_with('A') { 'B' } else { 'A' });
    for method in [reqwest::Method::GET, reqwest::Method::POST] {
        let (status, page) = open(&stack, method, &altered).await;
        assert_eq!(status, 400, "{page}");
    }
    assert_eq!(status_of(&stack, &gym.token, &sam_task).await, "pending_review");

    let (status, page) = open(&stack, reqwest::Method::POST, send).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Approved"), "{page}");
    assert_ne!(status_of(&stack, &gym.token, &sam_task).await, "pending_review");
    for (method, path) in [
        (reqwest::Method::POST, send),
        (reqwest::Method::GET, send),
        (reqwest::Method::POST, link(&sam_links, "Skip it")),
    ] {
        let (status, page) = open(&stack, method.clone(), path).await;
        assert_eq!(status, 410, "{method} {path}: {page}");
        assert!(page.contains("Already decided"), "says what happened: {page}");
    }

    let (status, page) = open(&stack, reqwest::Method::POST, link(&pat_links, "Skip it")).await;
    assert_eq!((status, page.contains("Skipped")), (200, true), "{page}");
    assert_eq!(status_of(&stack, &gym.token, &pat_task).await, "cancelled");
    // The first touch waits for the morning's preferred hours.
    stack.run().await;
    stack.run_when_due(&gym, &sam_task).await;
    assert_eq!(stack.outbox_to(&sam).await.len(), 1, "Sam's message went out as drafted");
    assert!(stack.outbox_to(&pat).await.is_empty(), "nothing to Pat");
}

/// Given an owner who only reads mail and has not signed in for two days, when a member's
/// question escalates, then the mail that leaves at once carries "I took care of it": posted, the task closes as handled by the owner
/// and nothing more goes to the member; its "skip" link is then gone.
#[tokio::test]
async fn an_escalation_mailed_at_once_is_closed_from_its_link() {
    let stack = Stack::start("away-escalation").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    // Seen once on the dashboard, then away.
    let (status, _) = crate::dashboard::sign_in(&stack, &gym).await.get("/app").await;
    assert_eq!(status, 200);
    let email = stack.member(&gym, "m_q", "Quinn", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_q").await;
    stack.run().await;
    let first = stack.outbox_to(&email).await;
    // The owner has not looked for two days: the escalation is mailed all the same.
    stack.set_clock(&(day0 + jiff::SignedDuration::from_hours(48)).to_string()).await;
    let (status, _) = stack
        .inbound(&Client::reply_to(
            &first[0],
            "q-away@mail.example.net",
            "Can I bring my kid to the 9am class?",
        ))
        .await;
    assert_eq!(status, 202);
    assert_eq!(status_of(&stack, &gym.token, &id).await, "escalated");
    // The member is told the owner will answer; nothing more is sent them after.
    let told = stack.outbox_to(&email).await;
    assert_eq!(told.len(), 2, "the holding reply: {told:?}");
    let mail: Vec<Value> = stack.outbox_to(&owner).await;
    let text = mail
        .iter()
        .filter_map(|m| m["text"].as_str())
        .find(|t| t.contains("Decide from here"))
        .unwrap_or_else(|| panic!("the escalation mail carries its links: {mail:?}"));
    let links = links_in(text);
    let (status, page) = open(&stack, reqwest::Method::POST, link(&links, "I took care of it")).await;
    assert_eq!(status, 200, "{page}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (task["status"].as_str(), task["outcome"].as_str()),
        (Some("completed"), Some("owner_handled")),
        "{task}"
    );
    let (status, _) = open(&stack, reqwest::Method::POST, link(&links, "Skip it")).await;
    assert_eq!(status, 410);
    stack.run().await;
    assert_eq!(stack.outbox_to(&email).await.len(), 2, "nothing more to the member");
}

/// Given a gym on `limited_auto`, when a lead signs up in the afternoon (inside the send window,
/// after the morning hours first touches usually keep), then their first touch is in their
/// inbox within 5 minutes; the scan two days on opens no second follow-up for them.
#[tokio::test]
async fn a_new_lead_hears_back_within_five_minutes() {
    let stack = Stack::start("away-lead").await;
    let afternoon = morning(1) + jiff::SignedDuration::from_hours(5);
    stack.set_clock(&afternoon.to_string()).await;
    let gym = stack.create_account("limited_auto").await;
    let email = format!("lead+{}@example.com", gym.id.to_ascii_lowercase());
    let created = serde_json::json!({"type": "member.created", "timestamp": afternoon.to_string(), "data": {"member_id": "m_lead",
        "email": email, "first_name": "DANA", "status": "lead", "joined_at": afternoon.to_string()}});
    let (status, body) = stack.webhook(&gym, "evt_new_lead", created).await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    stack.set_clock(&(afternoon + jiff::SignedDuration::from_mins(5)).to_string()).await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "answered within 5 minutes: {mail:?}");
    let sent: Timestamp = mail[0]["sent_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}", mail[0]));
    assert!(sent.duration_since(afternoon) <= jiff::SignedDuration::from_mins(5), "{sent}");
    assert!(mail[0]["text"].as_str().is_some_and(|t| t.starts_with("Hi Dana")), "{}", mail[0]);

    stack
        .set_clock(&(afternoon + jiff::SignedDuration::from_hours(24 * 2 + 7)).to_string())
        .await;
    stack.run().await;
    let (_, list) = stack.get("/api/v1/tasks?member_id=m_lead", &gym.token).await;
    let leads = list["tasks"]
        .as_array()
        .map_or(0, |t| t.iter().filter(|t| t["task_type"] == "lead_followup").count());
    assert_eq!(leads, 1, "the scan does not open a second: {list}");
}

/// A member with one churn-risk mail received and their reply to it an hour later, read: the
/// task's id and the member's address. (An answer to the member's own message is not held by
/// their one message a day.)
async fn replied(stack: &Stack, gym: &openloop_tests::Account, member: &str, words: &str, day: i64) -> (String, String) {
    let day0 = morning(day);
    let email = stack.member(gym, member, "Dana", day0).await;
    stack.run().await;
    let id = stack.approved_task(gym, "churn_risk", member).await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    stack.set_clock(&(day0 + jiff::SignedDuration::from_hours(1)).to_string()).await;
    let (status, body) = stack
        .inbound(&Client::reply_to(&mail[0], &format!("{member}-q@mail.example.net"), words))
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    (id, email)
}

/// Given a gym that keeps its price as a fact members ask about (`category: "faq"`, through
/// the API), when a member asks "How much is it per month?", then the answer in their inbox
/// gives the fact as the owner wrote it, under the gym's greeting and sign-off; a question no
/// fact covers ("Is there a sauna?") gets no invented answer: the member is told at once that
/// the owner will answer, and the task goes to the owner with the question, mailed to them
/// at once.
#[tokio::test]
async fn a_question_is_answered_from_the_gyms_facts_and_no_other_is_guessed() {
    let stack = Stack::start("away-faq").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let fact = "Unlimited classes are $149 a month, with no joining fee.";
    let (status, memory) = stack
        .post(
            "/api/v1/memories",
            &gym.token,
            serde_json::json!({"content": fact, "category": "faq"}),
        )
        .await;
    assert_eq!(status, 201, "{memory}");

    let (id, email) = replied(&stack, &gym, "m_price", "How much is it per month?", 1).await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 2, "the question is answered: {mail:?}");
    let answer = mail[1]["text"].as_str().unwrap_or_default();
    assert!(answer.starts_with("Hi Dana"), "{answer}");
    assert!(answer.contains(fact), "the fact as written: {answer}");
    assert_ne!(status_of(&stack, &gym.token, &id).await, "escalated");

    let owner = stack.give_owner_address(&gym).await;
    stack.set_clock(&morning(3).to_string()).await;
    let (id, email) = replied(&stack, &gym, "m_sauna", "Is there a sauna?", 3).await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 2, "a holding reply: {mail:?}");
    let holding = mail[1]["text"].as_str().unwrap_or_default();
    assert!(
        holding.starts_with("Hi Dana") && holding.contains("get back to you soon"),
        "{holding}"
    );
    assert!(!holding.to_lowercase().contains("sauna"), "nothing said of the sauna: {holding}");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(
        (task["status"].as_str(), task["outcome_reason"].as_str()),
        (Some("escalated"), Some("member_question_needs_owner")),
        "{task}"
    );
    assert!(task.to_string().contains("sauna"), "the owner sees the question: {task}");
    let told = stack.outbox_to(&owner).await;
    assert!(
        told.iter()
            .any(|m| m["text"].as_str().is_some_and(|t| t.contains("Is there a sauna?"))),
        "the owner is mailed the question at once: {told:?}"
    );
}

/// The owner's reply to `mail` (one of the mails sent them), from `from`, saying `words`.
async fn answer(stack: &Stack, mail: &Value, from: &str, id: &str, words: &str) -> (u16, Value) {
    let raw = Client::reply_to(mail, id, words).replacen(
        &format!("From: Member <{}>", mail["to"].as_str().unwrap_or_default()),
        &format!("From: Owner <{from}>"),
        1,
    );
    stack.inbound(&raw).await
}

/// The newest mail to `owner` whose text holds `needle`.
async fn newest_to(stack: &Stack, owner: &str, needle: &str) -> Value {
    let mail = stack.outbox_to(owner).await;
    mail.iter()
        .rev()
        .find(|m| m["text"].as_str().is_some_and(|t| t.contains(needle)))
        .cloned()
        .unwrap_or_else(|| panic!("no mail to the owner with {needle:?}: {mail:?}"))
}

/// Given a manual gym whose owner answers only by replying to the digest of two review items,
/// when the owner writes "yes", then nothing is decided and the mail back lists both with
/// their choices; "Sam: yes" approves Sam's and is confirmed in one mail; the same reply
/// delivered again acts once; a reply from another address changes nothing; "tomorrow"
/// (Pat's is the one left) puts Pat's off, and the brief leaves it out until then.
#[tokio::test]
async fn an_owner_answers_the_digest_in_words() {
    let stack = Stack::start("away-words").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    stack.member(&gym, "m_sam", "Sam", day0).await;
    stack.member(&gym, "m_pat", "Pat", day0).await;
    let (sam_task, pat_task) = (
        task_for(&stack, &gym.token, "m_sam").await,
        task_for(&stack, &gym.token, "m_pat").await,
    );
    stack.set_clock(&stack.digest_due(&gym.token).await.to_string()).await;
    stack.run().await;
    let digest = newest_to(&stack, &owner, "your review").await;
    assert!(
        digest["reply_to"].as_str().is_some_and(|r| r.starts_with("reply+o")),
        "a reply to the digest is read: {digest}"
    );
    assert!(digest["text"].as_str().is_some_and(|t| t.contains("\"Sam: yes\"")), "{digest}");

    let (status, body) = answer(&stack, &digest, &owner, "w1@owner.example", "yes").await;
    assert_eq!(
        (status, body["status"].as_str(), body["understood"].as_bool()),
        (202, Some("owner_answer"), Some(false)),
        "{body}"
    );
    let back = newest_to(&stack, &owner, "did not say which").await;
    let text = back["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Sam") && text.contains("Pat") && text.contains("/a/"),
        "both, with their links: {text}"
    );
    assert_eq!(status_of(&stack, &gym.token, &sam_task).await, "pending_review");

    let before = stack.outbox_to(&owner).await.len();
    let (status, body) = answer(&stack, &digest, &owner, "w2@owner.example", "Sam: yes").await;
    assert_eq!((status, body["understood"].as_bool()), (202, Some(true)), "{body}");
    assert_eq!(status_of(&stack, &gym.token, &sam_task).await, "ready");
    let confirmed = stack.outbox_to(&owner).await;
    assert_eq!(confirmed.len(), before + 1, "one short mail: {confirmed:?}");
    let words = confirmed[before]["text"].as_str().unwrap_or_default();
    assert!(words.starts_with("Sam") && words.contains("Approved"), "{words}");
    assert_eq!(confirmed[before]["subject"].as_str().map(|s| s.starts_with("Re: ")), Some(true));

    // The same reply again acts once, and mails nothing.
    let (_, body) = answer(&stack, &digest, &owner, "w2@owner.example", "Sam: yes").await;
    assert_eq!(body["status"].as_str(), Some("duplicate"), "{body}");
    assert_eq!(stack.outbox_to(&owner).await.len(), before + 1);

    // Anyone else's reply acts on nothing.
    let (status, body) = answer(&stack, &digest, "someone@else.example", "w3@owner.example", "skip").await;
    assert_eq!((status, body["status"].as_str()), (202, Some("unrouted")), "{body}");
    assert_eq!(status_of(&stack, &gym.token, &pat_task).await, "pending_review");

    // One item left: "tomorrow" is about it.
    let (_, body) = answer(&stack, &digest, &owner, "w4@owner.example", "Tomorrow!").await;
    assert_eq!(body["understood"].as_bool(), Some(true), "{body}");
    let put_off = newest_to(&stack, &owner, "Put off until tomorrow").await;
    assert!(put_off["text"].as_str().is_some_and(|t| t.starts_with("Pat")), "{put_off}");
    assert_eq!(status_of(&stack, &gym.token, &pat_task).await, "pending_review");
    let (_, brief) = stack.get("/api/v1/brief", &gym.token).await;
    assert!(!brief.to_string().contains("Pat"), "put off today: {brief}");
    stack.set_clock(&morning(2).to_string()).await;
    let (_, brief) = stack.get("/api/v1/brief", &gym.token).await;
    assert!(brief.to_string().contains("Pat"), "back the next day: {brief}");
}

/// Given an owner who never signs in and a member's question escalated to them, when the owner
/// replies to the escalation mail with what to tell the member, then that is the agent's
/// guidance (the task leaves the owner's hands), the owner is told so in one mail, and the
/// member's next mail is not the owner's note pasted.
#[tokio::test]
async fn an_owners_reply_to_an_escalation_is_its_guidance() {
    let stack = Stack::start("away-guidance").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let (id, email) = replied(&stack, &gym, "m_kid", "Can I bring my kid to the 9am class?", 1).await;
    assert_eq!(status_of(&stack, &gym.token, &id).await, "escalated");
    let escalation = newest_to(&stack, &owner, "Decide from here").await;
    assert!(
        escalation["text"].as_str().is_some_and(|t| t.contains("Or reply to this mail")),
        "{escalation}"
    );
    let note = "Dana: Tell her kids over 12 are welcome at the 9am class";
    let (status, body) = answer(&stack, &escalation, &owner, "g1@owner.example", note).await;
    assert_eq!((status, body["understood"].as_bool()), (202, Some(true)), "{body}");
    assert_ne!(status_of(&stack, &gym.token, &id).await, "escalated");
    let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    let guidance: Vec<&str> = task["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "owner")
                .filter_map(|m| m["content"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        guidance,
        ["Tell her kids over 12 are welcome at the 9am class"],
        "the owner's words, without the name: {task}"
    );
    let told = newest_to(&stack, &owner, "your answer is with the agent").await;
    assert!(told["text"].as_str().is_some_and(|t| t.starts_with("Dana")), "{told}");
    stack.set_clock(&morning(3).to_string()).await;
    stack.run().await;
    stack.run_when_due(&gym, &id).await;
    let mail = stack.outbox_to(&email).await;
    let last = mail.last().and_then(|m| m["text"].as_str()).unwrap_or_default();
    assert!(!last.contains("Tell her"), "never the owner's note pasted: {mail:?}");
}

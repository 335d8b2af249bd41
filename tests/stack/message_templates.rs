//! Good by default: with no model configured, every member-facing task type writes
//! a real message from its templates — never the task's goal — and the owner edits them
//! through `GET /api/v1/message-templates`, `PUT` and `DELETE
//! /api/v1/message-templates/{task_type}/{touch}`.

use openloop_tests::{Account, Client, Stack};
use serde_json::{Value, json};

use crate::morning;

/// A goal written in the third person, as a scan or an owner writes it for the owner to read.
const GOAL: &str = "Dana cancelled 12 days ago, citing a busy schedule";
/// Its words a member must never read (the first name is theirs to be greeted by).
const GOAL_WORDS: &[&str] = &["cancelled", "citing", "busy", "schedule", "12", "ago"];

/// Every type that writes to members.
const TYPES: &[&str] = &[
    "churn_risk",
    "win_back",
    "lead_followup",
    "payment_recovery",
    "onboarding",
    "ad_hoc",
    "milestone_review",
];

fn says_no_goal_word(mail: &Value) -> Result<(), String> {
    let text = format!(
        "{}\n{}",
        mail["subject"].as_str().unwrap_or_default(),
        mail["text"].as_str().unwrap_or_default()
    )
    .to_lowercase();
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
    match GOAL_WORDS.iter().find(|w| words.contains(w)) {
        Some(word) => Err(format!("the mail says {word:?} from the goal: {text}")),
        None => Ok(()),
    }
}

/// A task of `task_type` for a new member `id` (first name `first`, none for `None`), with the
/// third-person goal, approved as drafted; returns its id and the member's address.
async fn approved_as_drafted(stack: &Stack, gym: &Account, task_type: &str, id: &str, first: Option<&str>) -> (String, String) {
    let at = stack.now().await;
    let email = match first {
        Some(first) => stack.member(gym, id, first, at).await,
        None => {
            let email = format!("{id}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-");
            let event = json!({"type": "member.created", "timestamp": at.to_string(), "data": {"member_id": id, "email": email,
                "status": "active", "joined_at": "2025-06-01T00:00:00Z", "monthly_value": 150}});
            let (status, body) = stack.webhook(gym, &format!("evt_{id}"), event).await;
            assert_eq!(status, 202, "{body}");
            email
        }
    };
    stack.run().await;
    let body = json!({"task_type": task_type, "member_id": id, "goal": GOAL, "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{task_type}: {created}");
    let task = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, approved) = stack.post(&format!("/api/v1/tasks/{task}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{task_type}: {approved}");
    (task, email)
}

/// Run the schedules, moving the clock to when task `id` is next due (planned in its touch's
/// hours, held to one message a day to a member), until `to` has `count` mails.
async fn send_when_due(stack: &Stack, gym: &Account, id: &str, to: &str, count: usize) {
    for _ in 0..4 {
        stack.run().await;
        if stack.outbox_to(to).await.len() >= count {
            return;
        }
        let due = stack.due_at(gym, id).await;
        if due > stack.now().await {
            stack.set_clock(&due.to_string()).await;
        }
    }
}

async fn put_template(stack: &Stack, gym: &Account, key: &str, subject: &str, body: &str) -> (u16, Value) {
    stack
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/message-templates/{key}"),
            Some(&gym.token),
            Some(json!({"subject": subject, "body": body})),
        )
        .await
}

async fn template(stack: &Stack, gym: &Account, task_type: &str, touch: &str) -> Value {
    let (status, list) = stack.get("/api/v1/message-templates", &gym.token).await;
    assert_eq!(status, 200, "{list}");
    list["templates"]
        .as_array()
        .and_then(|all| all.iter().find(|t| t["task_type"] == task_type && t["touch"] == touch).cloned())
        .unwrap_or_else(|| panic!("no template {task_type}/{touch}: {list}"))
}

/// Per task type: approved as drafted with no model, the first mail and the follow-up greet
/// the member by first name, sign as the gym and say no word of the goal.
#[tokio::test]
async fn every_types_mail_approved_as_drafted_greets_signs_and_says_no_word_of_its_goal() {
    let stack = Stack::start("templates-every-type").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    for task_type in TYPES {
        let (task, email) = approved_as_drafted(&stack, &gym, task_type, &format!("m_dana_{task_type}"), Some("Dana")).await;
        send_when_due(&stack, &gym, &task, &email, 1).await;
        let mut mail = stack.outbox_to(&email).await;
        let (_, state) = stack.get(&format!("/api/v1/tasks/{task}"), &gym.token).await;
        assert_eq!(mail.len(), 1, "{task_type}: the first touch: {mail:?} {state}");
        // The follow-up: every type's cadence has one but the single-shot milestone's.
        if *task_type != "milestone_review" {
            send_when_due(&stack, &gym, &task, &email, 2).await;
            mail = stack.outbox_to(&email).await;
            assert_eq!(mail.len(), 2, "{task_type}: the follow-up: {mail:?}");
        }
        for m in &mail {
            says_no_goal_word(m).unwrap_or_else(|e| panic!("{task_type}: {e}"));
            let text = m["text"].as_str().unwrap_or_default();
            assert!(text.starts_with("Hi Dana,"), "{task_type}: greeting: {text}");
            assert!(text.contains("Coach Mike"), "{task_type}: the profile's sign-off: {text}");
        }
        let subject = mail[0]["subject"].as_str().unwrap_or_default();
        assert!(
            !subject.is_empty() && !subject.contains('_') && !subject.contains("{{"),
            "{task_type}: a subject a person would write: {subject}"
        );
    }
}

/// A member the gym knows no first name of is greeted "Hi there".
#[tokio::test]
async fn a_member_without_a_first_name_is_greeted_hi_there() {
    let stack = Stack::start("templates-no-name").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let (task, email) = approved_as_drafted(&stack, &gym, "win_back", "m_nameless", None).await;
    send_when_due(&stack, &gym, &task, &email, 1).await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    let text = mail[0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Hi there,"), "{text}");
    says_no_goal_word(&mail[0]).unwrap_or_else(|e| panic!("{e}"));
}

/// The owner's template is what the next draft is written from, its preview rendered for a
/// sample member; deleting it brings the shipped one back.
#[tokio::test]
async fn an_owners_template_writes_the_next_draft_and_deleting_it_restores_the_default() {
    let stack = Stack::start("templates-owner").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;

    let default = template(&stack, &gym, "churn_risk", "first").await;
    assert_eq!(default["source"], "default");
    assert!(default["body"].as_str().is_some_and(|b| b.contains("{{ greeting }}")), "{default}");

    let (status, saved) = put_template(
        &stack,
        &gym,
        "churn_risk/first",
        "Your {{ member.usual_time or 'next' }} class at {{ gym.name }}",
        "{{ greeting }},\n\nThe kettlebells miss you. Fancy a session this week?\n\n{{ sign_off }}",
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!((saved["source"].as_str(), saved["touch"].as_str()), (Some("owner"), Some("first")));
    assert_eq!(saved["preview"]["subject"], "Your Tuesday evening class at CrossFit Renegade");
    assert_eq!(
        saved["preview"]["body"],
        "Hi Dana,\n\nThe kettlebells miss you. Fancy a session this week?\n\nCoach Mike"
    );
    assert_eq!(template(&stack, &gym, "churn_risk", "first").await["source"], "owner");

    let (task, email) = approved_as_drafted(&stack, &gym, "churn_risk", "m_kettle", Some("Kim")).await;
    send_when_due(&stack, &gym, &task, &email, 1).await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0]["subject"], "Your next class at CrossFit Renegade");
    assert!(
        mail[0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Hi Kim,\n\nThe kettlebells miss you.")),
        "{}",
        mail[0]
    );

    // Another gym still has the shipped one.
    let other = stack.create_account("manual").await;
    assert_eq!(template(&stack, &other, "churn_risk", "first").await["source"], "default");

    let (status, body) = stack
        .call(
            reqwest::Method::DELETE,
            "/api/v1/message-templates/churn_risk/first",
            Some(&gym.token),
            None,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(template(&stack, &gym, "churn_risk", "first").await, default);
    let (task, email) = approved_as_drafted(&stack, &gym, "churn_risk", "m_after", Some("Lee")).await;
    send_when_due(&stack, &gym, &task, &email, 1).await;
    let mail = stack.outbox_to(&email).await;
    let shipped: Vec<String> = default["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["subject"].as_str())
        .map(|s| s.replace("{{ gym.name }}", "CrossFit Renegade"))
        .collect();
    assert!(
        mail[0]["subject"].as_str().is_some_and(|s| shipped.iter().any(|v| v == s)),
        "a shipped variant's subject: {mail:?}"
    );
}

/// Issue 42: members who train side by side do not get the same mail. The shipped first touch
/// lists three variants at least; fifteen members read more than one of them, and a member
/// always reads the same one. The owner's own variants are saved and listed, and members read
/// those in place of the shipped ones.
#[tokio::test]
async fn members_side_by_side_read_different_variants_and_the_owner_can_write_their_own() {
    let stack = Stack::start("templates-variants").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    for touch in ["first", "follow_up_1", "follow_up_2"] {
        let listed = template(&stack, &gym, "churn_risk", touch).await;
        let variants = listed["variants"].as_array().cloned().unwrap_or_default();
        assert!(variants.len() >= 3, "{touch}: {listed}");
        assert_eq!(variants[0]["body"], listed["body"], "the first variant is the template's body");
    }
    let mut firsts = std::collections::BTreeSet::new();
    for i in 0..6 {
        let (task, _) = approved_as_drafted(&stack, &gym, "ad_hoc", &format!("m_side_{i}"), Some("Sam")).await;
        let (_, view) = stack.get(&format!("/api/v1/tasks/{task}"), &gym.token).await;
        firsts.insert(view["draft"]["body"].as_str().unwrap_or_default().to_owned());
    }
    assert!(firsts.len() >= 2, "six members, one mail: {firsts:?}");

    let (status, saved) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/message-templates/onboarding/first",
            Some(&gym.token),
            Some(json!({"subject": "Welcome, {{ member.first_name }}", "body": "{{ greeting }},\n\nOne of ours.\n\n{{ sign_off }}",
                "variants": [{"subject": "Hello {{ member.first_name }}", "body": "{{ greeting }},\n\nAnother of ours.\n\n{{ sign_off }}"}]})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    let listed = template(&stack, &gym, "onboarding", "first").await;
    assert_eq!(listed["source"], "owner");
    assert_eq!(listed["variants"].as_array().map(Vec::len), Some(2), "{listed}");
    for i in 0..4 {
        let (task, _) = approved_as_drafted(&stack, &gym, "onboarding", &format!("m_own_{i}"), Some("Ola")).await;
        let (_, view) = stack.get(&format!("/api/v1/tasks/{task}"), &gym.token).await;
        let body = view["draft"]["body"].as_str().unwrap_or_default();
        assert!(body.contains("of ours."), "the owner's own: {view}");
    }
    let (status, refused) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/message-templates/onboarding/first",
            Some(&gym.token),
            Some(json!({"subject": "Hi", "body": "{{ greeting }}", "variants": [{"subject": "Hi", "body": "{{ member.nickname }}"}]})),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("invalid_template")),
        "{refused}"
    );
    assert!(
        refused["error"]["message"].as_str().is_some_and(|m| m.contains("variant 1")),
        "{refused}"
    );
}

/// A template naming an unknown variable, or one that does not render, is `422
/// invalid_template` naming it, and nothing is saved; an unknown type or touch is refused.
#[tokio::test]
async fn a_bad_template_is_refused_and_changes_nothing() {
    let stack = Stack::start("templates-bad").await;
    let gym = stack.create_account("manual").await;
    let (status, _) = put_template(
        &stack,
        &gym,
        "win_back/first",
        "Hello {{ member.first_name }}",
        "{{ greeting }},\n\nCome back!",
    )
    .await;
    assert_eq!(status, 200);
    let before = template(&stack, &gym, "win_back", "first").await;

    let (status, refused) = put_template(&stack, &gym, "win_back/first", "Hi", "{{ greeting }}, {{ goal }}").await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("invalid_template")),
        "{refused}"
    );
    assert!(
        refused["error"]["message"].as_str().is_some_and(|m| m.contains("goal")),
        "{refused}"
    );
    let (status, refused) = put_template(&stack, &gym, "win_back/first", "Hi", "{% if member.first_name %}never closed").await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("invalid_template")),
        "{refused}"
    );
    let (status, refused) = put_template(&stack, &gym, "win_back/first", "Hi", "{{ member.visits + 'x' }}").await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("invalid_template")),
        "{refused}"
    );
    assert_eq!(template(&stack, &gym, "win_back", "first").await, before, "nothing saved");

    for key in ["win_back/follow_up_9", "staff_call_member/first", "pizza/first"] {
        let (status, refused) = put_template(&stack, &gym, key, "Hi", "Hello").await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (422, Some("unknown_template")),
            "{key}: {refused}"
        );
    }
    let (status, refused) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/message-templates/win_back/first",
            Some(&gym.token),
            Some(json!({"subject": "Hi"})),
        )
        .await;
    assert!(matches!(status, 400 | 422), "{status}: {refused}");
    let (status, _) = stack
        .call(reqwest::Method::GET, "/api/v1/message-templates", Some("olk_not_a_token"), None)
        .await;
    assert_eq!(status, 401);
}

/// The offline agent's answer to a member who sounds interested is the type's `reply`
/// template, the owner's when they wrote one.
#[tokio::test]
async fn the_offline_answer_is_written_from_the_reply_template() {
    let stack = Stack::start("templates-reply").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let (status, saved) = put_template(
        &stack,
        &gym,
        "churn_risk/reply",
        "",
        "{{ greeting }}, brilliant! Which day suits you{% if member.usual_time %} ({{ member.usual_time }} as usual?){% endif %}?\n\n{{ sign_off }}",
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    let (task, email) = approved_as_drafted(&stack, &gym, "churn_risk", "m_keen", Some("Dana")).await;
    send_when_due(&stack, &gym, &task, &email, 1).await;
    let first = stack.outbox_to(&email).await;
    assert_eq!(first.len(), 1, "{first:?}");
    let (status, body) = stack
        .inbound(&Client::reply_to(&first[0], "keen-1@mail.example.net", "I'd love to come back"))
        .await;
    assert_eq!(status, 202, "{body}");
    // The answer waits for the member's next day (one message a day to a member).
    send_when_due(&stack, &gym, &task, &email, 2).await;
    let mail = stack.outbox_to(&email).await;
    let (_, state) = stack.get(&format!("/api/v1/tasks/{task}"), &gym.token).await;
    assert_eq!(mail.len(), 2, "the answer: {mail:?} {state}");
    let text = mail[1]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Hi Dana, brilliant! Which day suits you?"), "{text}");
    says_no_goal_word(&mail[1]).unwrap_or_else(|e| panic!("{e}"));
}

/// The dashboard's `/app/templates`: every template linked to its page, which has its form; a
/// save in the template language goes to the page with the saved mail for the sample member, a
/// refused one says why over the form as the owner filled it and saves nothing, "Back to the
/// default" restores the shipped one, and a form without the session's CSRF token changes
/// nothing. (The page in words: `messages_page.rs`.)
#[tokio::test]
async fn the_owner_edits_a_template_on_the_messages_page() {
    let stack = Stack::start("templates-app").await;
    let gym = stack.create_account("manual").await;
    let owner = crate::dashboard::sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/templates").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("href=\"/app/templates\" aria-current=\"page\""), "in the nav: {page}");
    for (task_type, touch) in openloop_core::conversation::messages::keys() {
        assert!(
            page.contains(&format!("href=\"/app/templates/{task_type}/{touch}\"")),
            "{task_type}/{touch}: {page}"
        );
    }
    assert!(!page.contains("<script"), "no script: {page}");

    let action = "/app/templates/onboarding/first";
    let (status, page) = owner.get(action).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&format!("action=\"{action}\"")), "its form: {page}");
    assert!(
        page.contains("<code>member.usual_time</code>"),
        "the variables are listed under the raw editor: {page}"
    );
    let body = "{{ greeting }},\n\nWelcome <b>aboard</b>!\n\n{{ sign_off }}";
    let (status, _) = owner
        .post_page(action, &[("mode", "raw"), ("subject", "Welcome"), ("body", body)])
        .await;
    assert_eq!(status, 403, "CSRF");
    assert_eq!(template(&stack, &gym, "onboarding", "first").await["source"], "default");

    let (status, to) = owner
        .post(
            action,
            &[
                ("csrf", &owner.csrf),
                ("mode", "raw"),
                ("subject", "Welcome, {{ member.first_name }}"),
                ("body", body),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/templates/onboarding/first?done=saved"));
    let (status, page) = owner.get(&to).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<strong>Subject:</strong> Welcome, Dana"), "the mail: {page}");
    assert!(
        page.contains("Hi Dana,\n\nWelcome &#60;b&#62;aboard&#60;/b&#62;!\n\nCoach Mike"),
        "as text: {page}"
    );
    assert_eq!(template(&stack, &gym, "onboarding", "first").await["source"], "owner");

    let bad = "{{ greeting }}, {{ member.shoe_size }}";
    let (status, page) = owner
        .post_page(
            action,
            &[("csrf", &owner.csrf), ("mode", "raw"), ("subject", "Welcome"), ("body", bad)],
        )
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("role=\"alert\""), "{page}");
    assert!(page.contains("member.shoe_size"), "names it in the raw editor: {page}");
    assert!(
        page.contains("{{ greeting }}, {{ member.shoe_size }}</textarea>"),
        "the form as filled: {page}"
    );
    let kept = template(&stack, &gym, "onboarding", "first").await;
    assert_eq!(kept["subject"], "Welcome, {{ member.first_name }}", "nothing saved: {kept}");

    let (status, to) = owner.post(&format!("{action}/default"), &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, to.as_str()), (303, "/app/templates?done=default"));
    assert_eq!(template(&stack, &gym, "onboarding", "first").await["source"], "default");
    let (status, page) = owner.get(&to).await;
    assert_eq!(status, 200);
    assert!(page.contains("role=\"status\">Back to the default"), "{page}");
}

/// The member's facts reach the template: their usual class from the check-ins that name one;
/// how long they have been a member only where the gym's data holds their whole history.
#[tokio::test]
async fn the_first_mail_mentions_the_members_usual_class_and_tenure() {
    let stack = Stack::start("templates-facts").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_yogi", "Ana", day0).await;
    for (i, days) in [30i64, 23, 16].into_iter().enumerate() {
        let at = day0 - jiff::SignedDuration::from_hours(24 * days);
        let event = json!({"type": "checkin.created", "timestamp": at.to_string(),
            "data": {"member_id": "m_yogi", "checked_in_at": at.to_string(), "class_name": "Yoga Flow"}});
        let (status, body) = stack.webhook(&gym, &format!("evt_yogi_{i}"), event).await;
        assert_eq!(status, 202, "{body}");
    }
    stack.run().await;
    let body = json!({"task_type": "churn_risk", "member_id": "m_yogi", "goal": GOAL, "confidence": 80});
    // The risk scan may have opened it already, with its own goal: the owner's merges into it.
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert!(matches!(status, 200 | 201), "{created}");
    let text = created["draft"]["body"].as_str().unwrap_or_default();
    assert!(text.contains("Yoga Flow"), "the usual class: {created}");
    // Joined in June 2025, known only from the last month's check-ins: no count of months.
    assert!(
        !text.contains("over a year") && !text.contains("months"),
        "a tenure the gym's data cannot vouch for: {created}"
    );
    for word in ["schedule", "checked", "16 days", "re-engage"] {
        assert!(!text.to_lowercase().contains(word), "no word of a goal: {text}");
    }
}

/// Issue 42, "the owner's voice is kept": the owner rewrote Alex's first mail by hand before
/// approving it. Its next touch is not the canned follow-up: it waits for the owner's review,
/// drafted to come back to what they asked; approved, it goes out as approved.
#[tokio::test]
async fn a_first_touch_the_owner_rewrote_keeps_the_thread_in_the_owners_hands() {
    let stack = Stack::start("templates-owners-voice").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_alex", "Alex", stack.now().await).await;
    stack.run().await;
    let body = json!({"task_type": "churn_risk", "member_id": "m_alex", "goal": GOAL, "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert!(matches!(status, 200 | 201), "{created}");
    let task = created["id"].as_str().unwrap_or_default().to_owned();
    let own = json!({"draft": {"subject": "Your shoulder", "body": "Hi Alex,\n\nIs your shoulder still bugging you? We can work around it on Tuesday.\n\nCoach Mike"}});
    let (status, approved) = stack.post(&format!("/api/v1/tasks/{task}/approve"), &gym.token, own).await;
    assert_eq!(status, 200, "{approved}");
    send_when_due(&stack, &gym, &task, &email, 1).await;
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "the owner's first mail");

    // The follow-up's day comes: nothing goes out, the task waits for the owner.
    let mut view = Value::Null;
    for _ in 0..6 {
        let due = stack.due_at(&gym, &task).await;
        if due > stack.now().await {
            stack.set_clock(&due.to_string()).await;
        }
        stack.run().await;
        view = stack.get(&format!("/api/v1/tasks/{task}"), &gym.token).await.1;
        if view["status"] != "waiting" {
            break;
        }
    }
    assert_eq!(view["status"], "pending_review", "{view}");
    assert_eq!(stack.outbox_to(&email).await.len(), 1, "no canned follow-up went out");
    let draft = view["draft"]["body"].as_str().unwrap_or_default().to_owned();
    assert!(
        draft.contains("Is your shoulder still bugging you?"),
        "it follows the owner's words: {draft}"
    );
    assert!(!draft.contains("Just following up on my last note"), "{draft}");

    let (status, approved) = stack.post(&format!("/api/v1/tasks/{task}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{approved}");
    send_when_due(&stack, &gym, &task, &email, 2).await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 2, "{mail:?}");
    let text = mail[1]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Is your shoulder still bugging you?"), "sent as approved: {text}");
    assert!(
        !mail[1]["subject"].as_str().unwrap_or_default().starts_with("Re:"),
        "no \"Re:\" on a thread Alex never answered: {}",
        mail[1]["subject"]
    );
}

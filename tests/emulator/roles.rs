//! Issue 47, point 3: every function's role grants what its code calls, and nothing wider.
//!
//! The local runtime runs every function on the emulator, each signing its calls with a key
//! that names it (`openloop_local::function`). Through a proxy that reads each request as IAM
//! would (`openloop_tests::signed_calls`), a gym's life is played: it is made and set up, its
//! members' events arrive, tasks are opened, approved, sent, answered, followed up, escalated
//! and valued, the owner signs in, an endpoint receives its deliveries, a stored reply is read
//! from S3, and the gym leaves. Then every action each function was seen to ask for must be in
//! what `infra/template.yaml` grants it, and everything granted must have been asked for —
//! but the grants this life cannot reach on the emulator, each named below with its reason.
//! A function seen writing an item that holds a gym's secret (an account, an endpoint) counts
//! as asking for `kms:GenerateDataKey`, though every secret it met was sealed already: the
//! store seals one an older version stored in clear on that write.

use std::collections::{BTreeMap, BTreeSet};

use jiff::SignedDuration;
use openloop_local::function::FUNCTIONS;
use openloop_tests::grants::{TEMPLATE, grants};
use openloop_tests::signed_calls::{SignedCalls, WROTE_A_SECRET};
use openloop_tests::{Stack, events};
use serde_json::json;

/// Granted, and not asked for in this life: (function, action, resource, why it is granted).
/// An entry that is asked for after all fails the test, so the list cannot go stale.
const NOT_PLAYED: &[(&str, &str, &str, &str)] = &[(
    "evaluation",
    "kms:GenerateDataKey",
    "key",
    "writes an account: the month's evaluation across gyms keeps each gym's pooled lift and credits the patterns its data helped (no month turns in this life)",
)];

/// A grant of these is checked elsewhere: the platform's secrets (read at a Lambda's start-up,
/// never by the local runtime) and the model (`bedrock_is_granted_on_the_named_model_only…`).
fn checked_elsewhere(action: &str) -> bool {
    action.starts_with("secretsmanager:") || action.starts_with("bedrock:")
}

/// `tick` → `TickFunction`.
fn logical(function: &str) -> String {
    format!("{}{}Function", function[..1].to_ascii_uppercase(), &function[1..])
}

/// The gym's life is one long future, on a thread with room (`with_room`).
#[test]
fn every_function_is_granted_what_it_asks_of_aws_and_nothing_more() {
    openloop_tests::with_room(asked_and_granted);
}

async fn asked_and_granted() {
    let calls = SignedCalls::start(openloop_tests::endpoint()).await;
    let stack = Stack::on_emulator_through("roles", &calls.url).await;
    play_a_gyms_life(&stack).await;

    let seen = calls.seen();
    let mut asked: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for call in &seen {
        asked
            .entry(call.function.clone())
            .or_default()
            .insert((call.action.clone(), call.resource.clone()));
    }
    // Texts go to the local runtime's fake SMS service, which keeps who signed them.
    for signer in stack.running.texts.signers() {
        let function = signer.strip_prefix("local-").unwrap_or(&signer).to_owned();
        asked
            .entry(function)
            .or_default()
            .insert(("sms-voice:SendTextMessage".to_owned(), "*".to_owned()));
    }
    let mut wrong = Vec::new();
    for (function, actions) in &asked {
        if !FUNCTIONS.contains(&function.as_str()) {
            // The runtime's own: provisioning, the poller that stands in for the event
            // sources (Lambda's service reads the queues, not the function's code), and what
            // it keeps for a restart (its clock, outbox and held receipts, `LOCAL#KEPT` in the
            // table).
            for (action, resource) in actions {
                let runtime = [
                    "sqs:ReceiveMessage",
                    "sqs:DeleteMessageBatch",
                    "sqs:CreateQueue",
                    "sqs:GetQueueAttributes",
                    "kms:CreateKey",
                    "kms:CreateAlias",
                    "kms:DescribeKey",
                ]
                .contains(&action.as_str())
                    || action.starts_with("dynamodb:CreateTable")
                    || action.starts_with("dynamodb:DescribeTable")
                    || action.starts_with("dynamodb:UpdateTimeToLive")
                    || action.starts_with("events:CreateEventBus")
                    || action.starts_with("events:PutRule")
                    || action.starts_with("events:PutTargets")
                    || action == "ses:CreateEmailIdentity"
                    || action == "s3:PutObject"
                    || ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:BatchWriteItem"].contains(&action.as_str());
                if !runtime {
                    wrong.push(format!("{function}: {action} on {resource}, outside any function"));
                }
            }
            continue;
        }
        let granted = grants(TEMPLATE, &logical(function));
        for (action, resource) in actions {
            // A write that would seal a secret stored in clear needs a data key made.
            let (action, resource) = if action == WROTE_A_SECRET {
                ("kms:GenerateDataKey", "key")
            } else {
                (action.as_str(), resource.as_str())
            };
            if !granted.iter().any(|s| s.allows(action, resource)) {
                wrong.push(format!("{function} asks for {action} on {resource}: not granted"));
            }
        }
    }
    for function in FUNCTIONS {
        let none = BTreeSet::new();
        let actions = asked.get(function).unwrap_or(&none);
        for statement in grants(TEMPLATE, &logical(function)) {
            for action in statement.actions.iter().filter(|a| !checked_elsewhere(a)) {
                for resource in &statement.resources {
                    let seals = action == "kms:GenerateDataKey" && actions.iter().any(|(a, _)| a == WROTE_A_SECRET);
                    let used = seals
                        || actions.iter().any(|(a, r)| {
                            a == action && (r == resource || resource == "*" || (resource == "index/*" && r.starts_with("index/")))
                        });
                    let excused = NOT_PLAYED.iter().any(|(f, a, r, _)| *f == function && a == action && r == resource);
                    match (used, excused) {
                        (false, false) => wrong.push(format!(
                            "{function} is granted {action} on {resource} ({}) and never asked for it",
                            statement.policy
                        )),
                        (true, true) => wrong.push(format!("{function}: {action} on {resource} is excused as not played, but it was")),
                        _ => {}
                    }
                }
            }
        }
    }
    let listing: Vec<String> = seen.iter().map(|c| format!("{} {} {}", c.function, c.action, c.resource)).collect();
    assert!(wrong.is_empty(), "{}\n\nseen:\n{}", wrong.join("\n"), listing.join("\n"));
}

/// A gym's life through the contract, touching every function.
async fn play_a_gyms_life(stack: &Stack) {
    let day0 = openloop_tests::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    // The gym's own sending domain: its SES identity made on the API, gone with the gym.
    let domain = format!("renegade-{}.example", gym.id.to_ascii_lowercase());
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"sending_domain": domain})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let receiver = openloop_tests::receiver::Receiver::start(200).await;
    let (status, endpoint) = stack
        .post(
            "/api/v1/webhook-endpoints",
            &gym.token,
            json!({"url": receiver.url, "events": ["task.closed", "task.escalated"]}),
        )
        .await;
    assert_eq!(status, 201, "{endpoint}");
    // A second endpoint whose receiver fails: each delivery waits its back-off, and the tick
    // hands the endpoint back to the deliveries queue when it ends.
    let failing = openloop_tests::receiver::Receiver::start(500).await;
    let (status, body) = stack
        .post(
            "/api/v1/webhook-endpoints",
            &gym.token,
            json!({"url": failing.url, "events": ["task.closed"]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    // Members arrive; a payment fails; the signals function opens its task for review.
    let sarah = stack.sarahs_payment_failed(&gym, &day0.to_string()).await;
    let alex = stack.member(&gym, "m_away", "Alex", day0).await;
    stack.run().await;
    // The owner approves a task of their own and the one the signals opened, on the API.
    let churn = stack.approved_task(&gym, "churn_risk", "m_away").await;
    let (_, review) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let waiting = review["tasks"].as_array().cloned().unwrap_or_default();
    assert!(!waiting.is_empty(), "the payment's task waits for review: {review}");
    for task in &waiting {
        let id = task["id"].as_str().unwrap_or_default();
        let (status, body) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    stack.run().await;
    let first = stack.outbox_to(&alex).await;
    assert!(!first.is_empty(), "Alex's first touch went");

    // Alex answers with a question: the webhooks function reads it, the owner is asked.
    let raw = openloop_tests::Client::reply_to(&first[0], "alex-1@example.com", "Can I freeze my membership instead?");
    let (status, body) = stack.inbound(&raw).await;
    assert!(status < 300, "{status} {body}");
    stack.run().await;

    // A reply too large for SNS: SES stores it in S3, and the signals function reads it there
    // and removes it once it is in the conversation.
    let to_sarah = stack.outbox_to(&sarah).await;
    assert!(!to_sarah.is_empty(), "Sarah's first touch went");
    reply_through_s3(stack, &to_sarah[0], "sarah-1@example.com", "Paid it just now, sorry!").await;

    // Sarah's task is followed up on its cadence, and then she pays.
    let (_, tasks) = stack.get("/api/v1/tasks?member_id=m_1", &gym.token).await;
    if let Some(id) = tasks["tasks"][0]["id"].as_str() {
        stack.run_when_due(&gym, id).await;
    }
    let (status, body) = stack
        .webhook(
            &gym,
            "evt_paid",
            events::payment_succeeded("m_1", &(day0 + SignedDuration::from_hours(80)).to_string()),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let _ = churn;

    // A task followed up on its cadence: the first touch unanswered, the tick hands the
    // second to the follow-up function when it is due.
    stack.member(&gym, "m_e", "Eve", day0).await;
    let quiet = stack.approved_task(&gym, "churn_risk", "m_e").await;
    stack.run().await;
    stack.run_when_due(&gym, &quiet).await;
    // "Run now" hands a step straight to its worker: an approved first touch to the execute
    // function's queue.
    let fran_address = stack.member(&gym, "m_f", "Fran", day0).await;
    let now = stack.approved_task(&gym, "churn_risk", "m_f").await;
    let (status, body) = stack.post(&format!("/api/v1/tasks/{now}/run-now"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    // …and a waiting task's next follow-up to the follow-up function's.
    let (status, body) = stack.post(&format!("/api/v1/tasks/{quiet}/run-now"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    // Fran's first touch waits for the morning, her preferred hours.
    stack.run_when_due(&gym, &now).await;
    // Fran asks not to be mailed again: the webhooks function closes her task at once.
    let to_fran = stack.outbox_to(&fran_address).await;
    assert!(!to_fran.is_empty(), "Fran's first touch went");
    let raw = openloop_tests::Client::reply_to(&to_fran[0], "fran-1@example.com", "Please stop emailing me.");
    let (status, body) = stack.inbound(&raw).await;
    assert!(status < 300, "{status} {body}");
    let (_, fran) = stack.get(&format!("/api/v1/tasks/{now}"), &gym.token).await;
    assert_eq!(fran["status"], "cancelled", "an opt-out closes the task: {fran}");

    // A first touch's stale guard. Hal checked in after his task was opened: the execute
    // function closes it unsent, the bus and the endpoints told. Ida froze her membership
    // since hers was: whether to write at all is the owner's call, an escalation.
    let mut guarded = Vec::new();
    for (member, name) in [("m_h", "Hal"), ("m_i", "Ida")] {
        stack.member(&gym, member, name, day0).await;
        let body = json!({"task_type": "churn_risk", "member_id": member, "goal": "Bring them back", "confidence": 80});
        let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
        assert_eq!(status, 201, "{created}");
        guarded.push(created["id"].as_str().unwrap_or_default().to_owned());
    }
    stack
        .set_clock(&(stack.now().await + SignedDuration::from_mins(5)).to_string())
        .await;
    let at = stack.now().await.to_string();
    let since = [
        json!({"type": "checkin.created", "timestamp": at, "data": {"member_id": "m_h", "checked_in_at": at}}),
        json!({"type": "member.status_changed", "timestamp": at, "data": {"member_id": "m_i", "status": "frozen", "previous_status": "active"}}),
    ];
    for ((id, event), expected) in guarded.iter().zip(since).zip(["completed", "escalated"]) {
        let (status, body) = stack.webhook(&gym, &format!("evt_since_{id}"), event).await;
        assert_eq!(status, 202, "{body}");
        let (status, body) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
        assert_eq!(status, 200, "{body}");
        stack.run().await;
        let (_, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
        assert_eq!(task["status"], expected, "{task}");
    }
    // The owner's guidance on Ida's escalation: her first touch, read with the owner's words.
    let (status, body) = stack
        .post(
            &format!("/api/v1/tasks/{}/guidance", guarded[1]),
            &gym.token,
            json!({"text": "Write to her anyway, kindly: the freeze is only for her holiday."}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    stack.run_when_due(&gym, &guarded[1]).await;

    // A second gym connected to PushPress: its key sealed on the API, opened by the signals
    // function to import the gym, and by the workers before each touch (the stale guard).
    let connected = stack.create_account("manual").await;
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&connected.token),
            Some(json!({"pushpress": {"api_key": "local_demo"}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    // The import found a lapsing member and opened their task for review.
    let (_, waiting) = stack.get("/api/v1/tasks?status=pending_review", &connected.token).await;
    let touched = waiting["tasks"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert!(!touched.is_empty(), "the import opened a task: {waiting}");
    let (status, body) = stack
        .post(&format!("/api/v1/tasks/{touched}/approve"), &connected.token, json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    stack.run_when_due(&connected, &touched).await;
    // The member answers: the webhooks function reads the reply at once, its stale guard
    // opening the gym's key to ask PushPress first.
    let (_, task) = stack.get(&format!("/api/v1/tasks/{touched}"), &connected.token).await;
    let address = task["member"]["email"].as_str().unwrap_or_default().to_owned();
    let to_them = stack.outbox_to(&address).await;
    assert!(!to_them.is_empty(), "the connected gym's member was mailed: {task}");
    let raw = openloop_tests::Client::reply_to(&to_them[0], "connected-1@example.com", "Is the 6am class still on?");
    let (status, body) = stack.inbound(&raw).await;
    assert!(status < 300, "{status} {body}");
    // Disconnected on the API: the key is opened once more, to remove the gym's subscription.
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&connected.token),
            Some(json!({"pushpress": null})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // A third gym texts: its member is reached by text, answers by text and stops; the
    // owner's critical notices are texted to them too.
    let texting = stack.create_account("manual").await;
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&texting.token),
            Some(
                json!({"sms": {"enabled": true, "origination_identity": "+18885550177", "daily_limit": 20},
                "owner_email": "owner@texting.example", "owner_phone": "+15555550199",
                "owner_notification_channel": "email_and_sms"}),
            ),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let tess = stack.texting_member_task(&texting, "+15555550188", Some("tess@example.com")).await;
    stack.run_when_due(&texting, &tess).await;
    stack.run_when_due(&texting, &tess).await;
    // Unanswered, her task's next touch goes by text too, from the follow-up function.
    stack.run_when_due(&texting, &tess).await;
    let texted = stack.running.texts.read(Some("+15555550188"), 0);
    assert!(texted.len() > 1, "Tess was texted twice: {texted:?}");
    for words in ["Which card do you have on file?", "STOP"] {
        let (status, body) = stack
            .call(
                reqwest::Method::POST,
                "/_local/inbound-sms",
                None,
                Some(json!({"from": "+15555550188", "to": "+18885550177", "body": words})),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        stack.run().await;
    }

    // A member of the texting gym reached by mail asks a question, in a reply read from S3:
    // the signals function texts the owner too.
    let tom = stack.member(&texting, "m_tom", "Tom", stack.now().await).await;
    let tom_task = stack.approved_task(&texting, "churn_risk", "m_tom").await;
    stack.run().await;
    stack.run_when_due(&texting, &tom_task).await;
    let to_tom = stack.outbox_to(&tom).await;
    assert!(!to_tom.is_empty(), "Tom was mailed");
    let owner_texts = stack.running.texts.read(Some("+15555550199"), 0).len();
    reply_through_s3(
        stack,
        &to_tom[0],
        "tom-1@example.com",
        "Can I bring my brother to a class on Saturday?",
    )
    .await;
    stack.run().await;
    assert!(
        stack.running.texts.read(Some("+15555550199"), 0).len() > owner_texts,
        "the owner was texted Tom's question"
    );

    // Tasks of the owner's own: one skipped on the API, one approved and one skipped on the
    // dashboard.
    let mut opened = Vec::new();
    for member in ["m_b", "m_c", "m_d"] {
        stack.member(&gym, member, "Sam", day0).await;
        let body = json!({"task_type": "churn_risk", "member_id": member, "goal": "Bring them back", "confidence": 80});
        let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
        assert_eq!(status, 201, "{created}");
        opened.push(created["id"].as_str().unwrap_or_default().to_owned());
    }
    let (status, body) = stack
        .post(&format!("/api/v1/tasks/{}/skip", opened[0]), &gym.token, json!({}))
        .await;
    assert_eq!(status, 200, "{body}");

    // A task waiting for its next follow-up, for the dashboard's "run now".
    stack.member(&gym, "m_g", "Gus", stack.now().await).await;
    let waiting = stack.approved_task(&gym, "churn_risk", "m_g").await;
    stack.run().await;
    stack.run_when_due(&gym, &waiting).await;

    // The gym's SES identity deleted by hand: the hourly check finds it gone and creates it
    // again; deleted once more and found gone, it is created by the owner's next change of
    // settings, on the dashboard.
    let ses = openloop_tests::clients(&openloop_tests::test_config())
        .await
        .sending_domains(openloop_tests::test_config().region);
    for runs in [2, 1] {
        openloop_core::ports::SendingDomains::delete_identity(&ses, &domain)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..runs {
            let later = stack.now().await + openloop_core::kernel::limits::SENDING_DOMAIN_RECHECK;
            stack.set_clock(&later.to_string()).await;
            stack.run().await;
        }
    }

    // The owner's dashboard, the next morning (a notice its actions cause is mailed at once,
    // not held past the night): signed in, the day's pages read.
    let tomorrow = stack.now().await.to_zoned(openloop_tests::new_york()).date().tomorrow();
    stack
        .set_clock(&openloop_tests::nine_in_new_york(tomorrow.unwrap_or_else(|e| panic!("{e}"))).to_string())
        .await;
    let http = openloop_aws::tls::http_client()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let cookie = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with(&format!("{name}=")))
            .and_then(|v| v.split(';').next())
            .unwrap_or_default()
            .to_owned()
    };
    let login_form = || async {
        let form = http
            .get(format!("{}/app/login", stack.url))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let login = cookie(&form, "ol_login");
        (login, csrf_of(&form.text().await.unwrap_or_default()))
    };
    let (login, csrf) = login_form().await;
    let signed_in = http
        .post(format!("{}/app/login", stack.url))
        .header(reqwest::header::COOKIE, login)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("token={}&csrf={csrf}", gym.token))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signed_in.status(), 303);
    let session = cookie(&signed_in, "ol_session");
    let app = http
        .get(format!("{}/app", stack.url))
        .header(reqwest::header::COOKIE, &session)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let session_csrf = csrf_of(&app.text().await.unwrap_or_default());

    // …and on the dashboard a waiting task's next follow-up to the follow-up function's.
    for (id, action) in [
        (&opened[1], "approve"),
        (&opened[1], "run-now"),
        (&opened[2], "skip"),
        (&waiting, "run-now"),
    ] {
        let response = http
            .post(format!("{}/app/tasks/{id}/{action}", stack.url))
            .header(reqwest::header::COOKIE, &session)
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(format!("csrf={session_csrf}"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let status = response.status();
        let page = response.text().await.unwrap_or_default();
        assert_eq!(
            status,
            303,
            "{action} on the dashboard: {}",
            page.get(page.len().saturating_sub(3000)..).unwrap_or_default()
        );
    }
    // PushPress connected on the settings page (the key sealed), then disconnected (opened
    // once more, to remove the subscription).
    for form in ["api_key=local_demo", "disconnect=yes"] {
        let response = http
            .post(format!("{}/app/settings/pushpress", stack.url))
            .header(reqwest::header::COOKIE, &session)
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(format!("{form}&csrf={session_csrf}"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status(), 303, "{form}");
        stack.run().await;
    }
    // A sign-in link asked for by address: queued by the dashboard, mailed by the signals.
    let (login, csrf) = login_form().await;
    let response = http
        .post(format!("{}/app/login/link", stack.url))
        .header(reqwest::header::COOKIE, login)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("email={}&csrf={csrf}", owner.replace('+', "%2B").replace('@', "%40")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(response.status().as_u16() < 400, "{}", response.status());
    stack.run().await;
    for page in [
        "/app",
        "/app/today",
        "/app/review",
        "/app/escalations",
        "/app/members",
        "/app/settings",
        "/app/lift",
        "/app/conversations",
        "/app/todos",
    ] {
        let response = http
            .get(format!("{}{page}", stack.url))
            .header(reqwest::header::COOKIE, &session)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status(), 200, "{page}");
    }

    // Three drafts approved under a subject of the owner's own, then settled by the owner:
    // the evaluation finds the edit they keep making and stores it as a suggestion.
    for member in ["m_x1", "m_x2", "m_x3"] {
        stack.member(&gym, member, "Kit", stack.now().await).await;
        let body = json!({"task_type": "churn_risk", "member_id": member, "goal": "Bring them back", "confidence": 80});
        let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        let mut draft = created["draft"].clone();
        draft["subject"] = json!("A quick hello from Mike");
        let (status, body) = stack
            .post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({"draft": draft}))
            .await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = stack
            .post(
                &format!("/api/v1/tasks/{id}/resolve"),
                &gym.token,
                json!({"outcome": "owner_handled"}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
    stack.run().await;
    let (_, suggestions) = stack.get("/api/v1/suggestions", &gym.token).await;
    assert!(suggestions.to_string().contains("same edit"), "{suggestions}");

    // A week and more on: the escalation's timer, the analysis, the evaluation and the
    // attribution all run.
    let later = stack.now().await;
    for day in [4, 8, 12] {
        stack.set_clock(&(later + SignedDuration::from_hours(24 * day)).to_string()).await;
        stack.run().await;
    }

    // Eve never answered: her cadence was spent and the follow-up function closed her task.
    let (_, eve) = stack.get(&format!("/api/v1/tasks/{quiet}"), &gym.token).await;
    assert_eq!(eve["outcome_reason"], "budget_messages_exhausted", "{eve}");

    // Pat's payment stays failed and unanswered: when the touches are spent, the follow-up
    // function escalates the task to the owner, with its to-do.
    let at = stack.now().await.to_string();
    stack
        .webhook(&gym, "evt_pat", events::member_created("m_pat", "pat@example.com", "Pat", &at))
        .await;
    stack.webhook(&gym, "evt_pat_failed", events::payment_failed("m_pat", &at)).await;
    stack.run().await;
    let (_, pats) = stack.get("/api/v1/tasks?member_id=m_pat", &gym.token).await;
    let pat = pats["tasks"][0]["id"].as_str().unwrap_or_default().to_owned();
    let (status, body) = stack.post(&format!("/api/v1/tasks/{pat}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    for _ in 0..8 {
        let (_, task) = stack.get(&format!("/api/v1/tasks/{pat}"), &gym.token).await;
        if task["status"] != "waiting" && task["status"] != "ready" {
            break;
        }
        stack.run_when_due(&gym, &pat).await;
    }
    let (_, task) = stack.get(&format!("/api/v1/tasks/{pat}"), &gym.token).await;
    assert_eq!(task["status"], "escalated", "{task}");
    // "Run now" on an escalation hands its timer to the dormant function, on the API and on
    // the dashboard.
    let (status, body) = stack.post(&format!("/api/v1/tasks/{pat}/run-now"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{body}");
    let response = http
        .post(format!("{}/app/tasks/{pat}/run-now", stack.url))
        .header(reqwest::header::COOKIE, &session)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("csrf={session_csrf}"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 303, "run now on the dashboard");
    stack.run().await;

    // A gym on limited autopilot whose owner answers the digest in words: the webhooks
    // function approves the failed payment's task, counting the approval toward the type's
    // autopilot streak on the account (a write that seals a secret stored in clear).
    let limited = stack.create_account("limited_auto").await;
    let away = stack.give_owner_address(&limited).await;
    let at = stack.now().await.to_string();
    stack
        .webhook(&limited, "evt_lin", events::member_created("m_lin", "lin@example.com", "Lin", &at))
        .await;
    stack
        .webhook(&limited, "evt_lin_failed", events::payment_failed("m_lin", &at))
        .await;
    stack.run().await;
    let digest_at = stack.digest_due(&limited.token).await.to_string();
    stack.set_clock(&digest_at).await;
    stack.run().await;
    let digest = stack
        .outbox_to(&away)
        .await
        .into_iter()
        .rev()
        .find(|m| m["text"].as_str().is_some_and(|t| t.contains("your review")))
        .unwrap_or_else(|| panic!("the digest of Lin's review"));
    let raw = openloop_tests::Client::reply_to(&digest, "owner-1@renegade.example", "Lin: yes").replacen(
        &format!("From: Member <{away}>"),
        &format!("From: Owner <{away}>"),
        1,
    );
    let (status, body) = stack.inbound(&raw).await;
    assert_eq!((status, body["understood"].as_bool()), (202, Some(true)), "{body}");

    // The gym leaves.
    let (status, body) = stack
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/accounts/{}", gym.id),
            Some(&stack.admin_token),
            None,
        )
        .await;
    assert!(status < 300, "{status} {body}");
    stack.run().await;
}

/// A member's reply too large for SNS, as SES receiving leaves it: the whole message in the
/// inbound-mail bucket, and a notification naming it to the signals function.
async fn reply_through_s3(stack: &Stack, to_member: &serde_json::Value, from: &str, words: &str) {
    let raw = openloop_tests::Client::reply_to(to_member, from, words);
    let bucket = stack
        .scratch
        .as_ref()
        .map(|s| s.names.inbound_mail_bucket.clone())
        .unwrap_or_default();
    let key = format!("inbound/{}", ulid::Ulid::new());
    let direct = openloop_tests::clients(&openloop_tests::test_config()).await;
    direct
        .bucket(bucket.clone())
        .put(&key, raw.into_bytes())
        .await
        .unwrap_or_else(|e| panic!("put object: {e}"));
    let notification = json!({"notificationType": "Received", "mail": {"destination": [to_member["reply_to"]]},
        "receipt": {"action": {"type": "S3", "bucketName": bucket, "objectKeyPrefix": "inbound/", "objectKey": key}}});
    let (status, body) = stack
        .call(reqwest::Method::POST, "/_local/ses-notification", None, Some(notification))
        .await;
    assert_eq!(status, 200, "{body}");
}

/// The CSRF token a page's forms carry.
fn csrf_of(page: &str) -> String {
    page.split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

//! Connecting a gym's PushPress and importing its history, through the
//! owner API against a fake PushPress (`openloop_tests::pushpress`): the key checked, one
//! webhook subscription however often the owner connects, 2,000 customers imported page by
//! page as queued work — through an outage in the middle, resumed from where it stopped —
//! each member once with the right status and check-in counts, visible in `GET
//! /api/v1/connector` and `GET /api/v1/members`; disconnecting removes the subscription.

use std::time::Duration;

use openloop_pushpress::{PushPress, PushPressConfig};
use openloop_tests::Stack;
use openloop_tests::pushpress::FakePushPress;
use serde_json::{Value, json};

const KEY: &str = "pp_live_renegade_8c1f";

async fn stack_with(fake: &FakePushPress, name: &str) -> Stack {
    let base = fake.base.clone();
    Stack::start_with(name, |config| {
        let mut client = PushPressConfig::new(&base, None).expect("connector config");
        client.backoff = Duration::from_millis(5);
        config.pushpress = Some(PushPress::new(client).expect("connector"));
    })
    .await
}

async fn put_settings(stack: &Stack, token: &str, body: Value) -> (u16, Value) {
    stack.call(reqwest::Method::PUT, "/api/v1/settings", Some(token), Some(body)).await
}

/// What the gym looks like in PushPress, and what the import should make of it.
struct Gym {
    members: usize,
    checkins: u32,
}

/// 2,000 customers: every tenth a lead, every tenth (offset one) an ex-member, every fiftieth
/// (offset two) a coach (staff: not imported); members enrolled — every seventh paused,
/// every eleventh cancelled; check-ins of every kind, some older than 90 days.
fn seed(fake: &FakePushPress, now: i64) -> Gym {
    let day = 86_400;
    let mut gym = Gym { members: 0, checkins: 0 };
    fake.with(|s| {
        for i in 0..2000 {
            let id = format!("usr_{i:04}");
            let role = match i {
                _ if i % 50 == 2 => "coach",
                _ if i % 10 == 0 => "lead",
                _ if i % 10 == 1 => "ex-member",
                _ => "member",
            };
            s.customers.push(json!({"id": id, "companyId": "cmp_renegade", "name": {"first": format!("First{i}"), "last": "Tester", "nickname": null},
                "email": format!("{id}@example.com"), "phone": null, "role": role, "account": {"type": "primary"},
                "membershipDetails": {"initialMembershipStartDate": "2024-01-15"}}));
            let staff = role == "coach";
            gym.members += usize::from(!staff);
            if role == "member" || role == "ex-member" {
                let status = match i {
                    _ if role == "ex-member" || i % 11 == 0 => "canceled",
                    _ if i % 7 == 0 => "paused",
                    _ => "active",
                };
                s.enrollments.push(json!({"id": format!("sub_{i:04}"), "customerId": id, "companyId": "cmp_renegade", "planId": format!("pln_{}", i % 3),
                    "billingSchedule": {"period": "month", "interval": 1}, "status": status, "paidUntil": null, "nextCharge": null}));
            }
            let mut add = |kind: &str, timestamp: i64, recent: bool| {
                s.checkins.entry(kind.to_owned()).or_default().push(json!({"id": format!("chk_{kind}_{i}_{timestamp}"), "customer": id,
                    "company": "cmp_renegade", "timestamp": timestamp, "kind": kind, "name": "WOD", "result": "success", "role": "attendee"}));
                if recent && !staff {
                    gym.checkins += 1;
                }
            };
            if i % 3 == 0 {
                add("class", (now - day) * 1000, true);
                add("class", (now - 10 * day) * 1000, true);
                add("class", (now - 120 * day) * 1000, false);
            }
            if i % 5 == 0 {
                add("open", now - 2 * day, true);
            }
            if i % 13 == 0 {
                add("appointment", now - 3 * day, true);
            }
            if i % 17 == 0 {
                add("event", now - 40 * day, true);
            }
        }
    });
    gym
}

async fn all_members(stack: &Stack, token: &str) -> Vec<Value> {
    let mut members = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/members?limit=200&cursor={c}"),
            None => "/api/v1/members?limit=200".to_owned(),
        };
        let (status, page) = stack.get(&path, token).await;
        assert_eq!(status, 200, "{page}");
        members.extend(page["members"].as_array().cloned().unwrap_or_default());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return members,
        }
    }
}

/// Given a gym of 2,000 customers in PushPress and an outage on the seventh page, when the
/// owner connects, then the import stops there with the error visible; when they connect
/// again it resumes from that page (the first pages are not read twice, no second webhook is
/// registered), and every member is there once with the right status and check-in counts.
#[tokio::test]
async fn a_gym_connects_and_its_history_is_imported_once_through_an_outage() {
    let fake = FakePushPress::start(KEY).await;
    let stack = stack_with(&fake, "pp-import").await;
    let gym_account = stack.create_account("manual").await;
    let now = stack.now().await.as_second();
    let gym = seed(&fake, now);
    fake.with(|s| s.failing_page = Some(("customers".into(), 7, 503)));

    let (status, body) = stack.get("/api/v1/connector", &gym_account.token).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("not_connected")), "{body}");

    let connect = json!({"pushpress": {"api_key": KEY, "company_id": "cmp_renegade"}});
    let (status, settings) = put_settings(&stack, &gym_account.token, connect.clone()).await;
    assert_eq!(status, 200, "{settings}");
    assert!(!settings.to_string().contains(KEY), "the key is write-only: {settings}");
    stack.run().await;
    let (_, stopped) = stack.get("/api/v1/connector", &gym_account.token).await;
    assert_eq!(stopped["status"], "importing", "{stopped}");
    assert!(stopped["last_error"].as_str().is_some_and(|e| e.contains("503")), "{stopped}");
    let first_pages = stopped["imported_members"].as_u64().expect("count");
    assert!(first_pages > 0 && first_pages < 700, "six pages in: {stopped}");
    let account: openloop_core::kernel::ids::AccountId = gym_account.id.parse().expect("account id");
    let six_pages_in = stack.running.store.connection(account).await.expect("read").expect("connection");
    assert_eq!(fake.asked("GET", "/v3/customers?page=1&"), 1);

    // PushPress is back; the owner connects again: the import goes on from page 7.
    fake.with(|s| s.failing_page = None);
    let (status, _) = put_settings(&stack, &gym_account.token, connect).await;
    assert_eq!(status, 200);
    stack.run().await;
    let (_, connector) = stack.get("/api/v1/connector", &gym_account.token).await;
    assert_eq!(connector["status"], "connected", "{connector}");
    assert_eq!(connector["imported_members"].as_u64(), Some(gym.members as u64), "{connector}");
    assert_eq!(
        connector["imported_checkins"].as_u64(),
        Some(u64::from(gym.checkins)),
        "{connector}"
    );
    assert_eq!(connector["webhook"]["registered"], true);
    assert_eq!(connector["webhook"]["event_types"].as_array().map(Vec::len), Some(21));
    assert!(
        connector["last_error"].is_null() && connector["last_sync_at"].is_string(),
        "{connector}"
    );
    assert_eq!(
        fake.asked("GET", "/v3/customers?page=1&"),
        1,
        "resumed from the stored cursor, not from the start"
    );
    assert!(fake.asked("GET", "/v3/customers?page=7&") > 1);
    assert_eq!(fake.with(|s| s.webhooks.len()), 1, "a repeat connect never registers twice");
    assert!(
        fake.with(|s| s.webhooks[0]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("/webhooks/pushpress-v3/{}", gym_account.id)))),
        "registered at the v3 route"
    );
    assert_eq!(
        fake.with(|s| s.unknown.clone()),
        Vec::<String>::new(),
        "no endpoint PushPress lacks"
    );

    let members = all_members(&stack, &gym_account.token).await;
    let mut ids: Vec<&str> = members.iter().filter_map(|m| m["id"].as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!((members.len(), ids.len()), (gym.members, gym.members), "each member once, no staff");
    let member = |id: &str| members.iter().find(|m| m["id"] == id).cloned().unwrap_or_else(|| panic!("{id}"));
    let expect = [
        ("usr_0003", "active", 2),
        ("usr_0007", "frozen", 0),
        ("usr_0033", "cancelled", 2),
        ("usr_0040", "lead", 1),
        ("usr_0041", "cancelled", 0),
        ("usr_0030", "lead", 3),
    ];
    for (id, status, checkins_30d) in expect {
        let m = member(id);
        assert_eq!(
            (m["status"].as_str(), m["checkins_30d"].as_u64()),
            (Some(status), Some(checkins_30d)),
            "{m}"
        );
    }
    let m = member("usr_0003");
    assert_eq!(
        (m["name"].as_str(), m["email"].as_str()),
        (Some("First3 Tester"), Some("usr_0003@example.com"))
    );
    assert_eq!((m["monthly_value"].as_f64(), m["open_tasks"].as_u64()), (Some(150.0), Some(0)));

    // A crash: every page from the seventh on was written to the members' facts, but the
    // worker died before saving any of their progress, and SQS delivers the step again. The
    // import re-reads those pages over facts that already hold them: each member and each
    // check-in is still counted once, no member's facts change, and the risk scan at the end
    // opens nothing twice.
    let (_, tasks_before) = stack.get("/api/v1/tasks?limit=200", &gym_account.token).await;
    let mut lost = six_pages_in.clone();
    lost.version = stack
        .running
        .store
        .connection(account)
        .await
        .expect("read")
        .expect("connection")
        .version
        + 1;
    lost.last_error = None;
    stack
        .running
        .store
        .save_connection(account, &lost)
        .await
        .expect("progress lost in the crash");
    let run = lost.import.as_ref().expect("import").run;
    let redelivered = openloop_core::engine::ImportStep {
        account_id: account,
        import_run: run,
    };
    stack.running.engine.import_step(&redelivered).await.expect("the step again");
    stack.run().await;
    let (_, connector) = stack.get("/api/v1/connector", &gym_account.token).await;
    assert_eq!(
        (
            connector["status"].as_str(),
            connector["imported_members"].as_u64(),
            connector["imported_checkins"].as_u64()
        ),
        (Some("connected"), Some(gym.members as u64), Some(u64::from(gym.checkins))),
        "{connector}"
    );
    // (The scan at the end may open tasks the first one left for a later run, within its
    // per-run limit: `open_tasks` is not a fact.)
    let facts_only = |mut m: Value| {
        m.as_object_mut().map(|o| o.remove("open_tasks"));
        m
    };
    let again: Vec<Value> = all_members(&stack, &gym_account.token).await.into_iter().map(facts_only).collect();
    let first: Vec<Value> = members.iter().cloned().map(facts_only).collect();
    let changed: Vec<(&Value, &Value)> = first.iter().zip(&again).filter(|(a, b)| a != b).take(3).collect();
    assert_eq!(
        (again.len(), changed),
        (first.len(), vec![]),
        "the facts are as the first import left them"
    );
    let (_, tasks_after) = stack.get("/api/v1/tasks?limit=200", &gym_account.token).await;
    let ids = |list: &Value| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = list["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| {
                (
                    t["member"]["id"].as_str().unwrap_or_default().to_owned(),
                    t["task_type"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (before, mut after) = (ids(&tasks_before), ids(&tasks_after));
    assert!(before.iter().all(|t| after.contains(t)), "the first scan's tasks stay");
    let all = after.len();
    after.dedup();
    assert_eq!(after.len(), all, "no member has a task of one type twice");

    // Another gym sees none of them.
    let other = stack.create_account("manual").await;
    let (_, none) = stack.get("/api/v1/members", &other.token).await;
    assert_eq!(none["members"], json!([]), "{none}");
    let (status, _) = stack.get("/api/v1/members/usr_0003", &other.token).await;
    assert_eq!(status, 404);
}

/// A key PushPress refuses is a clear 422 and connects nothing; a gym created with its key
/// takes PushPress's time zone when it named none; disconnecting removes the subscription.
#[tokio::test]
async fn a_refused_key_changes_nothing_and_disconnecting_removes_the_subscription() {
    let fake = FakePushPress::start(KEY).await;
    let stack = stack_with(&fake, "pp-connect").await;
    let gym = stack.create_account("manual").await;
    let (status, error) = put_settings(&stack, &gym.token, json!({"pushpress": {"api_key": "pp_wrong"}})).await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (422, Some("pushpress_refused")),
        "{error}"
    );
    assert!(error["error"]["message"].as_str().is_some_and(|m| m.contains("refused")), "{error}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert!(settings["pushpress"].is_null(), "{settings}");
    assert!(fake.with(|s| s.webhooks.is_empty()));

    let body = json!({"name": "Renegade West", "execution_mode": "manual", "pushpress": {"api_key": KEY}});
    let (status, created) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    assert_eq!(status, 201, "{created}");
    let token = created["api_token"].as_str().expect("token").to_owned();
    let (_, settings) = stack.get("/api/v1/settings", &token).await;
    assert_eq!(settings["timezone"], "America/Denver", "the company's time zone: {settings}");
    stack.run().await;
    let (_, connector) = stack.get("/api/v1/connector", &token).await;
    assert_eq!(connector["status"], "connected", "an empty gym imports at once: {connector}");
    assert_eq!(fake.with(|s| s.webhooks.len()), 1);

    let (status, settings) = put_settings(&stack, &token, json!({"pushpress": null})).await;
    assert_eq!(status, 200, "{settings}");
    assert!(fake.with(|s| s.webhooks.is_empty()), "the subscription is removed at PushPress");
    let (_, connector) = stack.get("/api/v1/connector", &token).await;
    assert_eq!(
        (connector["status"].as_str(), connector["webhook"]["registered"].as_bool()),
        (Some("not_connected"), Some(false)),
        "{connector}"
    );
}

/// Plan prices (item 5): a member on a priced plan is worth the owner's price, others the
/// account's average, and the member says which.
#[tokio::test]
async fn a_plan_price_sets_a_members_value() {
    let fake = FakePushPress::start(KEY).await;
    let stack = stack_with(&fake, "pp-prices").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await.as_second();
    seed(&fake, now);
    fake.with(|s| {
        s.customers.truncate(10);
        s.enrollments.retain(|e| e["customerId"].as_str().is_some_and(|c| c < "usr_0010"));
        for (id, name) in [("pln_0", "Unlimited"), ("pln_1", "3x a week")] {
            s.plans.push(
                json!({"id": id, "name": name, "companyId": "cmp_renegade", "category": {"name": "Memberships"},
                "recurrenceDetails": {"type": "recurring"}}),
            );
        }
    });
    let (status, body) = put_settings(
        &stack,
        &gym.token,
        json!({"plan_prices": {"pln_0": 99}, "pushpress": {"api_key": KEY}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["plan_prices"], json!({"pln_0": 99.0}));
    stack.run().await;
    let members = all_members(&stack, &gym.token).await;
    let value = |id: &str| {
        let m = members.iter().find(|m| m["id"] == id).cloned().unwrap_or_default();
        (m["monthly_value"].as_f64(), m["monthly_value_source"].as_str().map(str::to_owned))
    };
    assert_eq!(value("usr_0003"), (Some(99.0), Some("plan_price".into())), "pln_0");
    assert_eq!(value("usr_0004"), (Some(150.0), Some("average".into())), "pln_1 has no price");
    // The plans the enrollments name are read by id (there is no list), so the owner sees
    // which plan is which beside its price; one PushPress does not know is left out.
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_eq!(
        connector["plans"],
        json!([{"id": "pln_0", "name": "Unlimited", "price": 99.0}, {"id": "pln_1", "name": "3x a week", "price": null}]),
        "{connector}"
    );
    assert_eq!(fake.asked("GET", "/v3/plans/pln_2"), 1, "pln_2 asked once, unknown to PushPress");
}

/// Item 6: PushPress reports no payments, so an active enrollment whose `paidUntil` passed
/// without a renewal — or one PushPress already marks `alert` when the gym connects — is
/// inferred payment trouble, found by the risk scan that runs when the import finishes, said
/// to be an inference, and waiting for the owner's review. A member paid until next month is
/// left alone.
#[tokio::test]
async fn an_imported_enrollment_past_its_paid_until_opens_an_inferred_payment_task_for_review() {
    let fake = FakePushPress::start(KEY).await;
    let stack = stack_with(&fake, "pp-paid-until").await;
    let gym = stack.create_account("manual").await;
    let now = stack.now().await;
    seed(&fake, now.as_second());
    let date = |days: i64| (now - jiff::SignedDuration::from_hours(24 * days)).strftime("%Y-%m-%d").to_string();
    fake.with(|s| {
        s.customers.truncate(10);
        s.enrollments.retain(|e| e["customerId"].as_str().is_some_and(|c| c < "usr_0010"));
        for e in &mut s.enrollments {
            let paid_until = match e["customerId"].as_str() {
                Some("usr_0003") => date(10),
                _ => date(-20),
            };
            e["status"] = json!(if e["customerId"] == "usr_0004" { "alert" } else { "active" });
            e["paidUntil"] = json!(paid_until);
        }
    });
    let (status, body) = put_settings(&stack, &gym.token, json!({"pushpress": {"api_key": KEY}})).await;
    assert_eq!(status, 200, "{body}");
    stack.run().await;
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_eq!(connector["status"], "connected", "{connector}");
    let (_, list) = stack.get("/api/v1/tasks?status=pending_review", &gym.token).await;
    let payments: Vec<&Value> = list["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter(|t| t["task_type"] == "payment_recovery")
        .collect();
    let mut members: Vec<&str> = payments.iter().filter_map(|t| t["member"]["id"].as_str()).collect();
    members.sort_unstable();
    assert_eq!(members, ["usr_0003", "usr_0004"], "{list}");
    for task in payments {
        assert!(
            task["goal"].as_str().is_some_and(|g| g.starts_with("Inferred payment trouble")),
            "{task}"
        );
    }
}

//! Every control on the settings page, used as the owner would, from the page alone: a
//! trigger of the owner's own added, tried ("What would it open?", which opens nothing),
//! changed from its pre-filled form (a refused change said in words and nothing changed) and
//! removed; PushPress connected with a key it accepts, a key it refuses refused with the reason
//! and nothing changed, then disconnected.

use std::time::Duration;

use openloop_pushpress::{PushPress, PushPressConfig};
use openloop_tests::Stack;
use openloop_tests::pushpress::FakePushPress;
use serde_json::Value;

use crate::dashboard::sign_in;
use crate::pages_in_words::{codes_in, visible_text};

async fn triggers(stack: &Stack, token: &str) -> Vec<Value> {
    let (_, list) = stack.get("/api/v1/triggers", token).await;
    list["triggers"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn the_owner_adds_tries_and_removes_a_trigger_from_the_page() {
    let stack = Stack::start("settings-triggers").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await.to_string();
    stack.sarahs_payment_failed(&gym, &at).await;
    stack.run().await;
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    assert!(
        page.contains("<option value=\"payment.failed\">A failed payment</option>"),
        "the events in words"
    );
    assert!(page.contains("<option value=\"staff_call_member\">"), "the types by their labels");
    let before = triggers(&stack, &gym.token).await.len();

    let form = [
        ("csrf", owner.csrf.as_str()),
        ("event", "payment.failed"),
        ("task_type", "staff_call_member"),
        ("delay_hours", "2"),
        ("reentry", "after_days"),
        ("reentry_days", "45"),
        ("goal", "Call them about the card"),
    ];
    let (status, location) = owner.post("/app/settings/triggers", &form).await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/app/settings?done=trigger_added#triggers-heading")
    );
    let rows = triggers(&stack, &gym.token).await;
    assert_eq!(rows.len(), before + 1);
    let mine = rows.iter().find(|r| r["builtin"] == false).cloned().unwrap_or_default();
    assert_eq!(
        (
            mine["event"].as_str(),
            mine["task_type"].as_str(),
            mine["delay_hours"].as_u64(),
            mine["reentry_days"].as_u64()
        ),
        (Some("payment.failed"), Some("staff_call_member"), Some(2), Some(45)),
        "{mine}"
    );
    let id = mine["id"].as_str().unwrap_or_default().to_owned();
    let (_, page) = owner.get("/app/settings?done=trigger_added").await;
    assert!(page.contains("Trigger added"), "said back");
    assert!(page.contains("On a failed payment, after 2 h"), "the row in words");
    assert!(
        page.contains("<td data-label=\"Opens\">Call Member</td>"),
        "the type it opens by its label: {page}"
    );

    // Tried: Sarah's failure of today, and nothing opened.
    let tasks_before = stack.get("/api/v1/tasks", &gym.token).await.1["tasks"]
        .as_array()
        .map_or(0, Vec::len);
    let (status, page) = owner.get(&format!("/app/settings?try={id}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("data-would-open=\"1\""), "{page}");
    assert!(page.contains("would have opened 1 task, for Sarah"), "{page}");
    let tasks_after = stack.get("/api/v1/tasks", &gym.token).await.1["tasks"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(tasks_before, tasks_after, "trying a trigger opens nothing");

    // A refused row names what is wrong and adds nothing; without the CSRF token nothing at all.
    let (status, page) = owner
        .post_page(
            "/app/settings/triggers",
            &[
                ("csrf", &owner.csrf),
                ("event", "member.created"),
                ("task_type", "nope"),
                ("reentry", "once"),
            ],
        )
        .await;
    assert_eq!(status, 422, "{page}");
    let (status, _) = owner.post("/app/settings/triggers", &form[1..]).await;
    assert_eq!(status, 403);
    assert_eq!(triggers(&stack, &gym.token).await.len(), before + 1);

    // Removed; a built-in row cannot be.
    let (status, location) = owner
        .post(&format!("/app/settings/triggers/{id}/delete"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/app/settings?done=trigger_deleted#triggers-heading")
    );
    assert_eq!(triggers(&stack, &gym.token).await.len(), before);
    let (status, _) = owner
        .post_page("/app/settings/triggers/payment_failed/delete", &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 422);
    assert_eq!(triggers(&stack, &gym.token).await.len(), before);
}

#[tokio::test]
async fn the_owner_connects_and_disconnects_pushpress_from_the_page() {
    const KEY: &str = "pp_live_settings_page_7d2e";
    let fake = FakePushPress::start(KEY).await;
    let base = fake.base.clone();
    let stack = Stack::start_with("settings-pushpress", |config| {
        let mut client = PushPressConfig::new(&base, None).expect("connector config");
        client.backoff = Duration::from_millis(5);
        config.pushpress = Some(PushPress::new(client).expect("connector"));
    })
    .await;
    let gym = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    assert!(
        page.contains("Connect PushPress") && !page.contains("Disconnect PushPress"),
        "{page}"
    );
    assert!(!page.contains("PUT /api/v1/settings"), "a button, not an API call to type");

    // A key PushPress refuses: the reason on the page, nothing saved.
    let (status, page) = owner
        .post_page(
            "/app/settings/pushpress",
            &[("csrf", &owner.csrf), ("api_key", "pp_live_wrong_0000")],
        )
        .await;
    assert_eq!(status, 422, "{page}");
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_eq!(connector["status"], "not_connected", "{connector}");

    let (status, location) = owner
        .post("/app/settings/pushpress", &[("csrf", &owner.csrf), ("api_key", KEY)])
        .await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/app/settings?done=pushpress_connected#pp-heading")
    );
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_ne!(connector["status"], "not_connected", "{connector}");
    assert_eq!(fake.with(|s| s.webhooks.len()), 1, "its webhook registered");
    let (_, page) = owner.get("/app/settings?done=pushpress_connected").await;
    assert!(
        page.contains("Connected to PushPress") && page.contains("Disconnect PushPress"),
        "{page}"
    );
    assert!(!page.contains(KEY), "the key is never shown");

    let (status, location) = owner
        .post("/app/settings/pushpress", &[("csrf", &owner.csrf), ("disconnect", "yes")])
        .await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/app/settings?done=pushpress_disconnected#pp-heading")
    );
    assert_eq!(fake.with(|s| s.webhooks.len()), 0, "its webhook removed");
    let (_, page) = owner.get("/app/settings").await;
    assert!(
        page.contains("Connect PushPress") && !page.contains("Disconnect PushPress"),
        "{page}"
    );
}

/// A task's own controls on its page: pause, resume, run now, and reopen once it closed.
#[tokio::test]
async fn the_owner_pauses_resumes_runs_and_reopens_a_task_from_its_page() {
    let stack = Stack::start("task-controls").await;
    stack.set_clock(&openloop_tests::morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_ctl", "Cleo", stack.now().await).await;
    let id = stack.approved_task(&gym, "churn_risk", "m_ctl").await;
    let owner = sign_in(&stack, &gym).await;
    let path = format!("/api/v1/tasks/{id}");
    let task = || stack.get(&path, &gym.token);
    let (_, page) = owner.get(&format!("/app/tasks/{id}")).await;
    assert!(
        page.contains(">Pause</button>") && page.contains(">Run now</button>") && !page.contains(">Reopen</button>"),
        "{page}"
    );

    let (status, location) = owner.post(&format!("/app/tasks/{id}/pause"), &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, location), (303, format!("/app/tasks/{id}?done=task_paused")));
    assert!(task().await.1["paused_at"].is_string());
    let (_, page) = owner.get(&format!("/app/tasks/{id}?done=task_paused")).await;
    assert!(
        page.contains(">Resume</button>") && page.contains("takes no step until you resume"),
        "{page}"
    );
    let (status, _) = owner.post(&format!("/app/tasks/{id}/resume"), &[("csrf", &owner.csrf)]).await;
    assert_eq!(status, 303);
    assert!(task().await.1.get("paused_at").is_none_or(Value::is_null));
    let (status, location) = owner.post(&format!("/app/tasks/{id}/run-now"), &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, location), (303, format!("/app/tasks/{id}?done=task_run_now")));
    stack.run().await;

    // Closed by the owner, then reopened from its page.
    let (status, _) = owner
        .post(&format!("/app/tasks/{id}/cancel"), &[("csrf", &owner.csrf), ("return_to", "task")])
        .await;
    assert_eq!(status, 303);
    let (_, page) = owner.get(&format!("/app/tasks/{id}")).await;
    assert!(page.contains(">Reopen</button>") && !page.contains(">Pause</button>"), "{page}");
    let (status, location) = owner
        .post(
            &format!("/app/tasks/{id}/reopen"),
            &[("csrf", &owner.csrf), ("reason", "She wrote to me, keep going")],
        )
        .await;
    assert_eq!((status, location), (303, format!("/app/tasks/{id}?done=task_reopened")), "reopened");
    let reopened = task().await.1;
    assert!(
        !matches!(reopened["status"].as_str(), Some("cancelled" | "completed" | "expired")),
        "{reopened}"
    );
    // Without the session's token nothing changes.
    let (status, _) = owner.post(&format!("/app/tasks/{id}/pause"), &[]).await;
    assert_eq!(status, 403);
}

/// The settings version the page's form carries.
fn settings_version(page: &str) -> String {
    page.split("name=\"settings_version\" value=\"")
        .nth(1)
        .and_then(|v| v.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

/// Autopilot per type from the settings page: ticked, saved, shown ticked; unticked, off.
#[tokio::test]
async fn the_owner_puts_a_type_on_autopilot_from_the_settings_page() {
    let stack = Stack::start("settings-autopilot").await;
    let gym = stack.create_account("limited_auto").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    assert!(
        page.contains("id=\"autopilot-churn_risk\"") && !page.contains("id=\"autopilot-payment_recovery\""),
        "a payment always asks"
    );
    let version = settings_version(&page);
    let form = [
        ("csrf", owner.csrf.as_str()),
        ("settings_version", &version),
        ("autopilot_shown", "1"),
        ("autopilot_types", "churn_risk"),
        ("autopilot_types", "win_back"),
        ("autopilot_types", "payment_recovery"),
    ];
    let (status, location) = owner.post("/app/settings", &form).await;
    assert_eq!((status, location.as_str()), (303, "/app/settings?done=saved"));
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        settings["autopilot_types"],
        serde_json::json!(["churn_risk", "win_back"]),
        "only what the page offers: {settings}"
    );
    let (_, page) = owner.get("/app/settings").await;
    assert!(
        page.contains("id=\"autopilot-churn_risk\" name=\"autopilot_types\" value=\"churn_risk\" checked"),
        "{page}"
    );

    let version = settings_version(&page);
    let (status, _) = owner
        .post(
            "/app/settings",
            &[
                ("csrf", owner.csrf.as_str()),
                ("settings_version", &version),
                ("autopilot_shown", "1"),
            ],
        )
        .await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["autopilot_types"], serde_json::json!([]), "{settings}");
}

/// Learned send hours wait for the owner at the default trust level: shown on the lift page
/// as not in use, taken with "Use these hours", put back with "Keep the usual hours".
#[tokio::test]
async fn learned_send_hours_wait_for_the_owner_and_are_taken_or_put_back_from_the_lift_page() {
    let stack = Stack::start("settings-send-hours").await;
    let gym = stack.create_account("limited_auto").await;
    let store = stack.running.store.clone();
    let id: openloop_core::kernel::ids::AccountId = gym.id.parse().expect("account id");
    let mut account = store.get_account(id).await.expect("store").expect("account");
    account.settings.send_hours = Some(openloop_core::owner::send_hours::SendHours {
        checked_at: stack.now().await,
        sends: 90,
        good: 40,
        first_touch: Some([17, 19]),
        follow_up: Some([16, 19]),
        hours: Vec::new(),
        why: "First messages go 17:00-19:00 (70% of 30 answered there).".into(),
    });
    account.version += 1; // saved over the version read
    store.save_account(&account).await.expect("saved");

    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/lift").await;
    assert!(
        page.contains("data-send-hours-in-use=\"false\"") && page.contains("Not in use until you say so"),
        "{page}"
    );
    assert!(page.contains(">Use these hours</button>"), "{page}");
    let (status, location) = owner.post("/app/send-hours/use", &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, location.as_str()), (303, "/app/lift#send-hours"));
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["use_learned_send_hours"], true, "{settings}");
    let (_, page) = owner.get("/app/lift").await;
    assert!(
        page.contains("data-send-hours-in-use=\"true\"") && page.contains(">Keep the usual hours</button>"),
        "{page}"
    );
    let (status, _) = owner.post("/app/send-hours/usual", &[("csrf", &owner.csrf)]).await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["use_learned_send_hours"], false, "{settings}");
    let (status, _) = owner.post("/app/send-hours/auto", &[("csrf", &owner.csrf)]).await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert!(settings.get("use_learned_send_hours").is_none_or(Value::is_null), "{settings}");
}

/// The row `id` as `GET /api/v1/triggers` lists it.
async fn trigger(stack: &Stack, token: &str, id: &str) -> Value {
    triggers(stack, token)
        .await
        .into_iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} listed"))
}

#[tokio::test]
async fn the_owner_changes_a_trigger_of_theirs_from_its_form() {
    let stack = Stack::start("settings-trigger-edit").await;
    let gym = stack.create_account("manual").await;
    let (status, row) = stack
        .post(
            "/api/v1/triggers",
            &gym.token,
            serde_json::json!({"event": "payment.failed", "task_type": "staff_call_member", "reentry": "once", "goal": "Call them about the card"}),
        )
        .await;
    assert_eq!(status, 201, "{row}");
    let id = row["id"].as_str().unwrap_or_default().to_owned();
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    let edit = format!("/app/settings/triggers/{id}/edit");
    assert!(page.contains(&format!("href=\"{edit}\">Change it</a>")), "{page}");
    assert!(
        !page.contains("/app/settings/triggers/payment_failed/edit"),
        "a built-in row is only switched"
    );

    // The form, pre-filled with the row, in words.
    let (status, form) = owner.get(&edit).await;
    assert_eq!(status, 200, "{form}");
    for shown in [
        "<option value=\"payment.failed\" selected>A failed payment</option>",
        "<option value=\"staff_call_member\" selected>Call Member</option>",
        "<option value=\"once\" selected>Never again</option>",
        "value=\"Call them about the card\"",
        "<option value=\"never\" selected>never</option>",
    ] {
        assert!(form.contains(shown), "{shown}: {form}");
    }
    assert!(codes_in(&visible_text(&form)).is_empty(), "{:?}", codes_in(&visible_text(&form)));

    // Changed: the table and the API say so.
    let changed = [
        ("csrf", owner.csrf.as_str()),
        ("event", "checkin.created"),
        ("task_type", "staff_call_member"),
        ("delay_hours", "6"),
        ("reentry", "after_days"),
        ("reentry_days", "14"),
        ("goal", "Call after their class"),
        ("notify", "always"),
    ];
    let (status, location) = owner.post(&edit, &changed).await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/app/settings?done=trigger_changed#triggers-heading")
    );
    let row = trigger(&stack, &gym.token, &id).await;
    assert_eq!(
        (
            row["event"].as_str(),
            row["delay_hours"].as_u64(),
            row["reentry"].as_str(),
            row["reentry_days"].as_u64(),
            row["goal"].as_str(),
            row["notify"].as_str()
        ),
        (
            Some("checkin.created"),
            Some(6),
            Some("after_days"),
            Some(14),
            Some("Call after their class"),
            Some("always")
        ),
        "{row}"
    );
    let (_, page) = owner.get("/app/settings?done=trigger_changed").await;
    assert!(page.contains("Trigger changed"), "said back");
    assert!(page.contains(", after 6 h"), "the row in words: {page}");
    let (_, form) = owner.get(&edit).await;
    assert!(
        form.contains("<option value=\"checkin.created\" selected>") && form.contains("value=\"14\""),
        "the form shows the change: {form}"
    );

    // Refused: the reason in words over the form, with what was posted; nothing changed.
    let mut too_late = changed.to_vec();
    too_late[3] = ("delay_hours", "9999");
    let (status, page) = owner.post_page(&edit, &too_late).await;
    assert_eq!(status, 422, "{page}");
    assert!(
        page.contains("role=\"alert\" id=\"trigger-error\">Not changed: The wait is at most 2160 hours (90 days).</p>"),
        "{page}"
    );
    assert!(page.contains("value=\"9999\""), "what the owner posted is kept: {page}");
    assert!(codes_in(&visible_text(&page)).is_empty(), "{:?}", codes_in(&visible_text(&page)));
    let mut never_again = changed.to_vec();
    never_again[5] = ("reentry_days", "0");
    let (status, page) = owner.post_page(&edit, &never_again).await;
    assert_eq!(status, 422, "{page}");
    assert!(
        page.contains("Not changed: It may fire again for a member after 1 to 365 days."),
        "{page}"
    );
    assert_eq!(trigger(&stack, &gym.token, &id).await, row, "nothing changed");

    // Back to once, the goal emptied: the days go with it and the task's own goal is used.
    let (status, _) = owner
        .post(
            &edit,
            &[
                ("csrf", owner.csrf.as_str()),
                ("event", "checkin.created"),
                ("task_type", "staff_call_member"),
                ("delay_hours", "0"),
                ("reentry", "once"),
                ("reentry_days", "14"),
                ("goal", ""),
                ("notify", "always"),
            ],
        )
        .await;
    assert_eq!(status, 303);
    let again = trigger(&stack, &gym.token, &id).await;
    assert!(
        again["reentry"] == "once" && again["reentry_days"].is_null() && again["goal"].is_null(),
        "{again}"
    );

    // A built-in row has no form; without the CSRF token, or another account's row: nothing.
    let (status, _) = owner.get("/app/settings/triggers/payment_failed/edit").await;
    assert_eq!(status, 422);
    let (status, _) = owner.post_page("/app/settings/triggers/payment_failed/edit", &changed).await;
    assert_eq!(status, 422);
    assert_eq!(trigger(&stack, &gym.token, "payment_failed").await["event"], "payment.failed");
    let (status, _) = owner.post(&edit, &changed[1..]).await;
    assert_eq!(status, 403);
    let other = stack.create_account("manual").await;
    let theirs = sign_in(&stack, &other).await;
    let (status, _) = theirs
        .post_page(&edit, &[&[("csrf", theirs.csrf.as_str())], &changed[1..]].concat())
        .await;
    assert_eq!(status, 404);
    assert_eq!(trigger(&stack, &gym.token, &id).await, again);

    // Every page reads in words, the trigger's form among them.
    let codes = crate::pages_in_words::codes_on_pages(&stack, &gym, &[]).await;
    assert!(codes.iter().all(|c| c.starts_with("no link")), "{codes:#?}");
}

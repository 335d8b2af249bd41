//! A plan on its task page in a real browser (headless Chromium, as `dashboard_browser.rs`):
//! the page passes axe-core and fits a phone; the owner rewrites a step, moves one, removes
//! one and has the agent plan again with its buttons; a dry-run task wears its badge.

use openloop_tests::browser::Browser;
use openloop_tests::{Stack, morning};
use serde_json::json;

use crate::dashboard_browser::{accessible, fits_a_phone, press, sign_in, wait_for_url};

fn fail(e: String) -> ! {
    panic!("{e}")
}

#[tokio::test]
async fn an_owner_edits_and_replans_a_plan_in_a_browser() {
    let stack = Stack::start("plans-browser").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_pia", "Pia", day0).await;
    stack.member(&gym, "m_dru", "Dru", day0).await;
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_pia", "goal": "Bring Pia back", "execution_mode": "plan",
                "draft": {"subject": "We miss you", "body": "Hi Pia, come back soon."}}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap_or_default().to_owned();
    let (_, dry) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_dru", "goal": "Bring Dru back", "execution_mode": "dry_run",
                "draft": {"subject": "Hi", "body": "Hi Dru"}}),
        )
        .await;
    let dry = dry["id"].as_str().unwrap_or_default().to_owned();

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    sign_in(&browser, &stack.url, &gym.token).await;
    let page = format!("/app/tasks/{id}");
    browser.goto(&format!("{}{page}", stack.url)).await.unwrap_or_else(|e| fail(e));
    browser.find("[data-plan-step=\"3\"]").await.unwrap_or_else(|e| fail(e));
    accessible(&browser, &page).await;
    fits_a_phone(&browser, &page).await;

    let description = browser
        .find("[data-plan-step=\"1\"] input[name=description]")
        .await
        .unwrap_or_else(|e| fail(e));
    browser.clear(&description).await.unwrap_or_else(|e| fail(e));
    browser
        .type_text(&description, "A short personal note")
        .await
        .unwrap_or_else(|e| fail(e));
    press(&browser, "[data-plan-step=\"1\"] form[action$=\"/save\"] button", "Save step").await;
    wait_for_url(&browser, "the step saved", "?done=plan_edited").await;
    press(&browser, "[data-plan-step=\"1\"] form[action$=\"/down\"] button", "Move down").await;
    wait_for_url(&browser, "the step moved", "?done=plan_edited").await;
    let second = browser
        .text_of("[data-plan-step=\"2\"] h3")
        .await
        .unwrap_or_else(|e| fail(e))
        .unwrap_or_default();
    assert!(second.contains("A short personal note"), "{second}");
    press(&browser, "[data-plan-step=\"3\"] form[action$=\"/remove\"] button", "Remove step").await;
    wait_for_url(&browser, "the step removed", "?done=plan_edited").await;
    assert!(
        browser
            .find_all("[data-plan-step=\"3\"]")
            .await
            .unwrap_or_else(|e| fail(e))
            .is_empty()
    );

    let instructions = browser.find("#replan-instructions").await.unwrap_or_else(|e| fail(e));
    browser
        .type_text(&instructions, "Don't mention the promotion, just check in")
        .await
        .unwrap_or_else(|e| fail(e));
    press(&browser, "form[action$=\"/plan/replan\"] button", "Plan again").await;
    wait_for_url(&browser, "planned again", "?done=replanned").await;
    browser.find("[data-plan-step=\"3\"]").await.unwrap_or_else(|e| fail(e));
    let changes = browser
        .text_of("ul.plan-feedback")
        .await
        .unwrap_or_else(|e| fail(e))
        .unwrap_or_default();
    assert!(changes.contains("Don't mention the promotion"), "{changes}");
    accessible(&browser, "the task page after planning again").await;

    let dry_page = format!("/app/tasks/{dry}");
    browser.goto(&format!("{}{dry_page}", stack.url)).await.unwrap_or_else(|e| fail(e));
    let badge = browser.text_of("h1 [data-mode]").await.unwrap_or_else(|e| fail(e));
    assert_eq!(badge.as_deref(), Some("dry run"));
    accessible(&browser, &dry_page).await;
    fits_a_phone(&browser, &dry_page).await;
    browser.goto(&format!("{}/app/review", stack.url)).await.unwrap_or_else(|e| fail(e));
    let badge = browser
        .text_of(&format!("[data-task-id=\"{dry}\"] [data-mode]"))
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(badge.as_deref(), Some("dry run"));
    drop(browser);
    stack.running.stop();
}

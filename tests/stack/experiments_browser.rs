//! Message experiments in a real browser (headless Chromium over WebDriver, as
//! `dashboard_browser.rs`): the owner starts one from an applied suggestion's "Test it on half
//! the new tasks", finds it on `/app/lift` with the send hours beside it, and keeps it; axe-core
//! finds nothing serious on the pages and they fit a phone.

use openloop_core::learning::suggestion::{ProposedChange, SuggestionKind};
use openloop_tests::browser::Browser;
use openloop_tests::{Stack, morning};
use serde_json::json;

fn fail(e: String) -> ! {
    panic!("{e}")
}

async fn accessible(browser: &Browser, page: &str) {
    let violations = browser.axe_violations().await.unwrap_or_else(|e| fail(e));
    assert!(violations.is_empty(), "axe-core on {page}: {violations:#?}");
}

async fn wait_for_url(browser: &Browser, what: &str, ends_with: &str) {
    browser
        .wait_for(what, || async { Ok(browser.url().await?.ends_with(ends_with)) })
        .await
        .unwrap_or_else(|e| fail(e));
}

/// At 375 px nothing on the page is wider than the screen (then back to the desktop size).
async fn fits_a_phone(browser: &Browser, path: &str) {
    browser.resize(375, 800).await.unwrap_or_else(|e| fail(e));
    let overflow = browser
        .execute(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
            vec![],
        )
        .await
        .unwrap_or_else(|e| fail(e));
    assert!(
        overflow.as_i64().is_some_and(|o| o <= 0),
        "{path} scrolls sideways at 375 px by {overflow}"
    );
    browser.resize(1000, 1300).await.unwrap_or_else(|e| fail(e));
}

async fn press(browser: &Browser, css: &str, verb: &str) {
    let button = browser.find(css).await.unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&button).await.unwrap_or_else(|e| fail(e)), verb, "{css}");
    browser.click(&button).await.unwrap_or_else(|e| fail(e));
}

#[tokio::test]
async fn an_owner_tests_a_suggestion_on_half_the_tasks_and_keeps_it_in_a_browser() {
    let stack = Stack::start("experiments-browser").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let skill = ProposedChange::Skill {
        task_type: "churn_risk".into(),
        guidance: "Mention the new 6am class by name.".into(),
    };
    let sid = crate::experiments::seeded_suggestion(&stack, &gym, SuggestionKind::Skill, skill, "skill:churn:6am").await;
    let (status, _) = stack
        .post(&format!("/api/v1/suggestions/{sid}/accept"), &gym.token, json!({}))
        .await;
    assert_eq!(status, 200);

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    browser.goto(&format!("{}/app/login", stack.url)).await.unwrap_or_else(|e| fail(e));
    let token = browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&token, &gym.token).await.unwrap_or_else(|e| fail(e));
    let sign_in = browser.find("button[type=submit]").await.unwrap_or_else(|e| fail(e));
    browser.click(&sign_in).await.unwrap_or_else(|e| fail(e));
    wait_for_url(&browser, "the overview", "/app").await;

    // Before any experiment: the lift page says so, with the usual send hours.
    browser.goto(&format!("{}/app/lift", stack.url)).await.unwrap_or_else(|e| fail(e));
    browser.find("[data-no-experiments]").await.unwrap_or_else(|e| fail(e));
    let hours = browser.text_of("[data-first-touch-hours]").await.unwrap_or_else(|e| fail(e));
    assert_eq!(hours.as_deref(), Some("8:00-10:00"));
    accessible(&browser, "/app/lift").await;

    // Start it from the applied suggestion.
    browser
        .goto(&format!("{}/app/suggestions", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let card = format!("[data-suggestion-id=\"{sid}\"]");
    press(
        &browser,
        &format!("{card} button[formaction$=\"/experiment\"]"),
        "Test it on half the new tasks",
    )
    .await;
    wait_for_url(&browser, "the experiment started", "/app/lift?done=experiment_started#experiments").await;
    let (_, listed) = stack.get("/api/v1/experiments", &gym.token).await;
    let id = listed["experiments"][0]["id"].as_str().unwrap_or_default().to_owned();
    let row = format!("[data-experiment-id=\"{id}\"]");
    let status = browser
        .text_of(&format!("{row} [data-experiment-status]"))
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(status.as_deref(), Some("running"));
    accessible(&browser, "/app/lift with an experiment").await;
    fits_a_phone(&browser, "/app/lift with an experiment").await;

    // Keep it.
    press(&browser, &format!("{row} button[type=submit]:not([formaction])"), "Keep it").await;
    wait_for_url(&browser, "the experiment kept", "/app/lift?done=experiment_kept#experiments").await;
    let status = browser
        .text_of(&format!("{row} [data-experiment-status]"))
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(status.as_deref(), Some("kept"));
    let (_, listed) = stack.get("/api/v1/experiments", &gym.token).await;
    assert_eq!(listed["experiments"][0]["status"], "kept", "{listed}");
    drop(browser);
    stack.running.stop();
}

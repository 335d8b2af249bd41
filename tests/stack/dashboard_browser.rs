//! The dashboard in a real browser (headless Chromium over WebDriver): an owner signs in with
//! the API token, opens the review queue, approves a task, and sees it leave the queue.
//!
//! With `OPENLOOP_SCREENSHOT_DIR` set it also saves the overview and the review queue as PNGs
//! there (the README's pictures):
//! `OPENLOOP_SCREENSHOT_DIR=$PWD/docs cargo test --workspace --test stack dashboard_browser`.

use std::time::Instant;

use openloop_tests::browser::Browser;
use openloop_tests::{Stack, morning};
use serde_json::json;

fn fail(e: String) -> ! {
    panic!("{e}")
}

async fn save_screenshot(browser: &Browser, name: &str) {
    let Some(dir) = std::env::var_os("OPENLOOP_SCREENSHOT_DIR") else {
        return;
    };
    let png = browser.screenshot().await.unwrap_or_else(|e| fail(e));
    let path = std::path::Path::new(&dir).join(name);
    std::fs::write(&path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[tokio::test]
async fn an_owner_signs_in_and_approves_a_task_from_the_review_queue_in_a_browser() {
    let started = Instant::now();
    let stack = Stack::start("app-browser").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let mut tasks = Vec::new();
    for (member, first, task_type, goal, confidence) in [
        (
            "m_ana",
            "Ana",
            "churn_risk",
            "Ana has not checked in for 19 days (usually twice a week)",
            72,
        ),
        (
            "m_bo",
            "Bo",
            "payment_recovery",
            "Bo's card was declined for the November membership",
            85,
        ),
        ("m_cy", "Cy", "win_back", "Cy cancelled 12 days ago, citing a busy schedule", 64),
    ] {
        stack.member(&gym, member, first, day0).await;
        let input = json!({"task_type": task_type, "member_id": member, "goal": goal, "confidence": confidence});
        let (status, task) = stack.post("/api/v1/tasks", &gym.token, input).await;
        assert_eq!((status, task["status"].as_str()), (201, Some("pending_review")), "{task}");
        tasks.push(task["id"].as_str().unwrap_or_default().to_owned());
    }
    let stack_ready = started.elapsed();

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    browser.goto(&format!("{}/app/login", stack.url)).await.unwrap_or_else(|e| fail(e));
    let token = browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&token, &gym.token).await.unwrap_or_else(|e| fail(e));
    let sign_in = browser.find("button[type=submit]").await.unwrap_or_else(|e| fail(e));
    browser.click(&sign_in).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the overview after signing in", || async {
            Ok(browser.url().await?.ends_with("/app") && browser.text_of("main h1").await?.as_deref() == Some("Overview"))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    save_screenshot(&browser, "dashboard-overview.png").await;

    browser.goto(&format!("{}/app/review", stack.url)).await.unwrap_or_else(|e| fail(e));
    let approved = &tasks[0];
    let card = format!("[data-task-id=\"{approved}\"]");
    browser.find(&card).await.unwrap_or_else(|e| fail(e));
    save_screenshot(&browser, "dashboard-review.png").await;
    let approve = browser
        .find(&format!("{card} button[value=approve]"))
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&approve).await.unwrap_or_else(|e| fail(e)), "Approve");
    browser.click(&approve).await.unwrap_or_else(|e| fail(e));

    browser
        .wait_for("the approved task to leave the queue", || async {
            let notice = browser.text_of("p.notice[role=status]").await?;
            Ok(browser.url().await?.ends_with("/app/review?done=approved")
                && notice.is_some_and(|n| n.starts_with("Approved"))
                && browser.find_all(&card).await?.is_empty())
        })
        .await
        .unwrap_or_else(|e| fail(e));
    for waiting in &tasks[1..] {
        let still = browser.find_all(&format!("[data-task-id=\"{waiting}\"]")).await;
        assert_eq!(still.map(|e| e.len()), Ok(1), "{waiting} still waits");
    }
    let (_, task) = stack.get(&format!("/api/v1/tasks/{approved}"), &gym.token).await;
    assert_ne!(task["status"], "pending_review", "{task}");
    drop(browser);
    eprintln!(
        "dashboard browser walkthrough: {:?} in all ({:?} of it the stack and its tasks)",
        started.elapsed(),
        stack_ready
    );
    stack.running.stop();
}

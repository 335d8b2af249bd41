//! The call list in a real browser (headless Chromium over WebDriver, as
//! `dashboard_browser.rs`): a staff call's to-do on `/app/todos` is logged, snoozed and done
//! with its buttons, and axe-core finds nothing serious on the page or on `/app/today`.

use openloop_tests::browser::Browser;
use openloop_tests::{Stack, morning};
use serde_json::json;

fn fail(e: String) -> ! {
    panic!("{e}")
}

#[tokio::test]
async fn a_todo_is_logged_snoozed_and_done_on_the_call_list_in_a_browser() {
    let stack = Stack::start("day-browser").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_sam", "Sam", day0).await;
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "staff_call_member", "member_id": "m_sam", "goal": "Call Sam about his knee"}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let (_, todos) = stack.get("/api/v1/todos", &gym.token).await;
    let id = todos["todos"][0]["id"].as_str().unwrap_or_default().to_owned();
    let item = format!("[data-todo-id=\"{id}\"]");

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    browser.goto(&format!("{}/app/login", stack.url)).await.unwrap_or_else(|e| fail(e));
    let token = browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&token, &gym.token).await.unwrap_or_else(|e| fail(e));
    let sign_in = browser.find("button[type=submit]").await.unwrap_or_else(|e| fail(e));
    browser.click(&sign_in).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the overview after signing in", || async {
            Ok(browser.url().await?.ends_with("/app"))
        })
        .await
        .unwrap_or_else(|e| fail(e));

    browser.goto(&format!("{}/app/today", stack.url)).await.unwrap_or_else(|e| fail(e));
    browser.find(&item).await.unwrap_or_else(|e| fail(e));
    accessible(&browser, "/app/today").await;

    browser.goto(&format!("{}/app/todos", stack.url)).await.unwrap_or_else(|e| fail(e));
    browser.find(&item).await.unwrap_or_else(|e| fail(e));
    accessible(&browser, "/app/todos").await;
    let press = |label: &'static str| {
        let item = item.clone();
        let browser = &browser;
        async move {
            for button in browser.find_all(&format!("{item} button")).await.unwrap_or_else(|e| fail(e)) {
                if browser.text(&button).await.unwrap_or_else(|e| fail(e)) == label {
                    browser.click(&button).await.unwrap_or_else(|e| fail(e));
                    return;
                }
            }
            panic!("no {label} button on {item}")
        }
    };

    let result = browser
        .find(&format!("{item} select[name=result]"))
        .await
        .unwrap_or_else(|e| fail(e));
    browser.type_text(&result, "No answer").await.unwrap_or_else(|e| fail(e));
    press("Log contact").await;
    browser
        .wait_for("the contact logged", || async {
            Ok(browser.url().await?.ends_with("/app/todos?done=contact")
                && browser
                    .text_of(&format!("{item} ul.contacts"))
                    .await?
                    .is_some_and(|t| t.contains("no answer")))
        })
        .await
        .unwrap_or_else(|e| fail(e));

    press("Snooze").await;
    browser
        .wait_for("the to-do snoozed out of the open list", || async {
            Ok(browser.url().await?.ends_with("/app/todos?done=snooze") && browser.find_all(&item).await?.is_empty())
        })
        .await
        .unwrap_or_else(|e| fail(e));

    browser
        .goto(&format!("{}/app/todos?status=snoozed", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    press("Done").await;
    browser
        .wait_for("the to-do done", || async {
            Ok(browser.url().await?.ends_with("/app/todos?done=done"))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    let (_, done) = stack.get("/api/v1/todos?status=done", &gym.token).await;
    assert_eq!(done["todos"][0]["id"], id.as_str(), "{done}");
    assert_eq!(done["todos"][0]["contacts"][0]["result"], "no_answer", "{done}");
    drop(browser);
    stack.running.stop();
}

async fn accessible(browser: &Browser, page: &str) {
    let violations = browser.axe_violations().await.unwrap_or_else(|e| fail(e));
    assert!(violations.is_empty(), "axe-core on {page}: {violations:#?}");
}

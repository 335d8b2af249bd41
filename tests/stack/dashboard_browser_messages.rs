//! The Messages page and the schedules page in a real browser (headless Chromium, as
//! `dashboard_browser.rs`), with no script of the page's own: each passes axe-core and fits a
//! phone (the schedules page with its new-schedule form and a removal's warning, and a
//! trigger's own form, too); the owner writes a template in words, presses Preview (the draft
//! shows as mail, nothing saved), then Save; on the schedules page presses Pause and Resume.

use openloop_tests::Stack;
use openloop_tests::browser::Browser;
use serde_json::json;

use crate::dashboard_browser::{accessible, fits_a_phone, press, save_screenshot, sign_in, wait_for_url};

fn fail(e: String) -> ! {
    panic!("{e}")
}

#[tokio::test]
async fn an_owner_previews_and_saves_a_message_in_words_and_pauses_a_schedule_in_a_browser() {
    let stack = Stack::start("messages-browser").await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_sam", "Sam", stack.now().await).await;
    stack.run().await;
    let (status, schedule) = stack
        .post(
            "/api/v1/recurring",
            &gym.token,
            json!({"task_type": "churn_risk", "member_id": "m_sam", "cron": "0 8 * * 1", "goal": "Check in with Sam"}),
        )
        .await;
    assert_eq!(status, 201, "{schedule}");
    let schedule = schedule["id"].as_str().unwrap_or_default().to_owned();
    let trigger = json!({"event": "checkin.created", "task_type": "milestone_review", "goal": "Ask for a review", "reentry": "once"});
    let (status, trigger) = stack.post("/api/v1/triggers", &gym.token, trigger).await;
    assert_eq!(status, 201, "{trigger}");
    let edit = format!("/app/settings/triggers/{}/edit", trigger["id"].as_str().unwrap_or_default());
    let remove = format!("/app/schedules?remove={schedule}");

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    sign_in(&browser, &stack.url, &gym.token).await;
    let path = "/app/templates/win_back/first";
    for (page, ready) in [
        ("/app/templates", "a[href=\"/app/templates/win_back/first\"]"),
        (path, "textarea#words-body"),
        ("/app/schedules", "[data-schedule-id]"),
        (remove.as_str(), "[data-confirm-remove]"),
        (edit.as_str(), "[data-trigger-id] form"),
    ] {
        browser.goto(&format!("{}{page}", stack.url)).await.unwrap_or_else(|e| fail(e));
        browser.find(ready).await.unwrap_or_else(|e| fail(e));
        accessible(&browser, page).await;
        save_screenshot(
            &browser,
            &format!("{}.png", page.trim_start_matches('/').replace(['/', '?', '='], "-")),
        )
        .await;
        fits_a_phone(&browser, page).await;
    }

    browser.goto(&format!("{}{path}", stack.url)).await.unwrap_or_else(|e| fail(e));
    let body = browser.find("textarea#words-body").await.unwrap_or_else(|e| fail(e));
    browser.clear(&body).await.unwrap_or_else(|e| fail(e));
    browser
        .type_text(&body, "[greeting],\n\nWe would love to see you at [gym name] again.\n\n[sign-off]")
        .await
        .unwrap_or_else(|e| fail(e));
    press(&browser, "form.words-form button[formaction$=\"/preview\"]", "Preview").await;
    wait_for_url(&browser, "the preview", "/app/templates/win_back/first/preview").await;
    let mail = browser
        .text_of("[data-mail] pre")
        .await
        .unwrap_or_else(|e| fail(e))
        .unwrap_or_default();
    assert!(
        mail.starts_with("Hi Dana,") && mail.contains("see you at CrossFit Renegade again"),
        "{mail}"
    );
    accessible(&browser, "the preview").await;
    save_screenshot(&browser, "message-preview.png").await;
    let (_, list) = stack.get("/api/v1/message-templates", &gym.token).await;
    assert!(!list.to_string().contains("We would love to see you"), "a preview saves nothing");

    press(&browser, "form.words-form button.primary", "Save").await;
    wait_for_url(&browser, "the saved page", "/app/templates/win_back/first?done=saved").await;
    let (_, list) = stack.get("/api/v1/message-templates", &gym.token).await;
    assert!(
        list.to_string().contains("We would love to see you at {{ gym.name }} again."),
        "saved in the template language: {list}"
    );

    browser
        .goto(&format!("{}/app/schedules", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let card = format!("[data-schedule-id=\"{schedule}\"]");
    press(&browser, &format!("{card} form[action$=\"/pause\"] button"), "Pause").await;
    wait_for_url(&browser, "paused", &format!("/app/schedules?done=paused#s-{schedule}")).await;
    accessible(&browser, "a paused schedule").await;
    press(&browser, &format!("{card} form[action$=\"/resume\"] button"), "Resume").await;
    wait_for_url(&browser, "resumed", &format!("/app/schedules?done=resumed#s-{schedule}")).await;
    let (_, listed) = stack.get("/api/v1/recurring", &gym.token).await;
    assert_eq!(listed["templates"][0]["paused"], false, "{listed}");
}

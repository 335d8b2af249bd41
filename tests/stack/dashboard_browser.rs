//! The dashboard in a real browser (headless Chromium over WebDriver): an owner signs in with
//! the API token, opens the review queue, approves a task, and sees it leave the queue; signs
//! out, asks for a sign-in link and follows the one mailed to them.
//!
//! The second walkthrough answers escalations, changes a setting, pauses and resumes, and runs
//! axe-core (vendored under `tests/vendor/axe-core`) on every page.
//!
//! With `OPENLOOP_SCREENSHOT_DIR` set they also save the review queue and the overview they
//! saw there, as `browser-test-review.png` and `browser-test-overview.png` (for looking at a
//! failure): `OPENLOOP_SCREENSHOT_DIR=$PWD/target cargo test --workspace --test stack
//! dashboard_browser`. The README's pictures are not these: `make pictures` makes them from
//! the demo gym.

use std::time::Instant;

use jiff::SignedDuration;

use openloop_tests::browser::Browser;
use openloop_tests::{Stack, morning};
use serde_json::json;

fn fail(e: String) -> ! {
    panic!("{e}")
}

pub(crate) async fn save_screenshot(browser: &Browser, name: &str) {
    let Some(dir) = std::env::var_os("OPENLOOP_SCREENSHOT_DIR") else {
        return;
    };
    let png = browser.screenshot().await.unwrap_or_else(|e| fail(e));
    // Never a README picture's name: those come from `make pictures` only.
    let path = std::path::Path::new(&dir).join(format!("browser-test-{name}"));
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

    browser.goto(&format!("{}/app/review", stack.url)).await.unwrap_or_else(|e| fail(e));
    let approved = &tasks[0];
    let card = format!("[data-task-id=\"{approved}\"]");
    browser.find(&card).await.unwrap_or_else(|e| fail(e));
    save_screenshot(&browser, "review.png").await;
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

    // Signed out, the owner asks for a sign-in link and follows the one mailed to them.
    let owner = stack.give_owner_address(&gym).await;
    let sign_out = browser
        .find("form[action=\"/app/logout\"] button")
        .await
        .unwrap_or_else(|e| fail(e));
    browser.click(&sign_out).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the sign-in page after signing out", || async {
            Ok(browser.url().await?.ends_with("/app/login"))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    let email = browser.find("input[name=email]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&email, &owner).await.unwrap_or_else(|e| fail(e));
    let ask = browser
        .find("form[action=\"/app/login/link\"] button")
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&ask).await.unwrap_or_else(|e| fail(e)), "Email me a sign-in link");
    browser.click(&ask).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the page saying a link is on its way", || async {
            let notice = browser.text_of("p.notice[role=status]").await?;
            Ok(notice.is_some_and(|n| n.contains("a sign-in link is on its way")))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    let violations = browser.axe_violations().await.unwrap_or_else(|e| fail(e));
    assert!(violations.is_empty(), "axe-core on the sign-in page: {violations:#?}");
    stack.run().await; // the link is mailed from the queue, after the page answered (the run may mail a brief too)
    let mail = stack.outbox_to(&owner).await;
    let text = mail
        .iter()
        .rev()
        .filter_map(|m| m["text"].as_str())
        .find(|t| t.contains("/app/login/link?token="))
        .unwrap_or_default()
        .to_owned();
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/app/login/link?token="))
        .unwrap_or_else(|| panic!("a link in {text}"));
    let path = &link[link.find("/app/").unwrap_or(0)..];
    browser.goto(&format!("{}{path}", stack.url)).await.unwrap_or_else(|e| fail(e));
    let sign_in = browser
        .find("form[action=\"/app/login/link/use\"] button")
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&sign_in).await.unwrap_or_else(|e| fail(e)), "Sign in");
    accessible(&browser, "the sign-in link's page").await;
    browser.click(&sign_in).await.unwrap_or_else(|e| fail(e));
    browser
        .wait_for("the overview after following the link", || async {
            Ok(browser.url().await?.ends_with("/app") && browser.text_of("main h1").await?.as_deref() == Some("Overview"))
        })
        .await
        .unwrap_or_else(|e| fail(e));
    drop(browser);
    eprintln!(
        "dashboard browser walkthrough: {:?} in all ({:?} of it the stack and its tasks)",
        started.elapsed(),
        stack_ready
    );
    stack.running.stop();
}

/// Runs axe-core on the page the browser shows and fails on any serious or critical
/// violation.
pub(crate) async fn accessible(browser: &Browser, page: &str) {
    let violations = browser.axe_violations().await.unwrap_or_else(|e| fail(e));
    assert!(violations.is_empty(), "axe-core on {page}: {violations:#?}");
}

/// Waits for a page whose address ends so — a new page after a [`press`]: a press that lands
/// on the same address as the page it left (two saves in a row) would otherwise pass at once,
/// on the old page.
pub(crate) async fn wait_for_url(browser: &Browser, what: &str, ends_with: &str) {
    browser
        .wait_for(what, || async {
            // While the page is unloading the script may fail: not there yet.
            let left = browser
                .execute("return window.openloopPressed === undefined;", vec![])
                .await
                .is_ok_and(|fresh| fresh == serde_json::Value::Bool(true));
            Ok(left && browser.url().await?.ends_with(ends_with))
        })
        .await
        .unwrap_or_else(|e| fail(e));
}

/// Mobile first: at 375 px nothing on the page is wider than the screen (then back to the
/// desktop size).
pub(crate) async fn fits_a_phone(browser: &Browser, path: &str) {
    browser.resize(375, 800).await.unwrap_or_else(|e| fail(e));
    let overflow = browser
        .execute(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
            vec![],
        )
        .await
        .unwrap_or_else(|e| fail(e));
    if overflow.as_i64().is_none_or(|o| o > 0) {
        let wide = browser
            .execute(
                "const w = document.documentElement.clientWidth;
                 return [...document.querySelectorAll('body *')]
                   .filter(e => !e.closest('.visually-hidden') && e.getBoundingClientRect().right > w + 0.5)
                   .filter(e => ![...e.children].some(c => c.getBoundingClientRect().right > w + 0.5)).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));",
                vec![],
            )
            .await
            .unwrap_or_else(|e| fail(e));
        panic!("{path} scrolls sideways at 375 px by {overflow}: {wide}");
    }
    // The first screen is the page's own work: the menu folded, the heading near the top;
    // tables read as cards (no column squeezed to letters); a draft's box shows all of it.
    let problems = browser
        .execute(
            "const out = [];
             const nav = document.querySelector('header.top nav');
             if (nav && nav.getBoundingClientRect().height > 0) out.push('the menu is open on arrival');
             const h1 = document.querySelector('main h1');
             if (h1 && h1.getBoundingClientRect().top > 160) out.push('the heading starts ' + Math.round(h1.getBoundingClientRect().top) + ' px down');
             for (const c of document.querySelectorAll('main td, main th')) {
               if (c.closest('.visually-hidden')) continue;
               const head = c.closest('thead');
               if (head && head.getBoundingClientRect().width <= 2) continue; // a card's column names, read by screen readers only
               const r = c.getBoundingClientRect();
               if (r.width > 0 && r.width < 64 && c.textContent.trim().length > 4) out.push('a cell ' + Math.round(r.width) + ' px wide: ' + c.textContent.trim().slice(0, 30));
             }
             for (const t of document.querySelectorAll('main textarea')) {
               if (t.value.length && t.scrollHeight > t.clientHeight + 2) out.push('a text box shows part of its text: ' + t.id);
             }
             return out;",
            vec![],
        )
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(problems, serde_json::json!([]), "{path} at 375 px");
    browser.resize(1000, 1300).await.unwrap_or_else(|e| fail(e));
}

/// At a phone's width the menu opens from its button and shows every page.
pub(crate) async fn the_menu_opens_on_a_phone(browser: &Browser) {
    browser.resize(375, 800).await.unwrap_or_else(|e| fail(e));
    let button = browser.find("label.menu-button").await.unwrap_or_else(|e| fail(e));
    browser.click(&button).await.unwrap_or_else(|e| fail(e));
    let shown = browser
        .execute(
            "return [...document.querySelectorAll('header.top nav a')].filter(a => a.getBoundingClientRect().height > 0).length;",
            vec![],
        )
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(shown, serde_json::json!(13), "the menu, opened, lists every page");
    browser.click(&button).await.unwrap_or_else(|e| fail(e));
    browser.resize(1000, 1300).await.unwrap_or_else(|e| fail(e));
}

/// The rest of the dashboard in a real browser: every page passes axe-core; a member's hostile
/// reply shows as text and runs nothing; the owner sends guidance to an escalation and sees
/// the task resume (the agent's answer in the thread), resolves another with an outcome,
/// changes a setting, pauses and resumes; another account's task is not found.
#[tokio::test]
async fn an_owner_answers_escalations_changes_settings_and_pauses_in_a_browser() {
    let stack = Stack::start("app-browser-2").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let rival = stack.create_account("manual").await;
    let hostile = "<script>alert(1)</script> <img src=x onerror=alert(1)> what time is the class?";
    let guided = crate::dashboard::escalated_task(&stack, &gym, "m_gia", "Gia", "Do you still run the Saturday 9am class?", day0).await;
    let resolved = crate::dashboard::escalated_task(&stack, &gym, "m_x", "Sam", hostile, day0).await;
    stack.member(&gym, "m_ana", "Ana", day0).await;
    let input = json!({"task_type": "churn_risk", "member_id": "m_ana", "goal": "Ana has not checked in for 19 days", "confidence": 72,
        "draft": {"subject": "We miss you, Ana", "body": "Hi Ana,\nThursday's 6pm class has your name on it."}});
    let (status, _) = stack.post("/api/v1/tasks", &gym.token, input).await;
    assert_eq!(status, 201);
    stack.member(&rival, "m_riv", "Riv", day0).await;
    let input = json!({"task_type": "churn_risk", "member_id": "m_riv", "goal": "Rival's secret goal", "confidence": 60});
    let (_, theirs) = stack.post("/api/v1/tasks", &rival.token, input).await;
    let theirs = theirs["id"].as_str().unwrap_or_default().to_owned();
    // The hourly fold counts the day, for the overview's charts.
    stack.set_clock(&(day0 + SignedDuration::from_hours(2)).to_string()).await;
    stack.run().await;

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    browser.goto(&format!("{}/app/login", stack.url)).await.unwrap_or_else(|e| fail(e));
    browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    accessible(&browser, "the sign-in page").await;
    // The check can fail: an image without a text alternative is a critical violation, found
    // though the page's CSP allows no script (WebDriver's scripts are not the page's).
    browser
        .execute(
            "document.querySelector('main').insertAdjacentHTML('beforeend', '<img src=\"/x.png\">');",
            vec![],
        )
        .await
        .unwrap_or_else(|e| fail(e));
    let found = browser.axe_violations().await.unwrap_or_else(|e| fail(e));
    assert!(found.iter().any(|v| v["id"] == "image-alt"), "axe-core ran and saw it: {found:?}");
    browser.goto(&format!("{}/app/login", stack.url)).await.unwrap_or_else(|e| fail(e));
    let token = browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&token, &gym.token).await.unwrap_or_else(|e| fail(e));
    let sign_in = browser.find("button[type=submit]").await.unwrap_or_else(|e| fail(e));
    browser.click(&sign_in).await.unwrap_or_else(|e| fail(e));
    wait_for_url(&browser, "the overview", "/app").await;
    browser.find("[data-chart=messages] svg rect").await.unwrap_or_else(|e| fail(e));
    accessible(&browser, "the overview").await;
    save_screenshot(&browser, "overview.png").await;

    the_menu_opens_on_a_phone(&browser).await;
    for (path, ready) in [
        ("/app", "main h1"),
        ("/app/review", "[data-task-id]"),
        ("/app/escalations", "[data-task-id]"),
        ("/app/notifications", "main h1"),
        ("/app/members", "[data-member-id]"),
        ("/app/settings", "button.primary"),
        (&format!("/app/tasks/{guided}"), "main h1"),
    ] {
        browser.goto(&format!("{}{path}", stack.url)).await.unwrap_or_else(|e| fail(e));
        browser.find(ready).await.unwrap_or_else(|e| fail(e));
        accessible(&browser, path).await;
        fits_a_phone(&browser, path).await;
    }

    // The hostile reply, on the escalations page and on the task's page: text, and nothing ran.
    browser
        .goto(&format!("{}/app/escalations", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let card = format!("[data-task-id=\"{resolved}\"]");
    let words = browser.text_of(&format!("{card} blockquote")).await.unwrap_or_else(|e| fail(e));
    assert_eq!(words.as_deref(), Some(hostile), "the member's words as text");
    accessible(&browser, "/app/escalations").await;
    for page in [
        format!("{}/app/escalations", stack.url),
        format!("{}/app/tasks/{resolved}", stack.url),
    ] {
        browser.goto(&page).await.unwrap_or_else(|e| fail(e));
        browser.find("main h1").await.unwrap_or_else(|e| fail(e));
        let injected = browser
            .execute("return document.querySelectorAll('main script, main img').length;", vec![])
            .await
            .unwrap_or_else(|e| fail(e));
        assert_eq!(injected, json!(0), "no element from the member's text on {page}");
        assert_eq!(
            browser.open_dialog().await.unwrap_or_else(|e| fail(e)),
            None,
            "no alert ran on {page}"
        );
    }
    accessible(&browser, "a task page").await;

    // Send guidance; the task resumes, and the agent's answer reaches the thread next morning.
    browser
        .goto(&format!("{}/app/escalations", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let card = format!("[data-task-id=\"{guided}\"]");
    let text = browser
        .find(&format!("{card} textarea[name=text]"))
        .await
        .unwrap_or_else(|e| fail(e));
    browser.clear(&text).await.unwrap_or_else(|e| fail(e));
    browser
        .type_text(&text, "Tell her yes, Saturdays at 9 with Coach Dana")
        .await
        .unwrap_or_else(|e| fail(e));
    let send = browser
        .find(&format!("{card} form[action$=\"/guidance\"] button"))
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&send).await.unwrap_or_else(|e| fail(e)), "Send guidance");
    browser.click(&send).await.unwrap_or_else(|e| fail(e));
    wait_for_url(&browser, "guidance sent", "/app/escalations?done=guided").await;
    assert!(
        browser.find_all(&card).await.unwrap_or_else(|e| fail(e)).is_empty(),
        "it left the page"
    );
    stack
        .set_clock(&(day0 + SignedDuration::from_hours(24) + SignedDuration::from_mins(5)).to_string())
        .await;
    stack.run().await;
    browser
        .goto(&format!("{}/app/tasks/{guided}", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let status = browser.text_of("[data-status]").await.unwrap_or_else(|e| fail(e));
    assert_eq!(status.as_deref(), Some("waiting"), "the task resumed and wrote back");
    let thread = browser.text_of(".thread").await.unwrap_or_else(|e| fail(e)).unwrap_or_default();
    assert!(thread.contains("Coach Dana"), "{thread}");

    // Resolve the other with an outcome.
    browser
        .goto(&format!("{}/app/escalations", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let card = format!("[data-task-id=\"{resolved}\"]");
    let option = browser
        .find(&format!("{card} select[name=outcome] option[value=engaged_conversation]"))
        .await
        .unwrap_or_else(|e| fail(e));
    browser.click(&option).await.unwrap_or_else(|e| fail(e));
    let resolve = browser
        .find(&format!("{card} form[action$=\"/resolve\"] button[type=submit]:not([formaction])"))
        .await
        .unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&resolve).await.unwrap_or_else(|e| fail(e)), "Resolve");
    browser.click(&resolve).await.unwrap_or_else(|e| fail(e));
    wait_for_url(&browser, "resolved", "/app/escalations?done=resolved").await;
    let (_, task) = stack.get(&format!("/api/v1/tasks/{resolved}"), &gym.token).await;
    assert_eq!(task["outcome"], "engaged_conversation", "{task}");

    // Change a setting; pause and resume.
    browser
        .goto(&format!("{}/app/settings", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let limit = browser.find("#daily_send_limit").await.unwrap_or_else(|e| fail(e));
    browser.clear(&limit).await.unwrap_or_else(|e| fail(e));
    browser.type_text(&limit, "30").await.unwrap_or_else(|e| fail(e));
    let save = browser.find("form.settings button[type=submit]").await.unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&save).await.unwrap_or_else(|e| fail(e)), "Save");
    browser.click(&save).await.unwrap_or_else(|e| fail(e));
    wait_for_url(&browser, "saved", "/app/settings?done=saved").await;
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["daily_send_limit"], 30, "{settings}");
    for (verb, paused) in [("Pause", true), ("Resume", false)] {
        let button = browser.find("section.kill button").await.unwrap_or_else(|e| fail(e));
        assert_eq!(browser.text(&button).await.unwrap_or_else(|e| fail(e)), verb);
        browser.click(&button).await.unwrap_or_else(|e| fail(e));
        browser
            .wait_for(verb, || async {
                Ok(!browser.find_all(&format!("[data-paused=\"{paused}\"]")).await?.is_empty())
            })
            .await
            .unwrap_or_else(|e| fail(e));
        let (_, state) = stack.get("/api/v1/pause", &gym.token).await;
        assert_eq!(state["paused"], paused, "{verb}");
    }
    accessible(&browser, "/app/settings after saving").await;

    // Another account's task.
    browser
        .goto(&format!("{}/app/tasks/{theirs}", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let heading = browser.text_of("main h1").await.unwrap_or_else(|e| fail(e));
    assert_eq!(heading.as_deref(), Some("Not found"));
    let body = browser.text_of("main").await.unwrap_or_else(|e| fail(e)).unwrap_or_default();
    assert!(!body.contains("Rival's secret goal"), "{body}");
    accessible(&browser, "the not-found page").await;
    drop(browser);
    stack.running.stop();
}

/// Signs the browser in with the account's API token and waits for the overview.
pub(crate) async fn sign_in(browser: &Browser, url: &str, token: &str) {
    browser.goto(&format!("{url}/app/login")).await.unwrap_or_else(|e| fail(e));
    let field = browser.find("input[name=token]").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&field, token).await.unwrap_or_else(|e| fail(e));
    let sign_in = browser.find("button[type=submit]").await.unwrap_or_else(|e| fail(e));
    browser.click(&sign_in).await.unwrap_or_else(|e| fail(e));
    wait_for_url(browser, "the overview", "/app").await;
}

/// Clicks the button `css` after checking its accessible name is `verb`.
pub(crate) async fn press(browser: &Browser, css: &str, verb: &str) {
    let button = browser.find(css).await.unwrap_or_else(|e| fail(e));
    assert_eq!(browser.text(&button).await.unwrap_or_else(|e| fail(e)), verb, "{css}");
    // Marks this page, so `wait_for_url` can tell the page the press leads to from it.
    browser
        .execute("window.openloopPressed = true;", vec![])
        .await
        .unwrap_or_else(|e| fail(e));
    browser.click(&button).await.unwrap_or_else(|e| fail(e));
}

/// What the owner teaches the agent, in a real browser: the memories, suggestions and task
/// pages pass axe-core and fit a phone; the owner adds a memory and deletes it, accepts the
/// evaluator's suggestion (made from a month of seeded history, as `learning.rs` makes it)
/// and undoes it, rates a closed task Bad with a comment and corrects its outcome.
#[tokio::test]
async fn an_owner_teaches_the_agent_in_a_browser() {
    let stack = Stack::start("app-browser-learning").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let account: openloop_core::kernel::ids::AccountId = gym.id.parse().expect("account id");
    for i in 0..12 {
        crate::learning::seeded_closed_task(&stack, account, i, 2 + 2 * i as i64, 24, true).await;
        crate::learning::seeded_closed_task(&stack, account, 100 + i, 3 + 2 * i as i64, 14, false).await;
    }
    stack.member(&gym, "m_sam", "Sam", day0).await;
    stack.run().await;
    let input = json!({"task_type": "churn_risk", "member_id": "m_sam", "goal": "Sam has not checked in for 19 days", "confidence": 70});
    let (status, task) = stack.post("/api/v1/tasks", &gym.token, input).await;
    assert_eq!(status, 201, "{task}");
    let closed = task["id"].as_str().unwrap_or_default().to_owned();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{closed}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let ran = stack.run().await;
    assert_eq!(ran["evaluation"]["suggested"], 1, "the closed task fired the evaluation: {ran}");
    let (_, listed) = stack.get("/api/v1/suggestions", &gym.token).await;
    let suggestion = listed["suggestions"][0]["id"].as_str().unwrap_or_default().to_owned();

    let browser = Browser::start(1000, 1300).await.unwrap_or_else(|e| fail(e));
    sign_in(&browser, &stack.url, &gym.token).await;
    let task_page = format!("/app/tasks/{closed}");
    for (path, ready) in [
        ("/app/memories", "textarea#content"),
        ("/app/suggestions", "[data-suggestion-id]"),
        (task_page.as_str(), "form[action$=\"/feedback\"]"),
        ("/app/settings", "#share_learning"),
        ("/app/templates", "a[href=\"/app/templates/churn_risk/first\"]"),
        (
            "/app/templates/churn_risk/first",
            "form[action=\"/app/templates/churn_risk/first\"]",
        ),
    ] {
        browser.goto(&format!("{}{path}", stack.url)).await.unwrap_or_else(|e| fail(e));
        browser.find(ready).await.unwrap_or_else(|e| fail(e));
        accessible(&browser, path).await;
        fits_a_phone(&browser, path).await;
    }
    let nav = browser.text_of("header nav").await.unwrap_or_else(|e| fail(e)).unwrap_or_default();
    assert!(nav.contains("Suggestions") && nav.contains("Memories"), "{nav}");

    // Add a memory, then delete it.
    browser
        .goto(&format!("{}/app/memories", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let content = browser.find("textarea#content").await.unwrap_or_else(|e| fail(e));
    browser
        .type_text(&content, "Sam trains for a marathon in <b>April</b>")
        .await
        .unwrap_or_else(|e| fail(e));
    let member = browser.find("input#member_id").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&member, "m_sam").await.unwrap_or_else(|e| fail(e));
    press(&browser, "form.memory-form button[type=submit]", "Add").await;
    wait_for_url(&browser, "the memory saved", "/app/memories?done=memory_added").await;
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    let memory = memories["memories"][0]["id"].as_str().unwrap_or_default().to_owned();
    let row = format!("[data-memory-id=\"{memory}\"]");
    let text = browser.text_of(&format!("{row} p.text")).await.unwrap_or_else(|e| fail(e));
    assert_eq!(text.as_deref(), Some("Sam trains for a marathon in <b>April</b>"), "as text");
    accessible(&browser, "/app/memories with a memory").await;
    press(&browser, &format!("{row} button"), "Delete").await;
    wait_for_url(&browser, "the memory deleted", "/app/memories?done=memory_deleted").await;
    assert!(
        browser.find_all(&row).await.unwrap_or_else(|e| fail(e)).is_empty(),
        "it left the page"
    );
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(memories["memories"], json!([]));

    // Accept the suggestion, then undo it.
    browser
        .goto(&format!("{}/app/suggestions", stack.url))
        .await
        .unwrap_or_else(|e| fail(e));
    let card = format!("[data-suggestion-id=\"{suggestion}\"]");
    browser.find(&format!("{card} table.evidence")).await.unwrap_or_else(|e| fail(e));
    press(&browser, &format!("{card} button[type=submit]:not([formaction])"), "Accept").await;
    wait_for_url(&browser, "the suggestion accepted", "/app/suggestions?done=accepted").await;
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(memories["memories"][0]["source"], "evaluator", "{memories}");
    accessible(&browser, "/app/suggestions with an applied one").await;
    press(&browser, &format!("{card} form[action$=\"/undo\"] button"), "Undo").await;
    wait_for_url(&browser, "the suggestion undone", "/app/suggestions?done=undone").await;
    assert!(
        browser.find_all(&card).await.unwrap_or_else(|e| fail(e)).is_empty(),
        "it left the page"
    );
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(memories["memories"], json!([]), "the memory is taken back");

    // Thumbs down with a comment on the closed task, then correct its outcome.
    browser.goto(&format!("{}{task_page}", stack.url)).await.unwrap_or_else(|e| fail(e));
    let comment = browser.find("textarea#comment").await.unwrap_or_else(|e| fail(e));
    browser.type_text(&comment, "Too formal for Sam").await.unwrap_or_else(|e| fail(e));
    press(&browser, "form[action$=\"/feedback\"] button[value=down]", "Bad").await;
    wait_for_url(&browser, "the rating kept", &format!("{task_page}?done=rated")).await;
    browser.find("[data-feedback=Bad]").await.unwrap_or_else(|e| fail(e));
    let option = browser
        .find("select#correct-outcome option[value=retained]")
        .await
        .unwrap_or_else(|e| fail(e));
    browser.click(&option).await.unwrap_or_else(|e| fail(e));
    press(&browser, "form[action$=\"/outcome\"] button", "Correct outcome").await;
    wait_for_url(&browser, "the outcome corrected", &format!("{task_page}?done=corrected")).await;
    accessible(&browser, "a rated and corrected task").await;
    let (_, task) = stack.get(&format!("/api/v1/tasks/{closed}"), &gym.token).await;
    assert_eq!(
        (
            task["feedback"]["rating"].as_str(),
            task["feedback"]["comment"].as_str(),
            task["outcome"].as_str()
        ),
        (Some("down"), Some("Too formal for Sam"), Some("retained")),
        "{task}"
    );
    drop(browser);
    stack.running.stop();
}

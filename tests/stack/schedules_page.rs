//! The schedules page (issue 45, point 4): each recurring template in words — what it opens,
//! for whom, when it runs and when next in the gym's time zone — with Pause / Resume, Run now,
//! its notify policy and its latest runs, each the API's own operation with its rules (a run
//! now that finds its task still open counts nothing) and its refusals said in words.

use openloop_tests::{Account, Stack};
use serde_json::{Value, json};

use crate::dashboard::sign_in;
use crate::pages_in_words::{codes_in, visible_text};

async fn schedule(stack: &Stack, gym: &Account, id: &str) -> Value {
    let (_, list) = stack.get("/api/v1/recurring", &gym.token).await;
    list["templates"]
        .as_array()
        .and_then(|all| all.iter().find(|t| t["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("{id} listed: {list}"))
}

async fn made(stack: &Stack, gym: &Account, body: Value) -> String {
    let (status, template) = stack.post("/api/v1/recurring", &gym.token, body).await;
    assert_eq!(status, 201, "{template}");
    template["id"].as_str().unwrap_or_default().to_owned()
}

fn in_words(page: &str) -> Vec<String> {
    codes_in(&visible_text(page))
}

#[tokio::test]
async fn the_owner_pauses_resumes_runs_now_and_chooses_how_to_hear_of_a_schedule() {
    let stack = Stack::start("schedules-page").await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_sam", "Sam", stack.now().await).await;
    stack.run().await;
    let weekly = made(
        &stack,
        &gym,
        json!({"task_type": "churn_risk", "member_id": "m_sam", "cron": "0 8 * * 1", "max_instances": 4, "goal": "Check in with Sam"}),
    )
    .await;
    let once = made(
        &stack,
        &gym,
        json!({"task_type": "monthly_churn_analysis", "cron": "0 9 1 * *", "max_instances": 1}),
    )
    .await;
    let owner = sign_in(&stack, &gym).await;
    let (_, settings) = owner.get("/app/settings").await;
    assert!(settings.contains("href=\"/app/schedules\""), "linked from the settings page");

    let (status, page) = owner.get("/app/schedules").await;
    assert_eq!(status, 200, "{page}");
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));
    let card = |page: &str, id: &str| {
        page.split(&format!("data-schedule-id=\"{id}\""))
            .nth(1)
            .unwrap_or_default()
            .split("</article>")
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let sam = card(&page, &weekly);
    assert!(sam.contains("for Sam"), "for whom: {sam}");
    assert!(sam.contains("the goal “Check in with Sam”"), "what it does: {sam}");
    assert!(sam.contains("Runs every Monday at 08:00."), "when, in words: {sam}");
    let next: jiff::Timestamp = schedule(&stack, &gym, &weekly).await["next_at"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a next run"));
    let tz = jiff::tz::TimeZone::get("America/New_York").unwrap_or(jiff::tz::TimeZone::UTC);
    let local = openloop_core::task::reason_words::when(next, &tz);
    assert!(
        sam.contains(&format!("Next run {local}.")),
        "next, in the gym's zone ({local}): {sam}"
    );
    assert!(sam.contains("It has not run yet."), "{sam}");
    assert!(card(&page, &once).contains("for the whole gym"), "{page}");

    // Pause, resume: the API's own operations.
    let (status, to) = owner
        .post(&format!("/app/schedules/{weekly}/pause"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(
        (status, to.as_str()),
        (303, format!("/app/schedules?done=paused#s-{weekly}").as_str())
    );
    assert_eq!(schedule(&stack, &gym, &weekly).await["paused"], true);
    let (_, page) = owner.get(&to).await;
    assert!(page.contains("role=\"status\">Paused"), "{page}");
    let sam = card(&page, &weekly);
    assert!(
        sam.contains("Paused: it runs again once you resume it.") && sam.contains(">Resume</button>"),
        "{sam}"
    );
    let (status, _) = owner
        .post(&format!("/app/schedules/{weekly}/resume"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 303);
    assert_eq!(schedule(&stack, &gym, &weekly).await["paused"], false);

    // Run now opens a task; again, with that task still open, it opens nothing and counts
    // nothing.
    let (status, to) = owner
        .post(&format!("/app/schedules/{weekly}/run-now"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!((status, to.as_str()), (303, format!("/app/schedules?done=ran#s-{weekly}").as_str()));
    assert_eq!(schedule(&stack, &gym, &weekly).await["instances_created"], 1);
    let (status, to) = owner
        .post(&format!("/app/schedules/{weekly}/run-now"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(
        (status, to.as_str()),
        (303, format!("/app/schedules?done=ran_open#s-{weekly}").as_str())
    );
    assert_eq!(schedule(&stack, &gym, &weekly).await["instances_created"], 1, "counted once");
    let (_, page) = owner.get(&to).await;
    assert!(page.contains("its task was still open, so nothing new was opened"), "{page}");
    let sam = card(&page, &weekly);
    assert!(
        sam.contains("Found its task still open") && sam.contains("Opened a task"),
        "its runs: {sam}"
    );
    assert!(sam.contains("you, with Run now") && sam.contains("href=\"/app/tasks/"), "{sam}");
    assert!(sam.contains("1 of 4 tasks made."), "{sam}");
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));
    // Its runs told the owner (on a change, the default), in words.
    let (_, feed) = owner.get("/app/notifications").await;
    assert!(feed.contains("Your schedule ran: "), "{feed}");
    assert!(in_words(&feed).is_empty(), "{:?}", in_words(&feed));

    // The notify policy, as `PUT /api/v1/recurring/{id}` changes it.
    assert_eq!(schedule(&stack, &gym, &weekly).await["notify"], "on_change");
    let (status, _) = owner
        .post(
            &format!("/app/schedules/{weekly}/notify"),
            &[("csrf", &owner.csrf), ("notify", "never")],
        )
        .await;
    assert_eq!(status, 303);
    assert_eq!(schedule(&stack, &gym, &weekly).await["notify"], "never");
    let (_, page) = owner.get("/app/schedules").await;
    assert!(
        card(&page, &weekly).contains("<option value=\"never\" selected>never</option>"),
        "{page}"
    );
    let (status, _) = owner
        .post(
            &format!("/app/schedules/{weekly}/notify"),
            &[("csrf", &owner.csrf), ("notify", "sometimes")],
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(schedule(&stack, &gym, &weekly).await["notify"], "never", "nothing changed");
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/recurring/{weekly}"),
            Some(&gym.token),
            Some(json!({"notify": "always"})),
        )
        .await;
    assert_eq!((status, body["notify"].as_str()), (200, Some("always")), "{body}");
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/recurring/{weekly}"),
            Some(&gym.token),
            Some(json!({"cron": "0 9 * * *"})),
        )
        .await;
    assert_eq!(status, 422, "only the notify policy changes: {body}");

    // A schedule that made all it may: Run now is refused in words, and nothing runs.
    let (status, _) = owner
        .post(&format!("/app/schedules/{once}/run-now"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 303);
    let (_, page) = owner.get("/app/schedules").await;
    assert!(card(&page, &once).contains("Done: it made the one task it may make."), "{page}");
    assert!(!card(&page, &once).contains(">Run now</button>"), "no Run now once it is done");
    let (status, page) = owner
        .post_page(&format!("/app/schedules/{once}/run-now"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(
        card(&page, &once).contains("role=\"alert\">Not run: it has made all the tasks it may make."),
        "{page}"
    );
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));
    assert_eq!(schedule(&stack, &gym, &once).await["runs"].as_array().map(Vec::len), Some(1));

    // Without the session's CSRF token, or another account's schedule: nothing.
    let (status, _) = owner.post(&format!("/app/schedules/{weekly}/pause"), &[]).await;
    assert_eq!(status, 403);
    let other = stack.create_account("manual").await;
    let theirs = made(&stack, &other, json!({"task_type": "monthly_churn_analysis", "cron": "0 9 1 * *"})).await;
    let (status, _) = owner
        .post(&format!("/app/schedules/{theirs}/pause"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 404);
    assert_eq!(schedule(&stack, &other, &theirs).await["paused"], false);
}

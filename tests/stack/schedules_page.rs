//! The schedules page (issue 45, point 4): each recurring template in words — what it opens,
//! for whom, when it runs and when next in the gym's time zone — with Pause / Resume, Run now,
//! its notify policy and its latest runs, each the API's own operation with its rules (a run
//! now that finds its task still open counts nothing) and its refusals said in words; and a
//! schedule made from "New schedule" (what, for whom, when in plain choices) and removed after
//! its confirmation.

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

fn card(page: &str, id: &str) -> String {
    page.split(&format!("data-schedule-id=\"{id}\""))
        .nth(1)
        .unwrap_or_default()
        .split("</article>")
        .next()
        .unwrap_or_default()
        .to_owned()
}

async fn templates(stack: &Stack, gym: &Account) -> Vec<Value> {
    let (_, list) = stack.get("/api/v1/recurring", &gym.token).await;
    list["templates"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn the_owner_makes_a_schedule_from_plain_choices_and_removes_it() {
    let stack = Stack::start("schedules-new").await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_sam", "Sam", stack.now().await).await;
    stack.run().await;
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/schedules").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("No schedules yet: make one"), "{page}");
    assert!(
        page.contains("<option value=\"churn_risk\">At-Risk Member</option>") && page.contains("<option value=\"m_sam\">"),
        "what and for whom, by name: {page}"
    );
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));

    // Every week on a Wednesday at 17:00, for Sam.
    let weekly = [
        ("csrf", owner.csrf.as_str()),
        ("task_type", "churn_risk"),
        ("member_id", "m_sam"),
        ("goal", "Weekly word with Sam"),
        ("every", "week"),
        ("weekday", "3"),
        ("day", "1"),
        ("hour", "17"),
        ("max_instances", "10"),
        ("notify", "on_win"),
    ];
    let (status, to) = owner.post("/app/schedules", &weekly).await;
    assert_eq!(status, 303, "{to}");
    let made = templates(&stack, &gym).await;
    assert_eq!(made.len(), 1, "{made:?}");
    let id = made[0]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(to, format!("/app/schedules?done=made#s-{id}"));
    assert_eq!(
        (
            made[0]["task_type"].as_str(),
            made[0]["member_id"].as_str(),
            made[0]["cron"].as_str(),
            made[0]["goal"].as_str(),
            made[0]["max_instances"].as_u64(),
            made[0]["notify"].as_str()
        ),
        (
            Some("churn_risk"),
            Some("m_sam"),
            Some("0 17 * * 3"),
            Some("Weekly word with Sam"),
            Some(10),
            Some("on_win")
        ),
        "{made:?}"
    );
    let (_, page) = owner.get(&to).await;
    assert!(page.contains("role=\"status\">Schedule made"), "{page}");
    let sam = card(&page, &id);
    assert!(
        sam.contains("for Sam") && sam.contains("the goal “Weekly word with Sam”") && sam.contains("Runs every Wednesday at 17:00."),
        "in words: {sam}"
    );
    assert!(sam.contains("0 of 10 tasks made."), "{sam}");
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));

    // Every month on the 2nd at 06:00, for the whole gym; every weekday at 09:00.
    let monthly = [
        ("csrf", owner.csrf.as_str()),
        ("task_type", "monthly_churn_analysis"),
        ("member_id", ""),
        ("goal", ""),
        ("every", "month"),
        ("weekday", "1"),
        ("day", "2"),
        ("hour", "6"),
        ("max_instances", ""),
        ("notify", "on_change"),
    ];
    let (status, _) = owner.post("/app/schedules", &monthly).await;
    assert_eq!(status, 303);
    let mut weekdays = monthly;
    weekdays[1] = ("task_type", "staff_call_member");
    weekdays[4] = ("every", "weekdays");
    weekdays[7] = ("hour", "9");
    let (status, _) = owner.post("/app/schedules", &weekdays).await;
    assert_eq!(status, 303);
    let all = templates(&stack, &gym).await;
    let cron_of = |task_type: &str| {
        all.iter()
            .find(|t| t["task_type"] == task_type)
            .map(|t| {
                (
                    t["cron"].as_str().unwrap_or_default().to_owned(),
                    t["id"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .unwrap_or_else(|| panic!("{task_type}: {all:?}"))
    };
    let (cron, month_id) = cron_of("monthly_churn_analysis");
    assert_eq!(cron, "0 6 2 * *");
    let (cron, weekday_id) = cron_of("staff_call_member");
    assert_eq!(cron, "0 9 * * 1-5");
    let (_, page) = owner.get("/app/schedules").await;
    assert!(
        card(&page, &month_id).contains("Runs on the 2nd of every month at 06:00."),
        "{page}"
    );
    assert!(card(&page, &month_id).contains("for the whole gym"), "{page}");
    assert!(
        card(&page, &weekday_id).contains("Runs every weekday (Monday to Friday) at 09:00."),
        "{page}"
    );

    // Refused in words over the form, with what was chosen; nothing made.
    let mut nobody = weekly;
    nobody[2] = ("member_id", "");
    let (status, page) = owner.post_page("/app/schedules", &nobody).await;
    assert_eq!(status, 422, "{page}");
    assert!(
        page.contains("id=\"new-error\">Not made: At-Risk Member writes to a member: choose the member it is for.</p>"),
        "{page}"
    );
    assert!(
        page.contains("value=\"Weekly word with Sam\""),
        "the form keeps the choices: {page}"
    );
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));
    let mut late_in_month = monthly;
    late_in_month[6] = ("day", "31");
    let (status, page) = owner.post_page("/app/schedules", &late_in_month).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("Not made: The day of the month is 1 to 28"), "{page}");
    let mut too_many = weekly;
    too_many[8] = ("max_instances", "9000");
    let (status, page) = owner.post_page("/app/schedules", &too_many).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("Not made: It may make 1 to 520 tasks."), "{page}");
    assert_eq!(templates(&stack, &gym).await.len(), 3, "nothing made");
    let (status, _) = owner.post("/app/schedules", &weekly[1..]).await;
    assert_eq!(status, 403);
    assert_eq!(templates(&stack, &gym).await.len(), 3);

    // Every page reads in words, the schedules among them.
    let codes = crate::pages_in_words::codes_on_pages(&stack, &gym, &[]).await;
    assert!(codes.iter().all(|c| c.starts_with("no link")), "{codes:#?}");

    // Remove asks first; nothing goes until the owner says yes.
    assert!(sam.contains(">Remove</button>"), "{sam}");
    let (status, page) = owner.get(&format!("/app/schedules?remove={id}")).await;
    assert_eq!(status, 200, "{page}");
    let asking = card(&page, &id);
    assert!(
        asking.contains("data-confirm-remove") && asking.contains("this cannot be undone") && asking.contains(">Yes, remove it</button>"),
        "{asking}"
    );
    assert!(!card(&page, &month_id).contains("data-confirm-remove"), "only the one pressed asks");
    assert!(in_words(&page).is_empty(), "{:?}", in_words(&page));
    assert_eq!(templates(&stack, &gym).await.len(), 3, "asking removes nothing");
    let (status, _) = owner.post(&format!("/app/schedules/{id}/delete"), &[]).await;
    assert_eq!(status, 403);
    let other = stack.create_account("manual").await;
    let theirs = sign_in(&stack, &other).await;
    let (status, _) = theirs.post(&format!("/app/schedules/{id}/delete"), &[("csrf", &theirs.csrf)]).await;
    assert_eq!(status, 404, "another account's");
    assert_eq!(templates(&stack, &gym).await.len(), 3);
    let (status, to) = owner.post(&format!("/app/schedules/{id}/delete"), &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, to.as_str()), (303, "/app/schedules?done=removed"));
    let left = templates(&stack, &gym).await;
    assert!(left.len() == 2 && left.iter().all(|t| t["id"] != id.as_str()), "{left:?}");
    let (_, page) = owner.get(&to).await;
    assert!(page.contains("role=\"status\">Schedule removed"), "{page}");
    assert!(!page.contains(&format!("data-schedule-id=\"{id}\"")), "{page}");
    let (status, _) = owner.post(&format!("/app/schedules/{id}/delete"), &[("csrf", &owner.csrf)]).await;
    assert_eq!(status, 404, "gone already");
}

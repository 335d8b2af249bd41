//! The owner's day in the settings form (`/app/settings`): the morning brief's hour (empty:
//! no morning mail), the quiet hours and the review expiry, checked as `PUT /api/v1/settings`
//! checks them, saved only over the version the page showed.

use openloop_tests::Stack;
use serde_json::json;

/// The value of the form field `name` as the page shows it.
fn shown(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\"");
    let at = page.find(&marker).unwrap_or_else(|| panic!("no {name} in the form: {page}"));
    let rest = &page[at..];
    let value = rest.find("value=\"").unwrap_or_else(|| panic!("{name} has no value: {page}")) + "value=\"".len();
    rest[value..value + rest[value..].find('"').unwrap_or(0)].to_owned()
}

#[tokio::test]
async fn the_settings_form_sets_the_brief_hour_quiet_hours_and_review_expiry() {
    let stack = Stack::start("day-settings").await;
    let gym = stack.create_account("manual").await;
    let owner = crate::dashboard::sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    assert_eq!(shown(&page, "brief_hour"), "7", "the default hour");
    assert_eq!(
        (shown(&page, "quiet_start"), shown(&page, "quiet_end")),
        ("21".to_owned(), "7".to_owned())
    );
    assert_eq!(shown(&page, "review_expiry_days"), "7");
    let version = shown(&page, "settings_version");
    let owner = &owner;
    let post = move |version: String, brief: &'static str, start: &'static str, end: &'static str, expiry: &'static str| async move {
        owner
            .post_page(
                "/app/settings",
                &[
                    ("csrf", owner.csrf.as_str()),
                    ("settings_version", version.as_str()),
                    ("brief_hour", brief),
                    ("quiet_start", start),
                    ("quiet_end", end),
                    ("review_expiry_days", expiry),
                ],
            )
            .await
    };

    // Refused as the API refuses, and nothing saved.
    for (brief, start, end, expiry, says) in [
        ("24", "22", "6", "5", "brief_hour"),
        ("abc", "22", "6", "5", "Morning brief at"),
        ("6", "25", "6", "5", "quiet_hours"),
        ("6", "22", "6", "0", "review_expiry_days"),
        ("6", "22", "6", "91", "review_expiry_days"),
    ] {
        let (status, said) = post(version.clone(), brief, start, end, expiry).await;
        assert_eq!(status, 422, "{brief} {start} {end} {expiry}: {said}");
        assert!(said.contains(says), "{says}: {said}");
    }
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (&settings["brief_hour"], &settings["quiet_hours"], &settings["review_expiry_days"]),
        (&json!(7), &json!({"start": 21, "end": 7}), &json!(7)),
        "{settings}"
    );

    // Empty hour: no morning mail.
    let (status, said) = post(version.clone(), "", "22", "6", "5").await;
    assert_eq!(status, 303, "{said}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (&settings["brief_hour"], &settings["quiet_hours"], &settings["review_expiry_days"]),
        (&json!(null), &json!({"start": 22, "end": 6}), &json!(5)),
        "{settings}"
    );
    let (_, page) = owner.get("/app/settings").await;
    assert_eq!(shown(&page, "brief_hour"), "", "no morning mail shows as an empty hour");

    // The page's old version: refused, said so, nothing saved.
    let (status, said) = post(version, "6", "23", "5", "9").await;
    assert_eq!(status, 409, "{said}");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["brief_hour"], json!(null), "{settings}");
    let (status, _) = post(shown(&page, "settings_version"), "6", "23", "5", "9").await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (&settings["brief_hour"], &settings["quiet_hours"], &settings["review_expiry_days"]),
        (&json!(6), &json!({"start": 23, "end": 5}), &json!(9)),
        "{settings}"
    );
    stack.running.stop();
}

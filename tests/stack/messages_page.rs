//! The Messages page as an owner uses it (issue 45, point 3): every template shown as the mail a
//! sample member reads, each changed in words with its variables as named chips, a preview that
//! saves nothing, an edit that would break a template refused with the reason in the owner's
//! words (nothing saved), a good edit saved; the template language only under "Edit the
//! template language". Through the page's own forms, no script.

use openloop_tests::{Account, Stack};
use serde_json::Value;

use crate::dashboard::{Owner, sign_in};
use crate::pages_in_words::{codes_in, visible_text};

async fn template(stack: &Stack, gym: &Account, task_type: &str, touch: &str) -> Value {
    let (status, list) = stack.get("/api/v1/message-templates", &gym.token).await;
    assert_eq!(status, 200, "{list}");
    list["templates"]
        .as_array()
        .and_then(|all| all.iter().find(|t| t["task_type"] == task_type && t["touch"] == touch))
        .cloned()
        .unwrap_or_else(|| panic!("{task_type}/{touch} listed: {list}"))
}

/// What an owner reads on `page` that they should not.
fn codes(path: &str, page: &str) -> Vec<String> {
    codes_in(&visible_text(page)).into_iter().map(|c| format!("{path}: {c}")).collect()
}

/// A words form of `(task_type, touch)` posted to `…/{then}` (`preview`, or `` to save).
async fn words(owner: &Owner, key: &str, then: &str, subject: &str, body: &str) -> (u16, String) {
    let path = if then.is_empty() {
        format!("/app/templates/{key}")
    } else {
        format!("/app/templates/{key}/{then}")
    };
    owner
        .post_page(
            &path,
            &[("csrf", &owner.csrf), ("mode", "words"), ("subject", subject), ("body", body)],
        )
        .await
}

#[tokio::test]
async fn every_template_reads_as_the_mail_a_sample_member_gets_and_in_words_with_chips() {
    let stack = Stack::start("messages-page-read").await;
    let gym = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let (status, list) = owner.get("/app/templates").await;
    assert_eq!(status, 200, "{list}");
    let mut problems = codes("/app/templates", &list);
    assert!(
        !list.contains("{%") && !list.contains("{{"),
        "no template language on the list: {list}"
    );
    assert!(!list.contains("<details"), "nothing collapsed: {list}");
    // The onboarding first message, as Dana reads it: her name, the gym's sign-off.
    let onboarding = list.split("id=\"tpl-onboarding-first\"").nth(1).unwrap_or_default();
    assert!(onboarding.contains("<strong>Subject:</strong>"), "{onboarding}");
    assert!(onboarding.contains("Hi Dana"), "rendered for the sample member: {onboarding}");

    let keys = openloop_core::conversation::messages::keys();
    for (task_type, touch) in &keys {
        let path = format!("/app/templates/{task_type}/{touch}");
        assert!(list.contains(&format!("href=\"{path}\"")), "{path} linked: {list}");
        let (status, page) = owner.get(&path).await;
        assert_eq!(status, 200, "{path}: {page}");
        problems.extend(codes(&path, &page));
        assert!(page.contains("data-mail"), "{path}: the mail shown");
        assert!(page.contains("name=\"mode\" value=\"words\""), "{path}: a words form");
        assert!(page.contains(&format!("formaction=\"{path}/preview\"")), "{path}: a preview button");
        assert!(
            page.contains("<details class=\"card raw-editor\" data-raw-template>"),
            "{path}: the raw editor, closed"
        );
        assert!(!page.contains("<script"), "{path}: no script");
    }
    assert!(problems.is_empty(), "{problems:#?}");

    let (_, win_back) = owner.get("/app/templates/win_back/first").await;
    for chip in ["greeting", "gym name", "sign-off", "first name"] {
        assert!(
            win_back.contains(&format!("<span class=\"chip\">{chip}</span>")),
            "the chip {chip}: {win_back}"
        );
    }
    assert!(
        win_back.contains("[if they cancelled for their health]") && win_back.contains("[end if]"),
        "a part for some members, in words: {win_back}"
    );
    assert!(
        win_back.contains("member.cancellation_class"),
        "the template language stays underneath"
    );
}

#[tokio::test]
async fn a_preview_saves_nothing_a_breaking_edit_is_refused_in_words_and_a_good_one_is_saved() {
    let stack = Stack::start("messages-page-edit").await;
    let gym = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let key = "onboarding/first";
    let body = "[greeting],\n\nWelcome aboard! See you at [usual class].\n\n[sign-off]";

    // Without the session's CSRF token nothing happens.
    let (status, _) = owner
        .post_page(
            &format!("/app/templates/{key}"),
            &[("mode", "words"), ("subject", "Welcome"), ("body", body)],
        )
        .await;
    assert_eq!(status, 403);

    // Preview: the draft as Dana would read it, beside the form as filled; nothing saved.
    let (status, page) = words(&owner, key, "preview", "Welcome, [first name]", body).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("(not saved)"), "{page}");
    assert!(
        page.contains("<strong>Subject:</strong> Welcome, Dana"),
        "the draft as mail: {page}"
    );
    assert!(page.contains("Hi Dana,\n\nWelcome aboard! See you at CrossFit.\n\nCoach"), "{page}");
    assert!(page.contains(&format!("{body}</textarea>")), "the form as filled: {page}");
    assert!(codes("preview", &page).is_empty(), "{:?}", codes("preview", &page));
    assert_eq!(
        template(&stack, &gym, "onboarding", "first").await["source"],
        "default",
        "nothing saved"
    );

    // Edits that would break it: refused with the reason in words, the form as filled, nothing saved.
    for (subject, bad, reason) in [
        ("Welcome", "[greeting], [shoe size]", "“[shoe size]” is not one of the chips"),
        (
            "Welcome",
            "[if usual class is known]See you there",
            "each [if …] needs its [end if]",
        ),
        ("", "[greeting], welcome!", "A first message needs a subject."),
        (
            "Welcome",
            "[greeting], see you [first name",
            "A square bracket is not closed around line 1",
        ),
    ] {
        for then in ["", "preview"] {
            let (status, page) = words(&owner, key, then, subject, bad).await;
            assert_eq!(status, 422, "{bad}: {page}");
            assert!(page.contains("role=\"alert\""), "{bad}: {page}");
            assert!(page.contains(reason), "{bad}: the reason, {reason}: {page}");
            assert!(page.contains(&format!("{bad}</textarea>")), "{bad}: the form as filled");
            assert!(codes(bad, &page).is_empty(), "{:?}", codes(bad, &page));
        }
    }
    // In the template language: the owner's words over the form, the technical reason only
    // inside the raw editor (opened).
    let raw = "{{ greeting }}, {{ member.shoe_size }}";
    let (status, page) = owner
        .post_page(
            &format!("/app/templates/{key}"),
            &[("csrf", &owner.csrf), ("mode", "raw"), ("subject", "Welcome"), ("body", raw)],
        )
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("asks for something Openloop does not know"), "{page}");
    assert!(page.contains("data-raw-template open"), "{page}");
    assert!(page.contains("member.shoe_size"), "named for whoever reads the language: {page}");
    assert!(codes("raw", &page).is_empty(), "{:?}", codes("raw", &page));
    assert_eq!(
        template(&stack, &gym, "onboarding", "first").await["source"],
        "default",
        "nothing saved"
    );

    // A good edit: saved, said back, and what every next member of the type reads.
    let (status, to) = owner
        .post(
            &format!("/app/templates/{key}"),
            &[
                ("csrf", &owner.csrf),
                ("mode", "words"),
                ("subject", "Welcome, [first name]"),
                ("body", body),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/templates/onboarding/first?done=saved"));
    let saved = template(&stack, &gym, "onboarding", "first").await;
    assert_eq!(saved["source"], "owner");
    assert_eq!(saved["subject"], "Welcome, {{ member.first_name }}");
    assert_eq!(
        saved["body"],
        "{{ greeting }},\n\nWelcome aboard! See you at {{ member.usual_class }}.\n\n{{ sign_off }}"
    );
    let (status, page) = owner.get(&to).await;
    assert_eq!(status, 200);
    assert!(page.contains("role=\"status\">Saved"), "{page}");
    assert!(page.contains("<strong>Subject:</strong> Welcome, Dana"), "{page}");
    assert!(page.contains("Back to the default"), "{page}");

    // The template language works too, and the words follow it.
    let (status, _) = owner
        .post(
            &format!("/app/templates/{key}"),
            &[
                ("csrf", &owner.csrf),
                ("mode", "raw"),
                ("subject", "Welcome to {{ gym.name }}"),
                (
                    "body",
                    "{{ greeting }},\n\n{% if gym.phone %}Call us on {{ gym.phone }}.{% endif %}\n\n{{ sign_off }}",
                ),
            ],
        )
        .await;
    assert_eq!(status, 303);
    let (_, page) = owner.get("/app/templates/onboarding/first").await;
    assert!(page.contains("Welcome to [gym name]"), "{page}");
    assert!(page.contains("[if gym phone is known]Call us on [gym phone].[end if]"), "{page}");

    // More of the language than the words say (a filter): edited in the language only, said so.
    let (status, _) = owner
        .post(
            &format!("/app/templates/{key}"),
            &[
                ("csrf", &owner.csrf),
                ("mode", "raw"),
                ("subject", "Welcome"),
                ("body", "{{ greeting }}, {{ gym.name | upper }}!\n\n{{ sign_off }}"),
            ],
        )
        .await;
    assert_eq!(status, 303);
    let (_, page) = owner.get("/app/templates/onboarding/first").await;
    assert!(page.contains("in ways its words cannot show"), "{page}");
    assert!(
        page.contains("data-raw-template open") && !page.contains("name=\"mode\" value=\"words\""),
        "{page}"
    );
    assert!(page.contains("Hi Dana, CROSSFIT RENEGADE!"), "its mail still shows: {page}");
    assert!(codes("filtered", &page).is_empty(), "{:?}", codes("filtered", &page));

    let (status, to) = owner.post(&format!("/app/templates/{key}/default"), &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, to.as_str()), (303, "/app/templates?done=default"));
    assert_eq!(template(&stack, &gym, "onboarding", "first").await["source"], "default");
    let (status, _) = owner.get("/app/templates/no_such_type/first").await;
    assert_eq!(status, 404);
}

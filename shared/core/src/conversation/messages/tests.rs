use super::*;
use crate::task::task_type::definition;

fn profile() -> Profile {
    Profile {
        display_name: Some("CrossFit Renegade".into()),
        owner_first_name: Some("Mike".into()),
        sign_off: Some("Coach Mike".into()),
        ..Profile::default()
    }
}

fn inputs<'a>(member: &'a MemberVars, profile: &'a Profile) -> Inputs<'a> {
    Inputs {
        member,
        profile,
        business_name: "Renegade LLC",
        instructions: Some(SAMPLE_INSTRUCTIONS),
    }
}

/// Every shipped template renders, for a member we know all about and for one we know nothing
/// about, greets them, signs as the gym and leaves no template mark behind.
#[test]
fn every_shipped_template_renders_for_every_type_and_touch() {
    let profile = profile();
    let bare = Profile::default();
    // Beside the touches, every type's holding reply and parting note (`ad_hoc`'s, which the
    // owner does not edit).
    let mut keys = keys();
    keys.push(("ad_hoc", HOLDING.to_owned()));
    keys.push(("ad_hoc", PARTING.to_owned()));
    assert_eq!(keys.len(), defaults::SHIPPED.len(), "one file per type and touch, no more");
    for (task_type, touch) in &keys {
        let variants = shipped_variants(task_type, touch);
        assert!(!variants.is_empty(), "messages/{task_type}/{touch}.md is not compiled in");
        for (i, text) in variants.iter().enumerate() {
            every_variant_reads_right(task_type, &format!("{touch} variant {}", i + 1), touch, text, &profile, &bare);
        }
    }
}

/// One shipped variant (`name` says which) reads as [`every_shipped_template_renders_for_every_type_and_touch`] asks.
fn every_variant_reads_right(task_type: &str, name: &str, touch_key: &str, text: &TemplateText, profile: &Profile, bare: &Profile) {
    let touch = name;
    check(touch_key, text, &inputs(&MemberVars::sample(), profile)).unwrap_or_else(|e| panic!("{task_type}/{touch}: {e}"));
    {
        for (member, greeting) in [(MemberVars::sample(), "Hi Dana,"), (MemberVars::default(), "Hi there,")] {
            for (p, sign_off) in [(profile, "Coach Mike"), (bare, "The Renegade LLC team")] {
                let mail = render(text, &inputs(&member, p)).unwrap_or_else(|e| panic!("{task_type}/{touch}: {e}"));
                for mark in ["{{", "}}", "{%", "%}"] {
                    assert!(
                        !mail.body.contains(mark) && !mail.subject.contains(mark),
                        "{task_type}/{touch}: {mark}"
                    );
                }
                assert!(mail.body.starts_with(greeting), "{task_type}/{touch}: {}", mail.body);
                assert!(mail.body.ends_with(sign_off), "{task_type}/{touch}: {}", mail.body);
                assert!(!mail.subject.is_empty(), "{task_type}/{touch}: a subject a person would write");
                assert!(!mail.body.contains("\n\n\n"), "{task_type}/{touch}: {:?}", mail.body);
                assert!(!mail.body.contains("none"), "{task_type}/{touch}: an unknown fact printed");
            }
        }
    }
}

/// Issue 42: members who train side by side do not read the same mail. Every shipped first
/// touch and follow-up has three wordings at least, each member reads one of them and always
/// the same one, and fifteen members in a row are spread over all of them.
#[test]
fn every_touch_has_three_variants_chosen_stably_per_member() {
    for (task_type, touch) in keys() {
        if touch == REPLY || touch == GUIDED {
            continue;
        }
        let variants = shipped_variants(task_type, &touch);
        assert!(variants.len() >= 3, "{task_type}/{touch}: {} variants", variants.len());
        let bodies: std::collections::BTreeSet<&str> = variants.iter().map(|v| v.body.as_str()).collect();
        assert_eq!(bodies.len(), variants.len(), "{task_type}/{touch}: each variant is its own");
        let members: Vec<String> = (1..=15).map(|i| format!("m_{i}")).collect();
        let chosen: Vec<TemplateText> = members
            .iter()
            .map(|m| template_for(task_type, &touch, None, variant_seed(m)))
            .collect();
        for (m, text) in members.iter().zip(&chosen) {
            assert_eq!(
                &template_for(task_type, &touch, None, variant_seed(m)),
                text,
                "{m}: always the same"
            );
        }
        for variant in &variants {
            let readers = chosen.iter().filter(|c| *c == variant).count();
            assert!((1..=8).contains(&readers), "{task_type}/{touch}: {readers} of 15 read one variant");
        }
    }
    assert_eq!(variant_seed("m_1"), variant_seed("m_1"));
    assert_ne!(variant_seed("m_1"), variant_seed("m_2"));
}

/// The `messages/` folder holds exactly the compiled-in files.
#[test]
fn the_messages_folder_holds_only_compiled_in_templates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../messages");
    let mut on_disk = Vec::new();
    for dir in std::fs::read_dir(&root).expect("messages/") {
        let dir = dir.expect("entry").path();
        for file in std::fs::read_dir(&dir).expect("a type's folder") {
            let file = file.expect("entry").path();
            on_disk.push(format!(
                "{}/{}",
                dir.file_name().and_then(|n| n.to_str()).unwrap_or_default(),
                file.file_name().and_then(|n| n.to_str()).unwrap_or_default()
            ));
        }
    }
    on_disk.sort();
    let mut compiled: Vec<String> = defaults::SHIPPED.iter().map(|(t, k, _)| format!("{t}/{k}.md")).collect();
    compiled.sort();
    assert_eq!(on_disk, compiled);
}

/// Each type's skill forbids offers the owner did not make: no shipped template makes one, and
/// none says anything of the absence the skills tell us never to point at.
#[test]
fn no_shipped_template_offers_a_discount_or_points_at_an_absence() {
    for (task_type, touch, file) in defaults::SHIPPED {
        let lower = file.to_lowercase();
        for word in [
            "discount",
            "free ",
            "% off",
            "offer",
            "haven't seen",
            "miss you",
            "days_since_last_visit",
            "gym.offer",
        ] {
            assert!(!lower.contains(word), "{task_type}/{touch}: {word}");
        }
    }
}

#[test]
fn the_keys_follow_each_types_cadence_and_budget() {
    assert_eq!(touches(definition("payment_recovery")), ["first", "follow_up_1", "reply", "guided"]);
    assert_eq!(touches(definition("milestone_review")), ["first", "reply", "guided"]);
    assert!(touches(definition("staff_call_member")).is_empty());
    assert!(check_key("staff_call_member", "first").is_err());
    assert!(check_key("churn_risk", "follow_up_3").is_err());
    assert!(check_key("pizza", "first").is_err());
    assert!(check_key("churn_risk", "follow_up_2").is_ok());
    assert_eq!(draft_key(definition("churn_risk"), 1, false), "follow_up_1");
    assert_eq!(draft_key(definition("churn_risk"), 9, false), "follow_up_2");
    assert_eq!(draft_key(definition("churn_risk"), 1, true), "guided");
}

#[test]
fn a_bad_template_is_refused_naming_what_is_wrong() {
    let profile = profile();
    let sample = MemberVars::sample();
    let sample = inputs(&sample, &profile);
    let with = |subject: &str, body: &str| TemplateText {
        subject: subject.into(),
        body: body.into(),
    };
    let invalid = |p: TemplateProblem| crate::kernel::error::InvalidInput::from(p);
    let unknown = invalid(check("first", &with("Hi", "{{ greeting }}, {{ member.nickname }}"), &sample).expect_err("unknown"));
    assert_eq!(unknown.code, "invalid_template");
    assert!(unknown.message.contains("member.nickname"), "{}", unknown.message);
    assert!(!unknown.message.is_empty());
    let owner = check("first", &with("Hi", "{{ greeting }}, {{ member.nickname }}"), &sample)
        .expect_err("unknown")
        .owner_words();
    assert!(
        owner.starts_with("The message asks for something") && !owner.contains("member."),
        "in the owner's words, naming no variable: {owner}"
    );
    let top = invalid(check("first", &with("{{ goal }}", "Hello"), &sample).expect_err("the goal is no variable"));
    assert!(top.message.contains("goal"), "{}", top.message);
    let syntax = check("first", &with("Hi", "{% if member.first_name %}unclosed"), &sample).expect_err("syntax");
    assert!(syntax.to_string().contains("body"), "{syntax}");
    assert!(
        syntax
            .owner_words()
            .starts_with("The message cannot be read around line 1: each [if …] needs its [end if]"),
        "{}",
        syntax.owner_words()
    );
    // Issue 47: no function that dumps the template's variables into a member's mail.
    for dump in ["{{ debug() }}", "{{ debug(member) }}", "{% set d = debug %}{{ d() }}"] {
        let refused = invalid(check("first", &with("Hi", dump), &sample).expect_err(dump));
        assert_eq!(refused.code, "invalid_template", "{dump}");
        assert!(render(&with("Hi", dump), &sample).is_err(), "{dump}");
    }
    let failing = invalid(check("first", &with("Hi", "{{ member.first_name + 3 }}"), &sample).expect_err("does not render"));
    assert!(failing.message.contains("render"), "{}", failing.message);
    assert_eq!(
        check("first", &with("", "Hello"), &sample),
        Err(TemplateProblem::NeedsSubject),
        "a first message needs a subject"
    );
    assert_eq!(TemplateProblem::NeedsSubject.owner_words(), "A first message needs a subject.");
    assert!(
        check("follow_up_1", &with("", "Hello"), &sample).is_ok(),
        "a follow-up stays in its thread"
    );
    assert!(check("first", &with("Hi", &"x".repeat(MAX_BODY_SOURCE_CHARS + 1)), &sample).is_err());
    assert!(
        check(
            "first",
            &with(
                "Hi",
                "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
            ),
            &sample
        )
        .is_err(),
        "bounded"
    );
    let preview = check(
        "first",
        &with(
            "{{ member.first_name }}, a note",
            "{{ greeting }},\n\n{% if gym.offer %}{{ gym.offer }}{% endif %}\n\n\n{{ sign_off }}",
        ),
        &sample,
    )
    .expect("fine");
    assert_eq!(preview.subject, "Dana, a note");
    assert_eq!(preview.body, "Hi Dana,\n\nCoach Mike");
}

/// A condition ending a line keeps the paragraph break after it; one alone on its line leaves
/// no extra blank line.
#[test]
fn conditions_keep_the_paragraphs_as_written() {
    let profile = profile();
    let member = MemberVars::sample();
    let win_back = render(&template_for("win_back", FIRST, None, 0), &inputs(&member, &profile)).expect("renders");
    assert!(win_back.body.contains("having you around.\n\nIf you ever"), "{}", win_back.body);
    let churn = render(&template_for("churn_risk", FIRST, None, 0), &inputs(&member, &profile)).expect("renders");
    assert!(churn.body.contains("going?\n\nYou've been part"), "{}", churn.body);
    let blank = MemberVars::default();
    let churn = render(&template_for("churn_risk", FIRST, None, 0), &inputs(&blank, &profile)).expect("renders");
    assert!(churn.body.contains("going?\n\nIf there's"), "{}", churn.body);
}

#[test]
fn the_guided_answer_says_the_owners_words() {
    let profile = profile();
    let member = MemberVars::named(Some("Sarah".into()));
    let mail = render(
        &template_for("churn_risk", GUIDED, None, 0),
        &Inputs {
            instructions: Some("The Saturday class starts at 9am."),
            ..inputs(&member, &profile)
        },
    )
    .expect("renders");
    assert_eq!(mail.body, "Hi Sarah,\n\nThe Saturday class starts at 9am.\n\nCoach Mike");
}

/// Every payment note (the first, the follow-up, the answer to a reply) says where the member
/// updates their card: the gym's billing link when the owner gave one, else PushPress's member
/// app for a membership PushPress bills, else the front desk (and the gym's phone) — never a
/// link the owner did not give, never just "take a look".
#[test]
fn every_payment_note_says_where_to_update_the_card() {
    let link = "https://pay.example/renegade";
    let with_link = Profile {
        billing_link: Some(link.into()),
        ..profile()
    };
    let with_phone = Profile {
        contact_phone: Some("555-0100".into()),
        ..profile()
    };
    let on_pushpress = MemberVars {
        billed_in_pushpress: true,
        ..MemberVars::named(Some("Dana".into()))
    };
    let elsewhere = MemberVars::named(Some("Dana".into()));
    for (touch, text) in ["first", "follow_up_1", "reply"]
        .into_iter()
        .flat_map(|touch| shipped_variants("payment_recovery", touch).into_iter().map(move |t| (touch, t)))
    {
        let mail = |member: &MemberVars, profile: &Profile| {
            render(&text, &inputs(member, profile))
                .unwrap_or_else(|e| panic!("{touch}: {e}"))
                .body
        };
        for member in [&on_pushpress, &elsewhere] {
            let body = mail(member, &with_link);
            assert!(
                body.contains("update your card") && body.contains(&format!("here: {link}")),
                "{touch}: {body}"
            );
            assert!(!body.contains("PushPress"), "{touch}: one way, the gym's own: {body}");
        }
        let body = mail(&on_pushpress, &profile());
        assert!(body.contains("in the PushPress member app"), "{touch}: {body}");
        let body = mail(&elsewhere, &with_phone);
        assert!(
            body.contains("front desk") && body.contains("call us at 555-0100"),
            "{touch}: {body}"
        );
        let body = mail(&elsewhere, &profile());
        assert!(body.contains("front desk") && !body.contains("call us"), "{touch}: {body}");
        for body in [mail(&on_pushpress, &profile()), mail(&elsewhere, &with_phone)] {
            assert!(!body.contains("http"), "{touch}: a link nobody gave: {body}");
            assert!(
                !body.to_lowercase().contains("take a look"),
                "{touch}: says how, not just to look: {body}"
            );
        }
    }
}

/// A payment note sent as a text (its first two touches may be, in two segments) still says
/// where to update the card: the way comes before anything the text may cut.
#[test]
fn a_payment_note_cut_to_a_text_still_says_where_to_update_the_card() {
    let with_link = Profile {
        billing_link: Some("https://pay.example/renegade".into()),
        ..profile()
    };
    let with_phone = Profile {
        contact_phone: Some("555-0100".into()),
        ..profile()
    };
    let on_pushpress = MemberVars {
        billed_in_pushpress: true,
        ..MemberVars::sample()
    };
    let elsewhere = MemberVars {
        billed_in_pushpress: false,
        ..MemberVars::sample()
    };
    for (touch, text) in ["first", "follow_up_1"]
        .into_iter()
        .flat_map(|touch| shipped_variants("payment_recovery", touch).into_iter().map(move |t| (touch, t)))
    {
        for (member, profile, how) in [
            (&on_pushpress, &with_link, "https://pay.example/renegade"),
            (&on_pushpress, &profile(), "PushPress member app"),
            (&elsewhere, &with_phone, "front desk"),
        ] {
            let mail = render(&text, &inputs(member, profile)).unwrap_or_else(|e| panic!("{touch}: {e}"));
            let sms = crate::conversation::sms::compose(
                "CrossFit Renegade",
                &mail.body,
                touch == "first",
                crate::owner::sms::DEFAULT_MAX_SEGMENTS,
            );
            assert!(sms.body.contains(how), "{touch}: {how} cut from the text: {}", sms.body);
        }
    }
}

/// Given a member who cancelled, when their win-back is written from the shipped templates,
/// then what they told the gym shapes it: care first for a member recovering (never "it's been
/// a while", never an invitation to a class), and no "it's been a while" to anyone who left
/// days ago.
#[test]
fn a_win_back_follows_the_members_reason_for_leaving() {
    let profile = profile();
    let left = |class: &str, days: u32| MemberVars {
        cancellation_class: Some(class.into()),
        days_since_cancelled: Some(days),
        ..MemberVars::sample()
    };
    for (touch, text) in ["first", "follow_up_1", "follow_up_2"]
        .into_iter()
        .flat_map(|touch| shipped_variants("win_back", touch).into_iter().map(move |t| (touch, t)))
    {
        let medical = render(&text, &inputs(&left("medical", 30), &profile))
            .expect("renders")
            .body
            .to_lowercase();
        for never in ["it's been a while", "drop in for a class", "coming back"] {
            assert!(!medical.contains(never), "{touch}: {never}: {medical}");
        }
        assert!(medical.contains("recover"), "{touch}: care first: {medical}");
    }
    for first in shipped_variants("win_back", "first") {
        let recent = render(&first, &inputs(&left("schedule", 3), &profile)).expect("renders").body;
        assert!(!recent.to_lowercase().contains("it's been a while"), "{recent}");
    }
    // A member whose week changed hears about another time (the last note only says goodbye);
    // one who left unhappy is asked what fell short, never cheerfully invited back.
    for (touch, text) in ["first", "follow_up_1", "follow_up_2"]
        .into_iter()
        .flat_map(|touch| shipped_variants("win_back", touch).into_iter().map(move |t| (touch, t)))
    {
        let written = |class: &str| {
            render(&text, &inputs(&left(class, 3), &profile))
                .expect("renders")
                .body
                .to_lowercase()
        };
        let (schedule, unhappy) = (written("schedule"), written("dissatisfied"));
        for never in [
            "we'd love to have you",
            "drop in for a class",
            "glad to welcome you",
            "very welcome",
            "glad to see you",
        ] {
            assert!(!unhappy.contains(never), "{touch}: {never}: {unhappy}");
        }
        if touch == "follow_up_2" {
            continue;
        }
        assert!(
            ["time of day", "class time", "times", "your week"]
                .iter()
                .any(|w| schedule.contains(w)),
            "{touch}: the new schedule: {schedule}"
        );
        assert!(
            ["fell short", "done better", "went wrong", "should change"]
                .iter()
                .any(|w| unhappy.contains(w)),
            "{touch}: asks what fell short: {unhappy}"
        );
    }
    let first = template_for("win_back", "first", None, 0);
    let later = render(&first, &inputs(&left("other", 40), &profile)).expect("renders").body;
    assert!(later.contains("It's been a while"), "{later}");
}

/// A member who left over the cost is offered what the gym says it offers, in every first
/// win-back — and, where the gym says nothing, no offer at all (never an invented discount).
#[test]
fn a_member_who_left_over_the_cost_is_offered_only_what_the_gym_offers() {
    let member = MemberVars {
        cancellation_class: Some("financial".into()),
        days_since_cancelled: Some(5),
        ..MemberVars::sample()
    };
    let mut offering = profile();
    offering.ways_to_stay = Some("you can freeze for $10 a month, or move to our 2-classes-a-week plan at $89.".into());
    for first in shipped_variants("win_back", "first") {
        let offered = render(&first, &inputs(&member, &offering)).expect("renders").body;
        assert!(offered.contains("freeze for $10 a month"), "{offered}");
        let silent = render(&first, &inputs(&member, &profile())).expect("renders").body.to_lowercase();
        for never in ["discount", "% off", "free month", "cheaper", "freeze", "pause", "cost"] {
            assert!(!silent.contains(never), "{never}: {silent}");
        }
    }
}

#[test]
fn a_greeting_writes_the_name_as_a_person_would() {
    let text = template_for("churn_risk", "first", None, 0);
    for (typed, greeting) in [
        ("BOB", "Hi Bob,"),
        ("mary-jane", "Hi Mary-Jane,"),
        ("o'neil", "Hi O'Neil,"),
        ("McDonald", "Hi McDonald,"),
    ] {
        let member = MemberVars::named(Some(typed.into()));
        let mail = render(&text, &inputs(&member, &profile())).expect("renders");
        assert!(mail.body.starts_with(greeting), "{typed}: {}", mail.body);
    }
}

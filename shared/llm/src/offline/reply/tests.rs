//! Reading replies: the shapes the offline agent recognises, what it does next with each, and
//! the labelled churn replies (`fixtures/churn_replies.tsv`), none of which it may judge unsafely.

use super::*;
use crate::offline::outcomes::codes;
use openloop_core::owner::account::Profile;

fn reply_request(task_type: &str, reply: &str) -> ReplyRequest {
    ReplyRequest {
        task_type: task_type.into(),
        goal: String::new(),
        outcome_codes: codes(task_type),
        member_first_name: Some("Ana".into()),
        profile: Profile::default(),
        business_name: "Harbour Gym".into(),
        system_prompt: String::new(),
        conversation: Vec::new(),
        reply: reply.into(),
        messages_left: 1,
        turns_left: 2,
        days_left: 5,
        message: Default::default(),
        facts: Vec::new(),
    }
}

/// What the system does next with an evaluation, in the labelled set's words.
fn decision(e: &ReplyEvaluation) -> &'static str {
    match e.action {
        _ if e.suggest_suppression => "suppress",
        ReplyAction::Reply => "reply",
        ReplyAction::Wait => "wait",
        ReplyAction::Escalate => "escalate",
        ReplyAction::Close if e.provisional => "close",
        // A member who decided to leave: closed with one kind note.
        ReplyAction::Close if e.reply.is_some() => "part",
        ReplyAction::Close => "decline",
    }
}

/// A wrong decision that would embarrass the owner: a stop not honoured, a member
/// suppressed who did not ask, an answer or a close where neither was right.
fn unsafe_decision(expected: &str, got: &str) -> bool {
    expected != got && (expected == "suppress" || matches!(got, "suppress" | "reply" | "close" | "decline" | "part"))
}

/// `fixtures/churn_replies.tsv`: member replies to churn outreach, each labelled with what
/// must happen next. Prints the confusion table; at least 95% right and none unsafe.
#[test]
fn the_labelled_churn_replies_are_read_right_and_never_unsafely() {
    const LABELS: [&str; 7] = ["suppress", "close", "decline", "part", "wait", "reply", "escalate"];
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/churn_replies.tsv");
    let set = std::fs::read_to_string(path).expect("the labelled set");
    let mut table = [[0usize; 7]; 7];
    let (mut right, mut total) = (0, 0);
    let mut misses = Vec::new();
    for line in set.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (expected, reply) = line.split_once('\t').expect("label<TAB>reply");
        let got = decision(&evaluate_reply(&reply_request("churn_risk", reply)));
        let row = LABELS.iter().position(|l| *l == expected).expect("a known label");
        let column = LABELS.iter().position(|l| *l == got).expect("a known decision");
        table[row][column] += 1;
        total += 1;
        if expected == got {
            right += 1;
        } else {
            let marker = if unsafe_decision(expected, got) { "UNSAFE" } else { "wrong" };
            misses.push(format!("{marker}: {expected} -> {got}: {reply}"));
        }
    }
    println!("expected \\ got  {}", LABELS.map(|l| format!("{l:>9}")).join(""));
    for (label, row) in LABELS.iter().zip(table) {
        println!("{label:<14}  {}", row.map(|n| format!("{n:>9}")).join(""));
    }
    println!("{right} of {total} right");
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(total >= 150, "{total} labelled replies");
    assert!(
        !misses.iter().any(|m| m.starts_with("UNSAFE")),
        "unsafe decisions:\n{}",
        misses.join("\n")
    );
    assert!(right * 100 >= total * 95, "{right} of {total} right:\n{}", misses.join("\n"));
}

/// `fixtures/member_words.tsv` (issue 42, "their words read right"): whole bodies, quoted
/// history included, read as the engine reads them — the core's reply reader first, then the
/// offline agent. Every one must be read right.
#[test]
fn the_labelled_member_words_are_each_read_right() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/member_words.tsv");
    let set = std::fs::read_to_string(path).expect("the labelled set");
    let mut total = 0;
    let mut misses = Vec::new();
    for line in set.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (expected, body) = line.split_once('\t').expect("label<TAB>body");
        let body = body.replace("\\n", "\n");
        let read = openloop_core::conversation::reply_text::extract(&body);
        let got = decision(&evaluate_reply(&reply_request("churn_risk", &read.text)));
        total += 1;
        if got != expected {
            misses.push(format!("{expected} -> {got}: {body:?} (read as {:?})", read.text));
        }
    }
    assert!(total >= 40, "{total} labelled replies");
    assert!(misses.is_empty(), "{} of {total} misread:\n{}", misses.len(), misses.join("\n"));
}

/// A firm "I won't be renewing", however it is put, closes the conversation with one short
/// kind note: thanks, and the door is open; never a pitch, never the owner's turn.
#[test]
fn a_firm_no_to_renewing_closes_the_conversation_with_a_kind_note() {
    for said in [
        "I won't be renewing, thanks for everything.",
        "I'm not going to renew, but thanks.",
        "I've decided not to continue after this month.",
        "Thanks for checking in. I won\u{2019}t be renewing my membership.",
    ] {
        let e = evaluate_reply(&reply_request("churn_risk", said));
        assert_eq!(
            (e.action, e.outcome.as_deref()),
            (ReplyAction::Close, Some("churned")),
            "{said}: {e:?}"
        );
        assert!(!e.provisional && !e.suggest_suppression, "{said}: {e:?}");
        let note = e.reply.unwrap_or_else(|| panic!("{said}: a parting note"));
        assert!(note.contains("Thank"), "{said}: {note}");
        assert!(
            note.contains("door is always open") || note.contains("welcome back") || note.contains("train with us again"),
            "{note}"
        );
    }
    let mut spent = reply_request("churn_risk", "I won't be renewing.");
    spent.messages_left = 0;
    let e = evaluate_reply(&spent);
    assert_eq!((e.action, e.reply), (ReplyAction::Close, None), "no message left: a silent close");
}

#[test]
fn a_commitment_wrapped_in_where_they_have_been_is_a_commitment() {
    for reply in [
        "I've been travelling for work the past two weeks but I'll be back on Monday",
        "Sorry, I was on vacation. I'll be in Thursday at 6pm!",
        "Been out of town for ten days, but I will be there tomorrow morning.",
        "Back from my trip, see you at the 7am on Thursday",
        "Been out of town for the wedding, I'll be back on Monday",
    ] {
        assert_eq!(classify(reply, "churn_risk"), ReplyKind::Commitment, "{reply}");
    }
    assert_eq!(
        classify("I'll be back on Monday but then I'm travelling for two weeks", "churn_risk"),
        ReplyKind::Deferral(14),
        "the plan is not the last word"
    );
}

#[test]
fn stop_alone_is_an_opt_out_but_stopping_by_is_not() {
    assert_eq!(classify("Stop.", "churn_risk"), ReplyKind::OptOut);
    assert_eq!(classify("please STOP sending these", "churn_risk"), ReplyKind::OptOut);
    assert_eq!(classify("I'll stop by Monday morning", "churn_risk"), ReplyKind::Commitment);
    assert_ne!(classify("non-stop week, sorry", "churn_risk"), ReplyKind::OptOut);
}

#[test]
fn a_commitment_closes_provisionally_with_the_types_verbal_outcome_and_waits_where_words_cannot_close() {
    let churn = evaluate_reply(&reply_request("churn_risk", "See you Thursday at 6pm"));
    assert_eq!(churn.action, ReplyAction::Close);
    assert!(churn.provisional && churn.confidence >= 60);
    assert_eq!(churn.outcome.as_deref(), Some("verbal_commitment"));
    let win_back = evaluate_reply(&reply_request("win_back", "I'll come in Saturday"));
    assert_eq!(win_back.outcome.as_deref(), Some("interested"));
    // A payment is judged only from its signal: words wait, as "acknowledged".
    let payment = evaluate_reply(&reply_request("payment_recovery", "I'll update my card tonight"));
    assert_eq!(
        (payment.action, payment.outcome.as_deref()),
        (ReplyAction::Wait, Some("acknowledged"))
    );
    assert!(!payment.provisional);
    let review = evaluate_reply(&reply_request("milestone_review", "I'll leave a review this weekend"));
    assert_eq!(
        (review.action, review.outcome.as_deref()),
        (ReplyAction::Close, Some("review_posted"))
    );
    let onboarding = evaluate_reply(&reply_request("onboarding", "See you Monday at 6am"));
    assert_eq!(onboarding.action, ReplyAction::Wait, "check-ins are counted, not promised");
}

#[test]
fn every_outcome_named_is_offered_even_when_the_list_is_short() {
    let replies = ["stop", "I want to cancel my membership", "not interested", "see you monday", "ok"];
    for reply in replies {
        let mut r = reply_request("churn_risk", reply);
        r.outcome_codes = vec!["unresponsive".into()];
        let e = evaluate_reply(&r);
        assert!(
            e.outcome.is_none() || e.outcome.as_deref() == Some("unresponsive"),
            "{reply}: {e:?}"
        );
        assert_ne!(e.action, ReplyAction::Close, "{reply}: nothing to close with");
    }
}

/// The offline answer is the type's answer template, the owner's when they wrote one.
#[test]
fn the_answer_to_interest_is_written_from_the_types_template() {
    let mut r = reply_request("win_back", "I'd love to come back");
    r.goal = "Ana cancelled 12 days ago, citing a busy schedule".into();
    let answer = evaluate_reply(&r).reply.expect("an answer");
    assert!(
        answer.starts_with("Hi Ana,") && answer.ends_with("The Harbour Gym team"),
        "{answer}"
    );
    assert!(!answer.contains("schedule") && !answer.contains("cancelled"), "{answer}");
    r.message.owner_template = Some(openloop_core::conversation::messages::TemplateText {
        subject: String::new(),
        body: "{{ greeting }}, wonderful! When suits you?\n\n{{ sign_off }}".into(),
    });
    assert_eq!(
        evaluate_reply(&r).reply.as_deref(),
        Some("Hi Ana, wonderful! When suits you?\n\nThe Harbour Gym team")
    );
}

#[test]
fn interest_without_budget_waits_instead_of_replying() {
    let mut r = reply_request("win_back", "I'd love to come back");
    assert_eq!(evaluate_reply(&r).action, ReplyAction::Reply);
    r.messages_left = 0;
    assert_eq!(evaluate_reply(&r).action, ReplyAction::Wait);
}

#[test]
fn a_deferral_waits_for_the_days_the_member_names() {
    let e = evaluate_reply(&reply_request("churn_risk", "Away for 3 weeks, back after that"));
    assert_eq!((e.action, e.wait_days), (ReplyAction::Wait, Some(21)));
}

#[test]
fn a_question_the_gyms_facts_answer_is_answered_with_them_and_any_other_goes_to_the_owner() {
    let mut r = reply_request("lead_followup", "Thanks! How much is it per month?");
    r.facts = vec![
        "Memberships are $149 a month, or $20 a class.".into(),
        "Your first class is free.".into(),
    ];
    let e = evaluate_reply(&r);
    assert_eq!(e.action, ReplyAction::Reply, "{e:?}");
    let body = e.reply.as_deref().expect("an answer");
    assert!(body.starts_with("Hi Ana,"), "{body}");
    assert!(body.contains("Memberships are $149 a month, or $20 a class."), "{body}");
    assert!(!body.contains("first class"), "only the fact asked about: {body}");
    assert!(e.confidence >= openloop_core::kernel::limits::REPLY_MIN_CONFIDENCE);
    // A booking with it, no facts, or no message left: the owner answers.
    r.reply = "Can I come Thursday at 6pm? Is the first class free?".into();
    let e = evaluate_reply(&r);
    assert_eq!(e.action, ReplyAction::Escalate);
    assert!(e.unanswered_question.is_some());
    r.reply = "Is the first class free?".into();
    assert_eq!(evaluate_reply(&r).action, ReplyAction::Reply);
    r.messages_left = 0;
    assert_eq!(evaluate_reply(&r).action, ReplyAction::Escalate);
    r.messages_left = 1;
    r.facts.clear();
    assert_eq!(evaluate_reply(&r).action, ReplyAction::Escalate);
}

#[test]
fn the_shipped_reply_phrases_parse_with_every_list_filled() {
    let phrases = &*PHRASES;
    let lists = [
        &phrases.hostile,
        &phrases.membership_change,
        &phrases.hardship,
        &phrases.money,
        &phrases.question_openers,
        &phrases.hedges,
        &phrases.decline,
        &phrases.not_renewing,
        &phrases.commit_verbs,
        &phrases.days,
        &phrases.time_anchors,
        &phrases.already_done,
        &phrases.away,
        &phrases.away_for,
        &phrases.interest,
        &phrases.vague,
        &phrases.open_prefixes,
    ];
    for list in lists {
        assert!(!list.is_empty());
        assert!(list.iter().all(|p| p == &p.to_lowercase() && !p.trim().is_empty()), "{list:?}");
    }
}

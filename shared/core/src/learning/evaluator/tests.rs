use super::*;
use crate::learning::offline::evaluate;
use crate::owner::calibration::Calibration;
use crate::testing::{at, sample_shared_outcome};
use serde_json::json;

fn closed(hour: i8, replied: bool, length: usize) -> ClosedTask {
    ClosedTask {
        task_id: TaskId::generate(at("2026-11-02T14:00:00Z")),
        shared: SharedOutcome {
            outcome: None,
            message_length: Some(length),
            ..sample_shared_outcome(hour, replied)
        },
        edits: Vec::new(),
        template_version: None,
    }
}

/// The pattern: a dozen evening sends all answered, a dozen morning sends none.
fn a_month_of_evenings_answered_and_mornings_not() -> Vec<ClosedTask> {
    let mut tasks: Vec<ClosedTask> = (0..12).map(|_| closed(19, true, 300)).collect();
    tasks.extend((0..12).map(|_| closed(9, false, 300)));
    tasks
}

#[test]
fn evening_sends_answered_and_morning_ones_not_make_one_strong_timing_memory_with_its_counts() {
    let found = evaluate(&a_month_of_evenings_answered_and_mornings_not(), &Calibration::default());
    assert_eq!(found.len(), 1, "{found:?}");
    let timing = &found[0];
    assert_eq!((timing.kind, timing.strength), (SuggestionKind::Memory, Strength::Strong));
    assert_eq!(timing.evidence["evening"]["sent"], 12);
    assert_eq!(timing.evidence["evening"]["replied"], 12);
    assert_eq!(timing.evidence["morning"]["sent"], 12);
    assert_eq!(timing.evidence["morning"]["replied"], 0);
    assert_eq!(timing.evidence["task_ids"].as_array().map(Vec::len), Some(24));
    assert!(
        timing.body.contains("12 of 12") && timing.body.contains("0 of 12"),
        "{}",
        timing.body
    );
    assert_eq!(timing.confidence, 80);
    assert_eq!(timing.fingerprint, "memory:send_time:evening>morning");
}

#[test]
fn nothing_is_suggested_below_the_thresholds() {
    // Too few messages in one group.
    let mut few: Vec<ClosedTask> = (0..12).map(|_| closed(19, true, 300)).collect();
    few.extend((0..MIN_SENDS_PER_GROUP - 1).map(|_| closed(9, false, 300)));
    assert!(evaluate(&few, &Calibration::default()).is_empty());
    // A gap too small: 6 of 10 against 4 of 10.
    let mut close: Vec<ClosedTask> = (0..10).map(|i| closed(19, i < 6, 300)).collect();
    close.extend((0..10).map(|i| closed(9, i < 4, 300)));
    assert!(evaluate(&close, &Calibration::default()).is_empty());
    // Unsent tasks say nothing about timing.
    let mut unsent = a_month_of_evenings_answered_and_mornings_not();
    for t in &mut unsent {
        t.shared.touches = 0;
    }
    assert!(evaluate(&unsent, &Calibration::default()).is_empty());
}

#[test]
fn short_first_messages_answered_more_make_a_prompt_suggestion_and_long_ones_never_do() {
    let mut tasks: Vec<ClosedTask> = (0..10).map(|_| closed(14, true, 200)).collect();
    tasks.extend((0..10).map(|_| closed(14, false, 900)));
    let found = evaluate(&tasks, &Calibration::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].kind, found[0].strength), (SuggestionKind::Prompt, Strength::Moderate));
    assert!(matches!(&found[0].change, ProposedChange::Prompt { agent, .. } if agent == "*"));
    let mut reversed: Vec<ClosedTask> = (0..10).map(|_| closed(14, false, 200)).collect();
    reversed.extend((0..10).map(|_| closed(14, true, 900)));
    assert!(evaluate(&reversed, &Calibration::default()).is_empty());
}

#[test]
fn three_five_and_eight_consistent_edits_of_one_kind_make_a_weak_moderate_and_strong_memory_suggestion() {
    let edited = |n: usize| -> Vec<ClosedTask> {
        (0..n)
            .map(|i| ClosedTask {
                edits: if i % 2 == 0 {
                    vec![EditKind::Shortened, EditKind::ChangedSignOff]
                } else {
                    vec![EditKind::Shortened]
                },
                ..closed(14, false, 300)
            })
            .collect()
    };
    assert!(
        evaluate(&edited(2), &Calibration::default()).is_empty(),
        "two edits say nothing yet"
    );
    for (n, strength) in [(3, Strength::Weak), (5, Strength::Moderate), (8, Strength::Strong)] {
        let found = evaluate(&edited(n), &Calibration::default());
        let shortened = found
            .iter()
            .find(|d| d.evidence["edit"] == "shortened")
            .unwrap_or_else(|| panic!("{n} edits: {found:?}"));
        assert_eq!(
            (shortened.kind, shortened.strength),
            (SuggestionKind::Memory, strength),
            "{n} edits"
        );
        assert_eq!(shortened.evidence["edits_of_kind"], n);
        assert!(matches!(&shortened.change, ProposedChange::Memory { content, .. } if content.contains("shorter")));
    }
    // Sign-off changed on 2 of 3 (then 3 of 5): below, then at the weak threshold.
    assert!(
        !evaluate(&edited(3), &Calibration::default())
            .iter()
            .any(|d| d.evidence["edit"] == "changed_sign_off")
    );
    assert!(
        evaluate(&edited(5), &Calibration::default())
            .iter()
            .any(|d| d.evidence["edit"] == "changed_sign_off" && d.strength == Strength::Weak)
    );
}

/// Reply rates alike, outcomes not — a dozen evening members, ten back; a
/// dozen morning members, two back. The evaluator compares the outcomes and says so.
#[test]
fn members_back_more_often_after_evening_sends_make_an_outcome_suggestion_whose_evidence_names_it() {
    let task = |hour: i8, replied: bool, back: bool| ClosedTask {
        task_id: TaskId::generate(at("2026-11-02T14:00:00Z")),
        shared: SharedOutcome {
            outcome: Some(if back { "retained" } else { "unresponsive" }.into()),
            message_length: Some(300),
            ..sample_shared_outcome(hour, replied)
        },
        edits: Vec::new(),
        template_version: None,
    };
    let mut tasks: Vec<ClosedTask> = (0..12).map(|i| task(19, i % 2 == 0, i < 10)).collect();
    tasks.extend((0..12).map(|i| task(9, i % 2 == 0, i < 2)));
    let found = evaluate(&tasks, &Calibration::default());
    assert_eq!(found.len(), 1, "replies alike, so only the outcome finding: {found:?}");
    let outcome = &found[0];
    assert_eq!(outcome.fingerprint, "memory:send_time_outcome:evening>morning");
    assert_eq!(outcome.evidence["measure"], "outcome");
    assert_eq!(
        (&outcome.evidence["evening"]["succeeded"], &outcome.evidence["morning"]["succeeded"]),
        (&serde_json::json!(10), &serde_json::json!(2))
    );
    assert_eq!(outcome.strength, Strength::Strong);
    assert!(
        outcome.body.contains("10 of 12") && outcome.body.contains("2 of 12"),
        "{}",
        outcome.body
    );

    // A commitment still awaiting its signal is no success yet.
    for t in tasks.iter_mut().filter(|t| t.shared.first_touch_hour == Some(19)) {
        t.shared.provisional = true;
    }
    assert!(
        evaluate(&tasks, &Calibration::default())
            .iter()
            .all(|s| !s.fingerprint.starts_with("memory:send_time_outcome:evening"))
    );

    // Short first messages that bring more members back make a prompt suggestion too.
    let length = |len: usize, back: bool| ClosedTask {
        shared: SharedOutcome {
            message_length: Some(len),
            ..task(14, true, back).shared
        },
        ..task(14, true, back)
    };
    let mut by_length: Vec<ClosedTask> = (0..10).map(|i| length(200, i < 8)).collect();
    by_length.extend((0..10).map(|i| length(900, i < 2)));
    let found = evaluate(&by_length, &Calibration::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].fingerprint,
        format!("prompt:message_length_outcome:under_{LONG_MESSAGE_CHARS}")
    );
    assert_eq!(found[0].evidence["short"]["succeeded"], 8);
}

/// When the outcomes say what the replies say, the evaluator suggests it once.
#[test]
fn an_outcome_finding_that_repeats_the_reply_finding_is_not_suggested_twice() {
    let task = |hour: i8, replied: bool| ClosedTask {
        task_id: TaskId::generate(at("2026-11-02T14:00:00Z")),
        shared: SharedOutcome {
            outcome: Some(if replied { "retained" } else { "unresponsive" }.into()),
            ..sample_shared_outcome(hour, replied)
        },
        edits: Vec::new(),
        template_version: None,
    };
    let mut tasks: Vec<ClosedTask> = (0..12).map(|_| task(19, true)).collect();
    tasks.extend((0..12).map(|_| task(9, false)));
    let found = evaluate(&tasks, &Calibration::default());
    let fingerprints: Vec<&str> = found.iter().map(|s| s.fingerprint.as_str()).collect();
    assert_eq!(fingerprints, ["memory:send_time:evening>morning"]);
}

fn ended(touches: u32, back: bool) -> ClosedTask {
    ClosedTask {
        task_id: TaskId::generate(at("2026-11-02T14:00:00Z")),
        shared: SharedOutcome {
            touches,
            outcome: Some(if back { "retained" } else { "unresponsive" }.into()),
            ..sample_shared_outcome(14, true)
        },
        edits: Vec::new(),
        template_version: None,
    }
}

/// The touch count, touch by touch: twelve members back after the first message alone; of
/// the twelve who got follow-ups, one back after them.
#[test]
fn members_back_after_the_first_message_and_rarely_after_a_follow_up_make_a_touch_count_finding() {
    let mut tasks: Vec<ClosedTask> = (0..12).map(|_| ended(1, true)).collect();
    tasks.extend((0..12).map(|i| ended(3, i == 0)));
    let found = evaluate(&tasks, &Calibration::default());
    assert_eq!(found.len(), 1, "{found:?}");
    let e = &found[0].evidence;
    assert_eq!(
        (&e["pattern"], &e["groups"]),
        (&json!("touch_count"), &json!(["first_message", "follow_up"]))
    );
    assert_eq!(
        (&e["first_message"]["sent"], &e["first_message"]["succeeded"]),
        (&json!(24), &json!(12))
    );
    assert_eq!((&e["follow_up"]["sent"], &e["follow_up"]["succeeded"]), (&json!(12), &json!(1)));
    assert!(e["ci95"][0].as_f64().is_some_and(|low| low > 0.0), "{e}");
    assert_eq!(found[0].fingerprint, "memory:touch_count_outcome:first_message>follow_up");
}

/// Only what the data supports: a wide gap in small groups, or a small gap in large ones,
/// leaves an interval that includes zero — and nothing is suggested.
#[test]
fn an_outcome_gap_whose_interval_includes_zero_or_whose_groups_are_small_is_not_suggested() {
    let styled = |style: &str, back: bool| ClosedTask {
        shared: SharedOutcome {
            subject_style: Some(style.into()),
            ..ended(1, back).shared
        },
        ..ended(1, back)
    };
    // 9 of 9 against 0 of 9: below the minimum sample.
    let mut small: Vec<ClosedTask> = (0..9).map(|_| styled("question", true)).collect();
    small.extend((0..9).map(|_| styled("plain", false)));
    assert!(evaluate(&small, &Calibration::default()).is_empty());
    // 14 of 30 against 10 of 30: the interval crosses zero.
    let mut close: Vec<ClosedTask> = (0..30).map(|i| styled("question", i < 14)).collect();
    close.extend((0..30).map(|i| styled("plain", i < 10)));
    assert!(evaluate(&close, &Calibration::default()).is_empty());
    // 20 of 30 against 8 of 30: it does not, and the finding says so.
    let mut clear: Vec<ClosedTask> = (0..30).map(|i| styled("question", i < 20)).collect();
    clear.extend((0..30).map(|i| styled("plain", i < 8)));
    let found = evaluate(&clear, &Calibration::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].fingerprint, "prompt:subject_style_outcome:question>plain");
    assert!(found[0].body.contains("Outcomes by subject style"), "{}", found[0].body);
}

#[test]
fn a_subject_is_a_question_names_the_member_or_is_plain() {
    use crate::learning::interaction::subject_style;
    assert_eq!(subject_style("Coming back this week?", Some("Dana Reyes")), "question");
    assert_eq!(subject_style("Dana, we miss you", Some("Dana Reyes")), "personal");
    assert_eq!(subject_style("Danamite classes", Some("Dana")), "plain");
    assert_eq!(subject_style("A note from the gym", None), "plain");
}

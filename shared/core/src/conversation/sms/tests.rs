use super::*;

#[test]
fn gsm7_texts_are_160_a_segment_then_153() {
    assert_eq!(encoding("Hi Sam, see you Monday!"), Encoding::Gsm7);
    assert_eq!(segments(&"a".repeat(160)), 1);
    assert_eq!(segments(&"a".repeat(161)), 2);
    assert_eq!(segments(&"a".repeat(306)), 2);
    assert_eq!(segments(&"a".repeat(307)), 3);
    // The extension table's characters take two septets each.
    assert_eq!(segments(&"€".repeat(80)), 1);
    assert_eq!(segments(&"€".repeat(81)), 2);
}

#[test]
fn one_character_outside_gsm7_makes_the_whole_text_ucs2() {
    assert_eq!(encoding("See you Monday 💪"), Encoding::Ucs2);
    assert_eq!(segments(&"a".repeat(70)), 1);
    assert_eq!(segments(&format!("{}ł", "a".repeat(69))), 1);
    assert_eq!(segments(&format!("{}ł", "a".repeat(70))), 2);
    assert_eq!(segments(&format!("{}ł", "a".repeat(133))), 2);
    assert_eq!(segments(&format!("{}ł", "a".repeat(134))), 3);
    // An emoji is two UTF-16 units.
    assert_eq!(segments(&"💪".repeat(35)), 1);
    assert_eq!(segments(&"💪".repeat(36)), 2);
}

#[test]
fn the_first_text_names_the_gym_and_says_how_to_stop() {
    let text = compose("CrossFit Renegade", "Hi Sam,\n\nHow is training going?\n\nCoach Mike", true, 2);
    assert!(
        text.body.starts_with("CrossFit Renegade: Hi Sam, How is training going?"),
        "{}",
        text.body
    );
    assert!(text.body.ends_with("Reply STOP to opt out."), "{}", text.body);
    assert_eq!(text.segments, 1);
    let later = compose("CrossFit Renegade", "Just checking in.", false, 2);
    assert_eq!(later.body, "Just checking in.");
}

/// Given the mail a text is made from, which names the gym and ends with the owner's name, when
/// it is the first text, then it names the gym once, first, then the message, the sign-off on a
/// line of its own, then how to stop.
#[test]
fn a_first_text_names_the_gym_once_then_the_message_the_sign_off_and_how_to_stop() {
    let mail = "Hi Dana,\n\nThanks for reaching out to Iron Temple. The door is always open at Iron Temple.\n\nRosa";
    let text = compose("Iron Temple", mail, true, 3);
    assert_eq!(
        text.body,
        "Iron Temple: Hi Dana, Thanks for reaching out to us. The door is always open here.\nRosa\nReply STOP to opt out."
    );
    let team = compose("Iron Temple", "Hi Dana,\n\nSee you soon!\n\nThe Iron Temple team", true, 3);
    assert_eq!(team.body, "Iron Temple: Hi Dana, See you soon!\nThe team\nReply STOP to opt out.");
    let later = compose("Iron Temple", "Hi Dana,\n\nJust checking in.\n\nRosa", false, 3);
    assert_eq!(later.body, "Hi Dana, Just checking in.\nRosa");
}

#[test]
fn a_long_message_is_cut_after_its_last_whole_sentence_within_the_budget() {
    let long = "First sentence here. ".repeat(30);
    for max in [1, 2, 3] {
        let text = compose("Gym", &long, true, max);
        assert!(text.segments <= max, "{max}: {text:?}");
        assert!(text.body.ends_with("sentence here.\nReply STOP to opt out."), "{}", text.body);
    }
    let one_word = "x".repeat(500);
    let text = compose("Gym", &one_word, false, 2);
    assert!(text.segments <= 2 && text.body.ends_with("..."), "{text:?}");
}

#[test]
fn typographic_quotes_do_not_turn_a_text_into_ucs2() {
    let text = compose("Gym", "We\u{2019}d love to see you \u{2014} any time\u{2026}", false, 2);
    assert_eq!(encoding(&text.body), Encoding::Gsm7, "{}", text.body);
}

#[test]
fn stop_words_and_plain_refusals_stop_help_and_start_are_read() {
    for stop in [
        "STOP",
        "stop",
        "Stop.",
        "STOPALL",
        "unsubscribe",
        "Cancel",
        "END",
        "quit",
        "REVOKE",
        "opt out",
        "OPT-OUT",
        "please don't text me again",
        "Please stop texting me",
        "no more texts",
        "Leave me alone",
        // AWS's default opt-out keywords (FIELD-NOTES "Text messages").
        "REMOVE",
        "remove",
        "TD",
        "ARRET",
        "Arrêt",
        "OPTOUT",
        // Full-width, as some keyboards send it.
        "\u{ff33}\u{ff34}\u{ff2f}\u{ff30}",
        "\u{ff53}\u{ff54}\u{ff4f}\u{ff50}\u{ff01}",
    ] {
        assert_eq!(keyword(stop), Some(Keyword::Stop), "{stop}");
    }
    assert_eq!(keyword("HELP"), Some(Keyword::Help));
    assert_eq!(keyword("help?"), Some(Keyword::Help));
    assert_eq!(keyword("START"), Some(Keyword::Start));
    assert_eq!(keyword("unstop"), Some(Keyword::Start));
    for other in [
        "yes",
        "I'll stop by Thursday",
        "see you at the end of the week",
        "can I cancel my Tuesday class?",
        "ok",
        "I can't stop laughing, see you Monday",
        "remove the 6am class from my plan?",
    ] {
        assert_eq!(keyword(other), None, "{other}");
    }
}

#[test]
fn help_names_the_gym_and_how_to_stop() {
    let help = help_answer("CrossFit Renegade", Some("555-0100"));
    assert!(
        help.starts_with("CrossFit Renegade:") && help.contains("Reply STOP to opt out"),
        "{help}"
    );
    assert!(segments(&help) <= 2);
}

#[test]
fn a_texts_id_tells_when_it_went() {
    let now: jiff::Timestamp = "2026-11-10T14:05:06.789Z".parse().expect("time");
    let id = format!("sms.{}", crate::kernel::ids::new_ulid(now).to_string().to_ascii_lowercase());
    assert_eq!(text_sent_at(&id), Some(now));
    assert_eq!(text_sent_at("<abc@mail>"), None);
    assert_eq!(text_sent_at("sms.not-a-ulid"), None);
}

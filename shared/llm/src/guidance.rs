//! The owner's guidance in the member's words, offline: a note
//! written *about* the member to the agent ("Congratulate her on the baby! Tell her we can
//! freeze her membership") becomes a message *to* the member ("Congratulations on the baby! We
//! can freeze your membership."), by rules, one sentence at a time: "tell her (that) X" is X;
//! "congratulate her on X" is "Congratulations on X"; "thank her for X" is "Thank you for X";
//! and the member's pronouns are the second person ("she" → "you", "her" → "your"/"you",
//! "she's" → "you're"). Words the rules do not know are kept, in the member's person: never
//! the owner's note pasted.

/// `guidance` as words to the member.
pub fn to_member(guidance: &str) -> String {
    let sentences: Vec<String> = sentences(guidance.trim())
        .into_iter()
        .map(|(text, end)| sentence(text, end))
        .filter(|s| !s.is_empty())
        .collect();
    sentences.join(" ")
}

/// The sentences of `text`, each with its end mark (`.` when it had none).
fn sentences(text: &str) -> Vec<(&str, char)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            let part = text[start..i].trim();
            if !part.is_empty() {
                out.push((part, if c == '\n' { '.' } else { c }));
            }
            start = i + c.len_utf8();
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push((rest, '.'));
    }
    out
}

/// The openings that speak to the agent about the member, longest first: what follows is
/// said to the member.
const TELL: [&str; 18] = [
    "please let her know that ",
    "please let him know that ",
    "please let them know that ",
    "please tell her that ",
    "please tell him that ",
    "please tell them that ",
    "let her know that ",
    "let him know that ",
    "let them know that ",
    "let her know ",
    "let him know ",
    "let them know ",
    "tell her that ",
    "tell him that ",
    "tell them that ",
    "tell her ",
    "tell him ",
    "tell them ",
];

/// Openings that become a phrase of their own to the member.
const TURNS: [(&str, &str); 12] = [
    ("congratulate her on ", "Congratulations on "),
    ("congratulate him on ", "Congratulations on "),
    ("congratulate them on ", "Congratulations on "),
    ("congratulate her", "Congratulations"),
    ("congratulate him", "Congratulations"),
    ("congratulate them", "Congratulations"),
    ("thank her for ", "Thank you for "),
    ("thank him for ", "Thank you for "),
    ("thank them for ", "Thank you for "),
    ("ask her ", "Could you let us know "),
    ("ask him ", "Could you let us know "),
    ("ask them ", "Could you let us know "),
];

fn sentence(text: &str, end: char) -> String {
    let text = text
        .strip_prefix("please ")
        .or_else(|| text.strip_prefix("Please "))
        .unwrap_or(text)
        .trim();
    let lower = text.to_lowercase();
    let (lead, rest) = if let Some(p) = TELL.iter().find(|p| lower.starts_with(*p)) {
        ("", &text[p.len()..])
    } else if let Some((p, lead)) = TURNS.iter().find(|(p, _)| lower.starts_with(p)) {
        (*lead, &text[p.len()..])
    } else {
        ("", text)
    };
    let said = format!("{lead}{}", second_person(rest.trim()));
    let mut chars = said.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return String::new(),
    };
    out.push(end);
    out
}

/// The member's third-person words in the second person. "her" before a noun is "your",
/// otherwise "you"; the verb after "she"/"he" loses its "s" only for the commonest forms.
fn second_person(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let (core, tail) = split_punctuation(word);
        let next = words.get(i + 1).map(|w| split_punctuation(w).0.to_lowercase());
        let replaced = match core.to_lowercase().as_str() {
            "she" | "he" => Some("you".to_owned()),
            "she's" | "he's" => Some("you're".to_owned()),
            "she'll" | "he'll" => Some("you'll".to_owned()),
            "she'd" | "he'd" => Some("you'd".to_owned()),
            "his" if tail.is_empty() && next.is_some() => Some("your".to_owned()),
            "his" | "hers" => Some("yours".to_owned()),
            "herself" | "himself" => Some("yourself".to_owned()),
            // "her" before a word of the sentence is a possessive ("her membership"); at the
            // end, or before a preposition, it is the object ("for her", "see her at 6").
            "her" if tail.is_empty() && next.as_deref().is_some_and(|n| !is_function_word(n)) => Some("your".to_owned()),
            "her" | "him" => Some("you".to_owned()),
            _ => None,
        };
        let mut said = match replaced {
            Some(r) if core.chars().next().is_some_and(char::is_uppercase) => capitalised(&r),
            Some(r) => r,
            None => core.to_owned(),
        };
        // "she is" → "you are", "he has" → "you have", "she was" → "you were".
        if let Some(prev) = out.last()
            && prev.eq_ignore_ascii_case("you")
            && i > 0
            && matches!(split_punctuation(words[i - 1]).0.to_lowercase().as_str(), "she" | "he")
        {
            said = match said.as_str() {
                "is" => "are".to_owned(),
                "was" => "were".to_owned(),
                "has" => "have".to_owned(),
                "does" => "do".to_owned(),
                "wants" => "want".to_owned(),
                "needs" => "need".to_owned(),
                "likes" => "like".to_owned(),
                _ => said,
            };
        }
        out.push(format!("{said}{tail}"));
    }
    out.join(" ")
}

/// Words after which "her" is the object, not a possessive.
fn is_function_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "the"
            | "to"
            | "that"
            | "and"
            | "or"
            | "but"
            | "at"
            | "on"
            | "in"
            | "for"
            | "with"
            | "about"
            | "if"
            | "when"
            | "we"
            | "know"
            | "back"
            | "up"
            | "off"
            | "again"
            | "soon"
            | "today"
            | "tomorrow"
    )
}

fn split_punctuation(word: &str) -> (&str, &str) {
    let end = word.trim_end_matches([',', ';', ':', ')', '"']).len();
    word.split_at(end)
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |f| f.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::to_member;

    #[test]
    fn the_owners_note_about_her_becomes_words_to_her() {
        assert_eq!(
            to_member("Congratulate her on the baby! Tell her we can freeze her membership"),
            "Congratulations on the baby! We can freeze your membership."
        );
        assert_eq!(
            to_member("tell her that the Saturday class starts at 9am"),
            "The Saturday class starts at 9am."
        );
        assert_eq!(
            to_member("Let him know his card expired and he can update it at the desk."),
            "Your card expired and you can update it at the desk."
        );
        assert_eq!(
            to_member("tell him he's always welcome, and his locker is still his"),
            "You're always welcome, and your locker is still yours."
        );
        assert_eq!(to_member("Thank them for the kind review"), "Thank you for the kind review.");
        assert_eq!(to_member("She is welcome back any time"), "You are welcome back any time.");
        assert_eq!(to_member("We open at 6 on Sundays!"), "We open at 6 on Sundays!");
        assert_eq!(to_member("Tell her we will hold a spot for her"), "We will hold a spot for you.");
    }

    #[test]
    fn no_owner_words_about_the_member_are_left() {
        for note in [
            "Congratulate her on the baby! Tell her we can freeze her membership",
            "tell him he's always welcome, and his locker is still his",
        ] {
            let said = to_member(note).to_lowercase();
            for third in [" her ", " she ", " him ", " he ", "tell ", "congratulate "] {
                assert!(!format!(" {said} ").contains(third), "{note:?} → {said:?}");
            }
        }
    }
}

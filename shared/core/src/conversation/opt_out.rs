//! Opt-out detection (spec §22.3): the hard rule that runs on every member reply before any
//! AI reads it. A member who asks to stop is suppressed at once and every task about them is
//! cancelled, whatever a model would have said. Words are matched whole ("stop" is not
//! "stopwatch"), and "stop" as a command counts while "I'll stop by" and "I can't stop
//! laughing" do not. Paraphrases
//! ("I'd rather not get these") and the common Spanish, French, German and Portuguese
//! requests count too.

/// Phrases that mean "stop contacting me".
pub const OPT_OUT: &[&str] = &[
    "unsubscribe",
    "opt out",
    "opt-out",
    "optout",
    "remove me",
    "take me off",
    "take me out of your",
    "removed from your list",
    "removed from the list",
    "removed from your mailing list",
    "taken off your list",
    "taken off the list",
    "off the mailing list",
    "rather not get any more",
    "rather not receive these",
    "would rather not be contacted",
    "rather not be emailed",
    "don't email",
    "dont email",
    "do not email",
    "don't contact",
    "dont contact",
    "do not contact",
    "don't message",
    "dont message",
    "do not message",
    "don't text",
    "stop emailing",
    "stop e-mailing",
    "stop messaging",
    "stop contacting",
    "stop sending",
    "stop writing",
    "quit emailing",
    "no more emails",
    "no more e-mails",
    "no more messages",
    "leave me alone",
    "off your list",
    "off your mailing list",
    "don't want to hear from",
    "dont want to hear from",
    "do not want to hear from",
    "never contact me",
    "never email me",
    "lose my email",
    "delete my email",
    "delete my details",
    "remove my email",
    "remove my address",
    "any more emails",
    "any more e-mails",
    "any more messages",
    "anymore emails",
    "anymore messages",
    "these emails anymore",
    "these messages anymore",
    "rather not get these",
    "rather not receive",
    "rather not hear from",
    "prefer not to receive",
    "prefer not to get these",
    "no longer wish to receive",
    "no longer want to receive",
    "no longer wish to be contacted",
    "don't send me",
    "dont send me",
    "do not send me",
    // Spanish
    "no quiero recibir",
    "no me escriban",
    "no me escribas",
    "no me envíen",
    "no me envien",
    "no me manden",
    "dejen de enviarme",
    "dejen de escribirme",
    "deja de enviarme",
    "deja de escribirme",
    "dame de baja",
    "darme de baja",
    "denme de baja",
    "quítenme de",
    "quitenme de",
    "bórrenme",
    "borrenme",
    // French
    "ne plus m'envoyer",
    "ne plus recevoir",
    "arrêtez de m'envoyer",
    "arretez de m'envoyer",
    "me désabonner",
    "me desinscrire",
    "me désinscrire",
    "désabonnement",
    "désabonnez-moi",
    "desabonnez-moi",
    "désabonnez moi",
    "désinscrivez-moi",
    "desinscrivez-moi",
    "me retirer de votre liste",
    "me retirer de la liste",
    "me retirer de vos listes",
    "me supprimer de votre liste",
    "retirez-moi de",
    "supprimez-moi de",
    "ne souhaite plus recevoir",
    "ne veux plus recevoir",
    "ne plus être contacté",
    "ne plus etre contacte",
    "ne me contactez plus",
    "arrêtez de m'écrire",
    "stop svp",
    "stop merci",
    // German
    "keine e-mails mehr",
    "keine emails mehr",
    "keine mails mehr",
    "keine nachrichten mehr",
    "abmelden",
    "nicht mehr kontaktieren",
    // Portuguese
    "não quero receber",
    "nao quero receber",
    "parem de enviar",
    "parem de me enviar",
    "descadastrar",
];

/// Whether a member's reply asks us to stop. The product's own wording — the footer of its
/// mail and the links in it — is never read as the member's.
pub fn is_opt_out(reply: &str) -> bool {
    let text = normalize(&without_our_wording(reply));
    OPT_OUT.iter().any(|phrase| contains_phrase(&text, phrase, false)) || bare_stop(&text)
}

/// `reply` without the product's footer lines (`UNSUBSCRIBE_FOOTER`, quoted or not) and
/// without links (an unsubscribe link's words are the product's, not the member's).
fn without_our_wording(reply: &str) -> String {
    let footer = normalize(crate::conversation::mail::UNSUBSCRIBE_FOOTER);
    reply
        .lines()
        .filter(|line| !normalize(line.trim_start_matches(|c: char| c == '>' || c.is_whitespace())).starts_with(&footer))
        .map(|line| {
            line.split_whitespace()
                .filter(|w| !(w.contains("://") || w.starts_with("www.") || w.starts_with("<http")))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The compatibility forms a phone keyboard may send folded to their plain letters (the
/// part of Unicode's NFKC a text's words need): full-width ASCII (`ＳＴＯＰ`, U+FF01–U+FF5E)
/// and the ideographic space.
pub fn fold_width(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(u32::from(c) - 0xff01 + 0x21).unwrap_or(c),
            '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// Lower case, straight apostrophes, single spaces, full-width forms folded.
pub fn normalize(text: &str) -> String {
    let mapped: String = fold_width(text)
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' | '`' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            c => c.to_lowercase().next().unwrap_or(c),
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `needle` in `text`, starting at a word boundary and ending at one unless `open_end` (a
/// stem: "injur" in "injured").
pub fn contains_phrase(text: &str, needle: &str, open_end: bool) -> bool {
    let needle = needle.trim_end();
    let ends_open = open_end || needle.ends_with(|c: char| !c.is_alphanumeric());
    let mut from = 0;
    while let Some(pos) = text[from..].find(needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = start == 0 || !text[..start].ends_with(|c: char| c.is_alphanumeric());
        let after_ok = ends_open || end == text.len() || !text[end..].starts_with(|c: char| c.is_alphanumeric());
        if before_ok && after_ok {
            return true;
        }
        from = start + needle.len().max(1);
    }
    false
}

/// The word "stop" as a command: the whole of a sentence or clause, with at most a "please"
/// or "now" around it ("Stop.", "stop it please", "Stop, thank you"). Inside an ordinary
/// sentence it is not one: "I'll stop by", "non-stop week", "I can't stop laughing".
fn bare_stop(text: &str) -> bool {
    const BEFORE: &[&str] = &["please", "pls", "plz", "just", "ok", "okay", "now", "so"];
    const AFTER: &[&str] = &[
        "please", "pls", "plz", "now", "it", "this", "that", "all", "thanks", "thank", "you", "already", "asap",
    ];
    text.split(['.', '!', '?', ',', ';', ':', '\n']).any(|clause| {
        let words: Vec<&str> = clause
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        let Some(at) = words.iter().position(|w| *w == "stop") else {
            return false;
        };
        words[..at].iter().all(|w| BEFORE.contains(w)) && words[at + 1..].iter().all(|w| AFTER.contains(w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_means_stop_but_stopping_by_does_not() {
        for reply in [
            "STOP",
            "Please stop emailing me.",
            "unsubscribe",
            "Take me off your list",
            "Don\u{2019}t contact me again",
            "I'd rather not get these messages anymore.",
            "I don't want any more emails from you guys.",
            "Por favor, DEJEN DE ENVIARME correos.",
            "Bitte keine E-Mails mehr.",
            "Could you please take me off your list?",
            "Please remove me from your mailing list.",
            "I'd rather not get these anymore",
            "Désabonnez-moi",
            "Merci de me retirer de votre liste.",
            "Je ne souhaite plus recevoir vos messages.",
            "stop svp",
            "Stop, thank you.",
            "Please stop!",
            "stop it",
            "\u{ff33}\u{ff34}\u{ff2f}\u{ff30}",
            "\u{ff35}\u{ff4e}\u{ff53}\u{ff55}\u{ff42}\u{ff53}\u{ff43}\u{ff52}\u{ff49}\u{ff42}\u{ff45}",
        ] {
            assert!(is_opt_out(reply), "{reply}");
        }
        for reply in [
            "I'll stop by Thursday",
            "non-stop week, sorry",
            "my stopwatch broke",
            "see you Monday",
            "ok",
            "thanks!",
            "one more thing off the list of excuses, see you Monday",
            "I can't stop laughing, see you Monday",
            "don't stop now, I'm loving it",
            "we stop at the bakery on the way",
        ] {
            assert!(!is_opt_out(reply), "{reply}");
        }
    }

    #[test]
    fn the_products_own_footer_and_links_are_never_read_as_a_stop() {
        for reply in [
            "ok\n--\nTo stop receiving these emails: https://gym.example/unsubscribe?token=abc",
            "thanks!\n> To stop receiving these emails: https://gym.example/unsubscribe?token=abc",
            "see you then https://gym.example/unsubscribe/abc",
        ] {
            assert!(!is_opt_out(reply), "{reply}");
        }
        assert!(is_opt_out("unsubscribe https://gym.example/unsubscribe?token=abc"));
    }
}

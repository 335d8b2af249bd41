//! Opt-out detection: the hard rule that runs on every member reply before any
//! AI reads it. A member who asks to stop is suppressed at once and every task about them is
//! cancelled, whatever a model would have said. Words are matched whole ("stop" is not
//! "stopwatch"), and "stop" as a command counts while "I'll stop by" and "I can't stop
//! laughing" do not. Paraphrases ("I'd rather not get these") and the requests in the other
//! languages gyms' members write count too; the phrases are data, `words/opt_out.toml`.

/// The phrases of `words/opt_out.toml`, compiled in.
pub const OPT_OUT_WORDS: &str = include_str!("../../../../words/opt_out.toml");

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OptOutFile {
    language: Vec<OptOutLanguage>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OptOutLanguage {
    #[allow(dead_code, reason = "the file names each list for its reader")]
    name: String,
    phrases: Vec<String>,
}

/// The phrases of an opt-out file, normalized as replies are.
fn parse_opt_out(text: &str) -> Result<Vec<String>, String> {
    let file: OptOutFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let phrases: Vec<String> = file.language.iter().flat_map(|l| l.phrases.iter().map(|p| normalize(p))).collect();
    match phrases.iter().find(|p| p.is_empty()) {
        Some(_) => Err("an empty phrase would match every reply".into()),
        None => Ok(phrases),
    }
}

/// What is read as a stop if the file were ever shipped broken (a test holds it parsing):
/// never nothing.
const OPT_OUT_FALLBACK: &[&str] = &[
    "unsubscribe",
    "opt out",
    "remove me",
    "stop emailing",
    "stop sending",
    "do not contact",
    "don't contact",
];

/// Phrases that mean "stop contacting me" (`words/opt_out.toml`).
static OPT_OUT: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    parse_opt_out(OPT_OUT_WORDS).unwrap_or_else(|e| {
        tracing::error!(error = %e, "words/opt_out.toml does not parse; only the fallback phrases are read as a stop");
        OPT_OUT_FALLBACK.iter().map(|p| (*p).to_owned()).collect()
    })
});

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
    fn the_shipped_opt_out_words_parse() {
        let phrases = parse_opt_out(OPT_OUT_WORDS).expect("words/opt_out.toml parses");
        assert!(phrases.len() > 100, "{} phrases", phrases.len());
        assert!(
            parse_opt_out("[[language]]\nname = \"x\"\nphrases = [\" \"]").is_err(),
            "an empty phrase"
        );
    }

    /// Issue 42, point 7: a polite removal request, in each language the gyms' members write,
    /// is a stop.
    #[test]
    fn a_polite_removal_request_in_any_language_is_a_stop() {
        for reply in [
            "Please remove me from your mailing list.",
            "Hi, could you take my name off your list? Thanks",
            "Ne m'envoyez plus rien, merci.",
            "Bonjour, je ne veux plus recevoir vos mails.",
            "Bitte keine Mails mehr.",
            "Bitte tragen Sie mich aus dem Verteiler aus.",
            "Por favor, no me envíen más correos.",
            "Quiero darme de baja, gracias.",
            "Per favore non scrivetemi più.",
            "Non voglio più ricevere queste email, grazie.",
            "Graag uitschrijven, dank je.",
            "Stuur me geen mails meer alstublieft.",
            "Por favor não me enviem mais emails.",
            "Si us plau, no m'envieu més correus.",
        ] {
            assert!(is_opt_out(reply), "{reply}");
        }
        for reply in [
            "I'll be in on Monday, see you then",
            "Ich muss mich leider für Dienstag entschuldigen",
            "Je viendrai jeudi soir",
            "Vengo el martes por la mañana",
            "Ci vediamo giovedì alle 7",
            "Ik kom donderdag om 7 uur",
        ] {
            assert!(!is_opt_out(reply), "{reply}");
        }
    }

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

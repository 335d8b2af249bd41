//! Text messages (SMS) in the domain's words: how long a text is (GSM-7 and UCS-2 segments),
//! the words a text starts and ends with (the first text names the gym and says how to stop),
//! fitting the member's message into the owner's segment budget, and the keywords a member
//! texts (STOP and its plain-words paraphrases, HELP, START). Pure: the engine's `engine/channels/sms/`
//! sends and reads them.

#[cfg(test)]
mod tests;

/// What the first text to a member ends with.
pub const STOP_LINE: &str = "Reply STOP to opt out.";

pub use crate::owner::sms::{DEFAULT_MAX_SEGMENTS, MAX_SEGMENTS};

/// How a text is encoded on the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The GSM 03.38 default alphabet: 160 septets in one segment, 153 a segment beyond.
    Gsm7,
    /// Anything outside it: UTF-16, 70 code units in one segment, 67 a segment beyond.
    Ucs2,
}

/// The GSM 03.38 basic character set (one septet each).
const GSM_BASIC: &str =
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
/// Its extension table (two septets each: an escape and the character).
const GSM_EXTENDED: &str = "^{}\\[~]|€\u{c}";

/// The septets `c` takes in GSM-7, or `None` when it is not in the alphabet.
fn gsm_septets(c: char) -> Option<u32> {
    if GSM_BASIC.contains(c) {
        Some(1)
    } else if GSM_EXTENDED.contains(c) {
        Some(2)
    } else {
        None
    }
}

/// The encoding a text needs: GSM-7 when every character is in its alphabet.
pub fn encoding(text: &str) -> Encoding {
    if text.chars().all(|c| gsm_septets(c).is_some()) {
        Encoding::Gsm7
    } else {
        Encoding::Ucs2
    }
}

/// How many segments (message parts) `text` is sent as; what carriers bill.
pub fn segments(text: &str) -> u32 {
    let (units, single, multi) = match encoding(text) {
        Encoding::Gsm7 => (text.chars().filter_map(gsm_septets).sum::<u32>(), 160, 153),
        Encoding::Ucs2 => (u32::try_from(text.encode_utf16().count()).unwrap_or(u32::MAX), 70, 67),
    };
    if units <= single { 1 } else { units.div_ceil(multi) }
}

/// Typographic characters a writer (or a model) adds that would turn a whole text into UCS-2,
/// and their GSM-7 equivalents.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' | '`' => out.push('\''),
            '\u{201c}' | '\u{201d}' => out.push('"'),
            '\u{2013}' | '\u{2014}' => out.push('-'),
            '\u{2026}' => out.push_str("..."),
            '\u{a0}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A text ready to send: its words and the segments they take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    pub body: String,
    pub segments: u32,
}

/// The most characters of a mail's last paragraph read as its sign-off ("Coach Mike", "Rosa,
/// Iron Temple").
const SIGN_OFF_MAX_CHARS: usize = 40;

/// A mail's body as a text's parts: the message (its paragraphs joined on one line) and its
/// sign-off (a short last line of its own, as the templates end), if it has one.
fn message_and_sign_off(message: &str) -> (String, Option<String>) {
    let paragraphs: Vec<String> = message
        .split("\n\n")
        .map(|p| p.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    let sign_off = match paragraphs.as_slice() {
        [.., last] if paragraphs.len() >= 2 && last.chars().count() <= SIGN_OFF_MAX_CHARS && !last.ends_with(['.', '!', '?', ':']) => {
            Some(last.clone())
        }
        _ => None,
    };
    let body = &paragraphs[..paragraphs.len() - usize::from(sign_off.is_some())];
    (plain(&body.join(" ")), sign_off.map(|s| plain(&s)))
}

/// The message with the gym's name said as a person would after naming it once: "at Iron
/// Temple" is "here", "to Iron Temple" "to us", "Iron Temple's" "our". A mention no rule
/// rewrites stays.
fn gym_named_once(gym: &str, message: &str) -> String {
    if gym.is_empty() {
        return message.to_owned();
    }
    let mut out = message.to_owned();
    for (before, after, instead) in [
        ("", "'s", "our"),
        ("at ", "", "here"),
        ("to ", "", "to us"),
        ("from ", "", "from us"),
        ("with ", "", "with us"),
        ("for ", "", "for us"),
        ("the ", " team", "the team"),
    ] {
        let phrase = format!("{before}{gym}{after}").to_ascii_lowercase();
        // Bounded: a gym named like its rewrite ("Us") must not loop.
        for _ in 0..8 {
            let lower = out.to_ascii_lowercase();
            let Some(i) = lower.find(&phrase) else { break };
            let end = i + phrase.len();
            let starts_word = lower[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let ends_word = lower[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            if !(starts_word && ends_word) {
                break;
            }
            out.replace_range(i..end, instead);
        }
    }
    out
}

/// The text of a touch: the member's message (a mail's body, its paragraphs joined) fitted
/// into `max_segments`, its sign-off on a line of its own. The first text to a member names
/// the gym once, first ("Iron Temple: Hi Dana, …", the message's own mentions of the gym said
/// as "here" or "us"), and ends with [`STOP_LINE`] on its own line. A message too long is cut
/// after its last whole sentence that fits (or word, with "...").
pub fn compose(gym: &str, message: &str, first: bool, max_segments: u32) -> Text {
    let max_segments = max_segments.max(1);
    let (words, sign_off) = message_and_sign_off(message);
    let gym = plain(gym.trim());
    let (words, sign_off) = if first {
        // "The Iron Temple team" under a text that starts "Iron Temple:" is "The team".
        let team = format!("the {gym} team");
        let sign_off = sign_off.map(|s| if s.eq_ignore_ascii_case(&team) { "The team".to_owned() } else { s });
        (gym_named_once(&gym, &words), sign_off)
    } else {
        (words, sign_off)
    };
    let sign_off = sign_off.map(|s| format!("\n{s}")).unwrap_or_default();
    let (prefix, suffix) = if first && !gym.is_empty() {
        (format!("{gym}: "), format!("{sign_off}\n{STOP_LINE}"))
    } else if first {
        (String::new(), format!("{sign_off}\n{STOP_LINE}"))
    } else {
        (String::new(), sign_off)
    };
    let whole = |middle: &str| format!("{prefix}{middle}{suffix}");
    let fits = |middle: &str| segments(&whole(middle)) <= max_segments;
    if fits(&words) {
        let body = whole(&words);
        return Text {
            segments: segments(&body),
            body,
        };
    }
    // The longest run of whole sentences that fits.
    let ends: Vec<usize> = words
        .char_indices()
        .filter(|(i, c)| matches!(c, '.' | '!' | '?') && words[i + c.len_utf8()..].starts_with(' '))
        .map(|(i, c)| i + c.len_utf8())
        .collect();
    if let Some(end) = ends.iter().rev().find(|&&end| fits(&words[..end])) {
        let body = whole(&words[..*end]);
        return Text {
            segments: segments(&body),
            body,
        };
    }
    // No sentence fits: as many words as do, marked as cut.
    let mut middle = String::new();
    for word in words.split(' ') {
        let next = if middle.is_empty() {
            word.to_owned()
        } else {
            format!("{middle} {word}")
        };
        if !fits(&format!("{next}...")) {
            break;
        }
        middle = next;
    }
    let body = whole(&format!("{middle}..."));
    Text {
        segments: segments(&body),
        body,
    }
}

/// What a member's whole text asks of the product, before anything else reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    /// Stop every text at once: a carrier keyword or a refusal in plain words.
    Stop,
    /// The gym's name and how to stop.
    Help,
    /// Texts again after a stop.
    Start,
}

/// The carrier stop keywords (the whole message, any case, full-width forms folded, trailing
/// punctuation ignored): the FCC's and CTIA's, and AWS End User Messaging SMS's default
/// opt-out keywords (FIELD-NOTES "Text messages": ARRET, CANCEL, END, OPT-OUT, OPTOUT, QUIT,
/// REMOVE, STOP, TD, UNSUBSCRIBE).
pub const STOP_KEYWORDS: &[&str] = &[
    "STOP",
    "REMOVE",
    "TD",
    "ARRET",
    "ARRÊT",
    "STOPALL",
    "STOP ALL",
    "UNSUBSCRIBE",
    "CANCEL",
    "END",
    "QUIT",
    "REVOKE",
    "OPT OUT",
    "OPT-OUT",
    "OPTOUT",
];
const HELP_KEYWORDS: &[&str] = &["HELP", "INFO"];
const START_KEYWORDS: &[&str] = &["START", "UNSTOP"];

/// The keyword a member's text is, if any. A stop is also any refusal the product reads as
/// one in mail (`conversation::opt_out`: "please don't text me again", other languages).
pub fn keyword(text: &str) -> Option<Keyword> {
    let whole = crate::conversation::opt_out::fold_width(text)
        .trim()
        .trim_end_matches(|c: char| c.is_ascii_punctuation())
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase();
    if STOP_KEYWORDS.contains(&whole.as_str()) {
        return Some(Keyword::Stop);
    }
    if HELP_KEYWORDS.contains(&whole.as_str()) {
        return Some(Keyword::Help);
    }
    if START_KEYWORDS.contains(&whole.as_str()) {
        return Some(Keyword::Start);
    }
    if crate::conversation::opt_out::is_opt_out(text) || refuses_texts(text) {
        return Some(Keyword::Stop);
    }
    None
}

/// Refusals of texts in particular, beside the mail ones `opt_out` knows.
fn refuses_texts(text: &str) -> bool {
    use crate::conversation::opt_out::{contains_phrase, normalize};
    const PHRASES: &[&str] = &[
        "dont text",
        "do not text",
        "stop texting",
        "quit texting",
        "no more texts",
        "stop the texts",
        "wrong number",
        "no texts",
    ];
    let text = normalize(text);
    PHRASES.iter().any(|p| contains_phrase(&text, p, false))
}

/// The answer to HELP: who is texting and how to stop.
pub fn help_answer(gym: &str, contact: Option<&str>) -> String {
    let reach = contact.map(|c| format!(" or call {}", plain(c))).unwrap_or_default();
    format!(
        "{}: texts about your membership. For help reply here{reach}. Msg&data rates may apply. {STOP_LINE}",
        plain(gym.trim())
    )
}

/// The answer to START: texts are back on.
pub fn start_answer(gym: &str) -> String {
    format!("{}: you will get our texts again. {STOP_LINE}", plain(gym.trim()))
}

/// The owner's critical alert, as a text.
pub fn owner_alert(gym: &str, title: &str, max_segments: u32) -> Text {
    compose(
        "",
        &format!("Openloop, {}: {}", plain(gym.trim()), plain(title)),
        false,
        max_segments,
    )
}

/// The provider id a text's outbound record carries: where a member's answer from `member`
/// to `ours` belongs in `account` (the reply route, like a mail's Message-ID). The account is
/// in the key, so another account's text to the same phone never moves this one's route.
pub fn route_key(account: crate::kernel::ids::AccountId, member: &str, ours: &str) -> String {
    format!("sms:{account}:{member}:{}", crate::owner::sms::number_key(ours))
}

/// The route key texts carried before routes were scoped by account (read for old routes).
pub fn legacy_route_key(member: &str, ours: &str) -> String {
    format!("sms:{member}:{ours}")
}

/// Whether a thread id is a text's (our outbound texts' ids start so).
pub fn is_text_id(id: &str) -> bool {
    id.starts_with("sms.")
}

/// When a text of ours went, read from its id (`sms.{ulid}`, the ULID made at the send).
pub fn text_sent_at(id: &str) -> Option<jiff::Timestamp> {
    let ulid = ulid::Ulid::from_string(id.strip_prefix("sms.")?).ok()?;
    jiff::Timestamp::from_millisecond(i64::try_from(ulid.timestamp_ms()).ok()?).ok()
}

/// The address a text's outbound record is kept under: the phone in the reserved `.invalid`
/// domain (RFC 2606), never a mailbox, so no mail can reach it.
pub fn record_address(phone: &str) -> Option<crate::kernel::ids::Email> {
    crate::kernel::ids::Email::parse(&format!("{}@sms.invalid", phone.trim_start_matches('+'))).ok()
}

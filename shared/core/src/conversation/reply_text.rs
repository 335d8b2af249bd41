//! What the member wrote in a reply: the body cut into the member's own lines, quoted history
//! and signatures, the way mail clients actually write them.
//!
//! The rules follow what the well-known reply parsers learned from real mail (GitHub's
//! email_reply_parser and its ports: quote headers per language, Outlook header blocks,
//! signatures), arranged here in three passes:
//!
//! 1. **Lines are classified**: `>` quoted, a quote header ("On … wrote:" in some thirty
//!    languages, the date-first forms that name only the sender, one framed in dashes as Zoho,
//!    Zimbra and Android write it; a header a client wrapped over up to three lines, even
//!    inside its sender's address, is read as one), the start of unquoted history (an
//!    Outlook/Windows Mail/Yahoo header block, starred or not, with or without an address; an
//!    "Original Message" or forward banner; a long rule), a signature ("-- " or a short rule,
//!    "Sent from my iPhone" and its translations — only when the whole line is one), or the
//!    member's text.
//! 2. **Blocks**: a quote header followed by `>` lines is a quote; one followed by plain lines
//!    starts unquoted history, which runs to the end, as does a header block; a signature
//!    runs until the next quote.
//! 3. **The member's words** run from their first line to their last: a quote above them
//!    (bottom-posting) and below them (top-posting) is dropped, a quote between them (answers
//!    written inline) is kept, marked with `>`, so the answers keep their questions.
//!
//! Before these passes, **the gym's own words are taken out** ([`extract_answering`]): the
//! messages the reply answers (the task's outbound mail), their footer and sign-off, however
//! the client quoted them — with or without `>`, re-wrapped, under a header the rules above do
//! not know. They are matched by their words in order, not by their lines, and marked as
//! quoted, with the header or header block right above them; what is left between them is the
//! member's (answers written inline keep their questions). The product's footer
//! ([`UNSUBSCRIBE_FOOTER`]) is taken out even when the messages are not known.
//!
//! Nothing the member wrote may be lost: when the extraction leaves less than a sentence while
//! the unquoted body had more, [`Extracted::original`] carries the whole body (quoted lines
//! keep their `>`), for the agent and the owner. Pure: no store, no clock.

use std::sync::LazyLock;

use regex_lite::Regex;

use crate::conversation::mail::UNSUBSCRIBE_FOOTER;

/// The most of a reply the conversation keeps (the rest is quoted mail or noise).
pub const MAX_REPLY_CHARS: usize = 10_000;

/// Fewer words than this is "less than a sentence" (then what a signature marker hid is given
/// too).
const SENTENCE_WORDS: usize = 4;

/// A reply body, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The member's new words; answers written between quoted lines keep those lines, marked
    /// with `>`.
    pub text: String,
    /// The member's whole unquoted message — everything but the quoted history, signature
    /// lines included, inline quotes marked with `>` — when `text` is less than a sentence
    /// but more plain text was cut: what the agent reads and the owner is shown beside `text`.
    pub original: Option<String>,
}

/// Read a plain-text reply body (the product's footer is taken out; the messages it answers
/// are not known).
pub fn extract(body: &str) -> Extracted {
    extract_answering(body, &[])
}

/// Read a plain-text reply body to `ours`, the texts of the messages the gym sent in this
/// conversation: their words, however quoted, are not the member's.
pub fn extract_answering(body: &str, ours: &[&str]) -> Extracted {
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    let raw: Vec<&str> = body.lines().map(str::trim_end).collect();
    let gyms = gyms_lines(&raw, ours);
    let marked: Vec<String> = raw
        .iter()
        .zip(&gyms)
        .map(|(line, gym)| match gym {
            true if !line.trim_start().starts_with('>') => format!("> {}", line.trim_start()),
            _ => (*line).to_owned(),
        })
        .collect();
    let lines: Vec<&str> = marked.iter().map(String::as_str).collect();
    let kinds = classify(&lines);
    let (text, dropped_words) = kept_words(&lines, &kinds, false);
    let text = cap(&text);
    let short = text.split_whitespace().count() < SENTENCE_WORDS;
    let original = (short && dropped_words > 0).then(|| cap(&kept_words(&lines, &kinds, true).0));
    Extracted { text, original }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Blank,
    Text,
    Quoted,
    /// "On … wrote:" (or the lines of one that a client wrapped).
    QuoteHeader,
    /// A header block or a banner: everything from here on is the earlier mail.
    History,
    /// "-- " or a device line: the member's signature, until the next quote.
    Signature,
}

fn classify(lines: &[&str]) -> Vec<Kind> {
    let mut kinds = vec![Kind::Text; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let line = normalize(lines[i]);
        kinds[i] = if line.is_empty() {
            Kind::Blank
        } else if line.starts_with('>') {
            Kind::Quoted
        } else if let Some(len) = quote_header_at(lines, i) {
            kinds[i..i + len].fill(Kind::QuoteHeader);
            i += len;
            continue;
        } else if is_banner(&line) || header_block_at(lines, i) {
            Kind::History
        } else if is_signature(&line) {
            Kind::Signature
        } else {
            Kind::Text
        };
        i += 1;
    }
    kinds
}

/// The member's lines from the first to the last, with inline quotes kept and everything else
/// dropped; and how many words of plain text, neither quoted nor history, were dropped (what
/// followed a signature marker). With `signatures`, signature lines count as the member's.
fn kept_words(lines: &[&str], kinds: &[Kind], signatures: bool) -> (String, usize) {
    // Pass 2: what each line belongs to.
    let mut member = vec![false; lines.len()];
    let mut quote = vec![false; lines.len()];
    let mut in_signature = false;
    let mut dropped = 0;
    let mut i = 0;
    while i < lines.len() {
        match kinds[i] {
            Kind::History => break,
            Kind::QuoteHeader => {
                let next = (i + 1..lines.len()).find(|&j| !matches!(kinds[j], Kind::Blank | Kind::QuoteHeader));
                match next.map(|j| kinds[j]) {
                    Some(Kind::Quoted) => in_signature = false,
                    // A header over plain lines (Yahoo, forwards): the history runs to the end.
                    _ => break,
                }
            }
            Kind::Quoted => {
                in_signature = false;
                quote[i] = true;
            }
            Kind::Signature if signatures => member[i] = true,
            Kind::Signature => in_signature = true,
            Kind::Text if !in_signature => member[i] = true,
            Kind::Text => dropped += lines[i].split_whitespace().count(),
            Kind::Blank => {}
        }
        i += 1;
    }
    let (Some(first), Some(last)) = (member.iter().position(|m| *m), member.iter().rposition(|m| *m)) else {
        return (String::new(), dropped);
    };
    // Pass 3: from the first of the member's lines to the last.
    let mut out: Vec<String> = Vec::new();
    for j in first..=last {
        if member[j] {
            out.push(lines[j].to_owned());
        } else if quote[j] {
            let quoted = lines[j].trim_start().trim_start_matches('>').trim();
            out.push(format!("> {quoted}").trim_end().to_owned());
        } else if kinds[j] == Kind::Blank && out.last().is_some_and(|l| !l.is_empty()) {
            out.push(String::new());
        }
    }
    (out.join("\n").trim().to_owned(), dropped)
}

/// The fewest words of the gym's message, in its order, that make a run of lines its own; a
/// shorter run counts at the message's end (the sign-off) below a run that counted.
const GYM_RUN_WORDS: usize = 6;
/// The most lines of a body the gym's words are looked for in.
const GYM_SCAN_LINES: usize = 2_000;

/// A line's words: lower-case runs of letters and digits (quote marks, punctuation and the
/// places a client re-wrapped a line do not count).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Which lines are the gym's: runs of lines that repeat one of `ours` word for word (in its
/// order, however wrapped or quoted), the product's footer and its link, and above each the
/// header or header block that introduced it.
fn gyms_lines(lines: &[&str], ours: &[&str]) -> Vec<bool> {
    let n = lines.len().min(GYM_SCAN_LINES);
    let mut gym = vec![false; lines.len()];
    let line_words: Vec<Vec<String>> = lines[..n].iter().map(|l| words(l)).collect();
    let footer = words(UNSUBSCRIBE_FOOTER);
    let mut starts = Vec::new();
    for i in 0..n {
        if line_words[i].starts_with(&footer) {
            gym[i] = true;
            starts.push(i);
            // The link, when a client wrapped it onto lines of its own.
            let mut j = i + 1;
            while j < n && is_link_only(lines[j]) {
                gym[j] = true;
                j += 1;
            }
        }
    }
    let sequences: Vec<Vec<String>> = ours.iter().map(|t| words(t)).filter(|s| !s.is_empty()).collect();
    // (first line, last line, words, ends the message)
    let mut runs: Vec<(usize, usize, usize, bool)> = Vec::new();
    let mut i = 0;
    while i < n {
        if line_words[i].is_empty() || gym[i] {
            i += 1;
            continue;
        }
        let mut best: Option<(usize, usize, bool)> = None;
        for seq in &sequences {
            let first = &line_words[i];
            for p in (0..seq.len()).filter(|&p| seq[p..].starts_with(first)) {
                let (mut k, mut last, mut count) = (p + first.len(), i, first.len());
                let mut j = i + 1;
                while j < n {
                    if line_words[j].is_empty() {
                        j += 1;
                        continue;
                    }
                    if !seq[k..].starts_with(&line_words[j]) {
                        break;
                    }
                    k += line_words[j].len();
                    count += line_words[j].len();
                    last = j;
                    j += 1;
                }
                if best.is_none_or(|(_, c, _)| count > c) {
                    best = Some((last, count, k == seq.len()));
                }
            }
        }
        match best {
            Some((last, count, ends)) if count >= 2 => {
                runs.push((i, last, count, ends));
                i = last + 1;
            }
            _ => i += 1,
        }
    }
    let mut counted_above = false;
    for (first, last, count, ends) in runs {
        if count >= GYM_RUN_WORDS || (ends && counted_above) {
            counted_above = true;
            gym[first..=last].fill(true);
            starts.push(first);
        }
    }
    // What introduced the gym's words: a quote header (known or not), a header block, a
    // banner, a lone `--` — up to the first line that is none of these.
    for start in starts {
        let mut j = start;
        while j > 0 {
            j -= 1;
            let line = normalize(lines[j]);
            if line.is_empty() || gym[j] {
                continue;
            }
            let rule = line.chars().all(|c| "-_*=>~#|".contains(c) || c.is_whitespace());
            let introduces = rule
                || (line.ends_with(':') && (line.contains('@') || line.chars().any(|c| c.is_ascii_digit())))
                || quote_header_at(lines, j).is_some()
                || is_banner(&line)
                || FROM_FIELD.is_match(&line)
                || HEADER_FIELD.is_match(&line);
            if !introduces {
                break;
            }
            gym[j] = true;
        }
    }
    gym
}

/// A line that is only a link (or the rest of one a client wrapped).
fn is_link_only(line: &str) -> bool {
    let line = line.trim().trim_start_matches('>').trim();
    !line.is_empty() && !line.contains(' ') && (line.contains("://") || line.contains('/') || line.contains('='))
}

/// `text` cut to [`MAX_REPLY_CHARS`] characters.
pub(crate) fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_REPLY_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    }
}

/// Single spaces (no-break spaces included), no markup stars around header names.
fn normalize(line: &str) -> String {
    line.replace('\u{a0}', " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "On … wrote:" and its relatives, as one line once a wrap is undone.
static QUOTE_HEADERS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"^On\s.+\swrote:$",                                                     // English
        r"^Le\s.+\s(a\s)?écrit\s?:$",                                            // French
        r"^El\s.+\sescribió\s?:$",                                               // Spanish
        r"^El\s.+\s(va escriure|ha escrit)\s?:$",                                // Catalan
        r"^(Em|A|No dia)\s.+\sescreveu\s?:$",                                    // Portuguese (Brazil, Portugal)
        r"^(Il|In data)\s.+\sha scritto\s?:$",                                   // Italian
        r"^.+\s<[^<>\s]+@[^<>\s]+>\s?ha scritto\s?:$",                           // Italian, name first
        r"^Am\s.+\sschrieb\b.*:$",                                               // German
        r"^.+\s<[^<>\s]+@[^<>\s]+>\s?schrieb\s?:$",                              // German, name first
        r"^Op\s.+\s(schreef|geschreven)\b.*:$",                                  // Dutch
        r"^.+\s<[^<>\s]+@[^<>\s]+>\s(schreef|heeft geschreven)\b.*:$",           // Dutch, name first
        r"^(W dniu|Dnia)\s.+\s(pisze|napisał|napisała|napisał\(a\)):$",          // Polish
        r"^.*\d.*\sskrev\b.*:$",                                                 // Danish, Norwegian, Swedish
        r"^.*(@|\d).*\s(skrev|kirjoitti|írta|yazdı)\s?:$", // name or date, then the verb: Nordic, Finnish, Hungarian, Turkish
        r"^.*(@|\d).*\s(napisał|napisała|napsal|napísal|napísala)(\(a\))?\s?:$", // Polish, Czech, Slovak
        r"^.+\s(ezt )?írta \(időpont:.+\):$",              // Hungarian (Gmail)
        r"^Στις\s.+\sέγραψε:$",                            // Greek
        r"^Pe\s.+\sa scris:$",                             // Romanian
        r"^.+\sнаписал(а|\(а\))?:$",                       // Russian
        r"^.+\s(написав|написала|пише):$",                 // Ukrainian
        r"^Vào\s.+\sđã viết:$",                            // Vietnamese
        r"^Pada\s.+\smenulis:$",                           // Indonesian
        r"^在.+写道[：:]$",                                // Chinese
        r"^20\d\d\.\s?.+작성:$",                           // Korean
        r"^20\d\d/.+のメッセージ:$",                       // Japanese
        r"^.*(19|20)\d\d.*\d[:.]\d\d.*<[^<>\s]+@[^<>\s]+>:$", // a date and time, then the sender: Gmail's ISO form, Russian, Hebrew, Arabic
    ]
    .iter()
    .map(|p| Regex::new(p).expect("quote header patterns are valid"))
    .collect()
});

/// A header framed in dashes, as Zoho, Zimbra and Android clients write it ("---- On …
/// wrote ----", "---- Coach Mike wrote ----", "- Le … a écrit :").
static FRAMED_HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^-+\s*(.+?)\s*(-+)?$").expect("the framed header pattern is valid"));
/// What a header framed in dashes may say without the usual form: "NAME wrote".
static FRAMED_WROTE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^.+\s(wrote|sent):?$").expect("the framed wrote pattern is valid"));

/// Whether `text`, the lines of a possible header joined, is one.
fn is_quote_header(text: &str) -> bool {
    // A wrap inside "<address>" left a space beside its brackets.
    let text = text.replace("< ", "<").replace(" >", ">");
    if QUOTE_HEADERS.iter().any(|r| r.is_match(&text)) {
        return true;
    }
    let Some(framed) = FRAMED_HEADER.captures(&text) else {
        return false;
    };
    let inner = framed.get(1).map_or("", |m| m.as_str());
    let closed = framed.get(2).is_some();
    let with_colon = if inner.ends_with(':') {
        inner.to_owned()
    } else {
        format!("{inner}:")
    };
    (QUOTE_HEADERS.iter().any(|r| r.is_match(inner)) || (closed && QUOTE_HEADERS.iter().any(|r| r.is_match(&with_colon))))
        || (closed && FRAMED_WROTE.is_match(inner))
}

/// How many lines (1–3) starting at `i` make one quote header, if they do. A line that is
/// the member's own ("On Monday I can come.") is not swallowed by a header below it: the
/// lines after the first must not make a header without it, unless the client wrapped the
/// header inside its sender ("… Coach Mike" over "<coach@gym.example> kirjoitti:").
fn quote_header_at(lines: &[&str], i: usize) -> Option<usize> {
    let joined = |from: usize, len: usize| -> String {
        let parts: Vec<String> = lines[from..from + len].iter().map(|l| normalize(l)).collect();
        parts.join(" ")
    };
    for len in 1..=3 {
        let line = normalize(lines.get(i + len - 1)?);
        // A `>` line goes on a header only as the end of an address a client wrapped ("<a@b.c" over ">:").
        let closes_address = len > 1 && line.starts_with('>') && joined(i, len - 1).rfind('<') > joined(i, len - 1).rfind('>');
        if line.is_empty() || (line.starts_with('>') && !closes_address) {
            return None;
        }
        if is_quote_header(&joined(i, len)) {
            let wrapped_sender = |k: usize| {
                let next = normalize(lines[i + k]);
                next.starts_with('<') || next.starts_with('(') || normalize(lines[i + k - 1]).ends_with(['<', '('])
            };
            return (1..len)
                .all(|k| wrapped_sender(k) || !is_quote_header(&joined(i + k, len - k)))
                .then_some(len);
        }
    }
    None
}

static BANNER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(-{2,}\s*(original message|forwarded message|message d'origine|message transféré|ursprüngliche nachricht|weitergeleitete nachricht|mensaje original|mensaje reenviado|messaggio originale|messaggio inoltrato|oorspronkelijk bericht|doorgestuurd bericht|oprindelig meddelelse|oprindelig besked|opprinnelig melding|ursprungligt meddelande|wiadomość oryginalna|mensagem original|reply message|antwort nachricht|alkuperäinen viesti|původní zpráva|eredeti üzenet|mesaj original|Исходное сообщение|Αρχικό μήνυμα)(\s*[-:*].*)?|begin forwarded message:|_{20,}|\*?-{20,}\*?)$",
    )
    .expect("the banner pattern is valid")
});

fn is_banner(line: &str) -> bool {
    BANNER.is_match(line)
}

/// The first field of a mail client's header block over the earlier mail.
static FROM_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\*?(From|De|De la|Van|Da|Von|Od|Fra|Från|Lähettäjä|Kimden|Feladó|Από|От|Від|Từ|发件人|寄件者|寄件人|差出人|보낸 사람)\s?[:：]\*?\s*\S")
        .expect("the From pattern is valid")
});

/// The other fields of such a block.
static HEADER_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\*?(Sent|Date|To|Subject|Cc|Envoyé|Date|À|A|Objet|Verzonden|Aan|Onderwerp|Inviato|Oggetto|Gesendet|An|Betreff|Datum|Wysłano|Data|Do|Temat|Enviado|Enviada|Para|Asunto|Fecha|Assunto|Sendt|Til|Emne|Skickat|Till|Ämne|Lähetetty|Vastaanottaja|Aihe|Gönderildi|Kime|Konu|Dato|Odesláno|Komu|Předmět|Elküldve|Címzett|Tárgy|Αποστολή|Προς|Θέμα|Trimis|Către|Subiect|Đã gửi|Đến|Chủ đề|Отправлено|Надіслано|Кому|Тема|发送时间|收件人|主题|日期|寄件日期|收件者|主旨|送信日時|宛先|件名|보낸 날짜|받는 사람|제목)\s?[:：]\*?(\s|$)",
    )
    .expect("the header field pattern is valid")
});

/// A `From:` line that opens a header block: it names an address, or header fields follow.
fn header_block_at(lines: &[&str], i: usize) -> bool {
    let line = normalize(lines[i]);
    if !FROM_FIELD.is_match(&line) {
        return false;
    }
    line.contains('@')
        || lines[i + 1..]
            .iter()
            .map(|l| normalize(l))
            .filter(|l| !l.is_empty())
            .take(4)
            .any(|l| HEADER_FIELD.is_match(&l))
}

/// A line that is, all of it, a device or client signature ("Sent from my iPhone"), and not a
/// sentence that happens to start the same way ("Sent from my desk, so…"): the phrase first
/// in most languages, the device first in some ("iPhoneから送信"). (Case is ignored in ASCII
/// letters only: the others are written as the clients write them.)
static DEVICE_SIGNATURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^(sent from (my|mail|yahoo|outlook|samsung|gmail|proton|aol)|sent via|get outlook for",
        r"|enviado desde mi|enviado do meu|enviat des del meu|envoyé de mon|envoyé depuis mon|envoyé à partir de",
        r"|télécharger outlook pour|von meinem|gesendet von|verzonden (vanaf|met) mijn|verstuurd vanaf mijn",
        r"|inviato da|skickat från min|sendt fra min|wysłane z|lähetetty|odesláno z|odoslané z|küldve",
        r"|trimis de pe|gửi từ|dikirim dari|Отправлено с|Отправлено из|Надіслано з|Αποστολή από)(\s|$)[^,;:!?]{0,40}$",
        r"|^[^,;:!?\s]{1,30}('[a-zçğıöşü]+)?(から送信|에서 보냄|dan gönderildi)$|^发自我的[^,;:!?]{0,30}$",
    ))
    .expect("the device signature pattern is valid")
});

/// A client's link glued to its signature ("Outlook für Android<https://aka.ms/…>").
static TRAILING_LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\s*<[a-z]+://[^<>\s]*>$").expect("the trailing link pattern is valid"));

fn is_signature(line: &str) -> bool {
    let line = TRAILING_LINK.replace(line, "");
    // "--" and the short rules some clients and members draw above a signature ("—————").
    let rule = line.chars().count() >= 2 && line.chars().all(|c| matches!(c, '-' | '—' | '–' | '_'));
    rule || (line.split_whitespace().count() <= 8 && DEVICE_SIGNATURE.is_match(&line))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each `.txt` fixture in `fixtures/replies/` (README.md says where they come from) is a body, a line `==== member wrote ====`, and what
    /// must be kept; `==== original kept ====` at the end asks for `original` too.
    #[test]
    fn every_reply_fixture_keeps_what_the_member_wrote_and_nothing_else() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/replies");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("the fixtures folder")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.sort();
        assert!(files.len() >= 30, "{} fixtures", files.len());
        let mut failures = Vec::new();
        for path in &files {
            let fixture = std::fs::read_to_string(path).expect("a fixture");
            let (body, expected) = fixture.split_once("==== member wrote ====\n").expect("a separator");
            let (expected, wants_original) = match expected.split_once("==== original kept ====") {
                Some((text, _)) => (text, true),
                None => (expected, false),
            };
            let got = extract(body);
            if got.text != expected.trim() || got.original.is_some() != wants_original {
                failures.push(format!(
                    "{}:\n--- expected ---\n{}\n--- got ---\n{}\n--- original kept: {} ---",
                    path.display(),
                    expected.trim(),
                    got.text,
                    got.original.is_some()
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} fixtures:\n{}",
            failures.len(),
            files.len(),
            failures.join("\n\n")
        );
    }

    #[test]
    fn nothing_left_gives_the_whole_body() {
        let got = extract("> We miss you\n> come back\n");
        assert_eq!(got.text, "");
        assert_eq!(got.original, None, "nothing unquoted was written");
        let got = extract("-- \nI will be back on Monday at the 6 am class\n");
        assert_eq!(got.text, "");
        assert_eq!(got.original.as_deref(), Some("--\nI will be back on Monday at the 6 am class"));
        let got = extract("Hi\n--\nSee you Monday!\n\nOn Mon, Coach <c@gym.example> wrote:\n> To stop receiving these: unsubscribe\n");
        assert_eq!(
            got.original.as_deref(),
            Some("Hi\n--\nSee you Monday!"),
            "the quoted history is not the member's"
        );
    }

    /// What the gym sent (the task's outbound mail) and the footer the mailer put under it.
    const OURS: &str = "Hi Dana,\n\nWe haven't seen you at the 6am class for a couple of weeks and wanted to check in. \
        Is anything getting in the way? If you'd like, we can find a time that works better.\n\nCoach Mike\nCrossFit Renegade";
    const FOOTER: &str = "--\nTo stop receiving these emails: https://gym.example/unsubscribe?token=abc123";

    /// `text` re-wrapped at `width` columns, as a plain-text client sends it.
    fn wrapped(text: &str, width: usize) -> String {
        text.split('\n')
            .map(|paragraph| {
                let mut lines: Vec<String> = vec![String::new()];
                for word in paragraph.split_whitespace() {
                    let last = lines.last_mut().expect("a line");
                    if !last.is_empty() && last.len() + word.len() + 1 > width {
                        lines.push(word.to_owned());
                    } else {
                        if !last.is_empty() {
                            last.push(' ');
                        }
                        last.push_str(word);
                    }
                }
                lines.join("\n")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn quoted(text: &str) -> String {
        text.lines()
            .map(|l| format!("> {l}").trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Labelled replies, quoted the way real clients quote: what the member wrote, and whether
    /// the stop rule may read a stop in it.
    #[test]
    fn the_gyms_own_words_are_taken_out_however_they_are_quoted() {
        let sent = format!("{OURS}\n\n{FOOTER}");
        let cases: Vec<(&str, String, &str)> = vec![
            (
                "gmail",
                format!(
                    "ok\n\nOn Tue, Nov 3, 2026 at 9:00 AM CrossFit Renegade <coach@gym.example> wrote:\n\n{}\n",
                    quoted(&sent)
                ),
                "ok",
            ),
            (
                "outlook desktop",
                format!(
                    "Thanks!\n\n-----Original Message-----\nFrom: CrossFit Renegade <coach@gym.example>\nSent: Tuesday, November 3, 2026 9:00 AM\n\
                     To: Dana <dana@example.com>\nSubject: Checking in\n\n{}\n",
                    wrapped(&sent, 76)
                ),
                "Thanks!",
            ),
            (
                "apple mail",
                format!(
                    "ok\n\n> On 3 Nov 2026, at 09:00, CrossFit Renegade <coach@gym.example> wrote:\n> \n{}\n",
                    quoted(&sent)
                ),
                "ok",
            ),
            (
                "outlook mobile",
                format!(
                    "ok\n\nGet Outlook for iOS\n________________________________\nFrom: CrossFit Renegade <coach@gym.example>\n\
                     Sent: Tuesday, November 3, 2026 9:00:00 AM\nTo: dana@example.com\nSubject: Checking in\n\n{sent}\n"
                ),
                "ok",
            ),
            (
                "plain text, a header the reader does not know, no quote marks, re-wrapped",
                format!("ok\n\nCrossFit Renegade kirjutas 3.11.2026 09:00:\n\n{}\n", wrapped(&sent, 40)),
                "ok",
            ),
            ("no header at all", format!("thanks!\n\n{}\n", wrapped(&sent, 60)), "thanks!"),
            ("the footer alone, the message not known", format!("ok\n\n{FOOTER}\n"), "ok"),
        ];
        for (client, body, expected) in cases {
            let got = extract_answering(&body, &[OURS]);
            assert_eq!(got.text, expected, "{client}:\n{body}");
            assert_eq!(got.original, None, "{client}: nothing else was the member's");
            assert!(!crate::conversation::opt_out::is_opt_out(&got.text), "{client}: not a stop");
        }
    }

    #[test]
    fn answers_between_the_gyms_unquoted_lines_keep_the_members_words_and_their_questions() {
        let body = "Hi Dana,\n\nWe haven't seen you at the 6am class for a couple of weeks and wanted to check in.\n\
                    Is anything getting in the way?\nWork has been crazy, sorry.\n\
                    If you'd like, we can find a time that works better.\nThe 7pm would be better for me.\n\n\
                    Coach Mike\nCrossFit Renegade\n--\nTo stop receiving these emails: https://gym.example/u/abc\n";
        let got = extract_answering(body, &[OURS]);
        assert_eq!(
            got.text,
            "Work has been crazy, sorry.\n> If you'd like, we can find a time that works better.\nThe 7pm would be better for me."
        );
        // Outlook desktop: answers written below its header block, inside the gym's message.
        let body = format!(
            "See my answers below.\n\n-----Original Message-----\nFrom: CrossFit Renegade <coach@gym.example>\n\
             Sent: Tuesday, November 3, 2026 9:00 AM\nTo: Dana\nSubject: Checking in\n\n{}\nJust busy, I'll be back next week.\n\n\
             Coach Mike\nCrossFit Renegade\n\n{FOOTER}\n",
            "Hi Dana,\n\nWe haven't seen you at the 6am class for a couple of weeks and wanted to check in. \
             Is anything getting in the way? If you'd like, we can find a time that works better."
        );
        let got = extract_answering(&body, &[OURS]);
        let unquoted: Vec<&str> = got.text.lines().filter(|l| !l.is_empty() && !l.starts_with('>')).collect();
        assert_eq!(
            unquoted,
            ["See my answers below.", "Just busy, I'll be back next week."],
            "{}",
            got.text
        );
    }

    #[test]
    fn the_members_own_short_words_are_kept_even_when_the_gym_used_them_too() {
        let got = extract_answering(&format!("Thank you\n\n{}\n", quoted(OURS)), &["Thank you for coming in!"]);
        assert_eq!(got.text, "Thank you");
        let got = extract_answering(
            &format!("\u{1f44d}\n\nCrossFit kirjutas 3.11.2026 09:00:\n{OURS}\n{FOOTER}\n"),
            &[OURS],
        );
        assert_eq!(
            got.text, "\u{1f44d}",
            "a thumbs-up is the member's, not a rule over the gym's words"
        );
        let got = extract_answering("See you at the 6am class\n", &[OURS]);
        assert_eq!(got.text, "See you at the 6am class", "five of the gym's words are not its message");
    }

    #[test]
    fn quote_headers_in_european_languages_are_recognised() {
        for header in [
            "Am Di., 3. Nov. 2026 um 09:00 Uhr schrieb CrossFit Renegade <coach@gym.example>:",
            "Le mar. 3 nov. 2026 à 09:00, CrossFit Renegade <coach@gym.example> a écrit :",
            "El mar, 3 nov 2026 a las 9:00, CrossFit Renegade (<coach@gym.example>) escribió:",
            "Op di 3 nov. 2026 om 09:00 schreef CrossFit Renegade <coach@gym.example>:",
            "Il giorno mar 3 nov 2026 alle ore 09:00 CrossFit Renegade <coach@gym.example> ha scritto:",
            "Em ter., 3 de nov. de 2026 às 09:00, CrossFit Renegade <coach@gym.example> escreveu:",
            "Den tis 3 nov. 2026 kl 09:00 skrev CrossFit Renegade <coach@gym.example>:",
            "CrossFit Renegade <coach@gym.example> skrev:",
            "tir. 3. nov. 2026 kl. 09.00 skrev CrossFit Renegade <coach@gym.example>:",
            "wt., 3 lis 2026 o 09:00 CrossFit Renegade <coach@gym.example> napisał(a):",
            "CrossFit Renegade <coach@gym.example> napisał(a):",
            "In data 3 novembre 2026 09:00:12 CET, CrossFit Renegade <coach@gym.example> ha scritto:",
            "CrossFit Renegade <coach@gym.example> ha scritto:",
            "CrossFit Renegade <coach@gym.example> schreef op 3 november 2026 09:00:",
            "El 03/11/26 a les 9:00, CrossFit Renegade ha escrit:",
            "A ter., 3/11/2026, 09:00, CrossFit Renegade <coach@gym.example> escreveu:",
            "No dia 3 de novembro de 2026, às 09:00, CrossFit Renegade <coach@gym.example> escreveu:",
        ] {
            let got = extract(&format!("Danke, bis Montag!\n\n{header}\n> Hi Dana,\n> we miss you.\n"));
            assert_eq!(got.text, "Danke, bis Montag!", "{header}");
        }
    }

    #[test]
    fn banners_in_letters_beyond_ascii_are_recognised() {
        for banner in [
            "-----Исходное сообщение-----",
            "-------- Αρχικό μήνυμα --------",
            "-----Původní zpráva-----",
            "-------- Oprindelig besked --------",
            "----- Original Message -----",
        ] {
            assert!(is_banner(banner), "{banner}");
        }
        assert!(!is_banner("-- original message is below, sorry"), "a sentence after a dash");
    }

    #[test]
    fn long_replies_are_capped() {
        let body = "word ".repeat(5_000);
        assert_eq!(extract(&body).text.chars().count(), MAX_REPLY_CHARS);
    }
}

//! Checks on free text that comes from outside — an owner's settings, a member event, a
//! draft — before anything stores them (numbers: `kernel::number`). A value that reaches a mail header (a
//! display name, an account name, a member's name, a subject) must be one line: a line break
//! there would let the sender write headers of their own. The mail builder strips line breaks again
//! (`openloop_aws::ses`); these checks refuse them first, with a 422 naming the field.

use crate::kernel::error::InvalidInput;

/// Whether `c` may not appear in a one-line value: control characters (CR, LF, tab, NUL…)
/// and Unicode's own line and paragraph separators. The mail builder uses it too.
pub fn breaks_a_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `value` is one line of text.
pub fn single_line(code: &'static str, field: &str, value: &str) -> Result<(), InvalidInput> {
    if value.chars().any(breaks_a_line) {
        return Err(InvalidInput::new(
            code,
            format!("{field} must be one line of text: no line breaks or control characters"),
        ));
    }
    Ok(())
}

/// `value` is at most `max` characters, with no control characters but line breaks and tabs
/// (free text an owner or a member event writes: a note, a reason).
pub fn bounded_text(code: &'static str, field: &str, value: &str, max: usize) -> Result<(), InvalidInput> {
    if value.chars().count() > max {
        return Err(InvalidInput::new(code, format!("{field} must be at most {max} characters")));
    }
    if value.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        return Err(InvalidInput::new(code, format!("{field} must not hold control characters")));
    }
    Ok(())
}

/// `value` is an ISO 4217 currency code: three ASCII letters (`USD`, `eur`).
pub fn currency_code(value: &str) -> Result<(), InvalidInput> {
    if value.len() != 3 || !value.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(InvalidInput::new(
            "invalid_event",
            "currency must be an ISO 4217 code of three letters, such as USD",
        ));
    }
    Ok(())
}

/// A phone number in E.164: `+`, then 8 to 15 digits, the first not 0.
pub fn is_e164(phone: &str) -> bool {
    let Some(digits) = phone.strip_prefix('+') else {
        return false;
    };
    (8..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) && !digits.starts_with('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currencies_are_three_letters_and_free_text_is_bounded() {
        for good in ["USD", "eur", "GBP"] {
            assert!(currency_code(good).is_ok(), "{good}");
        }
        for bad in ["", "US", "USDD", "U$D", "ÉUR", &"X".repeat(5_000)] {
            assert!(currency_code(bad).is_err(), "{bad}");
        }
        assert!(bounded_text("c", "note", "two\nlines\tok", 20).is_ok());
        assert!(bounded_text("c", "note", &"x".repeat(21), 20).is_err());
        assert!(bounded_text("c", "note", "nul\u{0}", 20).is_err());
    }

    #[test]
    fn line_breaks_and_controls_are_refused_and_ordinary_names_pass() {
        for bad in [
            "G\r\nReply-To: a@evil.example",
            "a\nb",
            "a\rb",
            "tab\there",
            "nul\0",
            "line\u{2028}sep",
            "bell\u{7}",
        ] {
            assert!(single_line("invalid_profile", "display_name", bad).is_err(), "{bad:?}");
        }
        for good in ["CrossFit Renegade", "Zoë's Gym — Tribeca", "健身房", ""] {
            assert!(single_line("invalid_profile", "display_name", good).is_ok(), "{good:?}");
        }
    }
}

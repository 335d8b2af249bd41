//! Checks on free text and numbers that come from outside — an owner's settings, a member
//! event, a draft — before anything stores them. A value that reaches a mail header (a
//! display name, an account name, a member's name, a subject) must be one line: a line break
//! there would let the sender write headers of their own. Numbers are bounded to what a gym
//! can mean and what the store can hold. The mail builder strips line breaks again
//! (`openloop_aws::ses`); these checks refuse them first, with a 422 naming the field.

use crate::kernel::error::InvalidInput;

/// The largest amount of money one value may name (a month's membership, a payment, a plan
/// price): far above any gym's, far below what DynamoDB's numbers can hold.
pub const MAX_MONEY: f64 = 100_000.0;

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

/// `value` is an amount of money in 0..=[`MAX_MONEY`].
pub fn money(code: &'static str, field: &str, value: f64) -> Result<(), InvalidInput> {
    if !(value.is_finite() && (0.0..=MAX_MONEY).contains(&value)) {
        return Err(InvalidInput::new(code, format!("{field} must be a number from 0 to {MAX_MONEY}")));
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

    #[test]
    fn money_is_bounded_to_what_a_gym_means_and_the_store_holds() {
        for bad in [-1.0, 1e126, f64::NAN, f64::INFINITY, MAX_MONEY + 0.01] {
            assert!(money("invalid_avg_membership_price", "avg_membership_price", bad).is_err(), "{bad}");
        }
        for good in [0.0, 149.99, MAX_MONEY] {
            assert!(
                money("invalid_avg_membership_price", "avg_membership_price", good).is_ok(),
                "{good}"
            );
        }
    }
}

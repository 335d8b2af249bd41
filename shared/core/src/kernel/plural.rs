//! A count with its noun, as an owner reads it: "1 day", "3 days" — never "day(s)"; and a sum
//! of money as they write it: "$1,250", "$1,250.00", "1,250.00 EUR".

/// `n` and the noun in the number it takes: `count(1, "day", "days")` is "1 day".
pub fn count(n: impl Into<i64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`count`] for a `usize`.
pub fn count_of(n: usize, one: &str, many: &str) -> String {
    count(i64::try_from(n).unwrap_or(i64::MAX), one, many)
}

/// Whole digits in groups of three: 1250 → "1,250".
pub fn grouped(whole: u64) -> String {
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A sum in whole dollars, as the owner's lists show a monthly value: "$1,250".
pub fn dollars(amount: f64) -> String {
    let whole = amount.round();
    let sign = if whole < 0.0 { "-" } else { "" };
    format!("{sign}${}", grouped(whole.abs() as u64))
}

/// A sum with its cents in its currency: "$1,250.00" for dollars, else "1,250.00 EUR".
pub fn amount(amount: f64, currency: &str) -> String {
    let cents = (amount.abs() * 100.0).round() as u64;
    let sign = if amount < 0.0 { "-" } else { "" };
    let figure = format!("{}.{:02}", grouped(cents / 100), cents % 100);
    match currency.trim().to_ascii_uppercase().as_str() {
        "USD" | "" => format!("{sign}${figure}"),
        code => format!("{sign}{figure} {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "day", "days"), "1 day");
        assert_eq!(count(0, "day", "days"), "0 days");
        assert_eq!(count_of(3, "reply", "replies"), "3 replies");
    }

    #[test]
    fn money_reads_as_an_owner_writes_it() {
        assert_eq!(dollars(1250.0), "$1,250");
        assert_eq!(dollars(189.4), "$189");
        assert_eq!(dollars(1_234_567.0), "$1,234,567");
        assert_eq!(amount(1250.0, "USD"), "$1,250.00");
        assert_eq!(amount(150.5, "usd"), "$150.50");
        assert_eq!(amount(99.0, "EUR"), "99.00 EUR");
    }
}

//! A count with its noun, as an owner reads it: "1 day", "3 days" — never "day(s)".

/// `n` and the noun in the number it takes: `count(1, "day", "days")` is "1 day".
pub fn count(n: impl Into<i64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`count`] for a `usize`.
pub fn count_of(n: usize, one: &str, many: &str) -> String {
    count(i64::try_from(n).unwrap_or(i64::MAX), one, many)
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
}

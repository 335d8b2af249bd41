//! The one rule for the days and months the API takes (`?date=`, `?from=`, `?to=`,
//! `?month=`): written exactly as `YYYY-MM-DD` or `YYYY-MM` and within [`FIRST_DAY`] ..=
//! [`LAST_DAY`], else `422` naming the field. The bounds keep every day the code derives from
//! one (the day after, the week before, the month's end in a time zone) representable, so
//! `date=9999-12-31` is refused instead of overflowing, and `date=0000-01-01` too.

use jiff::civil::{Date, date};

use crate::kernel::error::InvalidInput;

/// The first day the API takes.
pub const FIRST_DAY: Date = date(2000, 1, 1);
/// The last day the API takes.
pub const LAST_DAY: Date = date(2099, 12, 31);

/// `raw` as a day (`YYYY-MM-DD`, in bounds); `invalid_date` naming `name` otherwise.
pub fn parse_day(name: &str, raw: &str) -> Result<Date, InvalidInput> {
    let refused = || {
        InvalidInput::new(
            "invalid_date",
            format!("{name} must be a date YYYY-MM-DD between {FIRST_DAY} and {LAST_DAY}, not {raw:?}"),
        )
    };
    let day = raw.parse::<Date>().ok().filter(|d| d.to_string() == raw).ok_or_else(refused)?;
    in_bounds(day).then_some(day).ok_or_else(refused)
}

/// Whether `day` is one the API takes.
pub fn in_bounds(day: Date) -> bool {
    (FIRST_DAY..=LAST_DAY).contains(&day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_taken_only_as_written_and_within_the_bounds() {
        assert_eq!(parse_day("date", "2026-11-03"), Ok(date(2026, 11, 3)));
        for raw in [
            "9999-12-31",
            "0000-01-01",
            "1999-12-31",
            "2100-01-01",
            "2026-11-3",
            "2026-02-30",
            " 2026-11-03",
            "+2026-11-03",
        ] {
            let refused = parse_day("date", raw).expect_err(raw);
            assert_eq!(refused.code, "invalid_date", "{raw}");
            assert!(refused.message.contains("date must be"), "{raw}: {}", refused.message);
        }
        assert!(parse_day("date", "2000-01-01").is_ok() && parse_day("date", "2099-12-31").is_ok());
    }
}

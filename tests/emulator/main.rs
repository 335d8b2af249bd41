//! Tests against the AWS emulator (moto), started by `make test`. One binary, every test
//! isolated by its own table/queue names and accounts.

mod analysis;
mod categories;
mod concurrency;
mod conversations;
mod fixtures;
mod gates;
mod mail_events;
mod outcomes;
mod payment_recovery;
mod rails;
mod refusals;
mod ses_failure;
mod store_conformance;
mod stress;
mod walkthroughs;

/// 09:00 in New York (14:00 UTC in winter, 13:00 in summer — inside the send window either
/// way) on the first day after the test clock's start that is at least `days_ahead` away.
pub fn morning(days_ahead: i64) -> jiff::Timestamp {
    let day = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .checked_add(jiff::Span::new().days(days_ahead))
        .unwrap_or_else(|e| panic!("{e}"));
    day.at(14, 0, 0, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap_or_else(|e| panic!("{e}"))
        .timestamp()
}

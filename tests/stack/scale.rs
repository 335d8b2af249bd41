//! The bench's scale figures checked where they cannot drift: the cost model prices every
//! section of `infra/aws-prices.toml` from what a simulated gym did (in memory, a few days),
//! and the tick's constants hand a backlog of 10,000 due steps out within two minutes.

use openloop_aws::dynamo::StoreUsage;
use openloop_core::kernel::ids::TaskId;
use openloop_core::kernel::limits::DUE_INDEX_SHARDS;
use openloop_core::task::work::due_shard;
use openloop_tests::scale::{self, Measured, Unit};

/// Every operation one read unit, one write unit and 10 ms: what the emulator measures in
/// `make bench`, made small and equal, so each line's figure comes from the month's counts.
fn one_of_each() -> Unit {
    let m = Measured {
        usage: StoreUsage {
            requests: 1,
            writes: 1,
            read_units: 1,
            write_units: 1,
        },
        ms: 10.0,
    };
    Unit {
        create: m,
        first_touch: m,
        second_touch: m,
        exhaustion: m,
        idle_tick: m,
        analysis: m,
        analysis_members: 20,
        attribution: m,
        reply: m,
        signal: m,
    }
}

/// Given a 20-member gym on autopilot for three simulated days (texts on, members answering
/// and checking in), the month's counts give every priced section of `infra/aws-prices.toml`
/// a line of the bill, each above nothing, and the model's calls are counted apart from it.
#[tokio::test]
async fn the_cost_model_prices_every_line() {
    let month = scale::simulate_month(20, 3).await.unwrap_or_else(|e| panic!("{e}"));
    for (what, count) in [
        ("tasks", month.tasks),
        ("first touches", month.first_touches),
        ("mails", month.mails),
        ("texts", month.texts),
        ("text segments", month.text_segments),
        ("replies", month.replies),
        ("check-ins", month.webhooks),
        ("model calls", month.model_calls),
    ] {
        assert!(count > 0, "the simulated days made no {what}: {month:?}");
    }
    let prices = scale::prices().unwrap_or_else(|e| panic!("{e}"));
    let lambda = scale::lambda_setup().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        lambda.scheduled_a_month >= 30.0 * 24.0 * 60.0,
        "the minute tick is a schedule: {lambda:?}"
    );
    let bill = scale::bill(&one_of_each(), &month, &prices, &lambda, 10_000);
    for line in &bill {
        assert!(line.dollars > 0.0, "{} ({}) costs nothing: {month:?}", line.what, line.count);
    }
    for section in scale::priced_sections().unwrap_or_else(|e| panic!("{e}")) {
        assert!(
            bill.iter().any(|line| line.section == section),
            "[{section}] of aws-prices.toml is on no line of the bill"
        );
    }
    assert!(scale::model_calls_a_month(&month) > 0.0);
}

/// Given 10,000 due steps spread over the due index's shards as task ids spread them, the
/// tick's constants (its bound, shards, pages a shard) hand them all out within two runs of
/// the minute tick, even at items of 4 KB (the largest the cost model assumes): 1 MB pages.
#[test]
fn a_backlog_of_ten_thousand_drains_within_two_minutes() {
    let now = jiff::Timestamp::now();
    let shards: Vec<u32> = (0..10_000).map(|_| due_shard(&TaskId::generate(now), DUE_INDEX_SHARDS)).collect();
    let (per_run, runs) = scale::drain_runs(&shards, 1_048_576 / 4_096);
    assert!(per_run >= 10_000, "one tick hands out {per_run}");
    assert!(runs <= 2, "10,000 due steps take {runs} tick runs of a minute");
}

/// Given eight accounts in four time zones whose nights' scans make three tasks each, the
/// engine plans every first touch (none held), and the hottest key's second carries at least
/// one first touch's writes to its account; SES is handed each touch's mail at its own second
/// (the jitter in seconds): forty accounts' 120 touches fall on more than 100 seconds (whole
/// minutes would give at most 64: 16 a zone).
#[tokio::test]
async fn a_morning_of_first_touches_is_counted_by_key_and_second() {
    let keys = scale::hottest_key(8, 3, 30).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(keys.len(), 2, "an account's partition and a due shard: {keys:?}");
    assert!(keys[0].1 >= 30, "{keys:?}");
    assert!(
        keys.iter().any(|(key, units)| key.starts_with("GSI1 DUE#") && *units >= 4),
        "{keys:?}"
    );
    let morning = scale::morning(40, 3, 30).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(morning.touches, 120, "{morning:?}");
    assert!(morning.seconds > 100 && morning.ses_peak <= 3, "{morning:?}");
}

//! The bench's scale figures (`make bench`): what a gym costs a month from counted requests
//! and the dated unit prices of `infra/aws-prices.toml`, and the hottest partition key of
//! 1,000 accounts' mornings.
//!
//! The month's activity (tasks, touches, closes, mails) comes from a simulated month of a
//! gym on the in-memory local runtime; what each step costs in DynamoDB requests, units and
//! time was measured on the emulator by the bench's step table. Figures are estimates:
//! DynamoDB units assume items of at most 4 KB read and 1 KB written; Lambda time is the
//! emulator's, slower than DynamoDB's.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use openloop_aws::dynamo::StoreUsage;
use serde::Deserialize;

/// `infra/aws-prices.toml`.
#[derive(Clone, Debug, Deserialize)]
pub struct Prices {
    pub as_of: String,
    pub dynamodb: DynamoPrices,
    pub lambda: LambdaPrices,
    pub sqs: PerMillion,
    pub eventbridge: EventPrices,
    pub ses: SesPrices,
    pub s3: S3Prices,
}

#[derive(Clone, Debug, Deserialize)]
pub struct DynamoPrices {
    pub source: String,
    pub per_million_read_units: f64,
    pub per_million_write_units: f64,
    pub per_gb_month: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct LambdaPrices {
    pub source: String,
    pub per_million_requests: f64,
    pub per_gb_second: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct PerMillion {
    pub source: String,
    pub per_million_requests: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct EventPrices {
    pub source: String,
    pub per_million_events: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct SesPrices {
    pub source: String,
    pub per_thousand_mails: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct S3Prices {
    pub source: String,
    pub per_thousand_puts: f64,
}

/// The repository's `infra/` folder.
fn infra() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra")
}

/// The price table.
pub fn prices() -> Result<Prices, String> {
    let path = infra().join("aws-prices.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The Lambda memory the template gives the functions (`Globals`' `MemorySize`).
pub fn lambda_memory_mb() -> Result<u64, String> {
    let path = infra().join("template.yaml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("MemorySize:"))
        .and_then(|v| v.split('#').next())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{}: no MemorySize", path.display()))
}

/// One measured operation: its DynamoDB usage and its time on the emulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measured {
    pub usage: StoreUsage,
    pub ms: f64,
}

/// What the bench measured per operation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unit {
    pub create: Measured,
    pub first_touch: Measured,
    pub second_touch: Measured,
    pub exhaustion: Measured,
    /// A tick with nothing due (the platform's; shared by every gym).
    pub idle_tick: Measured,
    /// One risk scan of one account of `analysis_members` members (a day's creations used).
    pub analysis: Measured,
    pub analysis_members: usize,
    /// One attribution run with a gym's watched tasks.
    pub attribution: Measured,
}

/// What a simulated month of one gym did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Month {
    pub members: usize,
    pub days: i64,
    pub tasks: usize,
    pub first_touches: usize,
    pub follow_ups: usize,
    pub closed: usize,
    pub mails: usize,
    /// Bytes of the gym's tasks as the API shows them (an item is about as large).
    pub task_bytes: usize,
}

/// One line of the bill.
pub struct Line {
    pub what: &'static str,
    pub count: String,
    pub dollars: f64,
}

/// The gym-month's bill at `gyms` gyms sharing the platform's own schedules (the minute tick,
/// the queues' pollers), scaled to 30 days from the simulated `month.days`.
pub fn bill(unit: &Unit, month: &Month, prices: &Prices, memory_mb: u64, gyms: u64) -> Vec<Line> {
    let scale = 30.0 / month.days as f64;
    let per = |n: usize| n as f64 * scale;
    let steps = [
        (per(month.tasks), unit.create),
        (per(month.first_touches), unit.first_touch),
        (per(month.follow_ups), unit.second_touch),
        (per(month.closed), unit.exhaustion),
        (
            30.0 * 4.0 * month.members as f64 / unit.analysis_members.max(1) as f64,
            unit.analysis,
        ),
        (30.0 * 24.0, unit.attribution),
        (30.0 * 24.0 * 60.0 / gyms as f64, unit.idle_tick),
    ];
    let (mut reads, mut writes, mut gb_seconds) = (0.0, 0.0, 0.0);
    for (n, m) in steps {
        reads += n * m.usage.read_units as f64;
        writes += n * m.usage.write_units as f64;
        gb_seconds += n * m.ms / 1000.0 * memory_mb as f64 / 1024.0;
    }
    let step_count = per(month.tasks) + per(month.first_touches) + per(month.follow_ups) + per(month.closed);
    // Each step is one SQS message (sent, received, deleted) and, at a small gym's rate, one
    // invocation; the schedules add theirs (the tick's shared).
    let invocations = step_count + 30.0 * (4.0 + 24.0) + 30.0 * 24.0 * 60.0 / gyms as f64;
    let sqs = 3.0 * step_count;
    // A year of tasks kept, and the members.
    let stored_gb = (per(month.task_bytes) * 12.0 + month.members as f64 * 2_048.0) / 1e9;
    let m = |v: f64| v / 1e6;
    vec![
        Line {
            what: "DynamoDB reads",
            count: format!("{:.0} read units", reads),
            dollars: m(reads) * prices.dynamodb.per_million_read_units,
        },
        Line {
            what: "DynamoDB writes",
            count: format!("{:.0} write units", writes),
            dollars: m(writes) * prices.dynamodb.per_million_write_units,
        },
        Line {
            what: "DynamoDB storage",
            count: format!("{:.4} GB (a year of tasks)", stored_gb),
            dollars: stored_gb * prices.dynamodb.per_gb_month,
        },
        Line {
            what: "Lambda invocations",
            count: format!("{:.0}", invocations),
            dollars: m(invocations) * prices.lambda.per_million_requests,
        },
        Line {
            what: "Lambda compute",
            count: format!("{:.1} GB-s at {memory_mb} MB", gb_seconds),
            dollars: gb_seconds * prices.lambda.per_gb_second,
        },
        Line {
            what: "SQS",
            count: format!("{:.0} requests", sqs),
            dollars: m(sqs) * prices.sqs.per_million_requests,
        },
        Line {
            what: "EventBridge",
            count: format!("{:.0} events", per(month.closed)),
            dollars: m(per(month.closed)) * prices.eventbridge.per_million_events,
        },
        Line {
            what: "SES",
            count: format!("{:.0} mails", per(month.mails)),
            dollars: per(month.mails) / 1_000.0 * prices.ses.per_thousand_mails,
        },
        Line {
            what: "S3 (inbound mail)",
            count: "0 replies in the simulation".into(),
            dollars: 0.0 * prices.s3.per_thousand_puts,
        },
    ]
}

/// Write units per partition key per second, over 1,000 accounts' mornings: every account
/// in one of four time zones, `touches` first touches each, each planned by the engine's own
/// window rule (`rails::window::first_touch_at`: 8–10 local with the task's jitter) for tasks
/// the night's risk scan made. Each first touch writes `account_units` units to its account's
/// partition (the task, its log, tally, outbound record, the member's ledger, the daily send
/// counter, the bounce window) and moves the task's due-index entry twice (claim, then next
/// step: a delete and a put each) on its shard. Returns the hottest key and its rate.
pub fn hottest_key(accounts: usize, touches: usize, account_units: u64) -> (String, u64) {
    use openloop_core::kernel::ids::MemberId;
    use openloop_core::task::TaskStatus;
    let zones = ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"];
    let night: Timestamp = "2026-11-02T07:00:00Z".parse().unwrap_or_else(|e| panic!("{e}"));
    let mut writes: HashMap<(String, i64), u64> = HashMap::new();
    for a in 0..accounts {
        let mut account = openloop_core::testing::sample_account(night);
        account.settings.timezone = zones[a % zones.len()].into();
        account.settings.send_window_start = 8;
        for t in 0..touches {
            let member = MemberId::parse(&format!("m_{a}_{t}")).unwrap_or_else(|e| panic!("{e}"));
            // The scan makes the night's tasks over an hour, from 02:00 local.
            let tz = account.settings.time_zone();
            let made = night
                .to_zoned(tz.clone())
                .date()
                .at(2, 0, 0, 0)
                .to_zoned(tz)
                .map(|z| z.timestamp())
                .unwrap_or(night)
                + SignedDuration::from_secs((t * 3_600 / touches.max(1)) as i64);
            let task = openloop_core::testing::sample_task_for(account.id, member, TaskStatus::Ready, made);
            let (at, _) = openloop_core::rails::window::first_touch_at(&account.settings, &task, made);
            let second = at.as_second();
            *writes.entry((format!("ACCT#{}", account.id), second)).or_default() += account_units;
            let shard = openloop_core::task::work::due_shard(&task.id, openloop_core::kernel::limits::DUE_INDEX_SHARDS);
            *writes.entry((format!("GSI1 DUE#{shard}"), second)).or_default() += 4;
        }
    }
    writes
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|((key, _), n)| (key, n))
        .unwrap_or_default()
}

//! The bench's scale figures (`make bench`): what a gym costs a month from counted requests
//! and the dated unit prices of `infra/aws-prices.toml`, how fast the tick drains a backlog,
//! and the hottest partition key of 1,000 accounts' mornings.
//!
//! The month's activity (tasks, touches, closes, mails and texts, the members' replies and
//! check-ins, the model's calls) comes from a simulated month of a gym on the in-memory local
//! runtime ([`simulate_month`]); what each step costs in DynamoDB requests, units and time
//! was measured on the emulator by the bench's step table ([`Unit`]); the Lambda memory,
//! architecture and schedules are the template's. Figures are estimates: DynamoDB units
//! assume items of at most 4 KB read and 1 KB written; Lambda time is the emulator's, slower
//! than DynamoDB's.

use std::collections::HashMap;

use jiff::SignedDuration;
use openloop_aws::dynamo::StoreUsage;
use serde::Deserialize;
use serde_json::{Value, json};

use openloop_core::kernel::limits::{DUE_INDEX_SHARDS, TICK_MAX_ITEMS, TICK_MAX_PAGES_PER_SHARD};

/// `infra/aws-prices.toml`.
#[derive(Clone, Debug, Deserialize)]
pub struct Prices {
    pub as_of: String,
    pub region: String,
    pub dynamodb: DynamoPrices,
    pub lambda: LambdaPrices,
    pub sqs: PerMillion,
    pub eventbridge: EventPrices,
    pub ses: SesPrices,
    pub s3: S3Prices,
    pub api_gateway: PerMillion,
    pub sms: SmsPrices,
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
    /// x86_64.
    pub per_gb_second: f64,
    pub per_gb_second_arm64: f64,
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
    pub scheduler_per_million: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct SesPrices {
    pub source: String,
    pub per_thousand_mails: f64,
    pub per_thousand_received: f64,
    pub per_thousand_received_chunks: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct S3Prices {
    pub source: String,
    pub per_thousand_puts: f64,
    pub per_thousand_gets: f64,
    pub per_gb_month: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct SmsPrices {
    pub source: String,
    pub per_segment: f64,
    pub carrier_fee_per_segment: f64,
}

/// The repository's `infra/` folder.
fn infra() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra")
}

fn read_infra(name: &str) -> Result<String, String> {
    let path = infra().join(name);
    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The price table.
pub fn prices() -> Result<Prices, String> {
    toml::from_str(&read_infra("aws-prices.toml")?).map_err(|e| format!("aws-prices.toml: {e}"))
}

/// The price table's sections (`dynamodb`, `lambda`, …): each must be a line of the bill.
pub fn priced_sections() -> Result<Vec<String>, String> {
    let table: toml::Table = toml::from_str(&read_infra("aws-prices.toml")?).map_err(|e| format!("aws-prices.toml: {e}"))?;
    Ok(table.into_iter().filter(|(_, v)| v.is_table()).map(|(k, _)| k).collect())
}

/// What the template says about the functions: each one's memory (its own `MemorySize` or
/// the `Globals`'), the architecture the `Architecture` parameter defaults to, and how often
/// the schedules fire a month.
#[derive(Clone, Debug)]
pub struct LambdaSetup {
    pub global_mb: u64,
    /// Functions (logical ids) with a `MemorySize` of their own.
    pub functions: HashMap<String, u64>,
    pub arm64: bool,
    /// Scheduled invocations in 30 days, all schedules together.
    pub scheduled_a_month: f64,
}

impl LambdaSetup {
    /// The memory of function `logical_id` (`ExecuteFunction`, …).
    pub fn memory_mb(&self, logical_id: &str) -> u64 {
        self.functions.get(logical_id).copied().unwrap_or(self.global_mb)
    }

    pub fn per_gb_second(&self, prices: &LambdaPrices) -> f64 {
        if self.arm64 {
            prices.per_gb_second_arm64
        } else {
            prices.per_gb_second
        }
    }

    pub fn architecture(&self) -> &'static str {
        if self.arm64 { "arm64" } else { "x86_64" }
    }
}

/// `infra/template.yaml`'s Lambda settings (see [`LambdaSetup`]).
pub fn lambda_setup() -> Result<LambdaSetup, String> {
    parse_template(&read_infra("template.yaml")?)
}

fn parse_template(text: &str) -> Result<LambdaSetup, String> {
    let value = |line: &str, key: &str| -> Option<String> {
        let rest = line.trim().strip_prefix(key)?;
        Some(rest.split('#').next().unwrap_or_default().trim().to_owned())
    };
    let mut global_mb = None;
    let mut functions = HashMap::new();
    let mut arm64 = None;
    let mut scheduled = 0.0;
    let (mut section, mut resource) = (String::new(), String::new());
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line.trim_end_matches(':').to_owned();
            continue;
        }
        if line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with(':') {
            resource = line.trim().trim_end_matches(':').to_owned();
            continue;
        }
        if let Some(mb) = value(line, "MemorySize:") {
            let mb: u64 = mb.parse().map_err(|_| format!("template.yaml: MemorySize {mb:?}"))?;
            match section.as_str() {
                "Globals" => global_mb = Some(mb),
                _ => {
                    functions.insert(resource.clone(), mb);
                }
            }
        }
        if section == "Parameters"
            && resource == "Architecture"
            && arm64.is_none()
            && let Some(default) = value(line, "Default:")
        {
            arm64 = Some(default == "arm64");
        }
        if let Some(expression) = value(line, "Schedule:") {
            scheduled += runs_a_month(&expression).ok_or_else(|| format!("template.yaml: schedule {expression:?}"))?;
        }
    }
    Ok(LambdaSetup {
        global_mb: global_mb.ok_or("template.yaml: no MemorySize in Globals")?,
        functions,
        arm64: arm64.ok_or("template.yaml: no Architecture default")?,
        scheduled_a_month: scheduled,
    })
}

/// How often a schedule expression fires in 30 days: `rate(N unit)`, or a `cron(…)` that
/// runs daily, weekly (a day of the week) or monthly (a day of the month).
fn runs_a_month(expression: &str) -> Option<f64> {
    let month = 30.0 * 24.0 * 60.0;
    if let Some(rate) = expression.strip_prefix("rate(").and_then(|r| r.strip_suffix(')')) {
        let (n, unit) = rate.split_once(' ')?;
        let n: f64 = n.parse().ok()?;
        let minutes = match unit.trim_end_matches('s') {
            "minute" => 1.0,
            "hour" => 60.0,
            "day" => 24.0 * 60.0,
            _ => return None,
        };
        return Some(month / (n * minutes));
    }
    let cron = expression.strip_prefix("cron(")?.strip_suffix(')')?;
    let fields: Vec<&str> = cron.split(' ').collect();
    let [_, _, day_of_month, _, day_of_week, _] = fields.as_slice() else {
        return None;
    };
    Some(match (*day_of_month, *day_of_week) {
        ("?" | "*", "?" | "*") => 30.0,
        ("?", _) => 30.0 / 7.0,
        _ => 1.0,
    })
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
    /// A member's mailed reply, received and answered (routing, storing, the next step).
    pub reply: Measured,
    /// A member event (a check-in): accepted, then applied to the member's facts.
    pub signal: Measured,
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
    /// Texts sent and the segments (message parts) they were billed as.
    pub texts: usize,
    pub text_segments: usize,
    /// Members' mailed replies received.
    pub replies: usize,
    /// Member events the gym's system sent (check-ins).
    pub webhooks: usize,
    /// Calls to the model (the offline agent's, counted as the engine counts them).
    pub model_calls: usize,
    /// Bytes of the gym's tasks as the API shows them (an item is about as large).
    pub task_bytes: usize,
}

/// One line of the bill.
pub struct Line {
    /// The price table's section it is priced from.
    pub section: &'static str,
    /// Shown apart from the cost per gym-month: texts, which a gym turns on and pays by the
    /// message part (like the model's calls, counted apart too).
    pub apart: bool,
    pub what: &'static str,
    pub count: String,
    pub dollars: f64,
}

/// The gym-month's bill at `gyms` gyms sharing the platform's own schedules (the minute tick,
/// the hourly and daily runs), scaled to 30 days from the simulated `month.days`.
pub fn bill(unit: &Unit, month: &Month, prices: &Prices, lambda: &LambdaSetup, gyms: u64) -> Vec<Line> {
    let scale = 30.0 / month.days.max(1) as f64;
    let per = |n: usize| n as f64 * scale;
    let gyms = gyms.max(1) as f64;
    let analysis_runs = 30.0 * 4.0 * month.members as f64 / unit.analysis_members.max(1) as f64;
    // (times a month, the operation, the function that runs it)
    let operations = [
        (per(month.tasks), unit.create, "AnalysisFunction"),
        (per(month.first_touches), unit.first_touch, "ExecuteFunction"),
        (per(month.follow_ups), unit.second_touch, "FollowupFunction"),
        (per(month.closed), unit.exhaustion, "FollowupFunction"),
        (analysis_runs, unit.analysis, "AnalysisFunction"),
        (30.0 * 24.0, unit.attribution, "AttributionFunction"),
        (30.0 * 24.0 * 60.0 / gyms, unit.idle_tick, "TickFunction"),
        (per(month.replies), unit.reply, "WebhooksFunction"),
        (per(month.webhooks), unit.signal, "SignalsFunction"),
    ];
    let (mut reads, mut writes, mut gb_seconds) = (0.0, 0.0, 0.0);
    for (n, m, function) in operations {
        reads += n * m.usage.read_units as f64;
        writes += n * m.usage.write_units as f64;
        gb_seconds += n * m.ms / 1000.0 * lambda.memory_mb(function) as f64 / 1024.0;
    }
    let steps = per(month.first_touches) + per(month.follow_ups) + per(month.closed);
    // Each step is one SQS message (sent, received, deleted) and, at a small gym's rate, one
    // invocation; a reply one invocation; a member event two (the webhook, then its signal
    // off the queue); the schedules' invocations are shared by every gym.
    let invocations = steps + per(month.replies) + 2.0 * per(month.webhooks) + lambda.scheduled_a_month / gyms;
    let sqs = 3.0 * (steps + per(month.webhooks));
    // A year of tasks kept, and the members.
    let stored_gb = (per(month.task_bytes) * 12.0 + month.members as f64 * 2_048.0) / 1e9;
    // Received mail kept in the inbound bucket for a year, about 8 KB each.
    let mail_gb = per(month.replies) * 12.0 * 8_192.0 / 1e9;
    let events = per(month.closed);
    let schedules = lambda.scheduled_a_month / gyms;
    let segments = per(month.text_segments);
    let m = |v: f64| v / 1e6;
    vec![
        Line {
            section: "dynamodb",
            apart: false,
            what: "DynamoDB reads",
            count: format!("{reads:.0} read units"),
            dollars: m(reads) * prices.dynamodb.per_million_read_units,
        },
        Line {
            section: "dynamodb",
            apart: false,
            what: "DynamoDB writes",
            count: format!("{writes:.0} write units"),
            dollars: m(writes) * prices.dynamodb.per_million_write_units,
        },
        Line {
            section: "dynamodb",
            apart: false,
            what: "DynamoDB storage",
            count: format!("{stored_gb:.4} GB (a year of tasks)"),
            dollars: stored_gb * prices.dynamodb.per_gb_month,
        },
        Line {
            section: "lambda",
            apart: false,
            what: "Lambda invocations",
            count: format!("{invocations:.0}"),
            dollars: m(invocations) * prices.lambda.per_million_requests,
        },
        Line {
            section: "lambda",
            apart: false,
            what: "Lambda compute",
            count: format!("{gb_seconds:.1} GB-s, {}", lambda.architecture()),
            dollars: gb_seconds * lambda.per_gb_second(&prices.lambda),
        },
        Line {
            section: "sqs",
            apart: false,
            what: "SQS",
            count: format!("{sqs:.0} requests"),
            dollars: m(sqs) * prices.sqs.per_million_requests,
        },
        Line {
            section: "eventbridge",
            apart: false,
            what: "EventBridge",
            count: format!("{events:.0} events, {schedules:.1} schedule runs"),
            dollars: m(events) * prices.eventbridge.per_million_events + m(schedules) * prices.eventbridge.scheduler_per_million,
        },
        Line {
            section: "ses",
            apart: false,
            what: "SES",
            count: format!("{:.0} sent, {:.0} received", per(month.mails), per(month.replies)),
            dollars: per(month.mails) / 1_000.0 * prices.ses.per_thousand_mails
                + per(month.replies) / 1_000.0 * (prices.ses.per_thousand_received + prices.ses.per_thousand_received_chunks),
        },
        Line {
            section: "s3",
            apart: false,
            what: "S3 (received mail)",
            count: format!("{:.0} puts and gets", 2.0 * per(month.replies)),
            dollars: per(month.replies) / 1_000.0 * (prices.s3.per_thousand_puts + prices.s3.per_thousand_gets)
                + mail_gb * prices.s3.per_gb_month,
        },
        Line {
            section: "api_gateway",
            apart: false,
            what: "API Gateway",
            count: format!("{:.0} member events", per(month.webhooks)),
            dollars: m(per(month.webhooks)) * prices.api_gateway.per_million_requests,
        },
        Line {
            section: "sms",
            apart: true,
            what: "SMS (End User Messaging)",
            count: format!("{segments:.0} segments of {:.0} texts", per(month.texts)),
            dollars: segments * (prices.sms.per_segment + prices.sms.carrier_fee_per_segment),
        },
    ]
}

/// The cost per gym-month: every line of `bill` but those shown apart.
pub fn total(bill: &[Line]) -> f64 {
    bill.iter().filter(|l| !l.apart).map(|l| l.dollars).sum()
}

/// Model calls in a gym-month (not in the bill).
pub fn model_calls_a_month(month: &Month) -> f64 {
    month.model_calls as f64 * 30.0 / month.days.max(1) as f64
}

/// The tick's fan-out, from its constants: due items one run hands out at most, and how
/// many runs (one a minute) a backlog of `backlog` due items spread over the shards by
/// `shard_of` takes. Each shard reads its share of [`TICK_MAX_ITEMS`] in at most
/// [`TICK_MAX_PAGES_PER_SHARD`] pages of at most `page_items` (a 1 MB page of due entries).
pub fn drain_runs(backlog: &[u32], page_items: usize) -> (usize, usize) {
    let share = (TICK_MAX_ITEMS / DUE_INDEX_SHARDS as usize).max(1);
    let per_shard_run = share.min(TICK_MAX_PAGES_PER_SHARD * page_items.max(1));
    let shards = DUE_INDEX_SHARDS as usize;
    let mut per_shard = vec![0usize; shards];
    for &shard in backlog {
        per_shard[shard as usize % shards] += 1;
    }
    let runs = per_shard.iter().map(|n| n.div_ceil(per_shard_run)).max().unwrap_or(0);
    (per_shard_run * DUE_INDEX_SHARDS as usize, runs)
}

/// The phone number a simulated member texts from.
fn phone(i: usize) -> String {
    format!("+1555555{:04}", i % 10_000)
}

/// A gym on autopilot for `days` on the in-memory ports, one `/_local/run` a simulated hour:
/// `members` seeded members (a quarter of them, the leads among them, with a phone and
/// consent to texts, texts turned on), a third of the regulars checking in each day (a member event each), a quarter
/// of the members' mails answered the evening they came. Counts what it did.
pub async fn simulate_month(members: usize, days: i64) -> Result<Month, String> {
    use crate::{Account, Stack, gym, morning};
    let stack = Stack::start("bench-cost").await;
    let start = morning(1);
    stack.set_clock(&start.to_string()).await;
    let body = json!({"name": "Month Gym", "timezone": "America/New_York", "execution_mode": "limited_auto",
        "onboarded_at": "2025-01-01T00:00:00Z"});
    let (status, created) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    if status != 201 {
        return Err(format!("create account: {status} {created}"));
    }
    let field = |name: &str| created[name].as_str().unwrap_or_default().to_owned();
    let gym = Account {
        id: field("account_id"),
        token: field("api_token"),
        webhook_secret: field("webhook_secret"),
    };
    let account: openloop_core::kernel::ids::AccountId = gym.id.parse().map_err(|e| format!("{e}"))?;
    let texts_on = json!({"sms": {"enabled": true, "origination_identity": "+18885550100", "daily_limit": 100}});
    let (status, body) = stack
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&gym.token), Some(texts_on))
        .await;
    if status != 200 {
        return Err(format!("texts on: {status} {body}"));
    }
    let store = stack.running.store.clone();
    for i in 0..members {
        let mut facts = gym::member(account, i, start);
        if i % 4 == 1 {
            facts.phone = Some(phone(i));
            facts.sms_consent = Some(openloop_core::members::consent::SmsConsent {
                sms: true,
                source: openloop_core::members::consent::ConsentSource::Owner,
                at: start,
            });
        }
        store.save_member_facts(account, &facts).await.map_err(|e| e.to_string())?;
    }
    let mut month = Month {
        members,
        days,
        ..Month::default()
    };
    let mut answered = 0usize;
    for hour in 1..=days * 24 {
        let now = start + SignedDuration::from_hours(hour);
        stack.set_clock(&now.to_string()).await;
        stack.run().await;
        // 18:00 in New York: the day's check-ins, then the answers to the day's mail.
        if hour % 24 != 9 {
            continue;
        }
        let day = (hour / 24) as usize;
        for i in (0..members).filter(|i| i % 20 >= 8 && (i + day).is_multiple_of(3)) {
            let event = json!({"type": "checkin.created", "timestamp": now.to_string(),
                "data": {"member_id": format!("m_{i:05}"), "checked_in_at": now.to_string(), "class_name": "WOD"}});
            let (status, body) = stack.webhook(&gym, &format!("evt_checkin_{day}_{i}"), event).await;
            if status != 202 {
                return Err(format!("check-in: {status} {body}"));
            }
            month.webhooks += 1;
        }
        let (_, outbox) = stack.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
        let to_members: Vec<Value> = outbox
            .as_array()
            .into_iter()
            .flatten()
            .filter(|mail| mail["reply_to"].as_str().is_some_and(|r| r.starts_with("reply+")))
            .filter(|mail| {
                mail["to"]
                    .as_str()
                    .is_some_and(|t| t.starts_with('m') && t.ends_with("@example.com"))
            })
            .cloned()
            .collect();
        for (n, mail) in to_members.iter().enumerate().skip(answered) {
            if n % 4 == 0 {
                let raw = crate::Client::reply_to(mail, &format!("answer-{n}@example.com"), "Thanks! I'll be back on Thursday.");
                let (status, body) = stack.inbound(&raw).await;
                if !(200..300).contains(&status) {
                    return Err(format!("reply: {status} {body}"));
                }
                month.replies += 1;
            }
        }
        answered = to_members.len();
    }
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/tasks?limit=200&cursor={c}"),
            None => "/api/v1/tasks?limit=200".to_owned(),
        };
        let (_, page) = stack.get(&path, &gym.token).await;
        for task in page["tasks"].as_array().into_iter().flatten() {
            month.tasks += 1;
            month.task_bytes += task.to_string().len();
            let touch = task["touch"].as_u64().unwrap_or(0) as usize;
            month.first_touches += usize::from(touch > 0);
            month.follow_ups += touch.saturating_sub(1);
            let status = task["status"].as_str().unwrap_or_default();
            month.closed += usize::from(matches!(status, "completed" | "cancelled" | "escalated" | "dormant"));
        }
        match page["next_cursor"].as_str() {
            Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
            _ => break,
        }
    }
    let (_, mails) = stack.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
    month.mails = mails.as_array().map_or(0, Vec::len);
    let (_, texts) = stack.call(reqwest::Method::GET, "/_local/outbox?channel=sms", None, None).await;
    for text in texts.as_array().into_iter().flatten() {
        month.texts += 1;
        month.text_segments += text["segments"].as_u64().unwrap_or(1) as usize;
    }
    let zone = crate::new_york();
    let (first, last) = (
        start.to_zoned(zone.clone()).date(),
        (start + SignedDuration::from_hours(days * 24)).to_zoned(zone).date(),
    );
    let mut date = first;
    while date <= last {
        month.model_calls += store.ai_calls(account, date).await.map_err(|e| e.to_string())? as usize;
        date = date.tomorrow().map_err(|e| e.to_string())?;
    }
    Ok(month)
}

/// Write units per partition key per second over `accounts` accounts' mornings on the
/// in-memory engine: every account in one of four time zones, its night's risk scan making
/// `touches` tasks from 02:00 local (one every `3600 / touches` seconds), each created through
/// the engine, which plans its first touch (8–10 local with the task's jitter, the engine's
/// own window rule). Each first touch writes `account_units` units to its account's partition
/// (the task, its log, tally, outbound record, the member's ledger, the daily send counter,
/// the bounce window) at its planned second, and moves the task's due-index entry twice
/// (claim, then next step: a delete and a put each) on its shard. Returns the hottest key of
/// each kind (an account's partition, a due-index shard) and its write units in one second,
/// the hotter first.
pub async fn hottest_key(accounts: usize, touches: usize, account_units: u64) -> Result<Vec<(String, u64)>, String> {
    Ok(morning(accounts, touches, account_units).await?.keys)
}

/// What [`morning`] counts.
#[derive(Clone, Debug)]
pub struct Morning {
    /// The hottest key of each kind and its write units in one second, the hotter first.
    pub keys: Vec<(String, u64)>,
    /// The mails SES is handed in the busiest second (one a first touch, at its planned second).
    pub ses_peak: u64,
    /// The first touches planned, and the distinct seconds they fall on.
    pub touches: usize,
    pub seconds: usize,
}

/// The morning of [`hottest_key`], with the SES sends per second besides.
pub async fn morning(accounts: usize, touches: usize, account_units: u64) -> Result<Morning, String> {
    use openloop_core::engine::{AccountSecrets, NewAccount, NewTask};
    use openloop_core::kernel::ids::{Email, MemberId};
    use openloop_core::members::member::MemberFacts;
    use openloop_core::ports::Clock;
    use openloop_core::ports::prelude::*;
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let zones = ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"];
    let (engine, store, clock) = crate::memory_engine();
    let day = clock
        .now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .tomorrow()
        .map_err(|e| err(&e))?;
    let mut made = Vec::with_capacity(accounts);
    let mut nights = Vec::with_capacity(accounts * touches);
    for a in 0..accounts {
        let input: NewAccount = serde_json::from_value(json!({"name": format!("Morning Gym {a}"), "timezone": zones[a % zones.len()],
            "execution_mode": "limited_auto", "onboarded_at": "2025-01-01T00:00:00Z"}))
        .map_err(|e| err(&e))?;
        let secrets = AccountSecrets {
            api_token: format!("morning-{a}"),
            api_token_hash: crate::unique_prefix(&format!("morning-{a}")),
            webhook_secret: "whsec_dGVzdA==".into(),
        };
        let account = engine.create_account(input, secrets).await.map_err(|e| err(&e))?;
        let tz = account.settings.time_zone();
        let two = day.at(2, 0, 0, 0).to_zoned(tz).map_err(|e| err(&e))?.timestamp();
        for t in 0..touches {
            let mut facts = MemberFacts::new(MemberId::parse(&format!("m_{t}")).map_err(|e| err(&e))?);
            facts.email = Some(Email::parse(&format!("m{t}+{a}@example.com")).map_err(|e| err(&e))?);
            facts.first_name = Some(format!("Member{t}"));
            facts.version = 1;
            store.save_member_facts(account.id, &facts).await.map_err(|e| err(&e))?;
            nights.push((two + SignedDuration::from_secs((t * 3_600 / touches.max(1)) as i64), a, t));
        }
        made.push(account);
    }
    nights.sort();
    let mut writes: HashMap<(String, i64), u64> = HashMap::new();
    let mut ses: HashMap<i64, u64> = HashMap::new();
    for (at, a, t) in nights {
        // Tasks made at the same instant: the test clock runs on by a hair between them.
        if clock.now() < at {
            clock.set(at).map_err(|now| format!("the clock is at {now}, past {at}"))?;
        }
        let account = &made[a];
        let task = NewTask {
            task_type: "churn_risk".into(),
            member_id: MemberId::parse(&format!("m_{t}")).map_err(|e| err(&e))?,
            goal: "Bring the member back to class".into(),
            confidence: Some(90),
            draft: Some(openloop_core::task::Draft {
                subject: "We miss you".into(),
                body: "Hi, we have not seen you in a while.".into(),
            }),
            trigger_type: openloop_core::task::TriggerType::CronAnalysis,
            trigger_event_id: None,
            gate: openloop_core::rails::gate::GateContext::default(),
            context: Value::Null,
        };
        let created = engine.create_task(account, task).await.map_err(|e| err(&e))?;
        let task = created.task();
        let due = task
            .next_action_at
            .ok_or_else(|| format!("the engine planned no first touch for {} ({:?})", task.id, task.status))?;
        let second = due.as_second();
        *writes.entry((format!("ACCT#{}", account.id), second)).or_default() += account_units;
        let shard = openloop_core::task::work::due_shard(&task.id, DUE_INDEX_SHARDS);
        *writes.entry((format!("GSI1 DUE#{shard}"), second)).or_default() += 4;
        *ses.entry(second).or_default() += 1;
    }
    let hottest = |kind: &str| {
        writes
            .iter()
            .filter(|((key, _), _)| key.starts_with(kind))
            .max_by_key(|(_, n)| **n)
            .map(|((key, _), n)| (key.clone(), *n))
    };
    let mut keys: Vec<(String, u64)> = ["ACCT#", "GSI1 DUE#"].into_iter().filter_map(hottest).collect();
    keys.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    Ok(Morning {
        keys,
        ses_peak: ses.values().copied().max().unwrap_or(0),
        touches: ses.values().sum::<u64>() as usize,
        seconds: ses.len(),
    })
}

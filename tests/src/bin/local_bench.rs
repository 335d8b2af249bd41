//! `make bench`, second part: the local runtime's own speed, on the emulator and in memory —
//! an idle `POST /_local/run`, reading one member's outbox after 10 and after 10,000 sent
//! mails, and a simulated month of a 200-member gym driven one `/_local/run` per simulated
//! hour: the whole month (720 runs) in memory, its first day (24 runs: the same gym, the
//! same runs and code, the night's scan and the morning's first touches) on the emulator,
//! whose runs take seconds each (the whole month there took over 50 minutes). These are wall-clock figures of this machine (printed, never asserted).
//! Last, a new lead's time to first touch on `limited_auto`, in minutes of the simulated clock
//! (one run a minute), signing up inside the send window and at night.
//!
//! First, apart from any stack: the lift's interval proven by simulation over thousands of
//! seeded gyms (`openloop_tests::lift_simulation`), each figure beside the bound it must hold;
//! then the fault harness's fortnight (`openloop_tests::faults`) over many seeds at an 8%
//! fault rate in memory, with what was thrown and what was found wrong (nothing, or the seed).
//!
//! `LOCAL_BENCH_PORTS=memory` (or `emulator`) measures one backend only; both by default.
//! `OPENLOOP_BENCH_QUICK=1` (`make bench QUICK=1`): 100 mails and three days of a 20-member
//! gym in memory instead (the emulator still plays the first day) — the same code paths, as
//! `make test` runs it.

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use openloop_core::conversation::mail::OutboundMail;
use openloop_core::kernel::ids::{AccountId, Email};
use openloop_core::ports::Mailer;
use openloop_tests::{Stack, gym, lift_simulation, morning};
use serde_json::json;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `OPENLOOP_BENCH_QUICK=1`: the small sizes.
fn quick() -> bool {
    std::env::var("OPENLOOP_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// `seeds` fortnights of two gyms at an 8% fault rate, in memory: the faults thrown, summed,
/// and every seed with something found wrong.
async fn fault_fortnights(seeds: u64) {
    use openloop_tests::faults::{Dice, Fortnight, memory_ports};
    let started = Instant::now();
    let mut thrown: std::collections::BTreeMap<&'static str, u64> = std::collections::BTreeMap::new();
    let (mut mails, mut invocations, mut wrong_seeds) = (0, 0, Vec::new());
    for seed in 1..=seeds {
        let dice = Dice::new(seed, 0.08);
        let mut fortnight = Fortnight::new(memory_ports(&dice), dice.clone()).await;
        fortnight.play(&[8, 9, 10, 11, 12, 14, 16, 19]).await;
        let (wrong, figures) = fortnight.violations().await;
        for (kind, n) in figures.faults {
            *thrown.entry(kind).or_default() += n;
        }
        mails += figures.mails;
        invocations += figures.invocations;
        if !wrong.is_empty() {
            wrong_seeds.push(format!("seed {seed}: {}", wrong.join("; ")));
        }
    }
    println!(
        "fault harness: {seeds} fortnights of two gyms at an 8% fault rate, in memory ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    println!("  {invocations} invocations, {mails} mails accepted; faults thrown:");
    for (kind, n) in &thrown {
        println!("  {n:>8}  {kind}");
    }
    if wrong_seeds.is_empty() {
        println!("  nothing lost, doubled, stuck or across the gyms in any of them\n");
    } else {
        println!("  FOUND WRONG:\n  {}\n", wrong_seeds.join("\n  "));
    }
}

fn main() -> Result<(), Error> {
    openloop_edge::runtime::build()?.block_on(run())
}

async fn run() -> Result<(), Error> {
    // The lift's interval, proven by simulation (no stack needed): thousands of seeded gyms.
    let scale = if quick() { lift_simulation::TEST } else { lift_simulation::BENCH };
    let started = Instant::now();
    let figures = lift_simulation::simulate(scale, 44);
    println!(
        "{}  (simulated in {:.1} s)\n",
        lift_simulation::report(&figures),
        started.elapsed().as_secs_f64()
    );

    fault_fortnights(if quick() { 3 } else { 30 }).await;

    println!("local runtime (wall clock on this machine; medians of 20 calls)");
    println!("{:<52} {:>12} {:>12}", "", "emulator", "memory");
    let ports = std::env::var("LOCAL_BENCH_PORTS").unwrap_or_else(|_| "memory,emulator".into());
    let on_emulator = ports.contains("emulator");
    let memory = Stack::start("bench-local").await;
    memory.set_clock(&morning(1).to_string()).await;
    let idle_emulator = if on_emulator {
        let emulator = Stack::on_emulator("bench-local").await;
        emulator.set_clock(&morning(1).to_string()).await;
        ms(idle_run(&emulator).await)
    } else {
        "-".into()
    };
    let idle_memory = idle_run(&memory).await;
    println!(
        "{:<52} {:>12} {:>12}",
        "POST /_local/run, idle stack",
        idle_emulator,
        ms(idle_memory)
    );

    // The outbox is the same code on both ports: filled here through the memory stack's mailer.
    // One member's mail (one message) is read after 10 mails in all, then after 10,000.
    let mut sent = 0;
    let mut rows = Vec::new();
    for target in if quick() { [10usize, 100] } else { [10, 10_000] } {
        send_mail(&memory, sent, target - sent).await?;
        sent = target;
        let one = median(20, || async { memory.outbox_to("bench-0@example.com").await.len() }).await;
        let all = median(5, || async {
            memory
                .call(reqwest::Method::GET, "/_local/outbox", None, None)
                .await
                .1
                .as_array()
                .map_or(0, Vec::len)
        })
        .await;
        rows.push((target, one, all));
    }
    for (sent, one, all) in rows {
        println!(
            "{:<52} {:>12} {:>12}",
            format!("GET /_local/outbox?to=… after {sent} mails"),
            "",
            ms(one)
        );
        println!("{:<52} {:>12} {:>12}", format!("GET /_local/outbox (all {sent}) "), "", ms(all));
    }

    println!();
    let (members, hours) = if quick() { (20, 72) } else { (200, 720) };
    let emulator_hours = EMULATOR_HOURS;
    println!(
        "a simulated {} of a {members}-member gym, one POST /_local/run per simulated hour ({hours} runs; the emulator: the first {emulator_hours})",
        if quick() { "three days" } else { "month" }
    );
    println!(
        "{:<10} {:>6} {:>10} {:>8} {:>8} {:>12} {:>12}",
        "ports", "runs", "wall", "tasks", "mails", "median run", "slowest run"
    );
    drop(memory);
    if ports.contains("memory") {
        month("memory", &Stack::start("bench-month").await, members, hours).await?;
    }
    if on_emulator {
        month("emulator", &Stack::on_emulator("bench-month").await, members, emulator_hours).await?;
    }

    println!();
    println!(
        "a new lead's first touch on limited_auto: minutes of the simulated clock from the sign-up to the mail, one POST /_local/run a minute"
    );
    println!("{:<10} {:>22} {:>22}", "ports", "in the send window", "at 22:00 (window shut)");
    if ports.contains("memory") {
        lead_row("memory", &Stack::start("bench-lead").await, true).await?;
    }
    if on_emulator {
        lead_row("emulator", &Stack::on_emulator("bench-lead").await, false).await?;
    }
    Ok(())
}

/// One row of the lead table: a lead signing up mid-afternoon, and with `night` one at 22:00
/// local time (hundreds of runs: in memory only), on a gym of its own each.
async fn lead_row(ports: &str, stack: &Stack, night: bool) -> Result<(), Error> {
    let afternoon = morning(1) + SignedDuration::from_hours(5);
    let inside = lead_first_touch(stack, afternoon, "m_lead_day").await?;
    let outside = if night {
        lead_first_touch(stack, morning(2) + SignedDuration::from_hours(13), "m_lead_night").await?
    } else {
        "-".into()
    };
    println!("{ports:<10} {inside:>22} {outside:>22}");
    Ok(())
}

/// Minutes from a lead's `member.created` at `at` to their first touch in the outbox (at most
/// a day of runs), in words.
async fn lead_first_touch(stack: &Stack, at: Timestamp, member: &str) -> Result<String, Error> {
    stack.set_clock(&at.to_string()).await;
    let gym = stack.create_account("limited_auto").await;
    let email = format!("{member}+{}@example.com", gym.id.to_ascii_lowercase()).replace('_', "-");
    let created = json!({"type": "member.created", "timestamp": at.to_string(), "data": {"member_id": member,
        "email": email, "first_name": "Dana", "status": "lead", "joined_at": at.to_string()}});
    let (status, body) = stack.webhook(&gym, &format!("evt_{member}"), created).await;
    if status != 202 {
        return Err(format!("the lead's webhook was refused: {status} {body}").into());
    }
    for minute in 0..=24 * 60 {
        if minute > 0 {
            stack.set_clock(&(at + SignedDuration::from_mins(minute)).to_string()).await;
        }
        stack.run().await;
        if !stack.outbox_to(&email).await.is_empty() {
            return Ok(format!("{minute} min"));
        }
    }
    Ok("none within a day".into())
}

/// The runs the emulator plays, in the full bench and the quick one alike: the first day (the night's
/// scan and the morning's first touches; each run takes seconds there).
const EMULATOR_HOURS: i64 = 24;

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

async fn median<F, Fut, T>(n: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        std::hint::black_box(f().await);
        times.push(start.elapsed());
    }
    times.sort();
    times[n / 2]
}

async fn idle_run(stack: &Stack) -> Duration {
    stack.run().await;
    median(20, || stack.run()).await
}

/// Mails number `first..first + count` through the stack's mailer (the outbox around the
/// provider), each to its own recipient `bench-{n}`.
async fn send_mail(stack: &Stack, first: usize, count: usize) -> Result<(), Error> {
    let from = Email::parse("outreach@mail.openloop.local")?;
    for i in first..first + count {
        let to = Email::parse(&format!("bench-{i}@example.com"))?;
        let mail = OutboundMail {
            from_name: "Bench Gym".into(),
            from: from.clone(),
            to,
            to_name: None,
            subject: format!("Mail {i}"),
            text: "Hello".into(),
            message_id: format!("bench-{i}-{}@openloop.local", ulid::Ulid::new()),
            in_reply_to: None,
            references: Vec::new(),
            reply_to: "reply+bench@replies.openloop.local".into(),
            unsubscribe_url: "http://127.0.0.1/unsubscribe?token=bench".into(),
            date: Timestamp::now(),
        };
        stack.running.outbox.send(&mail).await?;
    }
    Ok(())
}

/// A gym on autopilot (`limited_auto`, onboarded long ago) with `members` seeded members, then
/// `hours` hourly runs (a month: 200 members, 720 runs).
async fn month(name: &str, stack: &Stack, members: usize, hours: i64) -> Result<(), Error> {
    let start = morning(1);
    stack.set_clock(&start.to_string()).await;
    let body = json!({"name": "Month Gym", "timezone": "America/New_York", "execution_mode": "limited_auto",
        "onboarded_at": "2025-01-01T00:00:00Z"});
    let (status, account) = stack.post("/api/v1/accounts", &stack.admin_token, body).await;
    if status != 201 {
        return Err(format!("create account: {status} {account}").into());
    }
    let account_id: AccountId = account["account_id"].as_str().unwrap_or_default().parse()?;
    let token = account["api_token"].as_str().unwrap_or_default().to_owned();
    gym::seed(stack.running.store.as_ref(), account_id, members, start).await?;
    let wall = Instant::now();
    let mut runs = Vec::with_capacity(hours as usize);
    for hour in 1..=hours {
        stack.set_clock(&(start + SignedDuration::from_hours(hour)).to_string()).await;
        let at = Instant::now();
        stack.run().await;
        runs.push(at.elapsed());
    }
    let wall = wall.elapsed();
    let (_, tasks) = stack.get("/api/v1/tasks?limit=200", &token).await;
    let tasks = tasks["tasks"].as_array().map_or(0, Vec::len);
    let (_, all) = stack.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
    let mails = all.as_array().map_or(0, Vec::len);
    runs.sort();
    println!(
        "{name:<10} {hours:>6} {:>9.1}s {tasks:>8} {mails:>8} {:>12} {:>12}",
        wall.as_secs_f64(),
        ms(runs[runs.len() / 2]),
        ms(runs[runs.len() - 1])
    );
    Ok(())
}

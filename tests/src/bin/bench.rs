//! `make bench`: what one task step costs in DynamoDB requests, and proof that the tick's
//! reads grow with what is due, and attribution's with what is inside a verification window,
//! not with what is stored (1,000 vs 5,000 stored tasks); and what importing a gym from
//! PushPress costs per member; and what each dashboard page costs with 5,000 tasks
//! in the account.
//! It counts requests, not seconds, so the figures are the same on any machine. The larger
//! sizes are only as large as showing growth (or its absence) needs: seeding the emulator is
//! most of the bench's time.
//!
//! `OPENLOOP_BENCH_QUICK=1` (`make bench QUICK=1`): every table at a small size — the same
//! code paths in a fraction of the time, as `make test` runs it. Its figures say nothing
//! about growth; the full sizes do.

use jiff::{SignedDuration, Timestamp};
use openloop_aws::dynamo::DynamoStore;
use openloop_core::engine::{AccountSecrets, Engine, NewAccount, NewTask};
use openloop_core::kernel::ids::{AccountId, Email, MemberId};
use openloop_core::members::member::MemberFacts;
use openloop_core::ports::Clock;
use openloop_core::ports::prelude::*;
use openloop_core::rails::gate::GateContext;
use openloop_core::task::work::WorkItem;
use openloop_core::task::{Draft, TaskStatus, TriggerType};
use openloop_core::testing::sample_task_for;
use openloop_local::clock::TestClock;
use openloop_tests::scale::{Measured, Unit};
use openloop_tests::{Scratch, unique_prefix};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `OPENLOOP_BENCH_QUICK=1`: the small sizes.
fn quick() -> bool {
    std::env::var("OPENLOOP_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// `full` at the full sizes, `small` in the quick form.
fn sized<T>(full: T, small: T) -> T {
    if quick() { small } else { full }
}

fn main() -> Result<(), Error> {
    openloop_edge::runtime::build()?.block_on(run())
}

async fn run() -> Result<(), Error> {
    // `OPENLOOP_BENCH_ONLY=import`: the PushPress import's figures alone.
    if std::env::var("OPENLOOP_BENCH_ONLY").is_ok_and(|only| only == "import") {
        return import_table().await;
    }
    // `OPENLOOP_BENCH_ONLY=dashboard`: the dashboard's pages alone.
    if std::env::var("OPENLOOP_BENCH_ONLY").is_ok_and(|only| only == "dashboard") {
        return dashboard_table().await;
    }
    // `OPENLOOP_BENCH_ONLY=scale`: the step table, then only the smaller size of the tick and
    // scan tables (what the cost model takes from them), the drain, the cost and the hot key;
    // `OPENLOOP_BENCH_ONLY=cost`: the same without the drain.
    let only = std::env::var("OPENLOOP_BENCH_ONLY").unwrap_or_default();
    let scale_only = only == "scale" || only == "cost";
    // `OPENLOOP_BENCH_ONLY=morning`: the step table and the 1,000 accounts' mornings alone.
    if only == "morning" {
        let scratch = Scratch::new("bench");
        let (engine, store, clock) = scratch.engine(None).await;
        let mut unit = Unit::default();
        steps(&engine, &store, &clock, &mut unit).await?;
        println!();
        return hot_key_table(&unit).await;
    }
    let scratch = Scratch::new("bench");
    let (engine, store, clock) = scratch.engine(None).await;

    println!(
        "DynamoDB requests per task step (one task, emulator: {})",
        openloop_tests::endpoint()
    );
    let mut unit = Unit::default();
    let account = steps(&engine, &store, &clock, &mut unit).await?;

    println!();
    println!("tick cost against stored tasks (the same 10 due each time)");
    println!(
        "{:>14} {:>10} {:>10} {:>16}",
        "stored tasks", "requests", "enqueued", "seeding requests"
    );
    let mut stored = 0usize;
    let mut attribution = Vec::new();
    let stored_sizes = sized([1_000usize, 5_000], [100, 200]);
    for target in if scale_only { &stored_sizes[..1] } else { &stored_sizes[..] } {
        let target = *target;
        let before = store.requests();
        seed(&store, account, target - stored, if stored == 0 { 10 } else { 0 }, clock.now()).await?;
        if stored == 0 {
            seed_watched(&store, account, 10, clock.now()).await?;
        }
        let seeding = store.requests() - before;
        stored = target;
        let before = store.requests();
        let report = engine.tick(openloop_core::engine::Wake::Now).await?;
        let enqueued: usize = report.enqueued.values().sum();
        println!("{:>14} {:>10} {:>10} {:>16}", stored, store.requests() - before, enqueued, seeding);
        let before = store.usage();
        let started = std::time::Instant::now();
        let report = engine.attribute().await?;
        if stored == target && attribution.is_empty() {
            unit.attribution = Measured {
                usage: store.usage() - before,
                ms: started.elapsed().as_secs_f64() * 1000.0,
            };
        }
        attribution.push((stored, (store.usage() - before).requests, report.watched));
    }
    println!();
    println!("attribution cost against stored tasks (the same 10 closed tasks inside their window)");
    println!("{:>14} {:>10} {:>10}", "stored tasks", "requests", "watched");
    for (stored, requests, watched) in attribution {
        println!("{stored:>14} {requests:>10} {watched:>10}");
    }

    println!();
    let scan_sizes = sized([500usize, 1_500], [50, 100]);
    println!(
        "analysis (risk scan) cost per account run: {} vs {} members, 30% of them findings",
        thousands(scan_sizes[0]),
        thousands(scan_sizes[1])
    );
    println!(
        "{:>8} {:>10} {:>14} {:>16} {:>16} {:>14}",
        "members", "read only", "run 1 (+25)", "run 2 (+25)", "full day run", "seeding"
    );
    for &members in if scale_only { &scan_sizes[..1] } else { &scan_sizes[..] } {
        // A table of its own: the tasks stored above would only slow the emulator's queries
        // of the account's partition down (the request counts are the same).
        let scratch = Scratch::new("bench-scan");
        let (engine, store, _) = scratch.engine(None).await;
        let day = analysis_cost(&engine, &store, members).await?;
        if unit.analysis_members == 0 {
            (unit.analysis, unit.analysis_members) = (day, members);
        }
    }

    println!();
    if only != "cost" {
        drain_table().await?;
        println!();
    }
    inbound_units(&mut unit).await?;
    cost_table(&unit).await?;
    println!();
    hot_key_table(&unit).await?;
    if scale_only {
        return Ok(());
    }
    println!();
    import_table().await?;
    println!();
    dashboard_table().await
}

/// Steps due in the backlog the tick hands out (10,000; 300 in the quick form).
fn backlog() -> usize {
    sized(10_000, 300)
}

/// The tick's fan-out: a backlog of due steps, every shard read at once and the items sent
/// 10 a `SendMessageBatch`, 16 batches at a time: the due index read on the emulator's
/// DynamoDB, the items handed to an in-memory queue (the emulator's SQS takes many minutes
/// over 10,000 messages; SQS in AWS about 2 s).
async fn drain_table() -> Result<(), Error> {
    let scratch = Scratch::new("bench-drain");
    let (mut ports, config, store, clock) = scratch.ports(None).await;
    ports.queue = std::sync::Arc::new(openloop_core::testing::RecordingQueue::default());
    let engine = Engine::new(ports, config);
    let account = bench_account(&engine, "Drain Gym").await?.id;
    let backlog = backlog();
    let now = clock.now();
    let mut tasks = Vec::with_capacity(backlog);
    for i in 0..backlog {
        let member = MemberId::parse(&format!("m_drain_{i}"))?;
        let mut task = sample_task_for(account, member, TaskStatus::Waiting, now);
        task.touch = 1;
        task.next_action_at = Some(now - SignedDuration::from_mins(1));
        tasks.push(task);
    }
    store.import_tasks(&tasks).await?;
    println!(
        "tick fan-out: a backlog of {backlog} due steps, one tick a minute (16 shards at once, up to 1,250 each in ≤ 8 pages; SendMessageBatch 16 at a time; DynamoDB on the emulator, the queue in memory)"
    );
    println!("{:>6} {:>10} {:>10} {:>10}", "run", "handed out", "requests", "ms");
    let mut runs = 0usize;
    let mut handed = 0usize;
    loop {
        runs += 1;
        let before = store.requests();
        let started = std::time::Instant::now();
        let report = engine
            .tick(openloop_core::engine::Wake::AtTheirSecond {
                period: SignedDuration::from_mins(1),
            })
            .await?;
        let enqueued: usize = report.enqueued.values().sum();
        handed += enqueued;
        println!(
            "{runs:>6} {enqueued:>10} {:>10} {:>10.0}",
            store.requests() - before,
            started.elapsed().as_secs_f64() * 1000.0
        );
        // A run that left some would find the first ones again until the workers took them:
        // what is left is handed out a run later each.
        if !report.truncated || runs == 10 {
            break;
        }
    }
    let (capacity, _) = openloop_tests::scale::drain_runs(&[], 1_048_576 / 4_096);
    println!("tick capacity from its constants: {} due steps a run", thousands(capacity));
    println!("items handed out per tick run: {}", handed / runs);
    println!("{} due steps handed out in {runs} min", thousands(handed.min(backlog)),);
    Ok(())
}

/// `n` with thousands separated by commas, as owner text writes them.
fn thousands(n: usize) -> String {
    openloop_core::kernel::plural::grouped(n as u64)
}

/// A gym's month: its activity from a simulated month on the in-memory runtime, each step's
/// cost as measured above, the template's Lambda settings, the prices of `infra/aws-prices.toml`.
async fn cost_table(unit: &Unit) -> Result<(), Error> {
    let prices = openloop_tests::scale::prices()?;
    let lambda = openloop_tests::scale::lambda_setup()?;
    let (members, days) = sized((300usize, 30i64), (30, 3));
    let started = std::time::Instant::now();
    let month = openloop_tests::scale::simulate_month(members, days).await?;
    let gyms = 10_000;
    println!(
        "a gym-month: {members} members, {days} simulated days on the in-memory runtime ({:.0} s; scaled to 30 days), {gyms} gyms sharing the schedules; prices of {} ({})",
        started.elapsed().as_secs_f64(),
        prices.as_of,
        prices.dynamodb.source
    );
    println!(
        "  tasks {}, first touches {}, follow-ups {}, closed {}, mails {}, texts {} ({} segments), replies {}, check-ins {}",
        month.tasks,
        month.first_touches,
        month.follow_ups,
        month.closed,
        month.mails,
        month.texts,
        month.text_segments,
        month.replies,
        month.webhooks
    );
    println!(
        "  per operation on the emulator: a reply {} requests, a check-in {} requests",
        unit.reply.usage.requests, unit.signal.usage.requests
    );
    println!("{:<26} {:>36} {:>10}", "service", "count per gym-month", "dollars");
    let bill = openloop_tests::scale::bill(unit, &month, &prices, &lambda, gyms);
    for line in &bill {
        let apart = if line.apart { " (apart)" } else { "" };
        println!("{:<26} {:>36} {:>10.4}{apart}", line.what, line.count, line.dollars);
    }
    let total = openloop_tests::scale::total(&bill);
    let alone = openloop_tests::scale::total(&openloop_tests::scale::bill(unit, &month, &prices, &lambda, 1));
    let texts: f64 = bill.iter().filter(|l| l.apart).map(|l| l.dollars).sum();
    println!(
        "model calls per gym-month (not in the cost): {:.0}",
        openloop_tests::scale::model_calls_a_month(&month)
    );
    println!("texts per gym-month (turned on by the gym, not in the cost): ${texts:.2}");
    println!("one gym alone on its own stack (the schedules not shared): ${alone:.2}");
    println!("cost per gym-month: ${total:.2}");
    Ok(())
}

/// What a member's mailed reply and a member event (a check-in) cost on the emulator: the
/// answer to a first touch received, routed and stored with the next step; a check-in
/// accepted and applied to the member's facts.
async fn inbound_units(unit: &mut Unit) -> Result<(), Error> {
    use openloop_core::members::event::{SignalEnvelope, WebhookEvent};
    let scratch = Scratch::new("bench-inbound");
    let (engine, store, clock) = scratch.engine(None).await;
    let account = bench_account(&engine, "Inbound Gym").await?;
    let new_task = payment_recovery(&store, account.id, ("m_inbound", "inbound@example.com", "Ana")).await?;
    let id = engine.create_task(&account, new_task).await?.task().id;
    engine.approve(account.id, id, None).await?;
    engine.tick(openloop_core::engine::Wake::Now).await?;
    let item = WorkItem {
        account_id: account.id,
        task_id: id,
        due_at: clock.now(),
    };
    engine.execute(&item).await?;
    let raw = format!(
        "From: Ana <inbound@example.com>\r\nTo: {}\r\nSubject: Re: About your payment\r\nMessage-ID: <bench-answer@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nThanks, I'll update my card today.\r\n",
        scratch.reply_address(&id)
    );
    let before = store.usage();
    let started = std::time::Instant::now();
    let outcome = engine.receive_reply(raw.as_bytes()).await?;
    unit.reply = Measured {
        usage: store.usage() - before,
        ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    if let openloop_core::engine::InboundOutcome::Unrouted(why) = outcome {
        return Err(format!("the bench's reply was not routed: {why}").into());
    }
    let now = clock.now();
    let checkin = || -> Result<WebhookEvent, serde_json::Error> {
        serde_json::from_value(serde_json::json!({"type": "checkin.created", "timestamp": now.to_string(),
            "data": {"member_id": "m_inbound", "checked_in_at": now.to_string(), "class_name": "WOD"}}))
    };
    let before = store.usage();
    let started = std::time::Instant::now();
    engine.accept_member_event(account.id, "evt_bench_checkin", checkin()?, now).await?;
    let envelope = SignalEnvelope {
        account_id: account.id,
        webhook_id: "evt_bench_checkin".into(),
        received_at: now,
        event: checkin()?,
    };
    engine.apply_signal(&envelope).await?;
    unit.signal = Measured {
        usage: store.usage() - before,
        ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    Ok(())
}

/// 1,000 accounts' mornings (four time zones, 10 first touches each, 8–10 local) on the
/// in-memory engine: the write units a second on the hottest partition key, and the mails
/// SES is handed in the busiest second.
async fn hot_key_table(unit: &Unit) -> Result<(), Error> {
    let accounts = 1_000;
    // What a first touch writes to its account's partition: all but the three reply routes.
    let account_units = unit.first_touch.usage.write_units.saturating_sub(6).max(1);
    let started = std::time::Instant::now();
    let morning = openloop_tests::scale::morning(accounts, 10, account_units).await?;
    let keys = &morning.keys;
    let shown = |key: &str| {
        if key.starts_with("ACCT#") {
            "ACCT#{account}".to_owned()
        } else {
            key.to_owned()
        }
    };
    println!(
        "{accounts} accounts' mornings on the in-memory engine ({:.0} s), 10 first touches each across four time zones ({account_units} write units a first touch on its account)",
        started.elapsed().as_secs_f64()
    );
    if let Some((key, rate)) = keys.first() {
        println!(
            "hottest key: {rate} writes per second ({}; DynamoDB allows 1,000 a partition)",
            shown(key)
        );
    }
    for (key, rate) in keys.iter().skip(1) {
        println!("next kind: {rate} writes per second ({})", shown(key));
    }
    // Each first touch's mail is handed to SES at its planned second.
    println!(
        "SES sends: {} mails in the busiest second ({} first touches on {} distinct seconds; ten times the gyms, about {} a second over the same seconds)",
        morning.ses_peak,
        thousands(morning.touches),
        thousands(morning.seconds),
        (morning.touches * 10).div_ceil(morning.seconds.max(1))
    );
    Ok(())
}

/// Tasks in the dashboard's account (5,000; 200 in the quick form).
fn dashboard_tasks() -> usize {
    sized(5_000, 200)
}
const DASHBOARD_MEMBERS: usize = 60;
/// Calls of each page timed (the emulator answers a query of a 5,000-task table in up to a
/// second, so a few calls of the overview take minutes).
const DASHBOARD_CALLS: usize = 1;

/// The dashboard's pages for an account of 5,000 tasks (paged lists and index
/// reads): DynamoDB requests of one call — the same on any machine, and the figure that says
/// whether a page's cost grows with what is stored — and the server's time over loopback HTTP
/// against the emulator (this machine's figure: moto evaluates each query over the whole
/// table in Python, far slower than DynamoDB, so the time grows with the table there).
async fn dashboard_table() -> Result<(), Error> {
    let scratch = Scratch::new("bench-dashboard");
    let (engine, store, clock) = scratch.engine(None).await;
    let account = bench_account(&engine, "Bench Gym").await?;
    let now = clock.now();
    // A gym some years in: most tasks closed, 1 in 100 waiting for review and 1 in 100
    // escalated, 8 in 100 in a conversation.
    let status_of = |i: usize| match i % 100 {
        0 => TaskStatus::PendingReview,
        1 => TaskStatus::Escalated,
        2..10 => TaskStatus::Waiting,
        10..70 => TaskStatus::Completed,
        _ => TaskStatus::Cancelled,
    };
    let dashboard_tasks = dashboard_tasks();
    let mut tasks = Vec::with_capacity(dashboard_tasks);
    for i in 0..dashboard_tasks {
        let member = MemberId::parse(&format!("m_dash_{i}"))?;
        let status = status_of(i);
        let mut task = sample_task_for(account.id, member, status, now - SignedDuration::from_mins(i as i64));
        task.next_action_at = (status == TaskStatus::Waiting).then(|| now + SignedDuration::from_hours(24 * 30));
        tasks.push(task);
    }
    store.import_tasks(&tasks).await?;
    for i in 0..DASHBOARD_MEMBERS {
        let mut facts = MemberFacts::new(MemberId::parse(&format!("m_dash_{i}"))?);
        facts.first_name = Some(format!("Member {i}"));
        facts.version = 1;
        store.save_member_facts(account.id, &facts).await?;
    }
    let signing_key = secrecy::SecretString::from("bench-signing-key");
    let session_key = openloop_fn_dashboard::session_key(&signing_key);
    let session = session_key.issue(account.id, account.session_version, Timestamp::now(), &[7; 16]);
    let router = openloop_fn_dashboard::router(std::sync::Arc::new(openloop_fn_dashboard::DashboardState { engine, session_key }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, router).await });
    let http = openloop_aws::tls::client();
    let cookie = format!("ol_session={}", session.cookie_value());

    println!(
        "dashboard pages with {dashboard_tasks} tasks in the account (requests of one call; server time on the emulator, median of {DASHBOARD_CALLS})"
    );
    println!("{:<28} {:>10} {:>10} {:>8}", "page", "requests", "ms", "status");
    let task_page = format!("/app/tasks/{}", tasks[0].id);
    for path in [
        "/app",
        "/app/review",
        "/app/escalations",
        task_page.as_str(),
        "/app/settings",
        "/app/members",
        "/app/notifications",
        "/app/memories",
        "/app/suggestions",
    ] {
        let mut times = Vec::with_capacity(DASHBOARD_CALLS);
        let mut requests = 0;
        let mut status = 0;
        for call in 0..DASHBOARD_CALLS {
            let before = store.requests();
            let started = std::time::Instant::now();
            let response = http.get(format!("{url}{path}")).header("cookie", &cookie).send().await?;
            status = response.status().as_u16();
            response.bytes().await?;
            times.push(started.elapsed());
            if call == 0 {
                requests = store.requests() - before;
            }
        }
        times.sort();
        let median = times[times.len() / 2];
        let shown = if path == task_page { "/app/tasks/{id}" } else { path };
        println!(
            "{:<28} {:>10} {:>10.1} {:>8}",
            shown,
            requests,
            median.as_secs_f64() * 1000.0,
            status
        );
    }
    Ok(())
}

async fn import_table() -> Result<(), Error> {
    println!("PushPress import: DynamoDB requests per imported member (each with an enrollment and two check-ins)");
    println!("{:>8} {:>10} {:>12}", "members", "requests", "per member");
    for members in sized([200usize, 500], [20, 40]) {
        let scratch = Scratch::new("bench-import");
        import_cost(&scratch, members).await?;
    }
    Ok(())
}

/// A gym of `members` in a fake PushPress, connected and imported page by page (the steps
/// run here, not from the queue): the store's requests from connecting to the import's end.
async fn import_cost(scratch: &Scratch, members: usize) -> Result<(), Error> {
    use openloop_tests::pushpress::FakePushPress;
    use serde_json::json;
    let fake = FakePushPress::start("bench-key").await;
    let (mut ports, config, store, clock) = scratch.ports(None).await;
    let connector = openloop_pushpress::PushPress::new(openloop_pushpress::PushPressConfig::new(&fake.base, None)?)?;
    ports.connector = Some(std::sync::Arc::new(connector));
    let engine = Engine::new(ports, config);
    let now = clock.now().as_second();
    fake.with(|s| {
        for i in 0..members {
            let id = format!("usr_{i:05}");
            s.customers
                .push(json!({"id": id, "name": {"first": "F", "last": "L"}, "email": format!("{id}@example.com"), "role": "member"}));
            s.enrollments
                .push(json!({"id": format!("sub_{i}"), "customerId": id, "status": "active", "planId": "pln_1"}));
            for d in [1, 8] {
                s.checkins
                    .entry("class".into())
                    .or_default()
                    .push(json!({"id": format!("chk_{i}_{d}"), "customer": id,
                    "timestamp": (now - d * 86_400) * 1000, "kind": "class", "result": "success"}));
            }
        }
    });
    let secrets = AccountSecrets {
        api_token: "bench-import".into(),
        api_token_hash: unique_prefix("bench-import-token"),
        webhook_secret: "whsec_YmVuY2g=".into(),
    };
    let input: NewAccount = serde_json::from_value(json!({"name": "Import gym", "pushpress": {"api_key": "bench-key"}}))?;
    let before = store.requests();
    let account = engine.create_account(input, secrets).await?;
    // The bench's own reads of where the import stands are not the import's cost.
    let mut probes = 0;
    loop {
        probes += 1;
        let Some(run) = store
            .connection(account.id)
            .await?
            .and_then(|c| c.import)
            .filter(|i| i.finished_at.is_none())
        else {
            break;
        };
        let step = openloop_core::engine::ImportStep {
            account_id: account.id,
            import_run: run.run,
        };
        engine.import_step(&step).await?;
    }
    let requests = store.requests() - before - probes;
    println!("{:>8} {:>10} {:>12.1}", members, requests, requests as f64 / members as f64);
    Ok(())
}

/// One gym of `members`: the member read alone, two runs that each create their 25, and a
/// run on a day whose creations are used up (what comes back: a run like that one).
async fn analysis_cost(engine: &Engine, store: &DynamoStore, members: usize) -> Result<Measured, Error> {
    let account = bench_account(engine, "Scan Gym").await?;
    let before = store.requests();
    openloop_tests::gym::seed(store, account.id, members, engine.now()).await?;
    let seeding = store.requests() - before;
    let before = store.requests();
    let mut cursor = None;
    loop {
        let (_, next) = store
            .list_member_facts(account.id, openloop_core::kernel::limits::ANALYSIS_PAGE, cursor)
            .await?;
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let read = store.requests() - before;
    let mut runs = Vec::new();
    let mut last = Measured::default();
    for _ in 0..3 {
        let before = store.usage();
        let started = std::time::Instant::now();
        let report = engine.analyze_account(&account).await?;
        last = Measured {
            usage: store.usage() - before,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        };
        runs.push((last.usage.requests, report.created));
    }
    println!(
        "{:>8} {:>10} {:>14} {:>16} {:>16} {:>14}",
        members,
        read,
        format!("{} ({})", runs[0].0, runs[0].1),
        format!("{} ({})", runs[1].0, runs[1].1),
        format!("{} ({})", runs[2].0, runs[2].1),
        seeding
    );
    Ok(last)
}

/// A gym in New York for one bench table, under its own token hash.
async fn bench_account(engine: &Engine, name: &str) -> Result<openloop_core::owner::account::Account, Error> {
    let secrets = AccountSecrets {
        api_token: "t".into(),
        api_token_hash: unique_prefix("hash"),
        webhook_secret: "whsec_dGVzdA==".into(),
    };
    let input: NewAccount = serde_json::from_value(serde_json::json!({"name": name, "timezone": "America/New_York"}))?;
    Ok(engine.create_account(input, secrets).await?)
}

async fn measure<T, F: std::future::Future<Output = T>>(store: &DynamoStore, name: &str, f: F) -> (T, Measured) {
    let before = store.usage();
    let started = std::time::Instant::now();
    let out = f.await;
    let measured = Measured {
        usage: store.usage() - before,
        ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    println!("{:<52} {:>8}", name, measured.usage.requests);
    (out, measured)
}

/// A member of `account` (id, address, first name) with their facts stored, and the payment
/// recovery a webhook's trigger makes about them, with its draft.
async fn payment_recovery(store: &DynamoStore, account: AccountId, (id, email, name): (&str, &str, &str)) -> Result<NewTask, Error> {
    let member = MemberId::parse(id)?;
    let mut facts = MemberFacts::new(member.clone());
    facts.email = Some(Email::parse(email)?);
    facts.first_name = Some(name.into());
    facts.version = 1;
    store.save_member_facts(account, &facts).await?;
    Ok(NewTask {
        task_type: "payment_recovery".into(),
        member_id: member,
        goal: "Recover a failed payment".into(),
        confidence: Some(90),
        draft: Some(Draft {
            subject: "About your payment".into(),
            body: format!("Hi {name}, your card was declined."),
        }),
        trigger_type: TriggerType::Webhook,
        trigger_event_id: None,
        gate: GateContext::default(),
        context: serde_json::Value::Null,
    })
}

/// The step table: one task's life — creation by a signal's trigger, approval, the tick, first
/// touch, follow-up — and an automation step.
async fn steps(engine: &Engine, store: &DynamoStore, clock: &TestClock, unit: &mut Unit) -> Result<AccountId, Error> {
    println!("{:<52} {:>8}", "step", "requests");
    let account = bench_account(engine, "Bench Gym").await?;
    let new_task = payment_recovery(store, account.id, ("m_bench", "bench@example.com", "Bo")).await?;
    let (created, m) = measure(
        store,
        "create task (dedup read, member, transaction)",
        engine.create_task(&account, new_task),
    )
    .await;
    let created = created?;
    unit.create = m;
    let id = created.task().id;
    measure(store, "owner approves", engine.approve(account.id, id, None)).await.0?;
    let (report, m) = measure(
        store,
        "tick (pause flag + 16 due-index shards)",
        engine.tick(openloop_core::engine::Wake::Now),
    )
    .await;
    let report = report?;
    unit.idle_tick = m;
    assert_eq!(report.enqueued.values().sum::<usize>(), 1);
    let item = WorkItem {
        account_id: account.id,
        task_id: id,
        due_at: clock.now(),
    };
    let (outcome, m) = measure(store, "execute: first touch (≤ 5: task, snapshot, commits)", engine.execute(&item)).await;
    let outcome = outcome?;
    unit.first_touch = m;
    assert!(matches!(outcome, openloop_core::engine::StepOutcome::Sent { .. }), "{outcome:?}");
    // Each later step when the engine scheduled it (a follow-up in the afternoon hours of its
    // cadence's day, spec §29.3), read outside the measured calls.
    let due = async || -> Result<jiff::Timestamp, Error> {
        let task = store.get_task(account.id, id).await?.ok_or("the bench task vanished")?;
        Ok(task.next_action_at.ok_or("the bench task has nothing scheduled")?)
    };
    clock.set(due().await?).map_err(|t| format!("clock at {t}"))?;
    let (outcome, m) = measure(store, "followup: second touch (agent-drafted, ≤ 5)", engine.follow_up(&item)).await;
    let outcome = outcome?;
    unit.second_touch = m;
    assert!(matches!(outcome, openloop_core::engine::StepOutcome::Sent { .. }), "{outcome:?}");
    clock.set(due().await?).map_err(|t| format!("clock at {t}"))?;
    let (outcome, m) = measure(store, "followup: exhaustion → escalated (to-do, notice)", engine.follow_up(&item)).await;
    outcome?;
    unit.exhaustion = m;
    measure(store, "owner reads the task with log and messages", engine.task(account.id, id))
        .await
        .0?;

    let automation = NewTask {
        task_type: "member_update".into(),
        member_id: MemberId::parse("m_bench")?,
        goal: "Note the member's preference".into(),
        confidence: Some(100),
        draft: None,
        trigger_type: TriggerType::Manual,
        trigger_event_id: None,
        gate: GateContext::default(),
        context: serde_json::Value::Null,
    };
    let actions = vec![
        openloop_core::task::action::Action::LogNote {
            text: "Prefers mornings".into(),
        },
        openloop_core::task::action::Action::ResearchMember,
    ];
    let options = openloop_core::engine::CreateOptions::default().with_actions(actions);
    let task = engine.create_task_with(&account, automation, options).await?.task().id;
    engine.approve(account.id, task, None).await?;
    let item = WorkItem {
        account_id: account.id,
        task_id: task,
        due_at: clock.now(),
    };
    let outcome = measure(
        store,
        "execute: automation, 2 actions (claimed, finished with the task)",
        engine.execute(&item),
    )
    .await
    .0?;
    assert!(
        matches!(&outcome, openloop_core::engine::StepOutcome::Moved { to, .. } if *to == openloop_core::task::TaskStatus::Completed),
        "{outcome:?}"
    );
    Ok(account.id)
}

/// `count` churn tasks closed unanswered today: each is watched for a late win for 14 days.
async fn seed_watched(store: &DynamoStore, account: AccountId, count: usize, now: Timestamp) -> Result<(), Error> {
    let mut tasks = Vec::with_capacity(count);
    for i in 0..count {
        let member = MemberId::parse(&format!("m_watch_{}_{i}", now.as_millisecond()))?;
        let mut task = sample_task_for(account, member, TaskStatus::Cancelled, now);
        task.task_type = "churn_risk".into();
        task.touch = 3;
        task.execution_started_at = Some(now - SignedDuration::from_hours(24 * 14));
        task.outcome = Some("unresponsive".into());
        task.resolved_at = Some(now);
        task.next_action_at = None;
        task.attribution_until = openloop_core::task::attribution::watch_until(&task);
        tasks.push(task);
    }
    store.import_tasks(&tasks).await?;
    Ok(())
}

/// `count` tasks: `due` of them due now, the rest waiting far in the future or in review.
async fn seed(store: &DynamoStore, account: AccountId, count: usize, due: usize, now: Timestamp) -> Result<(), Error> {
    let mut tasks = Vec::with_capacity(count);
    for i in 0..count {
        let member = MemberId::parse(&format!("m_seed_{}_{i}", now.as_millisecond()))?;
        let due_now = i < due;
        let status = if due_now || i % 3 == 0 {
            TaskStatus::Waiting
        } else {
            TaskStatus::PendingReview
        };
        let mut task = sample_task_for(account, member, status, now);
        task.next_action_at = match (status, due_now) {
            (TaskStatus::Waiting, true) => Some(now - SignedDuration::from_mins(1)),
            (TaskStatus::Waiting, false) => Some(now + SignedDuration::from_hours(24 * 30)),
            _ => None,
        };
        tasks.push(task);
    }
    store.import_tasks(&tasks).await?;
    Ok(())
}

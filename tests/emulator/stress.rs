//! The guarantees under real concurrency on the DynamoDB adapter: many workers race over
//! shared members and tasks through the execute and followup consumers, every work item is
//! delivered several times at once (as SQS at-least-once delivery and overlapping ticks do),
//! the mail provider refuses or times out on some sends, the owner suppresses a member and
//! pulls the kill switch, and the clock runs through days (including hours outside the send
//! window). Afterwards the outbox (what SES accepted) and the stored tasks must show: no
//! member above the weekly cap or one message a day, no day above the account cap, nothing
//! outside the window, to a suppressed member, or while paused, no task above its budget,
//! at most one accepted mail per task and touch, and every version bump logged with a valid
//! move. The figures are printed (`cargo test … stress -- --nocapture`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use openloop_core::engine::{Engine, NewTask, SettingsPatch};
use openloop_core::gate::GateContext;
use openloop_core::ids::{Email, MemberId, TaskId};
use openloop_core::mail::OutboundMail;
use openloop_core::member::MemberFacts;
use openloop_core::ports::prelude::*;
use openloop_core::ports::{Clock, Delivered, Mailer, SendError};
use openloop_core::task::{Draft, TriggerType};
use openloop_core::work::WorkItem;

use openloop_aws::dynamo::DynamoStore;
use openloop_tests::Scratch;

use crate::concurrency::sqs_event;

const WORKERS: usize = 12;
const MEMBERS: usize = 5;
const TYPES: [&str; 3] = ["churn_risk", "win_back", "lead_followup"];
const WEEKLY: u32 = 2;
const DAILY: u32 = 6;
const DAYS: i64 = 9;

/// The real SES mailer, except that some sends are refused (nothing leaves) and some time
/// out after the request left (here: before, so the outbox shows nothing either way).
struct FlakySes {
    inner: Arc<dyn Mailer>,
    calls: AtomicUsize,
    refused: AtomicUsize,
    ambiguous: AtomicUsize,
}

#[async_trait]
impl Mailer for FlakySes {
    async fn send(&self, mail: &OutboundMail) -> Result<Delivered, SendError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if n % 5 == 2 {
            self.refused.fetch_add(1, Ordering::SeqCst);
            return Err(SendError::Rejected("injected: throttled".into()));
        }
        if n % 13 == 9 {
            self.ambiguous.fetch_add(1, Ordering::SeqCst);
            return Err(SendError::Ambiguous("injected: timeout".into()));
        }
        self.inner.send(mail).await
    }
}

async fn setup(engine: &Engine, store: &DynamoStore) -> (openloop_core::account::Account, Vec<(TaskId, String)>, Vec<String>) {
    let (item, _) = crate::concurrency::approved_task(engine, store).await;
    let account_id = item.account_id;
    // The fixture's own task is one more contender for its member.
    let patch = SettingsPatch {
        member_weekly_limit: Some(WEEKLY),
        daily_send_limit: Some(DAILY),
        ..Default::default()
    };
    engine.update_settings(account_id, patch).await.unwrap_or_else(|e| panic!("{e}"));
    let account = engine.account(account_id).await.unwrap_or_else(|e| panic!("{e}"));
    let mut tasks = vec![(item.task_id, "m_race".to_owned())];
    let mut emails = Vec::new();
    for m in 0..MEMBERS {
        let member = MemberId::parse(&format!("m_s{m}")).unwrap_or_else(|e| panic!("{e}"));
        let email = format!("s{m}+{}@example.com", account.id.to_string().to_ascii_lowercase());
        let mut facts = MemberFacts::new(member.clone());
        facts.email = Some(Email::parse(&email).unwrap_or_else(|e| panic!("{e}")));
        facts.first_name = Some("Sam".into());
        facts.version = 1;
        store.save_member_facts(account.id, &facts).await.unwrap_or_else(|e| panic!("{e}"));
        emails.push(email);
        for task_type in TYPES {
            let input = NewTask {
                task_type: task_type.into(),
                member_id: member.clone(),
                goal: "Stress".into(),
                confidence: Some(80),
                draft: Some(Draft {
                    subject: "Hello".into(),
                    body: "First".into(),
                }),
                trigger_type: TriggerType::Manual,
                trigger_event_id: None,
                gate: GateContext::default(),
                context: serde_json::Value::Null,
            };
            let created = engine.create_task(&account, input).await.unwrap_or_else(|e| panic!("{e}"));
            let id = created.task().id;
            engine.approve(account.id, id, None).await.unwrap_or_else(|e| panic!("{e}"));
            tasks.push((id, member.to_string()));
        }
    }
    (account, tasks, emails)
}

#[tokio::test]
async fn many_workers_racing_with_duplicates_and_ses_failures_never_break_a_guarantee() {
    let scratch = Scratch::new("stress");
    let (mut ports, config, store, clock) = scratch.ports(None).await;
    let (account, tasks, emails) = setup(&Engine::new(ports.clone(), config.clone()), &store).await;
    let flaky = Arc::new(FlakySes {
        inner: ports.mailer.clone(),
        calls: AtomicUsize::new(0),
        refused: AtomicUsize::new(0),
        ambiguous: AtomicUsize::new(0),
    });
    ports.mailer = flaky.clone();
    let engine = Engine::new(ports, config);
    let suppressed = emails[0].clone();
    let mut suppressed_at: Option<Timestamp> = None;
    let mut paused_rounds: Vec<(Timestamp, Timestamp)> = Vec::new();
    let mut operations = 0usize;
    let mut rounds = 0usize;
    let started = std::time::Instant::now();
    let base = clock.now() + SignedDuration::from_mins(1);

    // Three rounds a day: 09:00, 13:00 and 22:00 New York time (the last outside the window).
    for day in 0..DAYS {
        for hours in [0i64, 4, 13] {
            let now = base + SignedDuration::from_hours(24 * day + hours);
            clock.set(now).unwrap_or_else(|e| panic!("clock: {e}"));
            rounds += 1;
            if day == 2 && hours == 4 {
                store
                    .put_suppression(
                        account.id,
                        &Email::parse(&suppressed).unwrap_or_else(|e| panic!("{e}")),
                        "test",
                        now,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                suppressed_at = Some(now);
            }
            let pause = day == 4 && hours == 0;
            if pause {
                engine
                    .set_account_paused(account.id, true, "owner")
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            // Every worker takes every task, as execute and as followup, three copies each:
            // the worker re-reads and decides; most find nothing due.
            let runs = (0..WORKERS).map(|w| {
                let engine = &engine;
                let tasks = &tasks;
                async move {
                    let mut ops = 0;
                    for (i, (task_id, _)) in tasks.iter().enumerate() {
                        if (i + w) % 3 != 0 {
                            continue;
                        }
                        let item = WorkItem {
                            account_id: account.id,
                            task_id: *task_id,
                            due_at: now,
                        };
                        let event = sqs_event(&item, 3);
                        let response = if w % 2 == 0 {
                            openloop_fn_execute::handle(engine, event).await
                        } else {
                            openloop_fn_followup::handle(engine, event).await
                        };
                        assert!(response.batch_item_failures.is_empty(), "{response:?}");
                        ops += 3;
                    }
                    ops
                }
            });
            operations += futures::future::join_all(runs).await.into_iter().sum::<usize>();
            if pause {
                paused_rounds.push((now, now));
                engine
                    .set_account_paused(account.id, false, "owner")
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    // What SES accepted, and what the store says.
    let outbox = openloop_tests::ses_accepted().await;
    let ours: HashSet<&str> = emails.iter().map(String::as_str).collect();
    let tz = account.settings.time_zone();
    let mut violations: Vec<String> = Vec::new();
    let mut per_member: HashMap<String, Vec<Timestamp>> = HashMap::new();
    let mut per_day: BTreeMap<jiff::civil::Date, u32> = BTreeMap::new();
    let mut per_task: HashMap<TaskId, usize> = HashMap::new();
    let mut mails = 0;
    for mail in outbox.iter().filter(|m| ours.contains(m.to.as_str())) {
        mails += 1;
        let at: Timestamp = mail
            .sent_at
            .as_deref()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("sent_at"));
        per_member.entry(mail.to.clone()).or_default().push(at);
        *per_day.entry(openloop_core::limits::local_date(at, &tz)).or_default() += 1;
        let hour = at.to_zoned(tz.clone()).hour();
        if !(8..20).contains(&hour) {
            violations.push(format!("mail outside the window at {at}"));
        }
        if mail.to == suppressed && suppressed_at.is_some_and(|s| at >= s) {
            violations.push(format!("mail to a suppressed member at {at}"));
        }
        if paused_rounds.iter().any(|(from, to)| at >= *from && at <= *to) {
            violations.push(format!("mail while the account was paused at {at}"));
        }
        let reply_to = mail.reply_to.clone().unwrap_or_default();
        if let Some((id, _)) = tasks.iter().find(|(id, _)| reply_to.contains(&scratch.reply_address(id))) {
            *per_task.entry(*id).or_default() += 1;
        }
    }
    for (member, times) in &per_member {
        for t in times {
            let week = times
                .iter()
                .filter(|u| **u <= *t && t.duration_since(**u) < openloop_core::limits::MEMBER_WINDOW)
                .count();
            if week > WEEKLY as usize {
                violations.push(format!("{member}: {week} mails in 7 days"));
            }
            let day = openloop_core::limits::local_date(*t, &tz);
            let same_day = times.iter().filter(|u| openloop_core::limits::local_date(**u, &tz) == day).count();
            if same_day > 1 {
                violations.push(format!("{member}: {same_day} mails on {day}"));
            }
        }
    }
    for (day, n) in &per_day {
        if *n > DAILY {
            violations.push(format!("{n} mails on {day}"));
        }
    }
    let mut transitions = 0;
    for (id, _) in &tasks {
        let history = store
            .task_history(account.id, *id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("task"));
        let task = &history.task;
        if task.budget.messages_used > task.budget.messages_max {
            violations.push(format!(
                "{id}: {} of {} messages",
                task.budget.messages_used, task.budget.messages_max
            ));
        }
        if per_task.get(id).copied().unwrap_or(0) as u32 > task.budget.messages_max {
            violations.push(format!("{id}: {} mails, budget {}", per_task[id], task.budget.messages_max));
        }
        let mut touches = HashSet::new();
        for o in history
            .outbound
            .iter()
            .filter(|o| o.status == openloop_core::task::OutboundStatus::Sent)
        {
            if !touches.insert(o.touch) {
                violations.push(format!("{id}: touch {} sent twice", o.touch));
            }
        }
        if history.log.len() as u64 != task.version {
            violations.push(format!("{id}: version {} with {} log entries", task.version, history.log.len()));
        }
        for entry in &history.log {
            if let Some(from) = entry.from_status
                && from != entry.to_status
            {
                transitions += 1;
                if !from.can_move_to(entry.to_status) {
                    violations.push(format!("{id}: invalid move {from} → {}", entry.to_status));
                }
            }
        }
    }
    println!(
        "stress: {operations} deliveries by {WORKERS} workers in {rounds} rounds over {DAYS} days, {} tasks of {} members; \
         {mails} mails accepted by SES, {} sends refused and {} timed out (injected), {transitions} status transitions; \
         violations = {} ({:.1}s)",
        tasks.len(),
        MEMBERS + 1,
        flaky.refused.load(Ordering::SeqCst),
        flaky.ambiguous.load(Ordering::SeqCst),
        violations.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(mails >= MEMBERS, "the test must actually send: {mails}");
    assert!(
        flaky.refused.load(Ordering::SeqCst) > 0 && flaky.ambiguous.load(Ordering::SeqCst) > 0,
        "failures must actually be injected"
    );
}

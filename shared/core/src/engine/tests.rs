//! The engine on the in-memory store, with a recording mailer and a hand-moved clock: the
//! rules of a task's life, fast. (The same paths run against the emulator in `tests/`.)

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use super::{Engine, EngineConfig, NewTask, StepOutcome};
use crate::conversation::token::SigningKey;
use crate::kernel::ids::{Email, MemberId};
use crate::members::event::{MemberEvent, SignalEnvelope, WebhookEvent};
use crate::memory::MemoryStore;
use crate::owner::account::ExecutionMode;
use crate::ports::NullBus;
use crate::ports::prelude::*;
use crate::rails::gate::GateContext;
use crate::task::reason::Reason;
use crate::task::work::{QueueName, WorkItem};
use crate::task::{Draft, Task, TaskStatus, TriggerType};
use crate::testing::{FixedAgent, MailerMode, ManualClock, RecordingMailer, RecordingQueue, at, sample_account};

struct World {
    engine: Engine,
    store: Arc<MemoryStore>,
    mailer: Arc<RecordingMailer>,
    queue: Arc<RecordingQueue>,
    clock: Arc<ManualClock>,
    account: crate::owner::account::Account,
}

/// Monday 2026-11-02, 09:00 in New York.
fn day0() -> Timestamp {
    at("2026-11-02T14:00:00Z")
}

fn days(n: i64) -> SignedDuration {
    SignedDuration::from_hours(24 * n)
}

async fn world() -> World {
    let store = Arc::new(MemoryStore::new());
    let mailer = Arc::new(RecordingMailer::default());
    let queue = Arc::new(RecordingQueue::default());
    let clock = Arc::new(ManualClock::new(day0()));
    let engine = Engine {
        store: store.clone(),
        queue: queue.clone(),
        mailer: mailer.clone(),
        agent: Arc::new(FixedAgent),
        bus: Arc::new(NullBus),
        clock: clock.clone(),
        config: EngineConfig {
            from_email: Email::parse("outreach@mail.example.com").expect("email"),
            reply_domain: "replies.example.com".into(),
            public_url: "https://app.example.com".into(),
            signing_key: SigningKey::new(b"k".to_vec()),
            priority_rules: Arc::new(crate::rails::priority_rules::PriorityRules::shipped()),
            ai_pricing: Default::default(),
        },
        connector: None,
        sending_domains: Some(Arc::new(crate::memory::MemorySendingDomains::default())),
        dns: Some(Arc::new(crate::memory::MemoryDns::default())),
        evaluator: Arc::new(crate::ports::OfflineEvaluator),
        webhook_transport: None,
        sms: None,
        closed_rows: Default::default(),
        arrivals: Default::default(),
    };
    let account = sample_account(day0());
    store.create_account(&account, "hash").await.expect("account");
    World {
        engine,
        store,
        mailer,
        queue,
        clock,
        account,
    }
}

impl World {
    /// The member's answer to the newest mail to them, as their mail client would send it
    /// (threaded, the mail quoted below).
    fn answer_newest(&self, to: &str, message_id: &str, text: &str) -> Vec<u8> {
        let last = self
            .mailer
            .sent()
            .into_iter()
            .rev()
            .find(|m| m.to.as_str() == to)
            .expect("a mail to answer");
        format!(
            "From: Sam <{to}>\r\nTo: <{}>\r\nSubject: Re: {}\r\nMessage-ID: <{message_id}>\r\nIn-Reply-To: <{}>\r\n\
             Content-Type: text/plain\r\n\r\n{text}\r\n\r\nOn Mon, Nov 2, 2026 Coach wrote:\r\n> {}\r\n",
            last.reply_to, last.subject, last.message_id, last.text
        )
        .into_bytes()
    }

    async fn member(&self, id: &str) -> MemberId {
        let member = MemberId::parse(id).expect("member");
        if self.store.get_member(self.account.id, &member).await.expect("member").is_some() {
            return member;
        }
        let mut facts = crate::members::member::MemberFacts::new(member.clone());
        facts.email = Email::parse(&format!("{id}@example.com").replace('_', "-")).ok();
        facts.first_name = Some("Sam".into());
        facts.version = 1;
        self.store.save_member_facts(self.account.id, &facts).await.expect("facts");
        member
    }

    /// A manual task of `task_type` for `member`, with a first draft.
    async fn new_task(&self, task_type: &str, member: &str) -> NewTask {
        NewTask {
            task_type: task_type.into(),
            member_id: self.member(member).await,
            goal: "Goal".into(),
            confidence: Some(80),
            draft: Some(Draft {
                subject: "Hello".into(),
                body: "First".into(),
            }),
            trigger_type: TriggerType::Manual,
            trigger_event_id: None,
            gate: GateContext::default(),
            context: serde_json::Value::Null,
        }
    }

    async fn approved(&self, task_type: &str, member: &str) -> Task {
        let input = self.new_task(task_type, member).await;
        let task = self.engine.create_task(&self.account, input).await.expect("create").task().clone();
        self.engine.approve(self.account.id, task.id, None).await.expect("approve")
    }

    fn item(&self, task: &Task) -> WorkItem {
        WorkItem {
            account_id: self.account.id,
            task_id: task.id,
            due_at: day0(),
        }
    }

    async fn task(&self, task: &Task) -> Task {
        self.store.get_task(self.account.id, task.id).await.expect("get").expect("task")
    }

    /// When `task` is next due, as the engine scheduled it (not a guess at it).
    async fn due(&self, task: &Task) -> Timestamp {
        self.task(task)
            .await
            .next_action_at
            .unwrap_or_else(|| panic!("task {} has nothing scheduled", task.id))
    }

    /// Move the clock to when `task` is next due, as scheduled, and run; returns that time.
    async fn run_when_due(&self, task: &Task) -> Timestamp {
        let due = self.due(task).await;
        let now = crate::ports::Clock::now(self.clock.as_ref());
        assert!(due >= now - days(1), "task {} was due long ago, at {due}", task.id);
        self.clock.set(due.max(now));
        self.run().await;
        due
    }

    /// `at` in the account's time zone.
    fn local(&self, at: Timestamp) -> jiff::Zoned {
        at.to_zoned(self.account.settings.time_zone())
    }

    /// `at` is a follow-up time on the cadence's day `n` (day0's local date plus `n`) inside the
    /// afternoon hours.
    fn assert_follow_up_on_day(&self, at: Timestamp, n: i64) {
        let (local, day) = (self.local(at), self.local(day0() + days(n)).date());
        let (from, to) = crate::kernel::limits::FOLLOW_UP_HOURS;
        assert_eq!(local.date(), day, "{at} is not on day {n} of the cadence");
        assert!((from..to).contains(&local.hour()), "{local} is outside the follow-up hours");
    }

    /// What `/_local/run` does: tick and work until nothing more is due at the clock's now.
    async fn run(&self) {
        for _ in 0..5 {
            self.engine.tick(super::Wake::Now).await.expect("tick");
            let items: Vec<(QueueName, String)> = self.queue.0.lock().expect("queue").drain(..).collect();
            if items.is_empty() {
                return;
            }
            self.work(items).await;
        }
    }

    async fn work(&self, items: Vec<(QueueName, String)>) {
        for (queue, body) in items {
            if let Ok(step) = serde_json::from_str::<super::ImportStep>(&body) {
                self.engine.import_step(&step).await.expect("import step");
                continue;
            }
            if let Ok(step) = serde_json::from_str::<super::AccountRemovalStep>(&body) {
                self.engine.account_removal_step(&step).await.expect("removal step");
                continue;
            }
            if let Ok(work) = serde_json::from_str::<super::WebhookWork>(&body) {
                self.engine.handle_webhook_work(&work).await.expect("webhook work");
                continue;
            }
            let item: WorkItem = serde_json::from_str(&body).expect("item");
            match queue {
                QueueName::Execute => self.engine.execute(&item).await.expect("execute"),
                QueueName::Followup => self.engine.follow_up(&item).await.expect("followup"),
                QueueName::Dormant => self.engine.dormant_check(&item).await.expect("dormant"),
                QueueName::Signals | QueueName::Deliveries => unreachable!("the tick feeds neither signals nor work items as deliveries"),
            };
        }
    }
}

#[tokio::test]
async fn a_failed_payment_opens_one_reviewed_task_however_often_it_is_delivered() {
    let w = world().await;
    let member = w.member("m_pay").await;
    let envelope = SignalEnvelope {
        account_id: w.account.id,
        webhook_id: "evt_1".into(),
        received_at: day0(),
        event: WebhookEvent {
            timestamp: day0(),
            event: MemberEvent::PaymentFailed {
                member_id: member,
                amount: 150.0,
                currency: "USD".into(),
                failed_at: day0(),
                reason: None,
            },
        },
    };
    w.engine.apply_signal(&envelope).await.expect("signal");
    w.engine.apply_signal(&envelope).await.expect("redelivered");
    let again = SignalEnvelope {
        webhook_id: "evt_2".into(),
        ..envelope
    };
    w.engine.apply_signal(&again).await.expect("second failure");
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("list");
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        (tasks[0].status, tasks[0].task_type.as_str()),
        (TaskStatus::PendingReview, "payment_recovery")
    );
    assert!(tasks[0].draft.is_some());
}

#[tokio::test]
async fn standard_cadence_sends_three_touches_then_cancels_when_time_runs_out() {
    // §19.1 with churn_risk: day 0, day 3, day 8, and the 14-day budget ends it.
    let w = world().await;
    let task = w.approved("churn_risk", "m_vac").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "approved at 09:00: the first touch goes at once");
    for (day, expected) in [(3, 2), (8, 3)] {
        let due = w.due(&task).await;
        w.assert_follow_up_on_day(due, day);
        w.clock.set(due - SignedDuration::from_mins(2));
        w.run().await;
        assert_eq!(w.mailer.sent().len(), expected - 1, "day {day}: not before it is due");
        w.run_when_due(&task).await;
        assert_eq!(w.mailer.sent().len(), expected, "day {day}");
    }
    let sent = w.mailer.sent();
    assert_eq!(sent[1].subject, "Hello", "no \"Re:\" on a thread the member never answered");
    assert_eq!(sent[2].in_reply_to.as_deref(), Some(sent[1].message_id.as_str()));
    assert_eq!(sent[2].references.len(), 4, "both ids of both earlier messages");
    w.clock.set(day0() + days(14) + SignedDuration::from_mins(1));
    w.run().await;
    let done = w.task(&task).await;
    assert_eq!(
        (done.status, done.outcome.as_deref(), done.outcome_reason.as_deref()),
        (TaskStatus::Cancelled, Some("unresponsive"), Some("budget_time_expired"))
    );
    assert_eq!(w.mailer.sent().len(), 3);
    assert_eq!(
        w.store
            .active_task(w.account.id, &done.member.id, "churn_risk")
            .await
            .expect("guard"),
        None,
        "closing frees the member for a new task"
    );
}

/// Given a task approved at 21:00, when it runs, then it waits for the morning opening plus
/// 5:00–20:59 of jitter, and goes then — not a minute before.
#[tokio::test]
async fn outside_the_send_window_the_first_touch_waits_for_it() {
    let w = world().await;
    w.clock.set(at("2026-11-03T02:00:00Z")); // 21:00 in New York
    let task = w.approved("churn_risk", "m_night").await;
    w.run().await;
    assert!(w.mailer.sent().is_empty());
    let waiting = w.task(&task).await;
    let opens = at("2026-11-03T13:00:00Z"); // 08:00 in New York
    let at_ = waiting.next_action_at.expect("scheduled");
    assert_eq!(waiting.status, TaskStatus::Ready);
    assert!(
        at_ >= opens + SignedDuration::from_mins(5) && at_ < opens + SignedDuration::from_mins(21),
        "{at_} is not 5:00-20:59 after the opening"
    );
    w.clock.set(opens);
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "not on the hour mark");
    w.clock.set(at_);
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
}

/// Given a follow-up that falls due outside the window, then it waits for the afternoon of
/// the next window day, with jitter.
#[test]
fn a_deferred_follow_up_prefers_the_afternoon() {
    let settings = sample_account(day0()).settings;
    let opens = at("2026-11-03T13:00:00Z"); // 08:00 in New York
    for seed in 0..40 {
        let first = crate::rails::window::smart_send_time(&settings, opens, crate::rails::window::Touch::First, seed);
        let follow_up = crate::rails::window::smart_send_time(&settings, opens, crate::rails::window::Touch::FollowUp, seed);
        let minutes = |t: Timestamp, from: Timestamp| t.duration_since(from).as_mins();
        assert!((5..=20).contains(&minutes(first, opens)), "seed {seed}: {first}");
        let afternoon = at("2026-11-03T18:00:00Z"); // 13:00 in New York
        assert!((5..=20).contains(&minutes(follow_up, afternoon)), "seed {seed}: {follow_up}");
    }
}

#[tokio::test]
async fn the_member_weekly_cap_holds_across_tasks() {
    let w = world().await;
    let patch = super::SettingsPatch {
        member_weekly_limit: Some(1),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let first = w.approved("churn_risk", "m_cap").await;
    let second = w.approved("ad_hoc", "m_cap").await;
    w.run().await;
    // The less urgent task yields the first day (spec §21.3), then meets the weekly cap.
    w.clock.set(day0() + days(1));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "one message a week for this member, whatever the tasks");
    let held = if w.task(&first).await.touch == 1 { second } else { first };
    let held = w.task(&held).await;
    assert_eq!(held.touch, 0);
    assert_eq!(
        held.next_action_at,
        Some(day0() + days(7)),
        "deferred until the first send leaves the window"
    );
}

#[tokio::test]
async fn the_daily_cap_defers_the_rest_to_tomorrow() {
    let w = world().await;
    w.engine
        .update_settings(
            w.account.id,
            super::SettingsPatch {
                daily_send_limit: Some(2),
                ..Default::default()
            },
        )
        .await
        .expect("settings");
    for i in 0..3 {
        w.approved("churn_risk", &format!("m_day_{i}")).await;
    }
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2);
    w.clock.set(at("2026-11-03T05:00:00Z")); // past midnight in New York, before the window
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2, "still outside the window");
    w.clock.set(at("2026-11-03T14:00:00Z"));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 3);
}

#[tokio::test]
async fn a_suppressed_member_is_never_sent_to() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_stop").await;
    let email = task.member.email.clone().expect("email");
    w.store
        .put_suppression(w.account.id, &email, "unsubscribe_link", day0())
        .await
        .expect("suppress");
    w.run().await;
    assert!(w.mailer.sent().is_empty());
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Cancelled, Some("opted_out")));
}

#[tokio::test]
async fn the_global_pause_stops_the_tick_and_the_workers() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_pause").await;
    w.engine.set_global_pause(true).await.expect("pause");
    w.run().await;
    assert_eq!(
        w.engine.execute(&w.item(&task)).await.expect("execute"),
        StepOutcome::Skipped("global_pause".into())
    );
    assert!(w.mailer.sent().is_empty());
    w.engine.set_global_pause(false).await.expect("resume");
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
}

#[tokio::test]
async fn an_ambiguous_send_escalates_and_is_never_retried() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_amb").await;
    w.mailer.set_mode(MailerMode::Ambiguous);
    w.run().await;
    let escalated = w.task(&task).await;
    assert_eq!(
        (escalated.status, escalated.outcome_reason.as_deref()),
        (TaskStatus::Escalated, Some("send_outcome_unknown"))
    );
    assert_eq!(escalated.budget.messages_used, 1, "the possible send still counts");
    w.mailer.set_mode(MailerMode::Deliver);
    w.clock.advance(days(1));
    w.run().await;
    assert!(w.mailer.sent().is_empty());
}

/// A worker claims `task` for its first touch, under the execution lease.
async fn claimed_by_a_worker(w: &World, task: &Task) -> Task {
    let (mut claimed, log) = crate::task::transition::transition(
        task,
        TaskStatus::Executing,
        day0(),
        crate::task::transition::Why::new(Reason::FirstTouchDue),
    )
    .expect("claim");
    claimed.next_action_at = Some(day0() + crate::kernel::limits::EXECUTION_LEASE);
    w.store
        .commit(&crate::task::commit::TaskCommit::new(claimed.clone(), log))
        .await
        .expect("claim");
    claimed
}

/// A worker claims `task` and reserves its first touch (Message-ID `x@mail.example.com`), then
/// dies before the provider's answer is recorded: whether the mail left is unknown.
async fn reserved_by_a_worker_that_died(w: &World, task: &Task) {
    let claimed = claimed_by_a_worker(w, task).await;
    let member = claimed.member.id.clone();
    let (reserved, log) = crate::task::transition::record(&claimed, day0(), crate::task::transition::Why::new(Reason::SendReserved));
    let mut commit = crate::task::commit::TaskCommit::new(reserved, log);
    let outbound = crate::task::OutboundMessage {
        task_id: task.id,
        touch: 0,
        status: crate::task::OutboundStatus::Reserved,
        to: task.member.email.clone().expect("email"),
        subject: "Hello".into(),
        message_id: "x@mail.example.com".into(),
        provider_id: None,
        provider_message_id: None,
        reserved_at: day0(),
        sent_at: None,
    };
    commit.send = Some(crate::task::commit::SendEffect::Reserve {
        outbound,
        member_id: member,
        ledger: crate::members::member::SendLedger {
            sends: Default::default(),
            version: 1,
        },
        daily_date: crate::kernel::limits::local_date(day0(), &jiff::tz::TimeZone::UTC),
        daily_limit: 15,
    });
    w.store.commit(&commit).await.expect("reserve");
}

#[tokio::test]
async fn a_worker_that_died_after_reserving_leaves_an_escalation_not_a_second_mail() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_dead").await;
    reserved_by_a_worker_that_died(&w, &task).await;

    w.run().await;
    assert!(w.mailer.sent().is_empty(), "within the lease nobody touches it");
    w.clock.advance(SignedDuration::from_mins(6));
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "never sent twice");
    let escalated = w.task(&task).await;
    assert_eq!(
        (escalated.status, escalated.outcome_reason.as_deref()),
        (TaskStatus::Escalated, Some("send_outcome_unknown"))
    );
}

/// The mail may have left the moment it was reserved: a reply to it, by its signed address or
/// by its thread alone, reaches its task before anyone has recorded the send.
#[tokio::test]
async fn a_reply_to_a_mail_whose_send_was_never_recorded_reaches_its_task() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_lost").await;
    reserved_by_a_worker_that_died(&w, &task).await;
    let address = format!("reply+{}@replies.example.com", w.engine.config.signing_key.reply_token(&task.id));
    for (to, id, text) in [
        (address.as_str(), "r-lost-1@mail.example.net", "Got it, thanks"),
        ("hello@gym.example.com", "r-lost-2@mail.example.net", "See you Monday"),
    ] {
        let raw = format!(
            "From: Sam <m-lost@example.com>\r\nTo: <{to}>\r\nSubject: Re: Hello\r\nMessage-ID: <{id}>\r\n\
             In-Reply-To: <x@mail.example.com>\r\nContent-Type: text/plain\r\n\r\n{text}\r\n"
        );
        let outcome = w.engine.receive_reply(raw.as_bytes()).await.expect("receive");
        assert!(
            matches!(outcome, super::InboundOutcome::Stored { task_id, .. } if task_id == task.id),
            "{text}: {outcome:?}"
        );
    }
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    let said: Vec<&str> = history.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(said, ["Got it, thanks", "See you Monday"]);
}

#[tokio::test]
async fn a_worker_that_died_before_reserving_is_simply_retried() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_retry").await;
    claimed_by_a_worker(&w, &task).await;
    w.clock.advance(SignedDuration::from_mins(6));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "the lease ran out and the step ran again, once");
    assert_eq!(w.task(&task).await.status, TaskStatus::Waiting);
}

#[tokio::test]
async fn limited_auto_runs_confident_tasks_without_review() {
    let w = world().await;
    w.engine
        .update_settings(
            w.account.id,
            super::SettingsPatch {
                execution_mode: Some(ExecutionMode::LimitedAuto),
                // Onboarded long ago: past the ramp and the warm-up.
                onboarded_at: Some(at("2025-01-01T00:00:00Z")),
                ..Default::default()
            },
        )
        .await
        .expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    let member = w.member("m_auto").await;
    let input = NewTask {
        task_type: "churn_risk".into(),
        member_id: member,
        goal: "Re-engage".into(),
        confidence: Some(90),
        draft: None,
        trigger_type: TriggerType::CronAnalysis,
        trigger_event_id: None,
        gate: GateContext {
            tenure_days: Some(100),
            monthly_value: Some(120.0),
            cancellation_reason: None,
        },
        context: serde_json::Value::Null,
    };
    let task = w.engine.create_task(&account, input).await.expect("create").task().clone();
    assert_eq!(task.status, TaskStatus::Ready);
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1, "sent with the agent's own first draft");
}

mod properties {
    //! Random sequences of owner actions, clock jumps, runs, duplicate deliveries, refused
    //! sends, suppressions and pauses; after every step the guarantees must hold.

    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;
    use crate::kernel::ids::TaskId;
    use crate::kernel::limits::MEMBER_WINDOW;
    use crate::ports::Clock;

    #[derive(Clone, Debug)]
    enum Op {
        Create {
            member: u8,
            kind: u8,
        },
        Approve(u8),
        Skip(u8),
        Cancel(u8),
        Advance {
            minutes: u32,
        },
        Run,
        DuplicateExecute(u8),
        Suppress(u8),
        Pause(bool),
        Refuse(bool),
        /// Create in a given execution mode (0 live, 1 dry run, 2 plan).
        CreateIn {
            member: u8,
            kind: u8,
            mode: u8,
        },
        /// The owner's kill switch on this account.
        PauseAccount(bool),
        /// Move the onboarding date: 0 = shadow today, 1 = guided (warm-up week 1), 2 = warm-up
        /// week 2, 3 = past the ramp and the warm-up.
        Ramp(u8),
        /// The member answers a task's newest mail (0 stop, 1 a dated yes, 2 a question,
        /// 3 "ok", 4 an unsure yes the agent would close on below 60), delivered once or twice.
        Reply {
            task: u8,
            text: u8,
            twice: bool,
        },
        /// The owner gives guidance on a task (refused unless it is escalated).
        Guide(u8),
        /// An automation task for a member: tag them and note it (live or dry run), approved
        /// at once or left for an `Approve`.
        Automate {
            member: u8,
            dry_run: bool,
            approve: bool,
        },
        /// PushPress goes down (or comes back).
        ConnectorDown(bool),
        /// Time passes with the schedule running, as the minute tick runs it: the clock moves
        /// from one task's scheduled time to the next, running at each.
        Elapse {
            minutes: u32,
        },
        /// The owner lets confident tasks run without review (limited auto), or not (manual).
        Autonomy(bool),
    }

    /// Judges replies by their words, like a model would, without being one.
    struct WordsAgent;

    #[async_trait::async_trait]
    impl crate::ports::Agent for WordsAgent {
        async fn draft(&self, request: &crate::ports::DraftRequest) -> Result<crate::ports::Drafted, crate::ports::AgentError> {
            crate::testing::FixedAgent.draft(request).await
        }
        async fn evaluate_reply(
            &self,
            r: &crate::ports::ReplyRequest,
        ) -> Result<crate::conversation::reply::ReplyEvaluation, crate::ports::AgentError> {
            use crate::conversation::reply::{ReplyAction, ReplyEvaluation};
            let (action, confidence, reply, outcome) = if r.reply.contains('?') {
                (ReplyAction::Reply, 70, Some("Yes, of course.".to_owned()), None)
            } else if r.reply.contains("maybe") {
                // A close the agent is unsure of: it must never close the task.
                (ReplyAction::Close, 55, None, r.outcome_codes.first().cloned())
            } else if r.reply.contains("Monday") {
                (ReplyAction::Close, 85, None, r.outcome_codes.first().cloned())
            } else {
                (ReplyAction::Wait, 60, None, None)
            };
            Ok(ReplyEvaluation {
                action,
                outcome,
                confidence,
                reasoning: "by its words".into(),
                reply,
                wait_days: Some(2),
                suggest_suppression: false,
                provisional: action == ReplyAction::Close,
                unanswered_question: None,
                other_subject: None,
            })
        }
        async fn evaluate_completion(
            &self,
            r: &crate::ports::CompletionRequest,
        ) -> Result<crate::ports::GoalProgress, crate::ports::AgentError> {
            crate::testing::FixedAgent.evaluate_completion(r).await
        }
        async fn plan_next(&self, r: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, crate::ports::AgentError> {
            crate::testing::FixedAgent.plan_next(r).await
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..4, 0u8..3).prop_map(|(member, kind)| Op::Create { member, kind }),
            3 => any::<u8>().prop_map(Op::Approve),
            1 => any::<u8>().prop_map(Op::Skip),
            1 => any::<u8>().prop_map(Op::Cancel),
            4 => (1u32..3_000).prop_map(|minutes| Op::Advance { minutes }),
            4 => Just(Op::Run),
            2 => any::<u8>().prop_map(Op::DuplicateExecute),
            1 => (0u8..4).prop_map(Op::Suppress),
            1 => any::<bool>().prop_map(Op::Pause),
            1 => any::<bool>().prop_map(Op::Refuse),
            2 => (0u8..4, 0u8..3, 0u8..3).prop_map(|(member, kind, mode)| Op::CreateIn { member, kind, mode }),
            1 => any::<bool>().prop_map(Op::PauseAccount),
            1 => (0u8..4).prop_map(Op::Ramp),
            3 => (any::<u8>(), 0u8..5, any::<bool>()).prop_map(|(task, text, twice)| Op::Reply { task, text, twice }),
            1 => any::<u8>().prop_map(Op::Guide),
            3 => (0u8..4, any::<bool>(), any::<bool>()).prop_map(|(member, dry_run, approve)| Op::Automate { member, dry_run, approve }),
            1 => any::<bool>().prop_map(Op::ConnectorDown),
            3 => (1u32..3_000).prop_map(|minutes| Op::Elapse { minutes }),
            1 => any::<bool>().prop_map(Op::Autonomy),
        ]
    }

    const WEEKLY: u32 = 2;
    /// Above the warm-up's first weeks (3 and 5 a day), so the warm-up is what binds there.
    const DAILY: u32 = 6;

    struct Checker {
        connector: Arc<super::connector::FakeConnector>,
        /// For each suppressed address, how many mails had gone out when it was suppressed.
        suppressed_after: HashMap<String, usize>,
        paused: bool,
        account_paused: bool,
    }

    /// Every mail of this op went out within the warm-up's cap of its day: the
    /// mails of its local day up to and including it, at most the cap `onboarded_at` gives.
    fn within_warmup(w: &World, before: usize, onboarded_at: Option<Timestamp>) -> Result<(), String> {
        let sent = w.mailer.sent();
        let tz = w.account.settings.time_zone();
        for (index, mail) in sent.iter().enumerate().skip(before) {
            let Some(cap) = crate::rails::autonomy::warmup_cap(onboarded_at, mail.date) else {
                continue;
            };
            let day = crate::kernel::limits::local_date(mail.date, &tz);
            let that_day = sent[..=index]
                .iter()
                .filter(|m| crate::kernel::limits::local_date(m.date, &tz) == day)
                .count();
            if that_day > cap as usize {
                return Err(format!("{that_day} mails on {day}, above the warm-up's {cap}"));
            }
        }
        Ok(())
    }

    /// The keys of the member changes (tags) that went through, from the action log.
    async fn made_changes(w: &World, tasks: &[crate::kernel::ids::TaskId]) -> Result<Vec<String>, String> {
        let mut keys = Vec::new();
        for id in tasks {
            let records = w.store.task_actions(w.account.id, *id).await.map_err(|e| e.to_string())?;
            keys.extend(
                records
                    .into_iter()
                    .filter(|r| r.state == crate::task::action::ActionState::Done && r.action.was_pushpress_change())
                    .map(|r| r.key),
            );
        }
        Ok(keys)
    }

    /// Each task's scheduled time, before an op.
    async fn plans(w: &World, tasks: &[TaskId]) -> Result<HashMap<TaskId, Option<Timestamp>>, String> {
        let mut plans = HashMap::new();
        for id in tasks {
            let task = w.store.get_task(w.account.id, *id).await.map_err(|e| e.to_string())?;
            plans.insert(*id, task.and_then(|t| t.next_action_at));
        }
        Ok(plans)
    }

    fn in_first_touch_hours(w: &World, at: Timestamp) -> bool {
        let (from, to) = crate::kernel::limits::FIRST_TOUCH_HOURS;
        (from..to).contains(&w.local(at).hour())
    }

    /// The plans a tick at `now` found due (a tick the global pause stopped finds nothing).
    fn found_due(ticked: &mut std::collections::HashSet<(TaskId, Timestamp)>, plans: &HashMap<TaskId, Option<Timestamp>>, now: Timestamp) {
        for (id, due) in plans {
            if let Some(due) = due.filter(|due| crate::kernel::limits::is_due(*due, now)) {
                ticked.insert((*id, due));
            }
        }
    }

    /// Every first touch (touch 0, by its outbound record) mailed since `before` went in the
    /// morning hours — or later than its plan (`plans`, from before the op), which
    /// was in them, only because nothing ran when it was due: no tick found that plan due
    /// (`ticked`), the game's clock having jumped past it or the global pause having held
    /// every tick. (A touch 0 recorded in the shadow phase leaves its first mail a follow-up.)
    async fn first_touches_in_the_morning(
        w: &World,
        tasks: &[TaskId],
        before: usize,
        plans: &HashMap<TaskId, Option<Timestamp>>,
        ticked: &std::collections::HashSet<(TaskId, Timestamp)>,
    ) -> Result<(), String> {
        let sent = w.mailer.sent();
        for mail in sent.iter().skip(before) {
            let token_of = |id: &TaskId| w.engine.config.signing_key.reply_token(id);
            let Some(id) = tasks.iter().find(|id| mail.reply_to.contains(&token_of(id))) else {
                continue;
            };
            let outbound = w.store.outbound(w.account.id, *id).await.map_err(|e| e.to_string())?;
            let first = outbound.iter().any(|m| m.touch == 0 && m.message_id == mail.message_id);
            if !first || in_first_touch_hours(w, mail.date) {
                continue;
            }
            let Some(plan) = plans.get(id).copied().flatten() else {
                return Err(format!("first touch of {id} sent at {} with nothing planned", mail.date));
            };
            let no_tick_found_it = !ticked.contains(&(*id, plan));
            if !(in_first_touch_hours(w, plan) && mail.date > plan && no_tick_found_it) {
                return Err(format!(
                    "first touch of {id} sent at {} (planned {plan}, found due by a tick: {}) outside the morning hours",
                    mail.date, !no_tick_found_it
                ));
            }
        }
        Ok(())
    }

    async fn check(w: &World, checker: &Checker, tasks: &[crate::kernel::ids::TaskId]) -> Result<(), String> {
        // Every action went through at most once, and only for an approved, live task.
        let _ = &checker.connector;
        let changes = made_changes(w, tasks).await?;
        let mut keys: Vec<&str> = changes.iter().map(String::as_str).collect();
        keys.sort_unstable();
        if let Some(pair) = keys.windows(2).find(|p| p[0] == p[1]) {
            return Err(format!("action {} went through twice", pair[0]));
        }
        for key in &changes {
            let id: crate::kernel::ids::TaskId = key
                .split(':')
                .next()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("bad action key {key}"))?;
            let task = w
                .store
                .get_task(w.account.id, id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or("task vanished")?;
            if task.approved_at.is_none() || task.controls.mode != crate::task::controls::TaskMode::Live {
                return Err(format!("action {key} ran for a task that was not approved and live"));
            }
        }
        let sent = w.mailer.sent();
        let tz = w.account.settings.time_zone();
        let mut per_member: HashMap<String, Vec<Timestamp>> = HashMap::new();
        let mut per_day: HashMap<jiff::civil::Date, u32> = HashMap::new();
        // An answer to the member's own message (threaded on theirs, not on one of ours) is not
        // outreach: the member's caps count the rest.
        let ours: std::collections::HashSet<&str> = sent.iter().map(|m| m.message_id.as_str()).collect();
        for (index, mail) in sent.iter().enumerate() {
            let answer = mail.in_reply_to.as_deref().is_some_and(|id| !ours.contains(id));
            if !answer {
                per_member.entry(mail.to.to_string()).or_default().push(mail.date);
            }
            *per_day.entry(crate::kernel::limits::local_date(mail.date, &tz)).or_default() += 1;
            let hour = mail.date.to_zoned(tz.clone()).hour();
            if !(8..20).contains(&hour) {
                return Err(format!("sent outside the window at {}", mail.date));
            }
            if checker.suppressed_after.get(mail.to.as_str()).is_some_and(|count| index >= *count) {
                return Err(format!("sent to suppressed {}", mail.to));
            }
        }
        for (member, times) in &per_member {
            for t in times {
                let in_window = times.iter().filter(|u| **u <= *t && t.duration_since(**u) < MEMBER_WINDOW).count();
                if in_window > WEEKLY as usize {
                    return Err(format!("{member} got {in_window} messages in 7 days"));
                }
            }
        }
        for (member, times) in &per_member {
            let mut days: HashMap<jiff::civil::Date, usize> = HashMap::new();
            for t in times {
                *days.entry(crate::kernel::limits::local_date(*t, &tz)).or_default() += 1;
            }
            if let Some((day, n)) = days.iter().find(|(_, n)| **n > crate::kernel::limits::MEMBER_DAILY_LIMIT) {
                return Err(format!("{member} got {n} messages on {day}"));
            }
        }
        if let Some((day, n)) = per_day.iter().find(|(_, n)| **n > DAILY) {
            return Err(format!("{n} messages on {day}"));
        }
        for id in tasks {
            let history = w
                .store
                .task_history(w.account.id, *id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or("task vanished")?;
            let task = &history.task;
            // A task made ready plans its first touch in the morning hours (spec §29.3).
            let mails = crate::task::task_type::definition(&task.task_type).category == crate::task::task_type::Category::Communication;
            if let (true, [made], Some(due)) = (
                mails && task.status == TaskStatus::Ready,
                history.log.as_slice(),
                task.next_action_at,
            ) && made.to_status == TaskStatus::Ready
                && !in_first_touch_hours(w, due)
            {
                return Err(format!("task {id} made ready at {} plans its first touch at {due}", made.at));
            }
            if task.budget.messages_used > task.budget.messages_max {
                return Err(format!(
                    "task {id} used {} of {} messages",
                    task.budget.messages_used, task.budget.messages_max
                ));
            }
            let reply_token = w.engine.config.signing_key.reply_token(id);
            let mails = sent.iter().filter(|m| m.reply_to.contains(&reply_token)).count();
            if mails as u32 > task.budget.messages_max {
                return Err(format!("task {id} sent {mails} mails, budget {}", task.budget.messages_max));
            }
            if mails > 0 && task.controls.mode == crate::task::controls::TaskMode::DryRun {
                return Err(format!("dry-run task {id} sent {mails} mails"));
            }
            if mails > 0 && task.controls.plan.as_ref().is_some_and(|p| p.approved_at.is_none()) {
                return Err(format!("task {id} sent before its plan was approved"));
            }
            if history.log.len() as u64 != task.version {
                return Err(format!("task {id}: version {} but {} log entries", task.version, history.log.len()));
            }
            for entry in &history.log {
                if let Some(from) = entry.from_status
                    && from != entry.to_status
                    && !from.can_move_to(entry.to_status)
                {
                    return Err(format!("task {id}: logged an invalid move {from} → {}", entry.to_status));
                }
                // No close under 60 (spec §37.5): a close on the agent's judgment names it.
                let closed_on_judgment = entry.to_status == TaskStatus::Completed
                    && entry.from_status != Some(TaskStatus::Completed)
                    && entry.detail.as_deref().is_some_and(|d| d.starts_with("action Close, confidence "));
                let confidence = entry
                    .detail
                    .as_deref()
                    .and_then(|d| d.strip_prefix("action Close, confidence "))
                    .and_then(|d| d.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse::<u8>().ok());
                if closed_on_judgment && confidence.is_none_or(|c| c < crate::kernel::limits::CLOSE_MIN_CONFIDENCE) {
                    return Err(format!("task {id}: closed on the agent's judgment at confidence {confidence:?}"));
                }
            }
        }
        Ok(())
    }

    /// A created task; `None` when a creation limit refused it or its member is
    /// suppressed (no task for them, from any source); any other error.
    fn refused_if_limited<T>(result: Result<T, crate::task::error::EngineError>) -> Result<Option<T>, String> {
        match result {
            Ok(created) => Ok(Some(created)),
            Err(crate::task::error::EngineError::Limited(_) | crate::task::error::EngineError::MemberSuppressed { .. }) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Plays `ops`, checking the guarantees after each; the world as they left it.
    async fn play(ops: Vec<Op>) -> Result<World, String> {
        let mut w = world().await;
        w.engine.agent = Arc::new(WordsAgent);
        let connector = Arc::new(super::connector::FakeConnector::default());
        w.engine.connector = Some(connector.clone());
        let patch = super::super::SettingsPatch {
            member_weekly_limit: Some(WEEKLY),
            daily_send_limit: Some(DAILY),
            ..Default::default()
        };
        w.engine.update_settings(w.account.id, patch).await.map_err(|e| e.to_string())?;
        let account = w.engine.account(w.account.id).await.map_err(|e| e.to_string())?;
        let mut tasks = Vec::new();
        let mut checker = Checker {
            connector: connector.clone(),
            suppressed_after: HashMap::new(),
            paused: false,
            account_paused: false,
        };
        let kinds = ["churn_risk", "ad_hoc", "payment_recovery"];
        let mut account = account;
        // Each (task, plan) a tick the global pause did not stop found due.
        let mut ticked = std::collections::HashSet::new();
        for op in ops {
            let before = w.mailer.sent().len();
            let planned_before = plans(&w, &tasks).await?;
            let ticked_before = ticked.clone();
            let changed_before = made_changes(&w, &tasks).await?.len();
            let shadow = crate::rails::autonomy::RampPhase::since(account.settings.onboarded_at, w.clock.now())
                == crate::rails::autonomy::RampPhase::Shadow;
            match op {
                Op::Create { member, kind } => {
                    let input = w.new_task(kinds[kind as usize], &format!("m_{member}")).await;
                    // A creation limit's refusal is part of the game; it creates nothing.
                    let Some(created) = refused_if_limited(w.engine.create_task(&account, input).await)? else {
                        continue;
                    };
                    if !tasks.contains(&created.task().id) {
                        tasks.push(created.task().id);
                    }
                }
                Op::Approve(i) | Op::Skip(i) | Op::Cancel(i) if !tasks.is_empty() => {
                    let id = tasks[i as usize % tasks.len()];
                    // Refusals (invalid transitions) are part of the game; they must change nothing.
                    let _ = match op {
                        Op::Approve(_) => w.engine.approve(w.account.id, id, None).await,
                        Op::Skip(_) => w.engine.skip(w.account.id, id, None).await,
                        _ => w.engine.cancel(w.account.id, id).await,
                    };
                }
                Op::Advance { minutes } => w.clock.advance(SignedDuration::from_mins(i64::from(minutes))),
                Op::Run => {
                    w.run().await;
                    if !checker.paused {
                        found_due(&mut ticked, &planned_before, w.clock.now());
                    }
                }
                Op::Elapse { minutes } => {
                    let until = w.clock.now() + SignedDuration::from_mins(i64::from(minutes));
                    for step in 0..40 {
                        let planned = plans(&w, &tasks).await?;
                        let now = w.clock.now();
                        // What is due now first, then each scheduled time in turn.
                        let next = planned.values().flatten().copied().filter(|due| *due > now && *due < until).min();
                        let next = if step == 0 { now } else { next.unwrap_or(until) };
                        let (sent, ticked_before) = (w.mailer.sent().len(), ticked.clone());
                        w.clock.set(next);
                        w.run().await;
                        if !checker.paused {
                            found_due(&mut ticked, &planned, next);
                        }
                        first_touches_in_the_morning(&w, &tasks, sent, &planned, &ticked_before)
                            .await
                            .map_err(|e| format!("during {op:?}: {e}"))?;
                        if next == until {
                            break;
                        }
                    }
                    w.clock.set(until);
                }
                Op::DuplicateExecute(i) if !tasks.is_empty() => {
                    let id = tasks[i as usize % tasks.len()];
                    let item = WorkItem {
                        account_id: w.account.id,
                        task_id: id,
                        due_at: w.clock.now(),
                    };
                    let (a, b) = tokio::join!(w.engine.execute(&item), w.engine.follow_up(&item));
                    a.map_err(|e| e.to_string())?;
                    b.map_err(|e| e.to_string())?;
                }
                Op::Suppress(member) => {
                    let email = Email::parse(&format!("m-{member}@example.com")).map_err(|e| e.to_string())?;
                    w.store
                        .put_suppression(w.account.id, &email, "test", w.clock.now())
                        .await
                        .map_err(|e| e.to_string())?;
                    checker.suppressed_after.entry(email.to_string()).or_insert(w.mailer.sent().len());
                }
                Op::Pause(paused) => {
                    w.engine.set_global_pause(paused).await.map_err(|e| e.to_string())?;
                    checker.paused = paused;
                }
                Op::Refuse(refuse) => w.mailer.set_mode(if refuse { MailerMode::Reject } else { MailerMode::Deliver }),
                Op::CreateIn { member, kind, mode } => {
                    let input = w.new_task(kinds[kind as usize], &format!("m_{member}")).await;
                    let mode = [
                        crate::task::controls::TaskMode::Live,
                        crate::task::controls::TaskMode::DryRun,
                        crate::task::controls::TaskMode::Plan,
                    ][mode as usize];
                    let options = super::super::CreateOptions {
                        mode,
                        ..Default::default()
                    };
                    let Some(created) = refused_if_limited(w.engine.create_task_with(&account, input, options).await)? else {
                        continue;
                    };
                    if !tasks.contains(&created.task().id) {
                        tasks.push(created.task().id);
                    }
                }
                Op::PauseAccount(paused) => {
                    w.engine
                        .set_account_paused(w.account.id, paused, "owner")
                        .await
                        .map_err(|e| e.to_string())?;
                    checker.account_paused = paused;
                }
                Op::Ramp(phase) => {
                    let onboarded = w.clock.now() - days([0, 4, 10, 30][phase as usize]);
                    let patch = super::super::SettingsPatch {
                        onboarded_at: Some(onboarded),
                        ..Default::default()
                    };
                    w.engine.update_settings(w.account.id, patch).await.map_err(|e| e.to_string())?;
                    account = w.engine.account(w.account.id).await.map_err(|e| e.to_string())?;
                }
                Op::Reply { task, text, twice } if !tasks.is_empty() => {
                    let id = tasks[task as usize % tasks.len()];
                    let token = w.engine.config.signing_key.reply_token(&id);
                    if let Some(last) = w.mailer.sent().into_iter().rev().find(|m| m.reply_to.contains(&token)) {
                        let words = [
                            "STOP",
                            "See you Monday at 6",
                            "Can I bring a friend?",
                            "ok",
                            "maybe Monday, not sure",
                        ][text as usize];
                        let raw = format!(
                            "From: <{}>\r\nTo: <{}>\r\nMessage-ID: <r{}@m.example>\r\nSubject: Re: x\r\n\r\n{words}\r\n",
                            last.to,
                            last.reply_to,
                            crate::kernel::ids::new_ulid(w.clock.now())
                        );
                        if words == "STOP" {
                            checker.suppressed_after.entry(last.to.to_string()).or_insert(w.mailer.sent().len());
                        }
                        for _ in 0..if twice { 2 } else { 1 } {
                            w.engine.receive_reply(raw.as_bytes()).await.map_err(|e| e.to_string())?;
                        }
                    }
                }
                Op::Guide(i) if !tasks.is_empty() => {
                    let id = tasks[i as usize % tasks.len()];
                    let _ = w.engine.guidance(w.account.id, id, "Tell them we open at 6").await;
                }
                Op::Automate { member, dry_run, approve } => {
                    let mut input = w.new_task("member_update", &format!("m_{member}")).await;
                    input.draft = None;
                    let mode = if dry_run {
                        crate::task::controls::TaskMode::DryRun
                    } else {
                        crate::task::controls::TaskMode::Live
                    };
                    let actions = vec![
                        crate::task::action::Action::TagMember { tag: format!("t{member}") },
                        crate::task::action::Action::LogNote { text: "tagged".into() },
                    ];
                    let options = super::super::CreateOptions::with_mode(mode).with_actions(actions);
                    let Some(created) = refused_if_limited(w.engine.create_task_with(&account, input, options).await)? else {
                        continue;
                    };
                    let id = created.task().id;
                    if !tasks.contains(&id) {
                        tasks.push(id);
                    }
                    if approve {
                        let _ = w.engine.approve(w.account.id, id, None).await;
                    }
                }
                Op::ConnectorDown(down) => connector.set_down(down),
                Op::Autonomy(on) => {
                    let patch = super::super::SettingsPatch {
                        execution_mode: Some(if on { ExecutionMode::LimitedAuto } else { ExecutionMode::Manual }),
                        ..Default::default()
                    };
                    w.engine.update_settings(w.account.id, patch).await.map_err(|e| e.to_string())?;
                    account = w.engine.account(w.account.id).await.map_err(|e| e.to_string())?;
                }
                _ => {}
            }
            let changed_now = made_changes(&w, &tasks).await?.len() > changed_before;
            // (Time elapsing may end the shadow phase on its way; never a pause.)
            let shadow_throughout = shadow && !matches!(op, Op::Elapse { .. });
            if (checker.paused || checker.account_paused || shadow_throughout)
                && changed_now
                && !matches!(op, Op::Advance { .. } | Op::Ramp(_))
            {
                return Err("an action went through while paused or in the shadow phase".into());
            }
            let sent_now = w.mailer.sent().len() > before;
            if checker.paused && sent_now {
                return Err("sent while paused".into());
            }
            if checker.account_paused && sent_now {
                return Err("sent while the account was paused".into());
            }
            within_warmup(&w, before, account.settings.onboarded_at).map_err(|e| format!("after {op:?}: {e}"))?;
            if !matches!(op, Op::Elapse { .. }) {
                first_touches_in_the_morning(&w, &tasks, before, &planned_before, &ticked_before)
                    .await
                    .map_err(|e| format!("after {op:?}: {e}"))?;
            }
            if shadow && sent_now && !matches!(op, Op::Advance { .. } | Op::Ramp(_) | Op::Elapse { .. }) {
                return Err("sent in the shadow phase".into());
            }
            // Time elapsing ends the shadow phase on its way: each mail against its own moment.
            if let Some(mail) = w.mailer.sent().iter().skip(before).find(|m| {
                crate::rails::autonomy::RampPhase::since(account.settings.onboarded_at, m.date) == crate::rails::autonomy::RampPhase::Shadow
            }) {
                return Err(format!("sent at {} in the shadow phase", mail.date));
            }
            check(&w, &checker, &tasks).await.map_err(|e| format!("after {op:?}: {e}"))?;
        }
        Ok(w)
    }

    /// The checker sees automation actions: a played sequence that approves and runs one
    /// makes a change, and a change made twice fails the check.
    #[tokio::test]
    async fn automation_is_played_and_checked() {
        let ops = vec![
            Op::Automate {
                member: 1,
                dry_run: false,
                approve: false,
            },
            Op::Approve(0),
            Op::Run,
        ];
        Box::pin(play(ops)).await.expect("guarantees hold");
    }

    /// The checker sees a close under 60: a played reply the agent would close on unsurely
    /// leaves the task open (and the check would fail on a close).
    #[tokio::test]
    async fn an_unsure_close_is_played_and_checked() {
        let ops = vec![
            Op::Create { member: 0, kind: 0 },
            Op::Approve(0),
            Op::Run,
            Op::Reply {
                task: 0,
                text: 4,
                twice: false,
            },
            Op::Run,
        ];
        // On the heap, as the property test's runtime holds it: the whole game is one future.
        Box::pin(play(ops)).await.expect("guarantees hold");
    }

    /// The checker sees first touches: a task made ready at night is planned for the morning
    /// and sent then while time elapses; one approved in the afternoon waits for the next
    /// morning. (A first touch sent outside the morning hours, or a plan made outside them,
    /// fails the check.)
    #[tokio::test]
    async fn first_touches_are_played_and_checked() {
        let ops = vec![
            Op::Ramp(3),
            Op::Autonomy(true),
            Op::Advance { minutes: 17 * 60 }, // 02:00 in New York
            Op::Create { member: 0, kind: 0 },
            Op::Elapse { minutes: 8 * 60 },
            Op::Autonomy(false),
            Op::Create { member: 1, kind: 0 },
            Op::Advance { minutes: 5 * 60 }, // 15:00
            Op::Approve(1),
            Op::Elapse { minutes: 24 * 60 },
        ];
        let w = Box::pin(play(ops)).await.expect("guarantees hold");
        let sent = w.mailer.sent();
        assert_eq!(sent.len(), 2, "both first touches went");
        for (mail, day) in sent.iter().zip([3, 4]) {
            let local = w.local(mail.date);
            assert_eq!((local.day(), local.hour()), (day, 8), "the morning of {day} November: {local}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn the_guarantees_hold_whatever_happens(ops in proptest::collection::vec(op(), 1..60)) {
            // Played on a thread of its own with room to spare: an unoptimised build's engine
            // futures are large, and a case of sixty operations nests them deeply (a test
            // thread's 2 MB overflowed in a fresh clone's build).
            let played = std::thread::Builder::new()
                .stack_size(32 * 1024 * 1024)
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
                    runtime.block_on(Box::pin(play(ops))).map(drop)
                })
                .expect("a thread")
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            played.map_err(TestCaseError::fail)?;
        }
    }
}

#[tokio::test]
async fn unknown_task_types_keep_their_name_and_are_always_reviewed() {
    let w = world().await;
    let patch = super::SettingsPatch {
        execution_mode: Some(ExecutionMode::LimitedAuto),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    let mut input = w.new_task("fill_underbooked_class", "m_new").await;
    input.confidence = Some(100);
    let task = w.engine.create_task(&account, input).await.expect("create").task().clone();
    assert_eq!(
        (task.task_type.as_str(), task.status),
        ("fill_underbooked_class", TaskStatus::PendingReview)
    );
    assert_eq!(task.budget.messages_max, crate::task::task_type::AD_HOC.budget.max_messages);
    let mut bad = w.new_task("Fill Class!", "m_new").await;
    bad.confidence = None;
    assert!(
        matches!(w.engine.create_task(&account, bad).await, Err(crate::task::error::EngineError::Invalid(e)) if e.code == "invalid_task_type")
    );
}

#[tokio::test]
async fn a_member_gets_one_message_a_day_whatever_the_tasks() {
    let w = world().await;
    let first = w.approved("churn_risk", "m_busy").await;
    let second = w.approved("ad_hoc", "m_busy").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
    let held = if w.task(&first).await.touch == 1 { second } else { first };
    let held = w.task(&held).await;
    assert_eq!(
        held.next_action_at,
        Some(at("2026-11-03T05:00:00Z")),
        "deferred to the member's next local day"
    );
    w.clock.set(at("2026-11-03T14:00:00Z"));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2, "delayed, never skipped");
}

#[tokio::test]
async fn priority_rules_raise_a_new_task_and_the_log_names_the_rule() {
    let w = world().await;
    let member = w.member("m_vip").await;
    let (mut facts, _) = w.store.get_member(w.account.id, &member).await.expect("get").expect("facts");
    facts.monthly_value = Some(250.0);
    facts.status = Some(crate::members::event::MemberStatus::Active);
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");

    // lead_followup is medium by type; the shipped `high_value_member` rule raises it.
    let vip = w
        .engine
        .create_task(&w.account, w.new_task("lead_followup", "m_vip").await)
        .await
        .expect("create");
    assert_eq!(vip.task().priority, crate::task::task_type::Priority::High);
    let history = w.engine.task(w.account.id, vip.task().id).await.expect("history");
    let detail = history.log[0].detail.as_deref().unwrap_or_default();
    assert!(detail.contains("priority high by rule high_value_member"), "{detail}");

    let unsure = NewTask {
        confidence: Some(50),
        ..w.new_task("lead_followup", "m_plain").await
    };
    let plain = w.engine.create_task(&w.account, unsure).await.expect("create");
    assert_eq!(plain.task().priority, crate::task::task_type::Priority::Medium);
}

#[tokio::test]
async fn recurring_templates_spawn_once_per_occurrence_up_to_their_cap() {
    let w = world().await;
    let template = w
        .engine
        .create_template(
            &w.account,
            crate::owner::recurring::NewTemplate {
                task_type: crate::task::task_type::RegisteredTaskType::parse("task_type", "monthly_churn_analysis").expect("type"),
                cron: Some(crate::kernel::texts::CronExpression::parse("cron", "0 8 * * 1").expect("cron")),
                goal: None,
                member_id: None,
                max_instances: Some(2),
                notify: None,
            },
        )
        .await
        .expect("template");
    // day0 is Monday 09:00 in New York: the next Monday 08:00 is a week away, less an hour.
    assert_eq!(template.next_at, Some(at("2026-11-09T13:00:00Z")));
    let recurring_tasks = || async {
        let (tasks, _) = w
            .engine
            .list_tasks(
                w.account.id,
                &crate::ports::TaskQuery {
                    limit: 100,
                    ..Default::default()
                },
            )
            .await
            .expect("list");
        tasks.into_iter().filter(|t| t.trigger_type == TriggerType::Recurring).count()
    };

    w.run().await;
    assert_eq!(recurring_tasks().await, 0, "not due yet");
    w.clock.set(at("2026-11-09T13:00:00Z"));
    let first = w.engine.tick(super::Wake::Now).await.expect("tick");
    assert_eq!(first.recurring.spawned, 1);
    let again = w.engine.tick(super::Wake::Now).await.expect("tick");
    assert_eq!(again.recurring.spawned, 0, "an occurrence spawns once");
    assert_eq!(recurring_tasks().await, 1);

    // Close the first so the active-task guard does not fold the second into it.
    let (tasks, _) = w
        .engine
        .list_tasks(
            w.account.id,
            &crate::ports::TaskQuery {
                limit: 100,
                ..Default::default()
            },
        )
        .await
        .expect("list");
    for t in tasks.iter().filter(|t| t.is_active()) {
        w.engine.cancel(w.account.id, t.id).await.expect("cancel");
    }
    w.clock.set(at("2026-11-16T13:00:00Z"));
    assert_eq!(w.engine.tick(super::Wake::Now).await.expect("tick").recurring.spawned, 1);
    w.clock.set(at("2026-11-23T13:00:00Z"));
    let capped = w.engine.tick(super::Wake::Now).await.expect("tick");
    assert_eq!((capped.recurring.spawned, capped.recurring.disabled), (0, 1), "the cap disables it");
    assert_eq!(recurring_tasks().await, 2);
    let stored = w.engine.list_templates(w.account.id).await.expect("templates");
    assert!(!stored[0].enabled && stored[0].next_at.is_none() && stored[0].instances_created == 2);
}

#[tokio::test]
async fn recurring_templates_refuse_what_cannot_run() {
    let w = world().await;
    let new = |task_type: &str, cron: Option<&str>, member: Option<&str>| crate::owner::recurring::NewTemplate {
        task_type: crate::task::task_type::RegisteredTaskType::parse("task_type", task_type).expect("type"),
        cron: cron.map(|c| crate::kernel::texts::CronExpression::parse("cron", c).expect("cron")),
        goal: None,
        member_id: member.map(|m| MemberId::parse(m).expect("member")),
        max_instances: None,
        notify: None,
    };
    // An unregistered type is refused by the body's own type, before the engine sees it.
    let unregistered = crate::task::task_type::RegisteredTaskType::parse("task_type", "no_such_type").expect_err("refused");
    assert_eq!(unregistered.code, "invalid_task_type");
    for (input, code) in [
        (new("monthly_churn_analysis", Some("0 8 * *"), None), "invalid_cron"),
        (new("churn_risk", Some("0 8 * * 1"), None), "missing_member_id"),
        (new("churn_risk", None, Some("m_1")), "invalid_cron"),
    ] {
        match w.engine.create_template(&w.account, input).await {
            Err(crate::task::error::EngineError::Invalid(e)) => assert_eq!(e.code, code),
            other => panic!("expected {code}, got {other:?}"),
        }
    }
    assert!(w.engine.list_templates(w.account.id).await.expect("list").is_empty());
    // The type's own schedule is the default.
    let monthly = w
        .engine
        .create_template(&w.account, new("monthly_churn_analysis", None, None))
        .await
        .expect("monthly");
    assert_eq!((monthly.cron.as_str(), monthly.max_instances), ("0 8 1 * *", 24));
}

#[tokio::test]
async fn a_staff_todo_reminds_the_owner_then_escalates_and_never_mails_the_member() {
    let w = world().await;
    let input = NewTask {
        goal: "Call Sam about the schedule change".into(),
        draft: None,
        ..w.new_task("staff_call_member", "m_todo").await
    };
    let todo = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    assert_eq!(
        (todo.status, todo.draft.is_none()),
        (TaskStatus::PendingReview, true),
        "always reviewed, nothing drafted"
    );
    w.engine
        .approve(w.account.id, todo.id, None)
        .await
        .expect("accepting a to-do needs no draft");

    w.run().await;
    let started = w.task(&todo).await;
    assert_eq!((started.status, started.touch), (TaskStatus::Waiting, 1));
    assert_eq!(started.next_action_at, Some(day0() + days(1)));
    w.clock.advance(days(1));
    w.run().await;
    assert_eq!(w.task(&todo).await.touch, 2, "a reminder after a day");
    w.clock.advance(days(2));
    w.run().await;
    let done = w.task(&todo).await;
    assert_eq!(done.status, TaskStatus::Escalated, "ignored for 3 days: it escalates");
    assert!(w.mailer.sent().is_empty(), "a staff to-do never e-mails the member");
    let history = w.engine.task(w.account.id, todo.id).await.expect("history");
    assert_eq!(history.log.len() as u64, done.version, "every change logged");
    assert!(history.messages.iter().any(|m| m.content.starts_with("Reminder 1")));
    // The owner marks it done: closed with the type's outcome code.
    let closed = w
        .engine
        .resolve(
            w.account.id,
            todo.id,
            super::Resolution {
                outcome: "completed".into(),
                note: None,
            },
        )
        .await
        .expect("resolve");
    assert_eq!(closed.outcome.as_deref(), Some("completed"));
}

#[tokio::test]
async fn a_research_task_writes_its_report_from_the_accounts_tasks_and_completes() {
    let w = world().await;
    // Some history to report on.
    w.approved("churn_risk", "m_a").await;
    let lost = w.approved("churn_risk", "m_b").await;
    w.engine.cancel(w.account.id, lost.id).await.expect("cancel");
    let input = NewTask {
        draft: None,
        member_id: crate::owner::recurring::account_wide_member(),
        ..w.new_task("monthly_churn_analysis", "m_report").await
    };
    let research = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    w.engine.approve(w.account.id, research.id, None).await.expect("approve");
    w.run().await;
    let done = w.task(&research).await;
    assert_eq!(
        (done.status, done.outcome.as_deref()),
        (TaskStatus::Completed, Some("report_produced"))
    );
    let report = done.deliverable.expect("deliverable");
    assert_eq!(report.data["tasks_considered"], 2);
    assert_eq!(report.data["active_at_risk"], 1);
    assert!(report.content.contains("| churn_risk | 2 | 1 |"), "{}", report.content);
    assert!(w.mailer.sent().iter().all(|m| m.to.as_str() != "_account"));
}

mod account_removal;
mod actions;
mod calibration;
mod confidence;
mod connector;
mod deliverability;
mod erasure;
mod evaluation;
mod experiments;
mod gates;
mod good_by_default;
mod holdout;
mod intake;
mod learning_outcomes;
mod loop_fixtures;
mod loops;
mod loops_rest;
mod loops_step;
mod member_open_tasks;
mod memories;
mod metrics;
mod network;
mod outcomes;
mod owner_away;
mod owner_notices;
mod owner_words;
mod plans;
mod pooled_lift;
mod prompts;
mod rails;
mod replies;
mod scale;
mod send_hours;
mod subtasks;
mod timing;
mod todos;
mod walls;
mod webhooks;

//! Owner notifications on the in-memory store: an escalation and
//! a system alert reach the owner's inbox at once; opt-outs, late replies, reminders and tasks
//! awaiting approval wait for the digest within their daily budget; the daily digest sums up
//! the day; the account's kill switch silences members, not the owner; everything stays in
//! the feed.

use super::*;
use crate::conversation::reply::{ReplyAction, ReplyEvaluation};
use crate::engine::owner_notices::NoticeDraft;
use crate::kernel::limits;
use crate::owner::owner_notice::{NoticeDelivery, NoticeKind, NotificationChannel, OwnerNotice};
use crate::ports::Clock;
use crate::ports::{Agent, AgentError, CompletionRequest, DraftRequest, GoalProgress, ReplyRequest};

const OWNER: &str = "mike@crossfit-renegade.example";

/// An agent that escalates every reply with the member's question.
struct Escalates;

#[async_trait::async_trait]
impl Agent for Escalates {
    async fn draft(&self, request: &DraftRequest) -> Result<crate::ports::Drafted, AgentError> {
        FixedAgent.draft(request).await
    }
    async fn evaluate_reply(&self, _: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        Ok(ReplyEvaluation {
            action: ReplyAction::Escalate,
            outcome: None,
            confidence: 80,
            reasoning: "a question about opening hours".into(),
            reply: None,
            wait_days: None,
            suggest_suppression: false,
            provisional: false,
            unanswered_question: Some("Is the pool open on Sundays?".into()),
            other_subject: None,
        })
    }
    async fn evaluate_completion(&self, _: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        Err(AgentError("not used".into()))
    }
    async fn plan_next(&self, _: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, AgentError> {
        Err(AgentError("not used".into()))
    }
}

async fn owner_world(channel: NotificationChannel) -> World {
    let mut w = world().await;
    w.engine.agent = Arc::new(Escalates);
    let patch = crate::engine::SettingsPatch {
        owner_email: Some(Email::parse(OWNER).expect("email")),
        owner_notification_channel: Some(channel),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    w
}

fn to_owner(w: &World) -> Vec<crate::conversation::mail::OutboundMail> {
    w.mailer.sent().into_iter().filter(|m| m.to.as_str() == OWNER).collect()
}

async fn feed(w: &World) -> Vec<OwnerNotice> {
    w.engine.owner_notices(w.account.id, None, None).await.expect("feed").0
}

/// The feed without the kinds in `except`, newest first, as (kind, delivery).
async fn feed_kinds(w: &World, except: &[NoticeKind]) -> Vec<(NoticeKind, NoticeDelivery)> {
    feed(w)
        .await
        .iter()
        .filter(|n| !except.contains(&n.kind))
        .map(|n| (n.kind, n.delivery))
        .collect()
}

/// The member's question escalates `member`'s approved task after its first mail.
async fn escalated_by_a_question(w: &World, member: &str) -> Task {
    let task = w.approved("churn_risk", member).await;
    w.run().await;
    let to = format!("{member}@example.com").replace('_', "-");
    let raw = w.answer_newest(&to, &format!("{member}@mail.example.net"), "Is the pool open on Sundays?");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    let task = w.task(&task).await;
    assert_eq!(task.status, TaskStatus::Escalated);
    task
}

/// A new task for `member` that waits in the review queue.
async fn awaiting_review(w: &World, member: &str) -> Task {
    let input = w.new_task("churn_risk", member).await;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    assert_eq!(task.status, TaskStatus::PendingReview);
    task
}

/// A notice of `kind` about nothing in particular.
fn draft(kind: NoticeKind) -> NoticeDraft {
    NoticeDraft {
        kind,
        task_id: None,
        member_id: None,
        title: "t".into(),
        detail: "d".into(),
    }
}

/// Spend the account's AI calls for today until `calls` are made.
async fn ai_calls_made(w: &World, calls: u32) {
    let today = limits::local_date(w.clock.now(), &w.account.settings.time_zone());
    let made = w.store.ai_calls(w.account.id, today).await.expect("calls");
    for _ in made..calls {
        w.store
            .count_ai_call(w.account.id, today, limits::AI_CALLS_PER_ACCOUNT_PER_DAY)
            .await
            .expect("count");
    }
}

/// Given an owner with an address, when a member's question escalates a task, then the owner
/// is mailed at once; when another member says "stop", the owner hears of it in the next
/// digest (a slot of the send window), not before, and only once.
#[tokio::test]
async fn an_escalation_mails_the_owner_at_once_and_an_opt_out_waits_for_the_digest() {
    let w = owner_world(NotificationChannel::Email).await;
    w.approved("churn_risk", "m_stops").await;
    let asked = escalated_by_a_question(&w, "m_asks").await;
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 1, "the escalation is mailed at once");
    assert!(mails[0].text.contains("Is the pool open on Sundays?"), "{}", mails[0].text);
    // Owner mail links to the dashboard and says in words what to change there: never the
    // API, never the agent's internal words.
    for expected in [
        format!("Open the task: https://app.example.com/app/tasks/{}\n", asked.id),
        "Every notification is on your dashboard: https://app.example.com/app/notifications\n".to_owned(),
        "change \"Channel\" under Notifications on your settings page: https://app.example.com/app/settings#notify-heading\n".to_owned(),
    ] {
        assert!(mails[0].text.contains(&expected), "{expected:?} in {}", mails[0].text);
    }
    // The words, without the links (an action link's token is any base64).
    let words = mails[0]
        .text
        .split_whitespace()
        .filter(|w| !w.starts_with("http"))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!mails[0].text.contains("/api/"), "{}", mails[0].text);
    for internal in [
        "GET ",
        "PUT ",
        "owner_notification_channel",
        "action Escalate",
        "confidence",
        "T0",
        "Z)",
    ] {
        assert!(!words.contains(internal), "{internal:?} in {}", mails[0].text);
    }
    assert!(mails[0].unsubscribe_url.is_empty(), "owner mail is not a mailing");

    let raw = w.answer_newest("m-stops@example.com", "s1@mail.example.net", "STOP");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    assert_eq!(
        feed_kinds(&w, &[NoticeKind::ApprovalNeeded]).await,
        [
            (NoticeKind::MemberOptedOut, NoticeDelivery::Digest),
            (NoticeKind::Escalation, NoticeDelivery::Email)
        ],
        "newest first"
    );
    let digest_at = feed(&w).await[0].digest_at.expect("waits for a digest");
    assert_eq!(
        digest_at,
        at("2026-11-02T17:00:00Z"),
        "12:00 in New York: the next 4-hour slot of the 8–20 window"
    );
    assert_eq!(to_owner(&w).len(), 1, "the opt-out is not mailed on its own");

    w.clock.set(digest_at);
    w.run().await;
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 2, "one digest");
    assert!(mails[1].text.contains("will get no more mail"), "{}", mails[1].text);
    assert!(
        !mails[1].text.contains("awaits your approval"),
        "tasks the owner approved before the digest are not news: {}",
        mails[1].text
    );
    w.clock.advance(SignedDuration::from_hours(5));
    w.run().await;
    assert_eq!(to_owner(&w).len(), 2, "a digest goes once");
    assert_eq!(feed(&w).await[0].digest_at, None);
}

/// Given batchable notices past their kind's daily budget, then the rest stay in the feed
/// only, and the next local day has a fresh budget; immediate ones are never limited.
#[tokio::test]
async fn batchable_notices_past_their_daily_budget_stay_in_the_feed_only() {
    let w = owner_world(NotificationChannel::Email).await;
    let mut deliveries = Vec::new();
    for _ in 0..=limits::OWNER_LATE_REPLY_NOTICES_PER_DAY {
        let notice = w
            .engine
            .notify_owner(w.account.id, draft(NoticeKind::LateReply), false)
            .await
            .expect("notify");
        deliveries.push(notice.expect("account").delivery);
    }
    let budget = limits::OWNER_LATE_REPLY_NOTICES_PER_DAY as usize;
    assert!(deliveries[..budget].iter().all(|d| *d == NoticeDelivery::Digest));
    assert_eq!(deliveries[budget], NoticeDelivery::OverBudget);
    for _ in 0..15 {
        let notice = w
            .engine
            .notify_owner(w.account.id, draft(NoticeKind::Escalation), false)
            .await
            .expect("notify");
        assert_eq!(notice.expect("account").delivery, NoticeDelivery::Email);
    }
    w.clock.advance(days(1));
    let notice = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::LateReply), false)
        .await
        .expect("notify");
    assert_eq!(notice.expect("account").delivery, NoticeDelivery::Digest);
}

/// Given an owner who chose the dashboard, then an escalation is in the feed and no mail goes.
#[tokio::test]
async fn a_dashboard_only_owner_gets_the_feed_and_no_mail() {
    let w = owner_world(NotificationChannel::DashboardOnly).await;
    escalated_by_a_question(&w, "m_asks").await;
    assert!(to_owner(&w).is_empty());
    assert_eq!(
        feed_kinds(&w, &[NoticeKind::ApprovalNeeded]).await,
        [(NoticeKind::Escalation, NoticeDelivery::Dashboard)]
    );
}

/// Given tasks entering the review queue,
/// then the next digest names the first five in one list under the queue's true size, the
/// rest stay in the feed only, and a task the owner approved meanwhile is left out.
#[tokio::test]
async fn tasks_awaiting_approval_are_batched_into_one_digest_that_counts_the_whole_queue() {
    let w = owner_world(NotificationChannel::Email).await;
    let budget = limits::OWNER_APPROVAL_NOTICES_PER_DAY as usize;
    let mut waiting = Vec::new();
    for n in 0..budget + 2 {
        waiting.push(awaiting_review(&w, &format!("m_review{n}")).await);
    }
    let deliveries: Vec<NoticeDelivery> = feed(&w).await.iter().rev().map(|n| n.delivery).collect();
    assert_eq!(deliveries[..budget], vec![NoticeDelivery::Digest; budget]);
    assert_eq!(deliveries[budget..], [NoticeDelivery::OverBudget, NoticeDelivery::OverBudget]);
    assert!(to_owner(&w).is_empty(), "batched: nothing is mailed on its own");

    w.engine.approve(w.account.id, waiting[0].id, None).await.expect("approve");
    w.clock.set(at("2026-11-02T17:00:00Z"));
    w.run().await;
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 1, "one digest for all of them");
    let queue = budget + 1;
    assert_eq!(mails[0].subject, format!("{}: {queue} tasks need your review", w.account.name));
    assert_eq!(
        mails[0].text.matches("awaits your approval").count(),
        budget - 1,
        "{}",
        mails[0].text
    );
    assert!(
        mails[0]
            .text
            .contains(&format!("…and {} more in the review queue.", queue - (budget - 1))),
        "{}",
        mails[0].text
    );
}

/// Given an account whose AI calls reach 80% of the day's limit, then the owner
/// gets one system alert at once — not one per call — and one more when the calls run out;
/// the next day starts afresh.
#[tokio::test]
async fn the_owner_is_warned_once_at_80_percent_of_the_days_ai_calls_and_once_when_they_run_out() {
    let w = owner_world(NotificationChannel::Email).await;
    let warn_at = limits::AI_CALLS_PER_ACCOUNT_PER_DAY * limits::AI_WARN_PCT / 100;
    ai_calls_made(&w, warn_at - 1).await;
    let world = &w;
    let without_draft = move |member: &'static str| async move {
        let mut input = world.new_task("churn_risk", member).await;
        input.draft = None;
        world.engine.create_task(&world.account, input).await.expect("create");
    };
    without_draft("m_ai1").await;
    without_draft("m_ai2").await;
    let alerts = |w: &World| {
        to_owner(w)
            .into_iter()
            .map(|m| m.subject)
            .filter(|s| s.contains("AI"))
            .collect::<Vec<_>>()
    };
    assert_eq!(alerts(&w).len(), 1, "{:?}", alerts(&w));
    assert!(alerts(&w)[0].contains("AI usage at 80% of today's limit"), "{:?}", alerts(&w));
    assert_eq!(
        feed_kinds(&w, &[NoticeKind::ApprovalNeeded]).await,
        [(NoticeKind::SystemAlert, NoticeDelivery::Email)]
    );

    ai_calls_made(&w, limits::AI_CALLS_PER_ACCOUNT_PER_DAY).await;
    without_draft("m_ai3").await;
    without_draft("m_ai4").await;
    assert_eq!(alerts(&w).len(), 2, "{:?}", alerts(&w));
    assert!(alerts(&w)[1].contains("AI calls for today used up"), "{:?}", alerts(&w));

    w.clock.advance(days(1));
    ai_calls_made(&w, warn_at - 1).await;
    without_draft("m_ai5").await;
    assert_eq!(alerts(&w).len(), 3, "a new day, a new warning");
}

/// Given a day with mail sent, a task waiting for approval and an open escalation, then from
/// the account's `brief_hour` (7 local by default) the owner gets one morning brief — in
/// place of the daily digest — with what to do now and yesterday's numbers, once that day,
/// however often the hourly run comes; `brief_hour: null` turns the mail off.
#[tokio::test]
async fn the_morning_brief_replaces_the_daily_digest_once_a_day_from_brief_hour() {
    let w = owner_world(NotificationChannel::Email).await;
    escalated_by_a_question(&w, "m_asks").await;
    awaiting_review(&w, "m_waits").await;
    let escalation_mails = to_owner(&w).len();

    // 06:30 in New York: not yet.
    w.clock.set(at("2026-11-03T11:30:00Z"));
    w.engine.record_metrics().await.expect("metrics");
    assert_eq!(w.engine.send_daily_digests().await.expect("briefs"), 0);
    // 07:10: the first hourly run from the brief's hour.
    w.clock.set(at("2026-11-03T12:10:00Z"));
    w.engine.record_metrics().await.expect("metrics");
    assert_eq!(w.engine.send_daily_digests().await.expect("briefs"), 1);
    let mails = to_owner(&w);
    assert_eq!(mails.len(), escalation_mails + 1);
    let brief = mails.last().expect("brief");
    assert_eq!(
        brief.subject,
        format!("{}: Today: Write to Sam, who asked: “Is the pool open on Sundays?”", w.account.name),
        "the call the escalation asks for comes first"
    );
    for expected in [
        "Your morning brief for Tuesday, November 3",
        "Do this now:\n1. Write to Sam, who asked: “Is the pool open on Sundays?”",
        "2. 1 task waits for your approval",
        "Yesterday: 2 mails sent, 1 reply, 1 escalation.",
        "https://app.example.com/app/today",
    ] {
        assert!(brief.text.contains(expected), "{expected:?} in {}", brief.text);
    }
    // The first action names Sam once, in plain words.
    let first = brief.text.lines().find(|l| l.starts_with("1. ")).expect("an action");
    assert_eq!(first.matches("Sam").count(), 1, "{first}");
    assert_eq!(
        brief.text.matches("Write to Sam").count(),
        1,
        "the to-do asked for under \"Do this now\" is not listed again: {}",
        brief.text
    );
    assert!(first.ends_with("(waiting 1 day)") || first.ends_with("(due today)"), "{first}");
    assert!(!brief.text.contains("(s)") && !brief.text.contains("/api/"), "{}", brief.text);
    assert!(!brief.text.contains("daily summary"), "one mail a day, not two");
    assert_eq!(
        feed_kinds(&w, &[NoticeKind::ApprovalNeeded]).await[0],
        (NoticeKind::DailyDigest, NoticeDelivery::Digest)
    );
    w.clock.set(at("2026-11-03T17:30:00Z"));
    w.run().await;
    assert_eq!(w.engine.send_daily_digests().await.expect("briefs"), 0, "once a day");
    let briefs = to_owner(&w).iter().filter(|m| m.text.contains("Your morning brief")).count();
    assert_eq!(briefs, 1);

    let off = crate::engine::SettingsPatch {
        brief_hour: Some(None),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, off).await.expect("settings");
    w.clock.set(at("2026-11-04T14:00:00Z"));
    assert_eq!(
        w.engine.send_daily_digests().await.expect("briefs"),
        0,
        "no morning mail when turned off"
    );
}

/// Given an account with nothing in its day, then no brief is mailed.
#[tokio::test]
async fn a_day_with_nothing_in_it_mails_no_brief() {
    let w = owner_world(NotificationChannel::Email).await;
    w.clock.set(at("2026-11-03T13:00:00Z"));
    assert_eq!(w.engine.send_daily_digests().await.expect("briefs"), 0);
    assert!(to_owner(&w).is_empty());
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert!(brief.is_empty(), "{brief:?}");
}

/// Given quiet hours (21–7 by default), an escalation at 23:00 waits for 07:00 and leaves
/// then, while a critical notice (the account's own trouble) goes at once.
#[tokio::test]
async fn notices_hold_through_quiet_hours_and_critical_ones_do_not() {
    let w = owner_world(NotificationChannel::Email).await;
    // 23:00 in New York.
    w.clock.set(at("2026-11-03T04:00:00Z"));
    let held = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::Escalation), false)
        .await
        .expect("notice")
        .expect("recorded");
    assert_eq!(
        (held.delivery, held.digest_at),
        (NoticeDelivery::Digest, Some(at("2026-11-03T12:00:00Z"))),
        "held to 07:00"
    );
    w.engine
        .notify_owner(w.account.id, draft(NoticeKind::SystemAlert), false)
        .await
        .expect("notice");
    assert_eq!(to_owner(&w).len(), 1, "the critical one goes at once");
    w.clock.set(at("2026-11-03T11:50:00Z"));
    w.run().await;
    assert_eq!(to_owner(&w).len(), 1, "still quiet at 06:50");
    w.clock.set(at("2026-11-03T12:00:00Z"));
    w.run().await;
    assert_eq!(to_owner(&w).len(), 2, "it leaves when the quiet hours end");
    let quiet = crate::engine::SettingsPatch {
        quiet_hours: Some(crate::owner::quiet::QuietHours { start: 0, end: 0 }),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, quiet).await.expect("settings");
    w.clock.set(at("2026-11-04T04:00:00Z"));
    let at_once = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::Escalation), false)
        .await
        .expect("notice")
        .expect("recorded");
    assert_eq!(at_once.delivery, NoticeDelivery::Email, "no quiet hours: at once");
}

/// Given a task left in the review queue, then on day 7 (`review_expiry_days`) it is closed
/// as `review_expired` — nothing sent — and the next brief says so.
#[tokio::test]
async fn a_review_item_expires_on_day_seven_and_the_brief_says_so() {
    let w = owner_world(NotificationChannel::Email).await;
    let waits = awaiting_review(&w, "m_waits").await;
    let call = w
        .engine
        .create_task(
            &w.account,
            NewTask {
                draft: None,
                ..w.new_task("staff_call_member", "m_call").await
            },
        )
        .await
        .expect("call")
        .task()
        .clone();
    w.clock.set(day0() + days(7) - SignedDuration::from_mins(1));
    assert_eq!(w.engine.expire_reviews(&w.account, w.clock.now()).await.expect("expire"), 0);
    assert_eq!(w.task(&waits).await.status, TaskStatus::PendingReview);
    // Day 7, 09:10 local: the hourly run expires it, then the brief leaves.
    w.clock.set(at("2026-11-09T14:10:00Z"));
    w.engine.send_daily_digests().await.expect("briefs");
    let closed = w.task(&waits).await;
    assert_eq!(
        (closed.status, closed.outcome.as_deref(), closed.outcome_reason.as_deref()),
        (TaskStatus::Cancelled, Some("review_expired"), Some("review_expired"))
    );
    assert_eq!(
        w.task(&call).await.status,
        TaskStatus::PendingReview,
        "a call on the list is left to its own reminders"
    );
    let brief = to_owner(&w).into_iter().last().expect("a brief");
    assert!(
        brief.text.contains("1 review item waited too long and was closed"),
        "{}",
        brief.text
    );
    let api = w.engine.brief(w.account.id, None).await.expect("brief");
    assert_eq!(api.review_expired, 1);
    let fewer = crate::engine::SettingsPatch {
        review_expiry_days: Some(0),
        ..Default::default()
    };
    assert!(w.engine.update_settings(w.account.id, fewer).await.is_err(), "1-90 days");
}

/// Given an owner who paused their account, then members get nothing — but the
/// owner still hears of what happens: an opt-out and a task awaiting approval in the digest,
/// an AI alert at once. Member-facing silence is the switch's point; owner silence is not.
#[tokio::test]
async fn a_paused_account_silences_members_but_still_tells_its_owner() {
    let w = owner_world(NotificationChannel::Email).await;
    let follows_up = w.approved("churn_risk", "m_follow").await;
    w.approved("churn_risk", "m_leaves").await;
    let stops = w.approved("churn_risk", "m_stops").await;
    w.run().await;
    let to_members = |w: &World| w.mailer.sent().iter().filter(|m| m.to.as_str() != OWNER).count();
    assert_eq!(to_members(&w), 3);
    w.engine.set_account_paused(w.account.id, true, "owner").await.expect("pause");

    // A member's stop is honoured at once, paused or not: nothing of theirs may go on resume.
    let raw = w.answer_newest("m-stops@example.com", "stop@mail.example.net", "STOP");
    w.engine.receive_reply(&raw).await.expect("receive");
    let stopped = w.task(&stops).await;
    assert_eq!(
        (stopped.status, stopped.outcome.as_deref()),
        (TaskStatus::Cancelled, Some("opted_out"))
    );

    let leaves = Email::parse("m-leaves@example.com").expect("email");
    w.engine
        .suppress(w.account.id, &leaves, "unsubscribe_link")
        .await
        .expect("suppress");
    awaiting_review(&w, "m_new").await;
    ai_calls_made(&w, limits::AI_CALLS_PER_ACCOUNT_PER_DAY * limits::AI_WARN_PCT / 100 - 1).await;
    let mut input = w.new_task("win_back", "m_ai").await;
    input.draft = None;
    w.engine.create_task(&w.account, input).await.expect("create");
    assert_eq!(to_owner(&w).len(), 1, "the AI alert goes at once, paused or not");

    w.clock.set(at("2026-11-02T17:00:00Z"));
    w.run().await;
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 2, "the digest goes, paused or not");
    assert!(mails[1].text.contains("will get no more mail"), "{}", mails[1].text);
    assert!(mails[1].text.contains("need your review"), "{}", mails[1].text);

    // The follow-up falls due while paused: deferred, not sent.
    w.clock.set(follows_up.created_at + days(3) + SignedDuration::from_mins(1));
    w.run().await;
    assert_eq!(to_members(&w), 3, "nothing reaches a member while the account is paused");
    assert_eq!(w.task(&follows_up).await.touch, 1);
}

/// An owner seen, then away two days, gets only what needs them now mailed (an escalation,
/// with its action links; a system alert), the rest in the feed; their return brings one
/// "while you were away" summary, once; the risk scan allows them fewer new tasks a run.
#[tokio::test]
async fn an_away_owner_gets_escalations_mailed_the_rest_in_the_feed_and_one_summary_on_return() {
    let w = owner_world(NotificationChannel::Email).await;
    w.engine.note_owner_seen(w.account.id).await.expect("seen");
    // Two days later, 10:00 in New York.
    w.clock.set(at("2026-11-04T15:00:00Z"));
    let held = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::LateReply), false)
        .await
        .expect("notice")
        .expect("recorded");
    assert_eq!(held.delivery, NoticeDelivery::Dashboard, "away: the feed only");
    let escalation = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::Escalation), false)
        .await
        .expect("notice")
        .expect("recorded");
    assert_eq!(
        escalation.delivery,
        NoticeDelivery::Email,
        "an escalation never waits for the owner's return"
    );
    assert_eq!(to_owner(&w).len(), 1);
    w.engine
        .notify_owner(w.account.id, draft(NoticeKind::SystemAlert), false)
        .await
        .expect("notice");
    assert_eq!(to_owner(&w).len(), 2, "a critical notice still goes");
    w.clock.set(at("2026-11-04T15:30:00Z"));
    w.engine.note_owner_seen(w.account.id).await.expect("back");
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 3, "one summary on return");
    assert!(mails[2].subject.contains("While you were away"), "{}", mails[2].subject);
    w.clock.set(at("2026-11-04T17:00:00Z"));
    w.engine.note_owner_seen(w.account.id).await.expect("again");
    assert_eq!(to_owner(&w).len(), 3, "once");
    let now_active = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::Escalation), false)
        .await
        .expect("notice")
        .expect("recorded");
    assert_eq!(now_active.delivery, NoticeDelivery::Email, "back: at once again");
}

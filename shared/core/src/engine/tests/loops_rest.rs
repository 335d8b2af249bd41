//! The owner's rows on Openloop's own events (`task_closed`, `todo_done`, `no_checkin_days`),
//! good news for a win, a schedule's back-off, a to-do's loop escalating an overdue to-do, and
//! the risk scan proposing less while the owner is away — on the in-memory store.

use super::loop_fixtures::checkin;
use super::*;
use crate::members::member::MemberFacts;
use crate::owner::trigger::TriggerInput;
use crate::ports::Clock;
use crate::task::open_loop::{Expects, LoopStatus, OnDeadline};
use crate::task::todo::TodoStatus;

impl World {
    async fn trigger(&self, body: serde_json::Value) -> String {
        let input: TriggerInput = serde_json::from_value(body).expect("trigger input");
        self.engine.create_trigger(self.account.id, input).await.expect("create trigger").id
    }

    async fn active_of(&self, member: &str) -> Vec<Task> {
        self.store
            .member_active_tasks(self.account.id, &MemberId::parse(member).expect("id"))
            .await
            .expect("tasks")
    }

    async fn notice_titles(&self) -> Vec<String> {
        let (notices, _) = self.store.list_notices(self.account.id, 200, None).await.expect("notices");
        notices.into_iter().map(|n| n.title).collect()
    }

    async fn away_since(&self, member: &str, days_away: i64) {
        let now = self.clock.now();
        let mut facts = MemberFacts::new(MemberId::parse(member).expect("id"));
        facts.email = Email::parse(&format!("{member}@example.com").replace('_', "-")).ok();
        facts.first_name = Some("Gus".into());
        facts.status = Some(crate::members::event::MemberStatus::Active);
        facts.joined_at = Some(now - days(400));
        facts.monthly_value = Some(150.0);
        let checkins: Vec<Timestamp> = (0..12).map(|k| now - days(days_away + 3 * k)).collect();
        facts.checkin_count = checkins.len() as u32;
        facts.checkins = checkins.into_iter().rev().collect();
        facts.last_checkin_at = facts.checkins.last().copied();
        facts.version = 1;
        self.store.save_member_facts(self.account.id, &facts).await.expect("facts");
    }
}

#[tokio::test]
async fn an_owners_row_on_task_closed_opens_its_task_when_a_matching_task_closes_once_per_member() {
    let w = world().await;
    // A close before any row reads the table once and remembers there is none.
    let before = w.approved("churn_risk", "m_early").await;
    w.engine.cancel(w.account.id, before.id).await.expect("cancel");
    let tid = w
        .trigger(serde_json::json!({
            "event": "task_closed", "task_type": "staff_call_member", "goal": "Call them: the agent gave up",
            "filter": {"task_type": "churn_risk", "task_status": "cancelled"}, "reentry": "once"
        }))
        .await;

    let churn = w.approved("churn_risk", "m_closed").await;
    let other = w.approved("lead_followup", "m_other").await;
    w.engine.cancel(w.account.id, other.id).await.expect("cancel");
    assert!(w.active_of("m_other").await.is_empty(), "the filter names churn checks only");
    w.engine.cancel(w.account.id, churn.id).await.expect("cancel");
    let opened = w.active_of("m_closed").await;
    assert_eq!(opened.len(), 1, "a row added after a close fires on the next one: {opened:?}");
    assert_eq!(opened[0].task_type, "staff_call_member");
    assert_eq!(opened[0].trigger_event_id, Some(format!("task_closed:{}", churn.id)));
    assert_eq!(opened[0].trigger_context["trigger_id"], tid.as_str());

    // Once per member: the call done, another churn check closing opens nothing more.
    w.engine.cancel(w.account.id, opened[0].id).await.expect("cancel the call");
    let again = w.approved("churn_risk", "m_closed").await;
    w.engine.cancel(w.account.id, again.id).await.expect("cancel");
    assert!(w.active_of("m_closed").await.is_empty(), "re-entry once");
    let row = w
        .engine
        .triggers(w.account.id)
        .await
        .expect("rows")
        .into_iter()
        .find(|t| t.id == tid);
    assert_eq!(row.map(|t| t.fired_count), Some(1));

    // Its dry run counts the closes of the last 30 days that match, creating nothing.
    let dry = w.engine.dry_run_trigger(w.account.id, &tid).await.expect("dry run");
    assert_eq!(dry.would_open, 2, "m_early and m_closed: {dry:?}");
    assert!(w.active_of("m_early").await.is_empty());
}

#[tokio::test]
async fn an_owners_row_on_todo_done_opens_its_task_when_the_owner_marks_a_matching_to_do_done() {
    let w = world().await;
    w.trigger(serde_json::json!({
        "event": "todo_done", "task_type": "staff_call_member", "goal": "Try the call again",
        "filter": {"outcome": "left_message"}, "reentry": "after_days", "reentry_days": 1
    }))
    .await;
    let call = w
        .engine
        .create_task(&w.account, w.new_task("staff_call_member", "m_todo").await)
        .await
        .expect("create");
    let todos = w.engine.todos(w.account.id, TodoStatus::Open).await.expect("todos");
    assert_eq!(todos.len(), 1, "{todos:?}");
    w.engine
        .complete_todo(w.account.id, todos[0].id, Some("left_message"), None)
        .await
        .expect("done");
    let open = w.active_of("m_todo").await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_ne!(open[0].id, call.task().id, "a new call, the first one settled with its to-do");
    assert_eq!(open[0].trigger_event_id, Some(format!("todo_done:{}", todos[0].id)));

    // Its to-do's loop was met by the owner's "done", not left to escalate.
    let loops = w.loops_of("m_todo").await;
    let first = loops
        .iter()
        .find(|l| l.todo_id == Some(todos[0].id.to_string()))
        .expect("the to-do's loop");
    assert_eq!(
        (first.status, first.met_by.clone()),
        (LoopStatus::Met, Some(format!("todo_done:{}", todos[0].id)))
    );
}

#[tokio::test]
async fn an_owners_row_on_no_checkin_days_opens_its_task_from_the_scan_past_its_own_gap() {
    let w = world().await;
    w.away_since("m_gone", 10).await;
    w.away_since("m_recent", 8).await;
    let tid = w
        .trigger(serde_json::json!({
            "event": "no_checkin_days", "task_type": "staff_call_member", "goal": "A friendly call",
            "filter": {"days_since_checkin": {"min": 10}, "monthly_value": {"min": 100}}, "reentry": "once"
        }))
        .await;
    let dry = w.engine.dry_run_trigger(w.account.id, &tid).await.expect("dry run");
    assert_eq!(dry.members.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["m_gone"], "{dry:?}");
    assert!(w.active_of("m_gone").await.is_empty(), "a dry run opens nothing");

    w.engine.analyze_account(&w.account).await.expect("scan");
    let opened = w.active_of("m_gone").await;
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0].task_type, "staff_call_member");
    assert!(w.active_of("m_recent").await.is_empty(), "8 days is under the row's gap");
    w.engine.cancel(w.account.id, opened[0].id).await.expect("cancel");
    w.clock.set(w.clock.now() + days(1));
    w.engine.analyze_account(&w.account).await.expect("scan again");
    assert!(w.active_of("m_gone").await.is_empty(), "once per member");
}

#[tokio::test]
async fn a_win_reaches_the_owner_as_good_news_when_its_schedule_asks_and_never_tells_nothing() {
    let w = world().await;
    let mut templates = Vec::new();
    for (member, notify) in [("m_win", "on_win"), ("m_quiet", "never")] {
        w.member(member).await;
        let input: crate::owner::recurring::NewTemplate = serde_json::from_value(serde_json::json!({
            "task_type": "churn_risk", "member_id": member, "cron": "0 9 1 * *", "notify": notify
        }))
        .expect("template");
        let template = w.engine.create_template(&w.account, input).await.expect("template");
        w.engine.run_template_now(w.account.id, template.id).await.expect("run now");
        templates.push(template);
    }
    for member in ["m_win", "m_quiet"] {
        let task = w.active_of(member).await.pop().expect("the instance");
        w.engine.approve(w.account.id, task.id, None).await.expect("approve");
        let task = w.task(&task).await;
        w.run_when_due(&task).await;
        assert_eq!(w.task(&task).await.touch, 1, "{member}: the first touch went");
    }
    let before = w.notice_titles().await;
    w.clock.set(w.clock.now() + SignedDuration::from_hours(2));
    for member in ["m_win", "m_quiet"] {
        w.signal(&format!("back_{member}"), checkin(member, w.clock.now())).await;
        assert!(w.active_of(member).await.is_empty(), "{member}: back, the task completed");
    }
    let news: Vec<String> = w
        .notice_titles()
        .await
        .into_iter()
        .filter(|t| !before.contains(t) && t.starts_with("Good news"))
        .collect();
    assert_eq!(news.len(), 1, "the on_win schedule's win only: {news:?}");
    assert!(news[0].contains("Sam"), "{news:?}");
}

#[tokio::test]
async fn a_schedule_that_keeps_finding_nothing_runs_less_often_and_returns_to_its_rhythm_with_work() {
    let w = world().await;
    let input: crate::owner::recurring::NewTemplate = serde_json::from_value(serde_json::json!({
        "task_type": "monthly_churn_analysis", "cron": "0 9 * * *", "max_instances": 50
    }))
    .expect("template");
    let template = w.engine.create_template(&w.account, input).await.expect("template");
    let current = || async {
        w.engine
            .list_templates(w.account.id)
            .await
            .expect("templates")
            .into_iter()
            .find(|t| t.id == template.id)
            .expect("the template")
    };
    // Run after run: the first opens the analysis, the rest find it still open.
    let mut gaps = Vec::new();
    for _ in 0..7 {
        let due = current().await.next_at.expect("scheduled");
        w.clock.set(due);
        w.run().await;
        let next = current().await.next_at.expect("still scheduled");
        gaps.push(next.duration_since(due).as_hours() / 24);
    }
    assert_eq!(gaps, [1, 1, 1, 2, 4, 8, 8], "doubling after three idle runs, up to every 8th day");
    let backed_off = current().await;
    assert_eq!((backed_off.backoff.idle_runs, backed_off.backoff.every), (6, 8));
    let runs = w.engine.template_runs(w.account.id, template.id).await.expect("runs");
    assert_eq!(runs[0].every, 8, "each run says the rhythm it left: {runs:?}");

    // The analysis closed, the next run finds work: back to every day.
    let open = w.active_of(crate::owner::recurring::account_wide_member().as_str()).await;
    assert_eq!(open.len(), 1, "{open:?}");
    w.engine.cancel(w.account.id, open[0].id).await.expect("cancel");
    let due = current().await.next_at.expect("scheduled");
    w.clock.set(due);
    w.run().await;
    let back = current().await;
    assert_eq!((back.backoff.idle_runs, back.backoff.every), (0, 1));
    assert_eq!(
        back.next_at.map(|n| n.duration_since(due).as_hours() / 24),
        Some(1),
        "its rhythm again"
    );
}

#[tokio::test]
async fn a_todos_loop_escalates_it_once_at_its_deadline_unless_the_members_checkin_met_it_first() {
    let w = world().await;
    for member in ["m_back", "m_silent"] {
        w.engine
            .create_task(&w.account, w.new_task("staff_call_member", member).await)
            .await
            .expect("a staff call");
    }
    // On the call list from the first minute, each with its loop.
    let todos = w.engine.todos(w.account.id, TodoStatus::Open).await.expect("todos");
    assert_eq!(todos.len(), 2, "{todos:?}");
    for member in ["m_back", "m_silent"] {
        let loops = w.loops_of(member).await;
        assert_eq!(loops.len(), 1, "{loops:?}");
        assert_eq!(
            (loops[0].expects, loops[0].on_deadline, loops[0].status),
            (Expects::Checkin, OnDeadline::Escalate, LoopStatus::Open),
            "a call to get them back: their check-in meets it"
        );
        assert_eq!(loops[0].deadline, day0() + SignedDuration::from_hours(48));
    }

    w.clock.set(day0() + days(1));
    w.signal("back_checkin", checkin("m_back", w.clock.now())).await;
    let met = w.loops_of("m_back").await;
    assert_eq!(
        (met[0].status, met[0].met_by.as_deref()),
        (LoopStatus::Met, Some("checkin.created:back_checkin"))
    );

    let overdue = |title: &String| title.starts_with("Overdue to-do");
    w.clock.set(day0() + SignedDuration::from_hours(48) + SignedDuration::from_mins(1));
    w.run().await;
    w.clock.set(day0() + SignedDuration::from_hours(50));
    w.run().await;
    let told: Vec<String> = w.notice_titles().await.into_iter().filter(overdue).collect();
    assert_eq!(told.len(), 1, "the silent member's to-do, once: {told:?}");
    let (notices, _) = w.store.list_notices(w.account.id, 50, None).await.expect("notices");
    let detail = notices
        .iter()
        .find(|n| overdue(&n.title))
        .map(|n| n.detail.clone())
        .unwrap_or_default();
    assert!(
        detail.starts_with("On your call list for 2 days and not done yet.") && !detail.contains('Z'),
        "how long, in words: {detail}"
    );
    assert_eq!(w.loops_of("m_silent").await[0].status, LoopStatus::Expired);
    assert_eq!(w.loops_of("m_back").await[0].status, LoopStatus::Met, "met stays met");
}

#[tokio::test]
async fn the_risk_scan_proposes_fewer_tasks_while_the_owner_is_away() {
    let active = world().await;
    let away = world().await;
    for w in [&active, &away] {
        for n in 0..30 {
            w.away_since(&format!("m_lapsed{n:02}"), 30).await;
        }
    }
    // One owner used the dashboard an hour ago; the other three days ago.
    active.clock.set(day0() - SignedDuration::from_hours(1));
    active.engine.note_owner_seen(active.account.id).await.expect("seen");
    away.clock.set(day0() - days(3));
    away.engine.note_owner_seen(away.account.id).await.expect("seen");
    let mut created = Vec::new();
    for w in [&active, &away] {
        w.clock.set(day0());
        let account = w.store.get_account(w.account.id).await.expect("read").expect("account");
        created.push(w.engine.analyze_account(&account).await.expect("scan").created);
    }
    assert_eq!(
        created,
        [
            crate::kernel::limits::MAX_TASKS_PER_RUN,
            crate::kernel::limits::MAX_TASKS_PER_RUN / 2
        ],
        "an owner away gets half a run's proposals"
    );
}

/// Issue 47: given a recurring template run now twice while its first instance is open, then
/// one task is open and one instance spent — the second run found the open task and gave its
/// instance back, so the cap counts tasks once.
#[tokio::test]
async fn a_double_run_now_spends_one_instance_for_its_one_task() {
    let w = world().await;
    w.member("m_twice").await;
    let input: crate::owner::recurring::NewTemplate = serde_json::from_value(serde_json::json!({
        "task_type": "churn_risk", "member_id": "m_twice", "cron": "0 9 1 * *", "max_instances": 2
    }))
    .expect("template");
    let template = w.engine.create_template(&w.account, input).await.expect("template");
    let first = w.engine.run_template_now(w.account.id, template.id).await.expect("run now");
    let second = w.engine.run_template_now(w.account.id, template.id).await.expect("run now again");
    assert_eq!(w.active_of("m_twice").await.len(), 1, "one task");
    assert_eq!((first.instances_created, second.instances_created), (1, 1), "one instance spent");
}

/// An owner's row fired by a member's event, with the function killed before any store call
/// of its own (every call after the kill fails): when the event comes again — SQS's redelivery
/// — the row fires, once. Its re-entry claim is written with the task it opens, never ahead of
/// it, so no kill leaves the firing claimed and the task unopened.
#[tokio::test]
async fn a_triggers_firing_cut_short_at_any_store_call_fires_once_when_the_event_comes_again() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    for kill_at in 0.. {
        let (armed, calls) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let store = {
            let (armed, calls) = (armed.clone(), calls.clone());
            Arc::new(MemoryStore::with_faults(Arc::new(move || {
                (armed.load(Ordering::SeqCst) && calls.fetch_add(1, Ordering::SeqCst) >= kill_at)
                    .then(|| crate::kernel::error::StoreError::Unavailable("injected: the function was killed".into()))
            })))
        };
        let mut w = world().await;
        store.create_account(&w.account, "hash").await.expect("account");
        w.engine.store = store.clone();
        w.store = store;
        w.trigger(serde_json::json!({
            "event": "checkin.created", "task_type": "milestone_review", "goal": "Ask for a review after their class", "reentry": "once"
        }))
        .await;
        w.away_since("m_kept", 1).await;
        let envelope = SignalEnvelope {
            account_id: w.account.id,
            webhook_id: "wh_kept".into(),
            received_at: w.clock.now(),
            event: WebhookEvent {
                timestamp: w.clock.now(),
                event: checkin("m_kept", w.clock.now()),
            },
        };
        armed.store(true, Ordering::SeqCst);
        let cut_short = w.engine.apply_signal(&envelope).await.is_err();
        armed.store(false, Ordering::SeqCst);
        // Redelivered (a no-op when the first delivery went through whole).
        w.engine.apply_signal(&envelope).await.expect("redelivered");
        let opened: Vec<Task> = w
            .active_of("m_kept")
            .await
            .into_iter()
            .filter(|t| t.task_type == "milestone_review")
            .collect();
        assert_eq!(opened.len(), 1, "killed at store call {kill_at}: {opened:?}");
        if !cut_short {
            assert!(kill_at > 3, "the firing made only {kill_at} store calls");
            break;
        }
    }
}

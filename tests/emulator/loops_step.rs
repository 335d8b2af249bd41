//! A task's loops on DynamoDB: the member's check-in meeting the task's goal loop, the
//! deadline sweep expiring its loops and the task's own step acting on them, all at once on
//! the same tasks — each loop is resolved exactly once, the task's note of it says what its
//! record says, and a goal met is a task completed.

use openloop_core::members::event::MemberStatus;
use openloop_core::ports::prelude::*;
use openloop_core::task::commit::TaskCommit;
use openloop_core::task::open_loop::{Expects, LoopStatus, OnDeadline, OpenLoop};
use openloop_core::task::reason::Reason;
use openloop_core::task::transition::{Why, record};
use openloop_core::task::work::WorkItem;
use openloop_core::task::{TaskStatus, task_loops};
use openloop_tests::Scratch;

use crate::loop_fixtures::{by_hand, checkins, race_account, six_members};

#[tokio::test]
async fn a_checkin_the_sweep_and_the_tasks_step_racing_on_its_loops_resolve_each_once() {
    let scratch = Scratch::new("task-loop-race");
    let (engine, store, clock, account) = race_account(&scratch, "Step Gym").await;
    let start = engine.now();
    let deadline = start + jiff::SignedDuration::from_hours(1);
    let sent_at = start - jiff::SignedDuration::from_hours(24);

    // Six churn tasks, each past its last touch: a reply and a check-in expected by `deadline`,
    // both noted on the task in the commit that registers them (as a sent touch does).
    let members = six_members(&store, &account, "step", MemberStatus::Active, "Stu", true).await;
    let mut tasks = Vec::new();
    for member in &members {
        let input = by_hand("churn_risk", member, "Bring them back");
        let created = engine
            .create_task(&account, input)
            .await
            .unwrap_or_else(|e| panic!("task: {e}"))
            .task()
            .clone();
        let (mut waiting, log) = record(&created, start, Why::new(Reason::MessageSent));
        waiting.status = TaskStatus::Waiting;
        waiting.touch = 1;
        waiting.budget.messages_used = waiting.budget.messages_max;
        waiting.execution_started_at = Some(sent_at);
        waiting.next_action_at = Some(deadline);
        let loops = vec![
            OpenLoop::new(account.id, member.clone(), Expects::Reply, deadline, OnDeadline::Close, sent_at).for_task(created.id),
            OpenLoop::new(account.id, member.clone(), Expects::Checkin, deadline, OnDeadline::Close, sent_at).for_task(created.id),
        ];
        task_loops::note(&mut waiting, &loops);
        let mut commit = TaskCommit::new(waiting, log);
        commit.loops = loops;
        store.commit(&commit).await.unwrap_or_else(|e| panic!("waiting: {e}"));
        tasks.push(created.id);
    }
    // Past the hour the sweep leaves a task's loops to its step: all three may act.
    let now = deadline + task_loops::LEFT_TO_STEP + jiff::SignedDuration::from_mins(1);
    clock.set(now).unwrap_or_else(|e| panic!("clock: {e}"));

    // Each member's check-in (delivered twice), four sweeps and each task's step twice, at once.
    let envelopes = checkins(&account, &members, now);
    let items: Vec<WorkItem> = tasks
        .iter()
        .map(|id| WorkItem {
            account_id: account.id,
            task_id: *id,
            due_at: deadline,
        })
        .collect();
    // Staggered by a few reads each (the first member's step starts first, the last member's
    // check-in), so the tasks see different orders of the three.
    let wait = |reads: usize, item: &WorkItem| {
        let (store, item) = (&store, item.clone());
        async move {
            for _ in 0..reads {
                let _ = store.get_task(item.account_id, item.task_id).await;
            }
        }
    };
    let n = members.len();
    let engine = &engine;
    let signals = futures::future::join_all(envelopes.iter().chain(envelopes.iter()).enumerate().map(|(i, e)| {
        let before = wait(2 * (n - 1 - i % n), &items[i % n]);
        async move {
            before.await;
            engine.apply_signal(e).await
        }
    }));
    let sweeps = futures::future::join_all((0..4).map(|_| engine.sweep_loops()));
    let steps = futures::future::join_all(items.iter().chain(items.iter()).enumerate().map(|(i, item)| {
        let before = wait(2 * (i % n), item);
        async move {
            before.await;
            engine.follow_up(item).await
        }
    }));
    let (applied, swept, stepped) = futures::future::join3(signals, sweeps, steps).await;
    assert!(applied.iter().all(Result::is_ok), "{applied:?}");
    assert!(swept.iter().all(Result::is_ok), "{swept:?}");
    assert!(stepped.iter().all(Result::is_ok), "{stepped:?}");

    let (mut met, mut expired) = (0, 0);
    for (member, id) in members.iter().zip(&tasks) {
        let task = store
            .get_task(account.id, *id)
            .await
            .unwrap_or_else(|e| panic!("task: {e}"))
            .unwrap_or_else(|| panic!("task {id}"));
        let records = store
            .list_loops(account.id, None, Some(member), 10)
            .await
            .unwrap_or_else(|e| panic!("loops: {e}"));
        assert_eq!(records.len(), 2, "{records:?}");
        for record in &records {
            assert_ne!(record.status, LoopStatus::Open, "{member}: a loop left open: {record:?}");
            assert_eq!(record.met_by.is_some(), record.status == LoopStatus::Met, "{record:?}");
            if let Some(note) = task.loops.iter().find(|n| n.id == record.id) {
                assert_eq!(note.status, record.status, "{member}: the task and the record disagree");
            }
        }
        let goal = records
            .iter()
            .find(|l| l.expects == Expects::Checkin)
            .unwrap_or_else(|| panic!("{member}: the goal loop"));
        match goal.status {
            LoopStatus::Met => {
                met += 1;
                assert_eq!(task.status, TaskStatus::Completed, "{member}: a goal met is a task completed");
            }
            _ => expired += 1,
        }
        let history = store
            .task_history(account.id, *id)
            .await
            .unwrap_or_else(|e| panic!("history: {e}"))
            .unwrap_or_else(|| panic!("history {id}"));
        let count = |reason: Reason| history.log.iter().filter(|l| l.reason == reason.as_str()).count();
        assert!(count(Reason::LoopMet) <= 1, "{member}: met once: {:?}", history.log);
        assert!(count(Reason::LoopExpired) <= 2, "{member}: each expired at most once");
        assert!(history.outbound.is_empty(), "{member}: nothing was sent");
    }
    eprintln!("task loop race: {met} goal loops met, {expired} expired");
    assert_eq!(met + expired, members.len());
}

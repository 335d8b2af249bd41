//! The conformance of [`LoopStore`]: loops are registered with their task's commit or alone,
//! found by member and by deadline while open, listed per account, and moved out of `open`
//! exactly once.
//!
//! [`LoopStore`]: crate::ports::LoopStore

use jiff::SignedDuration;

use crate::kernel::ids::AccountId;
use crate::kernel::limits::DUE_INDEX_SHARDS;
use crate::ports::TaskStore;
use crate::task::TaskStatus;
use crate::task::commit::TaskCommit;
use crate::task::open_loop::{Expects, LoopStatus, OnDeadline, OpenLoop};
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};

use super::{base, member, new_task};

async fn overdue_of(store: &dyn TaskStore, account: AccountId, until: jiff::Timestamp) -> Vec<OpenLoop> {
    let mut all = Vec::new();
    for shard in 0..DUE_INDEX_SHARDS {
        all.extend(store.overdue_loops(shard, until, 100).await.expect("overdue"));
    }
    all.retain(|l| l.account_id == account);
    all.sort_by_key(|l| (l.deadline, l.id));
    all
}

pub(super) async fn a_loop_is_registered_with_its_task_found_while_open_and_resolved_once(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    let task = new_task(store, account, "m_loop", TaskStatus::Waiting).await;
    let soon = base() + SignedDuration::from_hours(1);
    let later = base() + SignedDuration::from_hours(48);

    // A reply expected, written in the task's own commit.
    let reply = OpenLoop::new(account, member("m_loop"), Expects::Reply, later, OnDeadline::FollowUp, base()).for_task(task.id);
    let (next, log) = record(&task, base(), Why::new(Reason::MessageSent));
    let mut commit = TaskCommit::new(next, log);
    commit.loops.push(reply.clone());
    store.commit(&commit).await.expect("commit with a loop");
    // A trial expected, alone; and another account's loop for a member of the same id.
    let trial = OpenLoop::new(
        account,
        member("m_loop"),
        Expects::TrialAttended,
        soon,
        OnDeadline::NoShowFollowup,
        base(),
    );
    let elsewhere = OpenLoop::new(other, member("m_loop"), Expects::Checkin, soon, OnDeadline::Close, base());
    let someone_else = OpenLoop::new(account, member("m_loop2"), Expects::Checkin, soon, OnDeadline::Close, base());
    store
        .put_loops(&[trial.clone(), elsewhere.clone(), someone_else.clone()])
        .await
        .expect("put loops");

    let mut open = store.member_open_loops(account, &member("m_loop")).await.expect("member loops");
    open.sort_by_key(|l| l.id);
    assert_eq!(
        open,
        vec![reply.clone(), trial.clone()],
        "loops: the member's open loops, in this account only"
    );
    assert_eq!(
        overdue_of(store, account, soon).await,
        vec![trial.clone(), someone_else.clone()],
        "loops: overdue by deadline across shards, not the later one"
    );

    // Met once: a second resolution, met or expired, changes nothing.
    let met = OpenLoop {
        status: LoopStatus::Met,
        met_by: Some("checkin.created:wh_1".into()),
        resolved_at: Some(soon),
        ..trial.clone()
    };
    assert!(store.resolve_loop(&met).await.expect("resolve"), "loops: the first resolution wins");
    let expired = OpenLoop {
        status: LoopStatus::Expired,
        resolved_at: Some(soon),
        ..trial.clone()
    };
    assert!(
        !store.resolve_loop(&expired).await.expect("resolve"),
        "loops: a resolved loop is not resolved again"
    );
    assert!(!store.resolve_loop(&met).await.expect("resolve"), "loops: not even the same way");
    let open = store.member_open_loops(account, &member("m_loop")).await.expect("member loops");
    assert_eq!(open, vec![reply.clone()], "loops: a met loop is no longer open");
    assert_eq!(
        overdue_of(store, account, later).await,
        vec![someone_else.clone(), reply.clone()],
        "loops: a met loop leaves the deadline index"
    );

    // Listed newest first, by status and member.
    let all = store.list_loops(account, None, None, 10).await.expect("list");
    assert_eq!(
        all.iter().map(|l| l.id).collect::<Vec<_>>(),
        vec![someone_else.id, trial.id, reply.id],
        "loops: the account's, newest first"
    );
    assert_eq!(all[1], met, "loops: stored as resolved");
    let met_list = store.list_loops(account, Some(LoopStatus::Met), None, 10).await.expect("list");
    assert_eq!(met_list, vec![met], "loops: by status");
    let mine = store
        .list_loops(account, Some(LoopStatus::Open), Some(&member("m_loop")), 10)
        .await
        .expect("list");
    assert_eq!(mine, vec![reply], "loops: by status and member");
    assert_eq!(
        store.list_loops(account, None, None, 1).await.expect("list").len(),
        1,
        "loops: limited"
    );
}

pub(super) async fn a_trigger_book_is_versioned_per_account_and_keeps_its_filters(store: &dyn TaskStore) {
    use crate::owner::trigger::{Firing, TriggerBook, TriggerInput};
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    assert_eq!(
        store.trigger_book(account).await.expect("book"),
        TriggerBook::default(),
        "triggers: empty until written"
    );
    let input: TriggerInput = serde_json::from_value(serde_json::json!({
        "event": "checkin.created", "task_type": "milestone_review", "reentry": "after_days", "reentry_days": 7,
        "delay_hours": 2, "filter": {"class_name": "Yoga", "monthly_value": {"min": 99.5}, "checkin_count": 10, "checkin_milestone": true}
    }))
    .expect("input");
    let mut book = TriggerBook {
        custom: vec![input.into_trigger("t_1".into()).expect("valid")],
        version: 1,
        ..TriggerBook::default()
    };
    book.builtin_enabled.insert("payment_failed".into(), false);
    book.record(Firing {
        at: base(),
        trigger_id: "t_1".into(),
        member_id: member("m_trig"),
        event_id: "wh_1".into(),
        task_id: None,
        opens_at: Some(base() + SignedDuration::from_hours(2)),
    });
    store.save_trigger_book(account, &book).await.expect("save");
    assert!(
        super::is_conflict(
            store.save_trigger_book(account, &book).await,
            crate::kernel::error::Conflict::Version
        ),
        "triggers: a second writer of the same version loses"
    );
    assert_eq!(store.trigger_book(account).await.expect("book"), book, "triggers: read back whole");
    assert_eq!(
        store.trigger_book(other).await.expect("book"),
        TriggerBook::default(),
        "triggers: per account"
    );
    let next = TriggerBook { version: 2, ..book };
    store.save_trigger_book(account, &next).await.expect("save over its version");
    assert_eq!(store.trigger_book(account).await.expect("book").version, 2);
}

pub(super) async fn a_todo_is_made_with_its_loop_in_one_write_once_per_source(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let first = super::todos::todo(account, "task:x:created", 0);
    let deadline = base() + SignedDuration::from_hours(48);
    let wait = OpenLoop::for_todo(account, first.member.id.clone(), &first.id.to_string(), true, deadline, base()).for_task(first.task_id);
    assert!(store.create_todo_with_loop(&first, &wait, true).await.expect("create"), "made");
    assert_eq!(store.get_todo(account, first.id).await.expect("get"), Some(first.clone()));
    let open = store.member_open_loops(account, &first.member.id).await.expect("loops");
    assert_eq!(open, vec![wait.clone()], "its loop, found by member");
    let overdue = overdue_of(store, account, deadline).await;
    assert_eq!(overdue.iter().map(|l| l.id).collect::<Vec<_>>(), vec![wait.id], "and by deadline");

    // The same source again: nothing written, neither the to-do nor its loop.
    let again = super::todos::todo(account, "task:x:created", 0);
    let second = OpenLoop::for_todo(account, again.member.id.clone(), &again.id.to_string(), true, deadline, base());
    assert!(
        !store.create_todo_with_loop(&again, &second, true).await.expect("create"),
        "once per source"
    );
    assert_eq!(store.get_todo(account, again.id).await.expect("get"), None);
    assert_eq!(store.member_open_loops(account, &first.member.id).await.expect("loops").len(), 1);
}

pub(super) async fn a_task_commit_resolves_its_loop_only_while_the_loop_is_open(store: &dyn TaskStore) {
    use crate::kernel::error::{Conflict, StoreError};
    use crate::task::task_loops;
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_resolve", TaskStatus::Waiting).await;
    let later = base() + SignedDuration::from_hours(48);
    let goal = OpenLoop::new(account, member("m_resolve"), Expects::Checkin, later, OnDeadline::Close, base()).for_task(task.id);
    let stored_loop = async || {
        store
            .list_loops(account, None, Some(&member("m_resolve")), 10)
            .await
            .expect("loops")
            .into_iter()
            .find(|l| l.id == goal.id)
            .expect("the loop")
    };

    // Registered and noted on the task in one commit.
    let (mut noted, log) = record(&task, base(), Why::new(Reason::MessageSent));
    task_loops::note(&mut noted, std::slice::from_ref(&goal));
    let mut commit = TaskCommit::new(noted.clone(), log);
    commit.loops.push(goal.clone());
    store.commit(&commit).await.expect("commit with a loop");
    let read = store.get_task(account, task.id).await.expect("get").expect("task");
    assert_eq!(read.loops, noted.loops, "loops: the task carries its loop's note");

    // Met with its task: the record and the note move together.
    let (mut met_task, log) = record(&noted, base(), Why::new(Reason::LoopMet));
    let met =
        task_loops::resolve(&mut met_task, goal.id, LoopStatus::Met, Some("checkin.created:wh".into()), base()).expect("an open note");
    let mut commit = TaskCommit::new(met_task.clone(), log);
    commit.loops.push(met.clone());
    store.commit(&commit).await.expect("met with its task");
    assert_eq!(stored_loop().await, met, "loops: resolved in the task's commit");
    assert!(
        overdue_of(store, account, later).await.is_empty(),
        "loops: a loop resolved in a commit leaves the deadline index"
    );

    // Resolving it again, even over the task's current version, is refused whole.
    let (mut again, log) = record(&met_task, base(), Why::new(Reason::LoopExpired));
    again.loops.clear();
    let expired = OpenLoop {
        status: LoopStatus::Expired,
        met_by: None,
        ..met.clone()
    };
    let mut commit = TaskCommit::new(again, log);
    commit.loops.push(expired);
    assert!(
        matches!(store.commit(&commit).await, Err(StoreError::Conflict(Conflict::Version))),
        "loops: a resolved loop is not resolved again by a task's commit"
    );
    let read = store.get_task(account, task.id).await.expect("get").expect("task");
    assert_eq!(
        (read.version, read.loops.clone()),
        (met_task.version, met_task.loops.clone()),
        "loops: nothing of the refused commit is written"
    );
    assert_eq!(stored_loop().await, met, "loops: the first resolution stands");
}

//! The conformance of [`TaskIndex`]: the due and attribution indexes hold what they should and
//! page; the task list and the activity feed are scoped by account and paged.
//!
//! [`TaskIndex`]: crate::ports::TaskIndex

use jiff::{SignedDuration, Timestamp};

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, TaskId};
use crate::kernel::limits::DUE_INDEX_SHARDS;
use crate::ports::{TaskQuery, TaskStore};
use crate::task::commit::TaskCommit;
use crate::task::reason::Reason;
use crate::task::transition::{Why, created, record, transition};
use crate::task::work::due_shard;
use crate::task::{Task, TaskStatus};
use crate::testing::{at, sample_task_for};

use super::{base, member, new_task};

async fn churn_task(store: &dyn TaskStore, account: AccountId, member_name: &str) -> Task {
    let mut task = sample_task_for(account, member(member_name), TaskStatus::Waiting, base());
    task.task_type = "churn_risk".into();
    task.touch = 1;
    task.execution_started_at = Some(base());
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    task
}

/// The ids of every task `query` lists, page by page, no page above its limit.
async fn every_page(store: &dyn TaskStore, account: AccountId, mut query: TaskQuery) -> Vec<TaskId> {
    let mut seen = Vec::new();
    loop {
        let (tasks, next) = store.list_tasks(account, &query).await.expect("list");
        assert!(tasks.len() <= query.limit, "list: a page holds at most its limit");
        seen.extend(tasks.iter().map(|t| t.id));
        match next {
            Some(c) => query.cursor = Some(c),
            None => return seen,
        }
    }
}

pub(super) async fn the_due_index_holds_what_is_scheduled_and_pages(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    // A distinctive time, far from other scenarios' schedules.
    let when = at("2001-01-01T00:00:00Z");
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut task = sample_task_for(account, member(&format!("m_due_{i}")), TaskStatus::Ready, when);
        task.next_action_at = Some(when + SignedDuration::from_secs(i));
        store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        ids.push(task);
    }
    let mine = |entries: &[crate::task::work::DueEntry]| {
        entries
            .iter()
            .filter(|e| e.account_id == account)
            .map(|e| e.task_id)
            .collect::<Vec<TaskId>>()
    };
    let mut found = Vec::new();
    for shard in 0..DUE_INDEX_SHARDS {
        let mut cursor = None;
        loop {
            let (entries, next) = store.due(shard, when + SignedDuration::from_secs(3), 1, cursor).await.expect("due");
            assert!(entries.len() <= 1, "due: the limit is respected");
            for entry in entries.iter().filter(|e| e.account_id == account) {
                assert_eq!(due_shard(&entry.task_id, DUE_INDEX_SHARDS), shard, "due: entry in the wrong shard");
            }
            found.extend(mine(&entries));
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    found.sort();
    let mut expected: Vec<TaskId> = ids.iter().take(4).map(|t| t.id).collect();
    expected.sort();
    assert_eq!(found, expected, "due: exactly the tasks due by `until`, across pages");
    // Closing a task takes it out of the index.
    let (closed, log) = transition(&ids[0], TaskStatus::Cancelled, when, Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    let shard = due_shard(&ids[0].id, DUE_INDEX_SHARDS);
    let (entries, _) = store
        .due(shard, when + SignedDuration::from_secs(10), 1000, None)
        .await
        .expect("due");
    assert!(!mine(&entries).contains(&ids[0].id), "due: a closed task left the index");
}

pub(super) async fn task_lists_are_scoped_filtered_and_paged(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(
            new_task(
                store,
                account,
                &format!("m_list_{i}"),
                if i % 2 == 0 { TaskStatus::PendingReview } else { TaskStatus::Ready },
            )
            .await
            .id,
        );
    }
    new_task(store, AccountId::generate(base()), "m_list_0", TaskStatus::PendingReview).await;
    let seen = every_page(
        store,
        account,
        TaskQuery {
            limit: 2,
            ..TaskQuery::default()
        },
    )
    .await;
    let mut newest_first = made.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first, "list: every task of the account, newest first, across pages");
    let (pending, _) = store
        .list_tasks(
            account,
            &TaskQuery {
                status: Some(TaskStatus::PendingReview),
                limit: 50,
                ..TaskQuery::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(pending.len(), 3, "list: status filter");
    let paged = every_page(
        store,
        account,
        TaskQuery {
            status: Some(TaskStatus::PendingReview),
            limit: 1,
            ..TaskQuery::default()
        },
    )
    .await;
    let pending_newest_first: Vec<_> = made.iter().rev().step_by(2).copied().collect();
    assert_eq!(
        paged, pending_newest_first,
        "list: a filtered list pages through every match once, newest first"
    );
    let (one, _) = store
        .list_tasks(
            account,
            &TaskQuery {
                member_id: Some(member("m_list_1")),
                limit: 50,
                ..TaskQuery::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(one.iter().map(|t| t.id).collect::<Vec<_>>(), vec![made[1]], "list: member filter");
    assert!(matches!(
        store
            .list_tasks(
                account,
                &TaskQuery {
                    cursor: Some("not-a-cursor".into()),
                    limit: 5,
                    ..TaskQuery::default()
                }
            )
            .await,
        Err(StoreError::InvalidCursor)
    ));
}

pub(super) async fn the_attribution_index_holds_watched_closed_tasks_and_revisions_keep_the_guard(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let closed_at = base() + SignedDuration::from_hours(24 * 14);
    // Closed unanswered after writing: watched for a late win. Closed by the owner: not.
    let unanswered = churn_task(store, account, "m_attr_1").await;
    let (unanswered, log) = transition(
        &unanswered,
        TaskStatus::Cancelled,
        closed_at,
        Why::new(Reason::BudgetTimeExpired).outcome("unresponsive"),
    )
    .expect("valid");
    assert!(unanswered.attribution_until.is_some());
    store.commit(&TaskCommit::new(unanswered.clone(), log)).await.expect("close");
    let handled = churn_task(store, account, "m_attr_2").await;
    let (handled, log) = transition(
        &handled,
        TaskStatus::Completed,
        closed_at,
        Why::new(Reason::OwnerResolved).outcome("owner_handled"),
    )
    .expect("valid");
    store.commit(&TaskCommit::new(handled, log)).await.expect("close");
    let still_open = churn_task(store, account, "m_attr_3").await;
    let mut found = Vec::new();
    for shard in 0..DUE_INDEX_SHARDS {
        let mut cursor = None;
        loop {
            let (tasks, next) = store.attribution_watch(shard, 1, cursor).await.expect("attribution_watch");
            assert!(tasks.len() <= 1, "attribution: the limit is respected");
            for task in tasks.iter().filter(|t| t.account_id == account) {
                assert_eq!(
                    due_shard(&task.id, DUE_INDEX_SHARDS),
                    shard,
                    "attribution: entry in the wrong shard"
                );
                found.push(task.clone());
            }
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    assert_eq!(
        found,
        vec![unanswered.clone()],
        "attribution: exactly the watched closed task, as stored"
    );
    let (due, _) = store
        .due(
            due_shard(&still_open.id, DUE_INDEX_SHARDS),
            base() + SignedDuration::from_hours(24),
            1000,
            None,
        )
        .await
        .expect("due");
    assert!(
        due.iter().all(|e| e.task_id != unanswered.id),
        "attribution: a watched task is not due work"
    );

    // A newer task of the member and type holds the guard; revising the closed one keeps it.
    let newer = churn_task(store, account, "m_attr_1").await;
    let mut won = unanswered.clone();
    won.outcome = Some("engaged_late".into());
    won.attributed_value = Some(150.0);
    won.attribution_until = None;
    let (won, log) = record(&won, closed_at, Why::new(Reason::GoalSignalAfterClose));
    store
        .commit(&TaskCommit::new(won.clone(), log))
        .await
        .expect("attribution: a closed task can be revised");
    assert_eq!(
        store.active_task(account, &member("m_attr_1"), "churn_risk").await.expect("active"),
        Some(newer.id),
        "attribution: revising a closed task leaves the newer task's guard"
    );
    assert_eq!(store.get_task(account, won.id).await.expect("get"), Some(won.clone()));
    let (tasks, _) = store
        .attribution_watch(due_shard(&won.id, DUE_INDEX_SHARDS), 1000, None)
        .await
        .expect("attribution_watch");
    assert!(tasks.iter().all(|t| t.id != won.id), "attribution: a settled task left the index");
}

pub(super) async fn the_activity_feed_lists_an_accounts_decisions_newest_first(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let first = new_task(store, account, "m_act_1", TaskStatus::PendingReview).await;
    let (approved, log) = transition(
        &first,
        TaskStatus::Ready,
        base() + SignedDuration::from_secs(60),
        Why::new(Reason::OwnerApproved),
    )
    .expect("valid");
    store.commit(&TaskCommit::new(approved, log)).await.expect("approve");
    let second = new_task(store, account, "m_act_2", TaskStatus::PendingReview).await;
    let (skipped, log) = transition(
        &second,
        TaskStatus::Cancelled,
        base() + SignedDuration::from_secs(120),
        Why::new(Reason::OwnerSkipped),
    )
    .expect("valid");
    store.commit(&TaskCommit::new(skipped, log)).await.expect("skip");
    new_task(store, AccountId::generate(base()), "m_act_1", TaskStatus::PendingReview).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let (page, next) = store.activity(account, 2, cursor).await.expect("activity");
        assert!(page.len() <= 2, "activity: the limit is respected");
        seen.extend(page);
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let reasons: Vec<&str> = seen.iter().map(|e| e.entry.reason.as_str()).collect();
    assert_eq!(seen.len(), 4, "activity: every entry of the account, no other's: {reasons:?}");
    assert_eq!(reasons[0], "owner_skipped", "activity: newest first");
    assert!(seen.windows(2).all(|w| w[0].sort_key() > w[1].sort_key()), "activity: newest first");
    let skip = &seen[0];
    assert_eq!(
        (skip.task_id, skip.task_type.as_str(), &skip.member_id),
        (second.id, "payment_recovery", &member("m_act_2"))
    );
    assert_eq!(skip.entry.to_status, TaskStatus::Cancelled);
}

pub(super) async fn the_owners_tallies_follow_every_write_of_the_task(store: &dyn TaskStore) {
    use crate::task::tally::TaskTally;
    let account = AccountId::generate(base());
    let review = new_task(store, account, "m_tally_1", TaskStatus::PendingReview).await;
    let talking = churn_task(store, account, "m_tally_2").await;
    let mut quiet = sample_task_for(account, member("m_tally_3"), TaskStatus::Waiting, base());
    quiet.touch = 2;
    store
        .create_task(&quiet, &created(&quiet, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    // Another account's task is never in this account's tallies.
    new_task(store, AccountId::generate(base()), "m_tally_1", TaskStatus::PendingReview).await;
    let ids = |tallies: &[TaskTally]| tallies.iter().map(|t| t.task_id).collect::<Vec<_>>();
    let tallies = store.tallies(account, base()).await.expect("tallies");
    let mut open = vec![review.id, talking.id, quiet.id];
    open.sort();
    assert_eq!(ids(&tallies), open, "tallies: every open task, none closed yet");
    assert_eq!(
        tallies[open.iter().position(|id| *id == review.id).expect("review")],
        TaskTally::of(&review)
    );

    // Closing moves a task's tally from the open ones to the closed ones, by when it closed.
    let won_at = base() + SignedDuration::from_hours(2);
    let (mut won, log) = transition(
        &talking,
        TaskStatus::Completed,
        won_at,
        Why::new(Reason::GoalSignalCheckin).outcome("retained"),
    )
    .expect("valid");
    won.attributed_value = Some(150.0);
    let close = TaskCommit::new(won.clone(), log);
    store.commit(&close).await.expect("close");
    let gave_up_at = base() + SignedDuration::from_hours(1);
    let (gave_up, log) = transition(&quiet, TaskStatus::Cancelled, gave_up_at, Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(gave_up.clone(), log)).await.expect("cancel");
    let tallies = store.tallies(account, base()).await.expect("tallies");
    assert_eq!(
        ids(&tallies),
        vec![review.id, gave_up.id, won.id],
        "tallies: the open task, then the closed ones, earliest close first"
    );
    assert_eq!(tallies[2], TaskTally::of(&won));
    // The same commit carried out again (an at-least-once delivery) is refused and moves nothing.
    assert!(store.commit(&close).await.is_err(), "tallies: a replayed commit is a stale one");
    assert_eq!(store.tallies(account, base()).await.expect("tallies"), tallies);

    // Revising a closed task (a late win, a correction) rewrites its one tally.
    let mut revised = won.clone();
    revised.attributed_value = Some(450.0);
    let (revised, log) = record(
        &revised,
        won_at + SignedDuration::from_hours(30),
        Why::new(Reason::GoalSignalAfterClose),
    );
    store.commit(&TaskCommit::new(revised.clone(), log)).await.expect("revise");
    let tallies = store.tallies(account, base()).await.expect("tallies");
    assert_eq!(
        ids(&tallies),
        vec![review.id, gave_up.id, won.id],
        "tallies: a revision adds no tally"
    );
    assert_eq!(tallies[2].attributed_value, Some(450.0));

    // Only the closes at or after `closed_since` are read; the open ones always are.
    let later = store
        .tallies(account, gave_up_at + SignedDuration::from_secs(1))
        .await
        .expect("tallies");
    assert_eq!(ids(&later), vec![review.id, won.id]);
    // A window of closes reads those closes alone, never the open tasks: `[from, until)`.
    let window =
        |from: Timestamp, until: Timestamp| async move { ids(&store.closed_tallies(account, from, until).await.expect("closed tallies")) };
    assert_eq!(
        window(base(), won_at + SignedDuration::from_secs(1)).await,
        vec![gave_up.id, won.id]
    );
    assert_eq!(
        window(base(), won_at).await,
        vec![gave_up.id],
        "closed tallies: until is not included"
    );
    assert_eq!(
        window(gave_up_at + SignedDuration::from_secs(1), won_at + SignedDuration::from_hours(1)).await,
        vec![won.id]
    );
    assert_eq!(
        store
            .closed_tallies(account, base(), won_at + SignedDuration::from_secs(1))
            .await
            .expect("closed")[1],
        TaskTally::of(&revised)
    );
    // A new account has none.
    assert!(
        store
            .tallies(AccountId::generate(base()), base())
            .await
            .expect("tallies")
            .is_empty()
    );
}

/// A list of one status follows the task through its writes: approved, a task leaves the
/// review list and joins the ready one; closed, it is listed as closed; with a member too,
/// only that member's.
pub(super) async fn a_status_list_follows_the_task_through_its_writes(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let mut made = Vec::new();
    for i in 0..4 {
        made.push(new_task(store, account, &format!("m_status_{i}"), TaskStatus::PendingReview).await);
    }
    let listed = |status: TaskStatus| {
        every_page(
            store,
            account,
            TaskQuery {
                status: Some(status),
                limit: 2,
                ..TaskQuery::default()
            },
        )
    };
    let newest_first = |tasks: &[&Task]| tasks.iter().rev().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(
        listed(TaskStatus::PendingReview).await,
        newest_first(&made.iter().collect::<Vec<_>>())
    );

    let at = base() + SignedDuration::from_mins(5);
    let (approved, log) = transition(&made[1], TaskStatus::Ready, at, Why::new(Reason::OwnerApproved)).expect("valid");
    store.commit(&TaskCommit::new(approved.clone(), log)).await.expect("approve");
    let (skipped, log) = transition(&made[2], TaskStatus::Cancelled, at, Why::new(Reason::OwnerSkipped)).expect("valid");
    store.commit(&TaskCommit::new(skipped.clone(), log)).await.expect("skip");
    assert_eq!(
        listed(TaskStatus::PendingReview).await,
        newest_first(&[&made[0], &made[3]]),
        "status list: an approved or skipped task leaves the review list"
    );
    let (ready, _) = store
        .list_tasks(
            account,
            &TaskQuery {
                status: Some(TaskStatus::Ready),
                limit: 10,
                ..TaskQuery::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(ready, vec![approved], "status list: the ready one, as written");
    assert_eq!(
        listed(TaskStatus::Cancelled).await,
        vec![skipped.id],
        "status list: a closed status"
    );

    let (mine, next) = store
        .list_tasks(
            account,
            &TaskQuery {
                status: Some(TaskStatus::PendingReview),
                member_id: Some(member("m_status_3")),
                limit: 10,
                ..TaskQuery::default()
            },
        )
        .await
        .expect("list");
    assert_eq!((mine.iter().map(|t| t.id).collect::<Vec<_>>(), next), (vec![made[3].id], None));
}

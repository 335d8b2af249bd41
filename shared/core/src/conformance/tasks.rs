//! The conformance of the task's ports, [`TaskWrites`] and [`TaskReads`]: one active task per member and type, optimistic locking, the
//! whole history, and a send's reservation written all or nothing with the task.
//!
//! [`TaskWrites`]: crate::ports::TaskWrites
//! [`TaskReads`]: crate::ports::TaskReads

use jiff::SignedDuration;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::ports::TaskStore;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::reason::Reason;
use crate::task::transition::{Why, created, record, transition};
use crate::task::{ConversationMessage, OutboundStatus, Role, Task, TaskStatus};
use crate::testing::sample_task_for;

use super::{base, is_conflict, member, new_task, outbound};

pub(super) async fn one_active_task_per_member_and_type(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let first = new_task(store, account, "m_guard", TaskStatus::PendingReview).await;
    let second = sample_task_for(account, member("m_guard"), TaskStatus::PendingReview, base());
    assert!(
        matches!(
            store
                .create_task(&second, &created(&second, Why::new(Reason::ManualModeRequiresReview)), &[])
                .await,
            Err(StoreError::Conflict(Conflict::ActiveTask))
        ),
        "guard: a second active task for the member and type must conflict"
    );
    assert_eq!(
        store.get_task(account, second.id).await.expect("get"),
        None,
        "guard: the refused task must not exist"
    );
    assert_eq!(
        store
            .active_task(account, &member("m_guard"), "payment_recovery")
            .await
            .expect("active"),
        Some(first.id)
    );
    let (closed, log) = transition(&first, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerSkipped)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    assert_eq!(
        store
            .active_task(account, &member("m_guard"), "payment_recovery")
            .await
            .expect("active"),
        None,
        "guard: closing frees it"
    );
    store
        .create_task(&second, &created(&second, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("guard: a new task after closing");
}

pub(super) async fn a_members_active_tasks_are_read_through_their_guards(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    let payment = new_task(store, account, "m_mine", TaskStatus::Ready).await;
    let mut churn = sample_task_for(account, member("m_mine"), TaskStatus::Waiting, base());
    churn.task_type = "churn_risk".into();
    store
        .create_task(&churn, &created(&churn, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    // A member whose id starts with the first one's, and the same member in another account.
    new_task(store, account, "m_mine2", TaskStatus::Ready).await;
    new_task(store, other, "m_mine", TaskStatus::Ready).await;
    let ids = |tasks: Vec<Task>| tasks.into_iter().map(|t| t.id).collect::<Vec<_>>();
    let mut expected = vec![payment.id, churn.id];
    expected.sort();
    assert_eq!(
        ids(store.member_active_tasks(account, &member("m_mine")).await.expect("read")),
        expected,
        "member tasks: exactly the member's own, in this account"
    );
    let counts = |pairs: &[(&str, usize)]| {
        pairs
            .iter()
            .map(|(m, n)| (member(m), *n))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(
        store.open_tasks_by_member(account).await.expect("counts"),
        counts(&[("m_mine", 2), ("m_mine2", 1)]),
        "open tasks by member: this account's only"
    );
    let (closed, log) = transition(&payment, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    assert_eq!(
        ids(store.member_active_tasks(account, &member("m_mine")).await.expect("read")),
        vec![churn.id],
        "member tasks: a closed task is no longer listed"
    );
    assert_eq!(
        store.open_tasks_by_member(account).await.expect("counts"),
        counts(&[("m_mine", 1), ("m_mine2", 1)]),
        "open tasks by member: a closed task no longer counts"
    );
    assert!(
        store
            .member_active_tasks(account, &member("m_none"))
            .await
            .expect("read")
            .is_empty()
    );
    let missing = TaskId::generate(base());
    let foreign = new_task(store, other, "m_foreign", TaskStatus::Ready).await;
    assert_eq!(
        ids(store
            .get_tasks(account, &[churn.id, missing, foreign.id, payment.id])
            .await
            .expect("read")),
        vec![churn.id, payment.id],
        "get_tasks: in the order asked, this account's only, missing ones left out"
    );
}

pub(super) async fn a_stale_write_changes_nothing(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_stale", TaskStatus::PendingReview).await;
    let (approved, log) = transition(&task, TaskStatus::Ready, base(), Why::new(Reason::OwnerApproved)).expect("valid");
    store.commit(&TaskCommit::new(approved.clone(), log)).await.expect("first write");
    let (skipped, log) = transition(&task, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerSkipped)).expect("valid");
    assert!(
        is_conflict(store.commit(&TaskCommit::new(skipped, log)).await, Conflict::Version),
        "locking: a write from a stale read must conflict"
    );
    let history = store.task_history(account, task.id).await.expect("history").expect("present");
    assert_eq!(history.task, approved, "locking: the stale write changed the task");
    assert_eq!(history.log.len(), 2, "locking: the stale write's log entry was written");
}

pub(super) async fn history_is_complete_and_in_order(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_hist", TaskStatus::Ready).await;
    let mut current = task.clone();
    let mut expected_messages = Vec::new();
    for i in 0..3 {
        let now = base() + SignedDuration::from_mins(i);
        let (next, log) = record(
            &current,
            now,
            Why::new([Reason::SendReserved, Reason::MessageSent, Reason::MemberReplied][i as usize]),
        );
        let message = ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::System,
            content: format!("message {i}"),
            original: None,
        };
        expected_messages.push(message.content.clone());
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.push(message);
        store.commit(&commit).await.expect("commit");
        current = next;
    }
    let history = store.task_history(account, task.id).await.expect("history").expect("present");
    let reasons: Vec<_> = history.log.iter().map(|l| l.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["manual_mode_requires_review", "send_reserved", "message_sent", "member_replied"],
        "history: log oldest first"
    );
    assert_eq!(
        history.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>(),
        expected_messages,
        "history: conversation oldest first"
    );
    assert_eq!(history.task.version, task.version + 3);
    assert!(
        store
            .task_history(AccountId::generate(base()), task.id)
            .await
            .expect("history")
            .is_none(),
        "history: another account's task is not found"
    );

    // The goal progress (with its milestones) and the owner's rating round-trip whole.
    let now = base() + SignedDuration::from_mins(10);
    let (mut rated, log) = record(&current, now, Why::new(Reason::OwnerFeedbackUp));
    rated.goal_progress = Some(crate::task::progress::GoalProgress {
        progress_pct: 67,
        current_outcome: "engaged_conversation".into(),
        confidence: 80,
        evidence_type: crate::task::progress::EvidenceType::PartialSignal,
        evidence: "2 of 3 check-ins".into(),
        recommended_action: crate::task::progress::RecommendedAction::Continue,
        milestones: vec![crate::task::outcome::Milestone {
            name: "first check-in".into(),
            hit: true,
            hit_at: Some(now),
        }],
        risks: vec!["a busy month".into()],
    });
    rated.feedback = Some(crate::task::feedback::OwnerFeedback {
        rating: crate::task::feedback::Rating::Down,
        comment: Some("Would have come back anyway".into()),
        reason: Some(crate::task::feedback::FeedbackReason::WouldHaveAnyway),
        at: now,
    });
    store.commit(&TaskCommit::new(rated.clone(), log)).await.expect("commit");
    assert_eq!(
        store.get_task(account, task.id).await.expect("read"),
        Some(rated),
        "history: goal progress and feedback are stored whole"
    );
}

pub(super) async fn reservations_enforce_every_guarantee_atomically(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let task = new_task(store, account, "m_send", TaskStatus::Ready).await;
    let m = member("m_send");
    let reserve = super::reserve_touch;
    let (reserved, commit) = reserve(&task, 0, 1, 2);
    store.commit(&commit).await.expect("first reservation");
    assert_eq!(store.daily_sends(account, date).await.expect("daily"), 1);
    // The mail may leave the moment after: replies to it route already, by the task's signed
    // address and by our Message-ID.
    let ours = outbound(&task, 0, OutboundStatus::Reserved).message_id;
    assert_eq!(
        store.task_account(task.id).await.expect("route"),
        Some(account),
        "reserve: the task's route"
    );
    assert_eq!(
        store.message_route(&ours).await.expect("route"),
        Some((account, task.id)),
        "reserve: the route of {ours}"
    );
    let (_, ledger) = store.get_member(account, &m).await.expect("member").expect("ledger exists");
    assert_eq!(ledger.version, 1);

    // The same touch again: refused, and nothing of it applied.
    let (_, again) = reserve(&reserved, 0, 2, 10);
    assert!(
        is_conflict(store.commit(&again).await, Conflict::OutboundExists),
        "reserve: a touch is reserved once"
    );
    assert_eq!(
        store.get_task(account, task.id).await.expect("get").map(|t| t.version),
        Some(reserved.version),
        "reserve: refused commit changed the task"
    );
    assert_eq!(
        store.daily_sends(account, date).await.expect("daily"),
        1,
        "reserve: refused commit counted a send"
    );

    // A ledger read before another send: refused.
    let (_, stale) = reserve(&reserved, 1, 1, 10);
    assert!(
        is_conflict(store.commit(&stale).await, Conflict::MemberLedger),
        "reserve: a stale ledger must conflict"
    );

    // The daily counter at its limit: refused.
    let other = new_task(store, account, "m_send_2", TaskStatus::Ready).await;
    let (after_other, commit) = reserve(&other, 0, 1, 2);
    store.commit(&commit).await.expect("second send of the day");
    let (_, full) = reserve(&reserved, 1, 2, 2);
    assert!(
        is_conflict(store.commit(&full).await, Conflict::DailyLimit),
        "reserve: the daily limit holds"
    );
    assert_eq!(store.daily_sends(account, date).await.expect("daily"), 2);

    // A refused send gives everything back, and the touch may be reserved again.
    let (released, log) = record(&after_other, base(), Why::new(Reason::SendRejected));
    let mut release = TaskCommit::new(released.clone(), log);
    release.send = Some(SendEffect::Release {
        outbound: outbound(&other, 0, OutboundStatus::Failed),
        member_id: member("m_send_2"),
        ledger_key: format!("{}#0", other.id),
        daily_date: date,
    });
    store.commit(&release).await.expect("release");
    assert_eq!(
        store.daily_sends(account, date).await.expect("daily"),
        1,
        "release: the daily counter is given back"
    );
    let (_, retry) = reserve(&released, 0, 3, 2);
    store.commit(&retry).await.expect("a failed touch may be reserved again");

    // Recording the send keeps the thread's ids.
    let (sent_task, log) = record(&reserved, base(), Why::new(Reason::MessageSent));
    let mut sent = outbound(&task, 0, OutboundStatus::Sent);
    sent.provider_message_id = Some("ses-1@us-east-1.amazonses.com".into());
    sent.sent_at = Some(base());
    let mut commit = TaskCommit::new(sent_task, log);
    commit.send = Some(SendEffect::Record { outbound: sent.clone() });
    store.commit(&commit).await.expect("record");
    let stored = store.outbound(account, task.id).await.expect("outbound");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].status, OutboundStatus::Sent);
    assert_eq!(stored[0].provider_message_id, sent.provider_message_id);

    // …and where replies to it belong: by the task, and by either Message-ID in any case.
    assert_eq!(store.task_account(task.id).await.expect("route"), Some(account));
    let quiet = new_task(store, account, "m_send_3", TaskStatus::Ready).await;
    assert_eq!(
        store.task_account(quiet.id).await.expect("route"),
        None,
        "never reserved, never routed"
    );
    for id in [sent.message_id.clone(), "SES-1@us-east-1.amazonses.com".into()] {
        assert_eq!(
            store.message_route(&id).await.expect("route"),
            Some((account, task.id)),
            "route of {id}"
        );
    }
    assert_eq!(store.message_route("nobody@example.com").await.expect("route"), None);
}

/// Spec §37.6: a closed task the owner reopens holds its member and type's
/// guard again, is an open task in the tallies again (its closed tally gone), and is refused
/// while a newer task of the member and type holds the guard.
pub(super) async fn a_reopened_task_holds_its_guard_again_unless_a_newer_task_does(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_reopen", TaskStatus::PendingReview).await;
    let now = base() + SignedDuration::from_mins(5);
    let (closed, log) = transition(&task, TaskStatus::Cancelled, now, Why::new(Reason::OwnerCancelled)).expect("close");
    store.commit(&TaskCommit::new(closed.clone(), log)).await.expect("close");
    let reopen = |from: &Task, at| {
        let mut next = from.clone();
        next.status = TaskStatus::Escalated;
        next.version += 1;
        next.updated_at = at;
        let log = crate::task::LogEntry {
            id: new_ulid(at),
            at,
            from_status: Some(from.status),
            to_status: TaskStatus::Escalated,
            reason: Reason::OwnerReopened.as_str().into(),
            detail: None,
        };
        TaskCommit::new(next, log)
    };
    let reopened = reopen(&closed, now + SignedDuration::from_mins(1));
    store.commit(&reopened).await.expect("reopen");
    assert_eq!(
        store.active_task(account, &task.member.id, &task.task_type).await.expect("guard"),
        Some(task.id),
        "reopen: the guard is held again"
    );
    let tallies = store.tallies(account, base()).await.expect("tallies");
    let mine: Vec<_> = tallies.iter().filter(|t| t.task_id == task.id).collect();
    assert_eq!(
        mine.iter().map(|t| t.status).collect::<Vec<_>>(),
        [TaskStatus::Escalated],
        "reopen: one tally, open"
    );

    // Closed again, and a newer task of the member and type opens: no reopen now.
    let again = reopened.task.clone();
    let (closed, log) = transition(
        &again,
        TaskStatus::Cancelled,
        now + SignedDuration::from_mins(2),
        Why::new(Reason::OwnerCancelled),
    )
    .expect("close");
    store.commit(&TaskCommit::new(closed.clone(), log)).await.expect("close");
    let newer = new_task(store, account, "m_reopen", TaskStatus::PendingReview).await;
    assert!(
        is_conflict(
            store.commit(&reopen(&closed, now + SignedDuration::from_mins(3))).await,
            Conflict::ActiveTask
        ),
        "reopen: refused while a newer task holds the guard"
    );
    assert_eq!(
        store.active_task(account, &task.member.id, &task.task_type).await.expect("guard"),
        Some(newer.id)
    );
    assert_eq!(
        store.get_task(account, task.id).await.expect("read").map(|t| t.status),
        Some(TaskStatus::Cancelled)
    );
}

/// A commit's extras are written in its transaction, all or nothing: an AI call counted over
/// the count read (refused once another call moved it), action claims made once (refused
/// while a record holds the key, allowed over a failed one) and action outcomes written
/// over their claims.
pub(super) async fn a_commit_counts_an_ai_call_and_claims_actions_in_its_transaction(store: &dyn TaskStore) {
    use crate::ports::{AiCallCount, CommitExtras};
    use crate::task::action::{Action, ActionRecord, ActionState, ActionType, idempotency_key};
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_extras", TaskStatus::Ready).await;
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let action = |slot: &str, state: ActionState| ActionRecord {
        account_id: account,
        task_id: task.id,
        key: idempotency_key(task.id, ActionType::LogNote, slot),
        member_id: member("m_extras"),
        action: Action::LogNote { text: slot.into() },
        state,
        result: None,
        error: None,
        started_at: base(),
        finished_at: None,
    };
    let step = |from: &Task, reason: Reason| {
        let (next, log) = record(from, base(), Why::new(reason));
        (next.clone(), TaskCommit::new(next, log))
    };

    // Counted from nothing, then over the count read.
    let (first, commit) = step(&task, Reason::ActionsDue);
    let extras = CommitExtras {
        ai_call: Some(AiCallCount { date, seen: 0 }),
        claim_actions: vec![action("0", ActionState::Started), action("1", ActionState::Started)],
        ..CommitExtras::default()
    };
    store.commit_with(&commit, &extras).await.expect("commit with extras");
    assert_eq!(store.ai_calls(account, date).await.expect("read"), 1, "the call is counted");
    let records = store.task_actions(account, task.id).await.expect("actions");
    assert_eq!(records.len(), 2, "both claims written: {records:?}");
    assert!(records.iter().all(|r| r.state == ActionState::Started));

    // A count that moved since it was read refuses the whole commit.
    store.count_ai_call(account, date, 100).await.expect("count");
    let (_, commit) = step(&first, Reason::ActionsDue);
    let stale = CommitExtras {
        ai_call: Some(AiCallCount { date, seen: 1 }),
        ..CommitExtras::default()
    };
    assert!(
        is_conflict(store.commit_with(&commit, &stale).await, Conflict::AiCalls),
        "extras: a moved AI count conflicts"
    );
    assert_eq!(
        store.get_task(account, task.id).await.expect("read"),
        Some(first.clone()),
        "and writes nothing"
    );
    assert_eq!(store.ai_calls(account, date).await.expect("read"), 2);

    // A claim on a key held by a record refuses the whole commit, the other claim too.
    let held = CommitExtras {
        claim_actions: vec![action("2", ActionState::Started), action("1", ActionState::Started)],
        ..CommitExtras::default()
    };
    assert!(
        is_conflict(store.commit_with(&commit, &held).await, Conflict::AlreadyExists),
        "extras: an action is claimed once"
    );
    assert_eq!(
        store.task_actions(account, task.id).await.expect("actions").len(),
        2,
        "nothing claimed"
    );

    // Outcomes over their claims, with the task's stale write refused as a whole.
    let mut done = action("0", ActionState::Done);
    done.finished_at = Some(base());
    let mut failed = action("1", ActionState::Failed);
    failed.error = Some("no".into());
    let finish = CommitExtras {
        finish_actions: vec![done.clone(), failed.clone()],
        ..CommitExtras::default()
    };
    let (_, stale_commit) = step(&task, Reason::ActionsExecuted);
    assert!(
        is_conflict(store.commit_with(&stale_commit, &finish).await, Conflict::Version),
        "extras: ride on the task's version"
    );
    assert!(
        store
            .task_actions(account, task.id)
            .await
            .expect("actions")
            .iter()
            .all(|r| r.state == ActionState::Started),
        "a refused commit finishes nothing"
    );
    let (second, commit) = step(&first, Reason::ActionsExecuted);
    store.commit_with(&commit, &finish).await.expect("finish");
    let records = store.task_actions(account, task.id).await.expect("actions");
    assert_eq!(records, vec![done, failed.clone()], "outcomes written over the claims");

    // A failed action's key is claimed again.
    let (_, commit) = step(&second, Reason::ActionsDue);
    let again = CommitExtras {
        claim_actions: vec![action("1", ActionState::Started)],
        ..CommitExtras::default()
    };
    store.commit_with(&commit, &again).await.expect("a failed action is claimed again");
    let records = store.task_actions(account, task.id).await.expect("actions");
    assert_eq!(
        records.iter().find(|r| r.key == failed.key).map(|r| r.state),
        Some(ActionState::Started)
    );
}

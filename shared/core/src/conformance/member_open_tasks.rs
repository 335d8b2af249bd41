//! The member's open tasks as the send snapshot reads them: for an account whose member items
//! keep them, every task whose active guard is held — put with the guard's creation or reopen,
//! taken with its close, in the same write, also when the close gives a send back; for an
//! account whose items do not keep them, nothing (the step reads the guards).

use crate::kernel::ids::{AccountId, TaskId};
use crate::members::member::SendLedger;
use crate::ports::TaskStore;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::reason::Reason;
use crate::task::transition::{Why, created, record, transition};
use crate::task::{LogEntry, OutboundStatus, Task, TaskStatus};
use crate::testing::{sample_account, sample_task_for};

use super::{base, member, outbound};

async fn open_tasks(store: &dyn TaskStore, account: AccountId, name: &str) -> Option<Vec<TaskId>> {
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    store
        .send_snapshot(account, &member(name), None, date)
        .await
        .unwrap_or_else(|e| panic!("snapshot: {e:?}"))
        .member_open_tasks
}

async fn open(store: &dyn TaskStore, account: AccountId, name: &str, task_type: &str) -> Task {
    let mut task = sample_task_for(account, member(name), TaskStatus::Ready, base());
    task.task_type = task_type.into();
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .unwrap_or_else(|e| panic!("create_task: {e:?}"));
    task
}

fn sorted(mut ids: Vec<TaskId>) -> Option<Vec<TaskId>> {
    ids.sort();
    Some(ids)
}

pub(super) async fn a_members_open_tasks_follow_their_guards_on_the_member_item(store: &dyn TaskStore) {
    let account = sample_account(base());
    assert!(account.member_open_tasks_kept, "a new account keeps them");
    store.create_account(&account, "hash-open-tasks").await.expect("account");
    let id = account.id;
    assert_eq!(open_tasks(store, id, "m_open").await, Some(Vec::new()), "no task yet, no item yet");

    let payment = open(store, id, "m_open", "payment_recovery").await;
    let churn = open(store, id, "m_open", "churn_risk").await;
    open(store, id, "m_open2", "churn_risk").await;
    assert_eq!(
        open_tasks(store, id, "m_open").await,
        sorted(vec![payment.id, churn.id]),
        "both creations, this member's only"
    );

    // Closed by the owner: taken in the close's write.
    let (closed, log) = transition(&payment, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(closed.clone(), log)).await.expect("close");
    assert_eq!(
        open_tasks(store, id, "m_open").await,
        Some(vec![churn.id]),
        "a close takes its task"
    );

    // Reopened by the owner: put again with its guard.
    let at = base() + jiff::SignedDuration::from_mins(1);
    let mut reopened = closed.clone();
    reopened.status = TaskStatus::Escalated;
    reopened.version += 1;
    reopened.updated_at = at;
    let reopen = LogEntry {
        id: crate::kernel::ids::new_ulid(at),
        at,
        from_status: Some(TaskStatus::Cancelled),
        to_status: TaskStatus::Escalated,
        reason: Reason::OwnerReopened.as_str().into(),
        detail: None,
    };
    store.commit(&TaskCommit::new(reopened.clone(), reopen)).await.expect("reopen");
    assert_eq!(
        open_tasks(store, id, "m_open").await,
        sorted(vec![payment.id, churn.id]),
        "a reopen puts its task back"
    );

    // A send reserved, then a close that gives it back: both write the member item, once each.
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let (reserved, log) = record(&churn, at, Why::new(Reason::SendReserved));
    let mut ledger = SendLedger::default();
    ledger.sends.insert(format!("{}#0", churn.id), at);
    ledger.version = 1;
    let mut reserve = TaskCommit::new(reserved.clone(), log);
    reserve.send = Some(SendEffect::Reserve {
        outbound: outbound(&churn, 0, OutboundStatus::Reserved),
        member_id: churn.member.id.clone(),
        ledger,
        daily_date: date,
        daily_limit: 10,
    });
    store.commit(&reserve).await.expect("reserve");
    assert_eq!(
        open_tasks(store, id, "m_open").await,
        sorted(vec![payment.id, churn.id]),
        "a reservation's ledger write keeps them"
    );
    let (failed, log) = transition(&reserved, TaskStatus::Cancelled, at, Why::new(Reason::SendRejected)).expect("valid");
    let mut release = TaskCommit::new(failed, log);
    release.send = Some(SendEffect::Release {
        outbound: outbound(&churn, 0, OutboundStatus::Failed),
        member_id: churn.member.id.clone(),
        ledger_key: format!("{}#0", churn.id),
        daily_date: date,
    });
    store.commit(&release).await.expect("close with a release");
    assert_eq!(
        open_tasks(store, id, "m_open").await,
        Some(vec![payment.id]),
        "the release's close takes its task"
    );
    assert_eq!(
        store
            .member_active_tasks(id, &member("m_open"))
            .await
            .expect("guards")
            .iter()
            .map(|t| t.id)
            .collect::<Vec<_>>(),
        vec![payment.id],
        "and the guards agree"
    );

    // An account from before the member items kept them: the step is told to read the guards.
    let mut older = sample_account(base());
    older.member_open_tasks_kept = false;
    store.create_account(&older, "hash-open-tasks-older").await.expect("account");
    open(store, older.id, "m_open", "payment_recovery").await;
    assert_eq!(open_tasks(store, older.id, "m_open").await, None, "not kept: unknown, never empty");
}

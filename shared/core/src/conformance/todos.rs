//! The conformance of [`TodoStore`]: a source makes one to-do, a to-do changes under its
//! version, and the lists are per account and status — open and snoozed soonest first, done
//! newest first — moving with each change of status.
//!
//! [`TodoStore`]: crate::ports::TodoStore

use jiff::SignedDuration;

use crate::kernel::error::Conflict;
use crate::kernel::ids::{AccountId, MemberId, TaskId, new_ulid};
use crate::ports::TaskStore;
use crate::task::todo::{self, ContactKind, ContactResult, Todo, TodoKind, TodoMember, TodoStatus};

use super::{base, is_conflict};

pub(super) fn todo(account: AccountId, source: &str, due_in_hours: i64) -> Todo {
    let at = base();
    Todo {
        id: new_ulid(at),
        account_id: account,
        task_id: TaskId::generate(at),
        member: TodoMember {
            id: MemberId::parse("m_call").unwrap_or_else(|e| panic!("{e}")),
            name: Some("Sarah Connor".into()),
            phone: Some("+15555550100".into()),
            email: None,
        },
        kind: TodoKind::Call,
        what: "Call Sarah about her schedule".into(),
        due_at: at + SignedDuration::from_hours(due_in_hours),
        status: TodoStatus::Open,
        snoozed_until: None,
        contacts: Vec::new(),
        outcome: None,
        note: None,
        get_them_back: true,
        source: source.into(),
        created_at: at,
        done_at: None,
        version: 1,
    }
}

async fn ids(store: &dyn TaskStore, account: AccountId, status: TodoStatus) -> Vec<ulid::Ulid> {
    store
        .list_todos(account, status, 10)
        .await
        .expect("list")
        .iter()
        .map(|t| t.id)
        .collect()
}

/// One to-do per source, each change under its version, listed by status.
pub(super) async fn a_todo_is_made_once_per_source_and_listed_by_status_as_it_changes(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let later = todo(account, "task:a:created", 5);
    let sooner = todo(account, "task:b:created", 1);
    assert!(store.create_todo(&later).await.expect("create"), "todos: made");
    assert!(store.create_todo(&sooner).await.expect("create"));
    assert!(
        !store.create_todo(&todo(account, "task:a:created", 2)).await.expect("again"),
        "todos: a source makes one to-do"
    );
    assert_eq!(
        store.get_todo(account, later.id).await.expect("read"),
        Some(later.clone()),
        "todos: every field kept"
    );
    assert_eq!(
        ids(store, account, TodoStatus::Open).await,
        [sooner.id, later.id],
        "todos: soonest due first"
    );
    assert!(
        store
            .list_todos(AccountId::generate(base()), TodoStatus::Open, 10)
            .await
            .expect("list")
            .is_empty(),
        "todos: per account"
    );

    let now = base();
    let logged = todo::log_contact(&later, ContactKind::Call, ContactResult::NoAnswer, Some("voicemail"), now).expect("log");
    store.save_todo(&logged).await.expect("save");
    assert!(
        is_conflict(store.save_todo(&logged).await, Conflict::Version),
        "todos: a stale version is refused"
    );
    let snoozed = todo::snooze(&logged, now + SignedDuration::from_hours(48), now).expect("snooze");
    store.save_todo(&snoozed).await.expect("snooze");
    assert_eq!(
        ids(store, account, TodoStatus::Open).await,
        [sooner.id],
        "todos: a snoozed one leaves the open list"
    );
    assert_eq!(ids(store, account, TodoStatus::Snoozed).await, [later.id]);
    let done = todo::complete(&sooner, Some("reached"), None, now).expect("done");
    store.save_todo(&done).await.expect("done");
    let done_later = todo::complete(&snoozed, None, None, now + SignedDuration::from_hours(1)).expect("done");
    store.save_todo(&done_later).await.expect("done");
    assert!(ids(store, account, TodoStatus::Open).await.is_empty());
    assert_eq!(
        ids(store, account, TodoStatus::Done).await,
        [later.id, sooner.id],
        "todos: done newest first"
    );
    let read = store.get_todo(account, later.id).await.expect("read").expect("kept");
    assert_eq!(
        (read.contacts.len(), read.version),
        (1, 4),
        "todos: the contact and every version kept"
    );
}

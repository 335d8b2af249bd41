//! The conformance of [`ErasureStore`]: erased identities are kept per account; a closed task
//! is removed with everything written with it but its tally (and its learning record, without
//! its texts), never an open or a moved one; and a member's records — and only theirs — go.
//!
//! [`ErasureStore`]: crate::ports::ErasureStore

use jiff::SignedDuration;

use crate::kernel::error::Conflict;
use crate::kernel::ids::{AccountId, Email};
use crate::members::annotation::Annotation;
use crate::members::erasure::MemberTrace;
use crate::members::member::MemberFacts;
use crate::owner::owner_notice::{NoticeDelivery, NoticeKind, OwnerNotice};
use crate::owner::webhook_event::{self, OutboxItem};
use crate::ports::TaskStore;
use crate::task::commit::TaskCommit;
use crate::task::open_loop::{Expects, OnDeadline, OpenLoop};
use crate::task::reason::Reason;
use crate::task::todo::TodoStatus;
use crate::task::transition::{Why, record, transition};
use crate::task::{ConversationMessage, Role, TaskStatus};
use crate::testing::sample_account;

use super::{base, is_conflict, member, new_task};

pub(super) async fn erased_identities_are_kept_per_account(store: &dyn TaskStore) {
    let (account, other) = (AccountId::generate(base()), AccountId::generate(base()));
    let keys = ["erased-a".to_owned(), "erased-b".to_owned()];
    store.put_erased(account, &keys, base()).await.expect("put");
    store.put_erased(account, &keys, base()).await.expect("put again changes nothing");
    assert!(store.any_erased(account, &["nope".into(), "erased-b".into()]).await.expect("read"));
    assert!(
        !store.any_erased(account, &["nope".into()]).await.expect("read"),
        "erasure: only what was kept"
    );
    assert!(!store.any_erased(other, &keys).await.expect("read"), "erasure: per account");
    assert!(!store.any_erased(account, &[]).await.expect("read"));
}

pub(super) async fn a_closed_task_is_erased_with_its_history_but_its_tally_stays(store: &dyn TaskStore) {
    let account = sample_account(base());
    store
        .create_account(&account, &format!("erase-{}", account.id))
        .await
        .expect("account");
    let task = new_task(store, account.id, "m_erase_task", TaskStatus::Waiting).await;
    let (next, log) = record(&task, base(), Why::new(Reason::MessageSent));
    let mut commit = TaskCommit::new(next.clone(), log);
    commit.messages.push(ConversationMessage {
        id: crate::kernel::ids::new_ulid(base()),
        at: base(),
        role: Role::Member,
        content: "my knee is still bad".into(),
        original: None,
    });
    store.commit(&commit).await.expect("a reply");
    assert!(
        is_conflict(store.erase_task(&next).await, Conflict::Version),
        "erasure: an open task is not removed"
    );
    let closed_at = base() + SignedDuration::from_mins(5);
    let (closed, log) = transition(&next, TaskStatus::Cancelled, closed_at, Why::new(Reason::MemberErased)).expect("valid");
    store.commit(&TaskCommit::new(closed.clone(), log)).await.expect("close");
    let mut stale = closed.clone();
    stale.version -= 1;
    assert!(
        is_conflict(store.erase_task(&stale).await, Conflict::Version),
        "erasure: only over the version it was read at"
    );
    assert!(
        store.get_task(account.id, task.id).await.expect("read").is_some(),
        "erasure: a refusal removes nothing"
    );

    store.erase_task(&closed).await.expect("erase");
    assert!(store.get_task(account.id, task.id).await.expect("read").is_none());
    assert!(store.task_history(account.id, task.id).await.expect("read").is_none());
    let (feed, _) = store.activity(account.id, 100, None).await.expect("activity");
    assert!(feed.iter().all(|e| e.task_id != task.id), "erasure: its decisions leave the feed");
    let (listed, _) = store.list_tasks(account.id, &Default::default()).await.expect("list");
    assert!(listed.is_empty());
    let tallies = store
        .tallies(account.id, base() - SignedDuration::from_hours(1))
        .await
        .expect("tallies");
    assert_eq!(
        tallies.iter().map(|t| (t.task_id, t.status)).collect::<Vec<_>>(),
        [(task.id, TaskStatus::Cancelled)],
        "erasure: the owner's numbers still count it"
    );
    let kept = store.interaction_outcome(account.id, task.id).await.expect("read");
    assert!(
        kept.is_some_and(|r| r.private.message_sent.is_none() && r.private.message_ids.is_empty()),
        "erasure: the learning record stays, without its texts"
    );
    store.erase_task(&closed).await.expect("a task already gone is no error");
}

pub(super) async fn a_members_records_are_erased_and_no_one_elses(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let (gone, kept) = (member("m_erase_gone"), member("m_erase_kept"));
    let gone_email = Email::parse("erase-gone@example.com").expect("email");
    for (who, email) in [(&gone, "erase-gone@example.com"), (&kept, "erase-kept@example.com")] {
        let mut facts = MemberFacts::new(who.clone());
        facts.email = Email::parse(email).ok();
        facts.first_name = Some("Robin".into());
        facts.last_name = Some(format!("Of {}", who.as_str()));
        facts.version = 1;
        store.save_member_facts(account, &facts).await.expect("facts");
        store
            .annotate_member(account, who, &Annotation::AddTag("vip".into()))
            .await
            .expect("tag");
        let wait = OpenLoop::new(account, who.clone(), Expects::Checkin, base(), OnDeadline::FollowUp, base());
        store.put_loops(&[wait]).await.expect("loop");
        let mut todo = super::todos::todo(account, &format!("task:{}:created", who.as_str()), 1);
        todo.member.id = who.clone();
        todo.member.email = Email::parse(email).ok();
        store.create_todo(&todo).await.expect("todo");
        store
            .put_notice(&OwnerNotice {
                id: crate::kernel::ids::new_ulid(base()),
                account_id: account,
                at: base(),
                kind: NoticeKind::MemberOptedOut,
                task_id: None,
                member_id: None,
                title: format!("{email} will get no more mail"),
                detail: "Nothing more is sent.".into(),
                delivery: NoticeDelivery::Dashboard,
                digest_at: None,
            })
            .await
            .expect("notice");
        store
            .put_suppression(account, &Email::parse(email).expect("email"), "unsubscribe", base())
            .await
            .expect("suppress");
    }
    let task = new_task(store, account, "m_erase_gone", TaskStatus::Waiting).await;
    let (escalated, _) = transition(&task, TaskStatus::Escalated, base(), Why::new(Reason::AgentEscalatedReply)).expect("valid");
    store
        .put_outbox(&OutboxItem::new(webhook_event::task_escalated(&escalated)))
        .await
        .expect("outbox");
    let facts = store.get_member(account, &gone).await.expect("read").map(|(f, _)| f);
    let mut trace = MemberTrace::of(&gone, facts.as_ref());
    trace.tasks.insert(task.id);

    store.erase_member_records(account, &trace).await.expect("erase");
    store
        .erase_member_records(account, &trace)
        .await
        .expect("erase again changes nothing");

    assert!(
        store.get_member(account, &gone).await.expect("read").is_none(),
        "erasure: the member item"
    );
    assert!(store.member_annotations(account, &gone).await.expect("read").tags.is_empty());
    assert!(store.member_open_loops(account, &gone).await.expect("read").is_empty());
    assert!(
        !store.is_suppressed(account, &gone_email).await.expect("read"),
        "erasure: no address in clear"
    );
    let todos = store.list_todos(account, TodoStatus::Open, 100).await.expect("todos");
    assert_eq!(todos.iter().map(|t| t.member.id.clone()).collect::<Vec<_>>(), std::slice::from_ref(&kept));
    let (notices, _) = store.list_notices(account, 100, None).await.expect("notices");
    assert!(
        notices.len() == 1 && notices.iter().all(|n| n.title.contains("erase-kept")),
        "erasure: {notices:?}"
    );
    let outbox = store
        .due_outbox(base() + SignedDuration::from_hours(24), 1_000)
        .await
        .expect("outbox");
    assert!(
        outbox.iter().all(|i| i.event.account_id != account),
        "erasure: their events are not sent"
    );
    // The other member keeps everything.
    assert!(store.get_member(account, &kept).await.expect("read").is_some());
    assert!(!store.member_annotations(account, &kept).await.expect("read").tags.is_empty());
    assert_eq!(store.member_open_loops(account, &kept).await.expect("read").len(), 1);
    let kept_email = Email::parse("erase-kept@example.com").expect("email");
    assert!(store.is_suppressed(account, &kept_email).await.expect("read"));
}

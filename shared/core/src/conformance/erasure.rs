//! The conformance of [`ErasureStore`]: erased identities are kept per account; a closed task
//! is removed with everything written with it but its tally (and its learning record, without
//! its texts), never an open or a moved one; a member's records — and only theirs — go; and
//! an account is removed a page at a time, with the reply routes it kept outside, and no other
//! account loses anything.
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
    assert_eq!(
        todos.iter().map(|t| t.member.id.clone()).collect::<Vec<_>>(),
        std::slice::from_ref(&kept)
    );
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

pub(super) async fn an_account_is_removed_page_by_page_with_its_routes_and_no_one_elses(store: &dyn TaskStore) {
    let (leaving, staying) = (sample_account(base()), sample_account(base()));
    for account in [&leaving, &staying] {
        let token = format!("remove-{}", account.id);
        let mut account = account.clone();
        account.credentials.api_token_hash = Some(token.clone());
        store.create_account(&account, &token).await.expect("account");
        for n in 0..3 {
            let who = member(&format!("m_remove_{n}"));
            let mut facts = MemberFacts::new(who.clone());
            facts.email = Email::parse(&format!("remove-{n}@example.com")).ok();
            facts.version = 1;
            store.save_member_facts(account.id, &facts).await.expect("facts");
            let mut todo = super::todos::todo(account.id, &format!("task:remove:{n}"), 1);
            todo.member.id = who;
            store.create_todo(&todo).await.expect("todo");
        }
        // A task that mailed someone: its reply routes live outside the account.
        let task = new_task(store, account.id, "m_remove_0", TaskStatus::Waiting).await;
        let (reserved, reservation) = super::reserve_touch(&task, 0, 1, 10);
        store.commit(&reservation).await.expect("reserve");
        let (sent_task, log) = record(&reserved, base(), Why::new(Reason::MessageSent));
        let mut sent = super::outbound(&task, 0, crate::task::OutboundStatus::Sent);
        sent.message_id = format!("remove-{}@mail.example", task.id);
        sent.provider_message_id = Some(format!("ses-{}@amazonses.com", task.id));
        let mut commit = TaskCommit::new(sent_task, log);
        commit.send = Some(crate::task::commit::SendEffect::Record { outbound: sent });
        store.commit(&commit).await.expect("record");
        assert_eq!(store.task_account(task.id).await.expect("route"), Some(account.id));
    }
    let (leaving_tasks, _) = store.list_tasks(leaving.id, &Default::default()).await.expect("tasks");
    let mut rounds = 0;
    loop {
        let removed = store.remove_account_items(leaving.id, 3).await.expect("a page");
        if removed == 0 {
            break;
        }
        rounds += 1;
        assert!(rounds < 100, "removal: every page removes something until nothing is left");
        assert!(
            store.get_account(leaving.id).await.expect("read").is_some(),
            "removal: the account item goes last"
        );
    }
    store.remove_account(leaving.id).await.expect("the account");
    store.remove_account(leaving.id).await.expect("again changes nothing");

    assert!(store.get_account(leaving.id).await.expect("read").is_none());
    assert!(
        store
            .account_for_token(&format!("remove-{}", leaving.id))
            .await
            .expect("read")
            .is_none()
    );
    let (tasks, _) = store.list_tasks(leaving.id, &Default::default()).await.expect("tasks");
    assert!(tasks.is_empty(), "removal: {tasks:?}");
    for task in &leaving_tasks {
        assert!(
            store.task_account(task.id).await.expect("route").is_none(),
            "removal: the task's route"
        );
        for id in [format!("remove-{}@mail.example", task.id), format!("ses-{}@amazonses.com", task.id)] {
            assert!(
                store.message_route(&id).await.expect("route").is_none(),
                "removal: the route of {id}"
            );
        }
    }
    assert!(store.get_member(leaving.id, &member("m_remove_1")).await.expect("read").is_none());
    assert!(store.list_todos(leaving.id, TodoStatus::Open, 100).await.expect("todos").is_empty());
    assert!(store.remove_account_items(leaving.id, 3).await.expect("nothing") == 0);

    // The other account keeps everything.
    assert!(store.get_account(staying.id).await.expect("read").is_some());
    assert_eq!(
        store.account_for_token(&format!("remove-{}", staying.id)).await.expect("read"),
        Some(staying.id)
    );
    assert!(store.get_member(staying.id, &member("m_remove_1")).await.expect("read").is_some());
    assert_eq!(store.list_todos(staying.id, TodoStatus::Open, 100).await.expect("todos").len(), 3);
    let (kept, _) = store.list_tasks(staying.id, &Default::default()).await.expect("tasks");
    assert_eq!(kept.len(), 1);
    assert_eq!(store.task_account(kept[0].id).await.expect("route"), Some(staying.id));
}

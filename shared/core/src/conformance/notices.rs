//! The conformance of [`NoticeStore`]: owner notices are listed newest first and each digest
//! entry is taken once.
//!
//! [`NoticeStore`]: crate::ports::NoticeStore

use jiff::{SignedDuration, Timestamp};

use crate::kernel::error::Conflict;
use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::ports::TaskStore;

use super::{base, is_conflict, member};

pub(super) async fn owner_notices_are_listed_newest_first_and_each_digest_entry_is_taken_once(store: &dyn TaskStore) {
    use crate::owner::owner_notice::{NoticeDelivery, NoticeKind, OwnerNotice};
    let account = AccountId(new_ulid(base()));
    let other = AccountId(new_ulid(base()));
    let notice = |account: AccountId, minutes: i64, digest_at: Option<Timestamp>| OwnerNotice {
        id: new_ulid(base() + SignedDuration::from_mins(minutes)),
        account_id: account,
        at: base() + SignedDuration::from_mins(minutes),
        kind: if digest_at.is_some() {
            NoticeKind::LateReply
        } else {
            NoticeKind::Escalation
        },
        task_id: Some(TaskId::generate(base())),
        member_id: Some(member("m_notice")),
        title: format!("notice at +{minutes} min"),
        detail: "detail".into(),
        delivery: if digest_at.is_some() {
            NoticeDelivery::Digest
        } else {
            NoticeDelivery::Email
        },
        digest_at,
    };
    let digest = base() + SignedDuration::from_hours(3);
    let first = notice(account, 1, None);
    let second = notice(account, 2, Some(digest));
    let third = notice(account, 3, Some(digest + SignedDuration::from_hours(4)));
    let foreign = notice(other, 4, Some(digest));
    for n in [&first, &second, &third, &foreign] {
        store.put_notice(n).await.expect("put notice");
    }
    assert!(
        is_conflict(store.put_notice(&first).await, Conflict::AlreadyExists),
        "notices: the same notice twice must conflict"
    );

    let (page, cursor) = store.list_notices(account, 2, None).await.expect("list notices");
    assert_eq!(
        page,
        vec![third.clone(), second.clone()],
        "notices: newest first, scoped to the account"
    );
    let cursor = cursor.expect("notices: a second page");
    let (rest, _) = store.list_notices(account, 2, Some(cursor)).await.expect("list notices");
    assert_eq!(rest, vec![first.clone()], "notices: the next page");

    let ours = |list: Vec<OwnerNotice>| {
        list.into_iter()
            .filter(|n| n.account_id == account)
            .map(|n| n.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ours(store.due_notices(digest - SignedDuration::from_mins(1), 100).await.expect("due")),
        vec![],
        "digest: not yet due"
    );
    assert_eq!(
        ours(store.due_notices(digest, 100).await.expect("due")),
        vec![second.id],
        "digest: only what is due"
    );
    assert!(
        store
            .due_notices(digest, 100)
            .await
            .expect("due")
            .iter()
            .any(|n| n.id == foreign.id),
        "digest: every account's due notices"
    );
    assert!(
        store.claim_notice(account, second.id).await.expect("claim"),
        "digest: the first claim wins"
    );
    assert!(
        !store.claim_notice(account, second.id).await.expect("claim"),
        "digest: taken once only"
    );
    assert!(
        !store.claim_notice(account, first.id).await.expect("claim"),
        "digest: an immediate notice is never waiting"
    );
    assert_eq!(
        ours(store.due_notices(digest, 100).await.expect("due")),
        vec![],
        "digest: a taken notice leaves the index"
    );
    let (page, _) = store.list_notices(account, 10, None).await.expect("list notices");
    let taken = page.iter().find(|n| n.id == second.id).expect("the taken notice stays in the feed");
    assert_eq!((taken.digest_at, taken.delivery), (None, NoticeDelivery::Digest));
    assert!(store.claim_notice(other, foreign.id).await.expect("claim"));
}

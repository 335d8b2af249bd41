//! The conformance of [`MemberStore`]: member facts are versioned and listed per account,
//! suppressions are per account, and the send snapshot holds everything the gates read.
//!
//! [`MemberStore`]: crate::ports::MemberStore

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email};
use crate::members::member::{MemberFacts, SendLedger};
use crate::ports::TaskStore;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::task::{OutboundStatus, TaskStatus};
use crate::testing::sample_account;

use super::{base, member, new_task, outbound};

pub(super) async fn member_facts_are_versioned(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let m = member("m_facts");
    assert!(store.get_member(account, &m).await.expect("get").is_none());
    let mut facts = MemberFacts::new(m.clone());
    facts.first_name = Some("Sarah".into());
    facts.version = 1;
    store.save_member_facts(account, &facts).await.expect("first save");
    assert!(
        matches!(
            store.save_member_facts(account, &facts).await,
            Err(StoreError::Conflict(Conflict::MemberFacts))
        ),
        "facts: same version twice must conflict"
    );
    let (stored, ledger) = store.get_member(account, &m).await.expect("get").expect("present");
    assert_eq!(stored.first_name.as_deref(), Some("Sarah"));
    assert_eq!(ledger, SendLedger::default());
}

pub(super) async fn suppressions_are_per_account(store: &dyn TaskStore) {
    let (a, b) = (AccountId::generate(base()), AccountId::generate(base()));
    let email = Email::parse("stop@example.com").expect("email");
    store.put_suppression(a, &email, "owner", base()).await.expect("put");
    assert!(store.is_suppressed(a, &email).await.expect("get"));
    assert!(
        !store.is_suppressed(b, &email).await.expect("get"),
        "suppression: scoped to the account"
    );
    assert!(store.delete_suppression(a, &email).await.expect("delete"));
    assert!(!store.delete_suppression(a, &email).await.expect("delete"));
    assert!(!store.is_suppressed(a, &email).await.expect("get"));
}

pub(super) async fn snapshots_hold_everything_the_gates_read(store: &dyn TaskStore) {
    let account = sample_account(base());
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    let task = new_task(store, account.id, "m_snap", TaskStatus::Ready).await;
    let email = task.member.email.clone().expect("email");
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let empty = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert_eq!(empty.account.as_ref().map(|a| a.id), Some(account.id));
    assert!(!empty.suppressed && empty.ledger == SendLedger::default() && empty.daily_sends(date) == 0);
    assert!(empty.facts.is_none(), "snapshot: no facts for an unknown member");

    let (next, log) = record(&task, base(), Why::new(Reason::SendReserved));
    let mut commit = TaskCommit::new(next, log);
    let ledger = SendLedger {
        sends: [(format!("{}#0", task.id), base())].into_iter().collect(),
        version: 1,
    };
    let yesterday = date.yesterday().expect("date");
    commit.send = Some(SendEffect::Reserve {
        outbound: outbound(&task, 0, OutboundStatus::Reserved),
        member_id: task.member.id.clone(),
        ledger: ledger.clone(),
        daily_date: yesterday,
        daily_limit: 5,
    });
    store.commit(&commit).await.expect("reserve");
    store.put_suppression(account.id, &email, "owner", base()).await.expect("suppress");
    let mut facts = crate::members::member::MemberFacts::new(task.member.id.clone());
    facts.payment_failing = true;
    facts.version = 1;
    store.save_member_facts(account.id, &facts).await.expect("facts");
    let full = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert!(full.suppressed, "snapshot: suppression");
    assert_eq!(full.ledger, ledger, "snapshot: the member's ledger");
    assert!(
        full.facts.as_ref().is_some_and(|f| f.payment_failing),
        "snapshot: the member's facts"
    );
    assert_eq!(
        (full.daily_sends(yesterday), full.daily_sends(date)),
        (1, 0),
        "snapshot: counters of the days around"
    );
    assert!(!full.system.global_pause);
}

/// The risk scan's read (spec §18.2): every member of the account with facts, in member-id
/// order, page by page, and nobody else's.
pub(super) async fn member_facts_are_listed_per_account_in_pages(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    for (acct, name) in [
        (account, "m_l3"),
        (account, "m_l1"),
        (other, "m_l0"),
        (account, "m_l2"),
        (account, "m_l5"),
        (account, "m_l4"),
    ] {
        let mut facts = MemberFacts::new(member(name));
        facts.first_name = Some(name.to_uppercase());
        facts.version = 1;
        store.save_member_facts(acct, &facts).await.expect("facts");
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let (page, next) = store.list_member_facts(account, 2, cursor).await.expect("list members");
        assert!(page.len() <= 2, "members: a page holds at most its limit");
        seen.extend(page.into_iter().map(|f| (f.member_id.to_string(), f.first_name)));
        pages += 1;
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages < 10, "members: the cursor must end");
    }
    let expected: Vec<(String, Option<String>)> = ["m_l1", "m_l2", "m_l3", "m_l4", "m_l5"]
        .iter()
        .map(|m| (m.to_string(), Some(m.to_uppercase())))
        .collect();
    assert_eq!(seen, expected, "members: every one of the account's, in order, once");
    assert!(
        matches!(
            store.list_member_facts(account, 2, Some("not a cursor!".into())).await,
            Err(StoreError::InvalidCursor)
        ),
        "members: a foreign cursor is refused"
    );
}

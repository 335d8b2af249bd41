//! The one rule for numbers (`kernel::number`), kept by every store: a number DynamoDB can
//! hold — 9.99e125 and 1e-130 at its edges — is stored and read back as it was; one beyond
//! them (1e126, 1e-131) is refused with [`StoreError::Unstorable`] and nothing is written, in
//! an account's settings, a member's facts and a task alike.

use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;
use crate::members::member::MemberFacts;
use crate::ports::TaskStore;
use crate::task::TaskStatus;
use crate::task::commit::TaskCommit;
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::testing::sample_account;

use super::{base, member, new_task};

const KEPT: [f64; 4] = [9.99e125, 1e-130, -9.99e125, -1e-130];
const REFUSED: [f64; 4] = [1e126, 1e-131, -1e126, -1e-131];

fn refused(r: Result<(), StoreError>, what: &str, value: f64) {
    match r {
        Err(StoreError::Unstorable(e)) => assert_eq!(e.code, "unstorable_number", "{what} {value}: {e:?}"),
        other => panic!("{what} {value}: expected an unstorable number, got {other:?}"),
    }
}

pub(super) async fn both_stores_keep_the_edges_of_a_number_and_refuse_beyond_them(store: &dyn TaskStore) {
    // An account's settings.
    let mut account = sample_account(base());
    for value in REFUSED {
        let mut bad = account.clone();
        bad.settings.avg_membership_price = value;
        refused(
            store.create_account(&bad, &format!("hash-bad-{}", bad.id)).await,
            "a new account's price",
            value,
        );
    }
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    for value in KEPT {
        account.version += 1;
        account.settings.avg_membership_price = value;
        account.settings.plan_prices = [("p1".to_owned(), value)].into();
        store.save_account(&account).await.expect("an edge value is kept");
        let read = store.get_account(account.id).await.expect("read").expect("present");
        assert_eq!(read.settings.avg_membership_price, value);
        assert_eq!(read.settings.plan_prices["p1"], value);
    }
    for value in REFUSED {
        let mut bad = account.clone();
        bad.version += 1;
        bad.settings.plan_prices = [("p1".to_owned(), value)].into();
        refused(store.save_account(&bad).await, "a plan price", value);
    }
    let read = store.get_account(account.id).await.expect("read").expect("present");
    assert_eq!(read.version, account.version, "a refused save wrote nothing");

    // A member's facts.
    let other = AccountId::generate(base());
    let m = member("m_numbers");
    let mut facts = MemberFacts::new(m.clone());
    for value in REFUSED {
        facts.monthly_value = Some(value);
        facts.version = 1;
        refused(store.save_member_facts(other, &facts).await, "a member's monthly value", value);
    }
    assert!(store.get_member(other, &m).await.expect("read").is_none(), "nothing written");
    for (i, value) in KEPT.into_iter().enumerate() {
        facts.monthly_value = Some(value);
        facts.version = i as u64 + 1;
        store.save_member_facts(other, &facts).await.expect("an edge value is kept");
        let (read, _) = store.get_member(other, &m).await.expect("read").expect("present");
        assert_eq!(read.monthly_value, Some(value));
    }

    // A task's value.
    let task = new_task(store, account.id, "m_numbers_task", TaskStatus::Ready).await;
    for value in REFUSED {
        let (mut next, log) = record(&task, base(), Why::new(Reason::MemberReplied));
        next.attributed_value = Some(value);
        refused(store.commit(&TaskCommit::new(next, log)).await, "a task's value", value);
    }
    let mut current = task;
    for value in KEPT {
        let (mut next, log) = record(&current, base(), Why::new(Reason::MemberReplied));
        next.attributed_value = Some(value);
        store
            .commit(&TaskCommit::new(next.clone(), log))
            .await
            .expect("an edge value is kept");
        let read = store.get_task(account.id, next.id).await.expect("read").expect("present");
        assert_eq!(read.attributed_value, Some(value));
        current = read;
    }
}

//! The conformance of [`DeliverabilityStore`]: a reservation counts the account's send (a
//! release gives it back), a bounce is recorded once per mail at the count of sends, and an
//! address's soft bounces are counted once per mail.
//!
//! [`DeliverabilityStore`]: crate::ports::DeliverabilityStore

use crate::kernel::ids::{AccountId, Email};
use crate::members::member::SendLedger;
use crate::ports::TaskStore;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::task::{OutboundStatus, TaskStatus};

use super::{base, new_task, outbound};

/// Spec §33.3: bounces against sends, once per mail; per account.
pub(super) async fn sends_are_counted_by_reservations_and_bounces_once_per_mail(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    assert_eq!(store.bounce_window(account).await.expect("read").sends, 0, "no sends yet");
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let mut reserved = Vec::new();
    for (i, name) in ["m_d1", "m_d2", "m_d3"].into_iter().enumerate() {
        let task = new_task(store, account, name, TaskStatus::Ready).await;
        let (next, log) = record(&task, base(), Why::new(Reason::SendReserved));
        let mut commit = TaskCommit::new(next.clone(), log);
        let ledger = SendLedger {
            sends: [(format!("{}#0", task.id), base())].into_iter().collect(),
            version: 1,
        };
        let out = outbound(&task, 0, OutboundStatus::Reserved);
        commit.send = Some(SendEffect::Reserve {
            outbound: out.clone(),
            member_id: task.member.id.clone(),
            ledger,
            daily_date: date,
            daily_limit: 10,
        });
        store.commit(&commit).await.unwrap_or_else(|e| panic!("reserve {i}: {e:?}"));
        reserved.push((next, out));
    }
    assert_eq!(
        store.bounce_window(account).await.expect("read").sends,
        3,
        "each reservation counts a send"
    );
    // The provider refused the third: its send is given back.
    let (task, out) = reserved.pop().expect("third");
    let (next, log) = record(&task, base(), Why::new(Reason::SendReserved));
    let mut commit = TaskCommit::new(next, log);
    commit.send = Some(SendEffect::Release {
        outbound: crate::task::OutboundMessage {
            status: OutboundStatus::Failed,
            ..out
        },
        member_id: task.member.id.clone(),
        ledger_key: format!("{}#0", task.id),
        daily_date: date,
    });
    store.commit(&commit).await.expect("release");
    assert_eq!(
        store.bounce_window(account).await.expect("read").sends,
        2,
        "a release gives the send back"
    );

    let window = store.record_bounce(account, "one@example.com").await.expect("bounce");
    assert_eq!((window.sends, window.recent_bounces()), (2, 1));
    assert_eq!(window.bounces.get("one@example.com"), Some(&2), "marked at the count of sends");
    let again = store.record_bounce(account, "one@example.com").await.expect("bounce again");
    assert_eq!(again.recent_bounces(), 1, "a repeated notification changes nothing");
    store.record_bounce(account, "two@example.com").await.expect("second bounce");
    let read = store.bounce_window(account).await.expect("read");
    assert_eq!((read.sends, read.recent_bounces()), (2, 2));
    assert_eq!(store.bounce_window(other).await.expect("read").recent_bounces(), 0, "per account");

    let email = Email::parse("full@example.com").expect("email");
    assert_eq!(store.record_soft_bounce(account, &email, "a@x").await.expect("soft"), 1);
    assert_eq!(
        store.record_soft_bounce(account, &email, "a@x").await.expect("soft"),
        1,
        "once per mail"
    );
    assert_eq!(store.record_soft_bounce(account, &email, "b@x").await.expect("soft"), 2);
    assert_eq!(
        store.record_soft_bounce(other, &email, "c@x").await.expect("soft"),
        1,
        "per account"
    );
}

/// A sending domain belongs to one account: the first claim wins, its holder may rewrite it
/// (proven), another account is refused while it holds, and may take an unproven claim only
/// once it has been held for `UNPROVEN_CLAIM_HOLD`; a release frees only one's own claim.
pub(super) async fn a_sending_domain_is_claimed_by_one_account(store: &dyn TaskStore) {
    use crate::kernel::error::{Conflict, StoreError};
    use crate::kernel::limits::UNPROVEN_CLAIM_HOLD;
    use crate::owner::deliverability::DomainClaim;
    let first = AccountId::generate(base());
    let second = AccountId::generate(base());
    let domain = format!("gym-{}.example.org", first.to_string().to_ascii_lowercase());
    assert_eq!(store.domain_claim(&domain).await.expect("read"), None);
    let claim = DomainClaim {
        domain: domain.clone(),
        account: first,
        claimed_at: base(),
        proven_at: None,
    };
    store.claim_domain(&claim).await.expect("the first claim");
    assert_eq!(store.domain_claim(&domain).await.expect("read"), Some(claim.clone()));
    let theirs = DomainClaim {
        account: second,
        claimed_at: base() + jiff::SignedDuration::from_hours(1),
        ..claim.clone()
    };
    assert!(matches!(
        store.claim_domain(&theirs).await,
        Err(StoreError::Conflict(Conflict::AlreadyExists))
    ));
    store.release_domain(&domain, second).await.expect("another's release");
    assert_eq!(
        store.domain_claim(&domain).await.expect("read").map(|c| c.account),
        Some(first),
        "another account cannot release it"
    );
    let proven = DomainClaim {
        proven_at: Some(base()),
        ..claim.clone()
    };
    store.claim_domain(&proven).await.expect("the holder proves it");
    assert_eq!(store.domain_claim(&domain).await.expect("read"), Some(proven.clone()));
    let much_later = DomainClaim {
        claimed_at: base() + UNPROVEN_CLAIM_HOLD + UNPROVEN_CLAIM_HOLD,
        ..theirs.clone()
    };
    assert!(
        matches!(store.claim_domain(&much_later).await, Err(StoreError::Conflict(_))),
        "a proven claim holds for good"
    );
    store.claim_domain(&claim).await.expect("the holder's proof lapses");
    let too_soon = DomainClaim {
        claimed_at: base() + UNPROVEN_CLAIM_HOLD - jiff::SignedDuration::from_secs(1),
        ..theirs.clone()
    };
    assert!(matches!(store.claim_domain(&too_soon).await, Err(StoreError::Conflict(_))));
    let taken = DomainClaim {
        claimed_at: base() + UNPROVEN_CLAIM_HOLD,
        ..theirs
    };
    store.claim_domain(&taken).await.expect("an unproven claim held a week is taken");
    assert_eq!(store.domain_claim(&domain).await.expect("read"), Some(taken));
    store.release_domain(&domain, first).await.expect("the old holder's release");
    assert_eq!(
        store.domain_claim(&domain).await.expect("read").map(|c| c.account),
        Some(second),
        "a release leaves another's claim"
    );
    store.release_domain(&domain, second).await.expect("release");
    assert_eq!(store.domain_claim(&domain).await.expect("read"), None);
}

/// A text number belongs to one account: the first claim wins, its holder's claim again is a
/// no-op (its first time kept), another account is refused however long it waits, and a
/// release frees only one's own claim.
pub(super) async fn an_sms_number_is_claimed_by_one_account(store: &dyn TaskStore) {
    use crate::kernel::error::{Conflict, StoreError};
    use crate::owner::sms::{NumberClaim, number_key};
    let first = AccountId::generate(base());
    let second = AccountId::generate(base());
    let number = number_key(&format!(
        "+1555{}",
        &first.to_string()[20..26].bytes().map(|b| (b % 10).to_string()).collect::<String>()
    ));
    assert_eq!(store.number_claim(&number).await.expect("read"), None);
    let claim = NumberClaim {
        number: number.clone(),
        account: first,
        claimed_at: base(),
    };
    store.claim_number(&claim).await.expect("the first claim");
    let again = NumberClaim {
        claimed_at: base() + jiff::SignedDuration::from_hours(1),
        ..claim.clone()
    };
    store.claim_number(&again).await.expect("the holder's claim again");
    assert_eq!(
        store.number_claim(&number).await.expect("read"),
        Some(claim.clone()),
        "the first time kept"
    );
    let theirs = NumberClaim {
        account: second,
        claimed_at: base() + jiff::SignedDuration::from_hours(24 * 365),
        ..claim.clone()
    };
    assert!(
        matches!(
            store.claim_number(&theirs).await,
            Err(StoreError::Conflict(Conflict::AlreadyExists))
        ),
        "another account is refused, however much later"
    );
    store.release_number(&number, second).await.expect("another's release");
    assert_eq!(
        store.number_claim(&number).await.expect("read").map(|c| c.account),
        Some(first),
        "another account cannot release it"
    );
    store.release_number(&number, first).await.expect("release");
    assert_eq!(store.number_claim(&number).await.expect("read"), None);
    store.claim_number(&theirs).await.expect("a released number is free");
    assert_eq!(store.number_claim(&number).await.expect("read").map(|c| c.account), Some(second));
}

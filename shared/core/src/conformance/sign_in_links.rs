//! The conformance of [`SignInLinkStore`]: a link signs in once, before it expires, to its
//! own account.
//!
//! [`SignInLinkStore`]: crate::ports::SignInLinkStore

use jiff::SignedDuration;

use crate::kernel::error::Conflict;
use crate::kernel::ids::AccountId;
use crate::owner::sign_in::SignInLink;
use crate::ports::TaskStore;

use super::{base, is_conflict};

pub(super) async fn a_sign_in_link_is_redeemed_once_before_it_expires(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let tag = crate::kernel::ids::new_ulid(base());
    let link = |name: &str, minutes: i64| SignInLink {
        token_hash: format!("{name}-{tag}"),
        account_id: account,
        expires_at: base() + SignedDuration::from_mins(minutes),
    };
    let fresh = link("fresh", 15);
    store.create_sign_in_link(&fresh).await.expect("create");
    for _ in 0..2 {
        assert_eq!(
            store.sign_in_link_account(&fresh.token_hash, base()).await.expect("peek"),
            Some(account),
            "sign-in links: looking does not use it"
        );
    }
    assert!(
        is_conflict(store.create_sign_in_link(&fresh).await, Conflict::AlreadyExists),
        "sign-in links: a hash is stored once"
    );
    assert_eq!(
        store.redeem_sign_in_link(&fresh.token_hash, base()).await.expect("redeem"),
        Some(account)
    );
    assert_eq!(
        store.redeem_sign_in_link(&fresh.token_hash, base()).await.expect("redeem"),
        None,
        "sign-in links: used twice, the second is refused"
    );
    assert_eq!(
        store.sign_in_link_account(&fresh.token_hash, base()).await.expect("peek"),
        None,
        "sign-in links: a used one names no account"
    );
    let expiring = link("expiring", 15);
    store.create_sign_in_link(&expiring).await.expect("create");
    assert_eq!(
        store
            .redeem_sign_in_link(&expiring.token_hash, base() + SignedDuration::from_mins(15))
            .await
            .expect("redeem"),
        None,
        "sign-in links: refused once expired"
    );
    assert_eq!(
        store
            .redeem_sign_in_link(&expiring.token_hash, base() + SignedDuration::from_mins(14))
            .await
            .expect("redeem"),
        Some(account),
        "sign-in links: an expired attempt does not use it up"
    );
    assert_eq!(
        store.redeem_sign_in_link(&format!("unknown-{tag}"), base()).await.expect("redeem"),
        None
    );
}

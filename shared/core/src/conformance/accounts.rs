//! The conformance of [`AccountStore`]: accounts are created once with their token and saved
//! only over their version.
//!
//! [`AccountStore`]: crate::ports::AccountStore

use crate::kernel::error::Conflict;
use crate::ports::TaskStore;
use crate::testing::sample_account;

use super::{base, is_conflict};

pub(super) async fn accounts_are_created_once_and_saved_under_their_version(store: &dyn TaskStore) {
    let account = sample_account(base());
    let hash = format!("hash-{}", account.id);
    store.create_account(&account, &hash).await.expect("create account");
    assert!(
        is_conflict(store.create_account(&account, &hash).await, Conflict::AlreadyExists),
        "accounts: duplicate create must conflict"
    );
    assert_eq!(store.account_for_token(&hash).await.expect("token"), Some(account.id));
    assert_eq!(store.account_for_token("unknown").await.expect("token"), None);
    let mut changed = store.get_account(account.id).await.expect("get").expect("present");
    assert_eq!(changed, account, "accounts: round trip");
    changed.settings.daily_send_limit = 5;
    changed.pushpress = Some(crate::members::connector::ConnectorCredentials::new("pp_key_1", Some("co_1".into())).expect("credentials"));
    changed.version += 1;
    store.save_account(&changed).await.expect("save");
    assert_eq!(
        store.get_account(account.id).await.expect("get").and_then(|a| a.pushpress),
        changed.pushpress,
        "accounts: the account's own connector credentials are kept"
    );
    assert!(
        is_conflict(store.save_account(&changed).await, Conflict::Version),
        "accounts: saving the same version twice must conflict"
    );
    assert_eq!(
        store
            .get_account(account.id)
            .await
            .expect("get")
            .map(|a| a.settings.daily_send_limit),
        Some(5)
    );
    assert!(store.list_accounts().await.expect("list").iter().any(|a| a.id == account.id));
}

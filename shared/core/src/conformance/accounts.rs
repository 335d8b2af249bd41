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
    // What the learning loop keeps on the account: calibrated thresholds, learned
    // skills and rubrics, the cross-business patterns it is credited with.
    changed.settings.calibration = changed
        .settings
        .calibration
        .with(crate::owner::calibration::Threshold::RiskGapDays, 22)
        .expect("bounds");
    changed.settings.learned.push(crate::owner::learned::Learned {
        kind: crate::owner::learned::LearnedKind::Rubric,
        task_type: "churn_risk".into(),
        text: "- Open with the member.".into(),
        suggestion_id: crate::kernel::ids::new_ulid(base()),
    });
    changed
        .learning_patterns
        .insert("2026-10:crossfit_gym:send_time:evening>morning".into());
    store.save_account(&changed).await.expect("save");
    let read = store.get_account(account.id).await.expect("get").expect("present");
    assert_eq!(
        (&read.settings.calibration, &read.settings.learned, &read.learning_patterns),
        (&changed.settings.calibration, &changed.settings.learned, &changed.learning_patterns),
        "accounts: the learning loop's state round-trips"
    );
    let kept = store
        .get_account(account.id)
        .await
        .expect("get")
        .and_then(|a| a.pushpress)
        .expect("kept");
    assert_eq!(
        kept.company_id(),
        Some("co_1"),
        "accounts: the account's own connector credentials are kept"
    );
    assert_eq!(
        store
            .open_secret(kept.api_key(), &crate::kernel::sealed::SecretContext::pushpress_key(account.id))
            .await
            .expect("open"),
        "pp_key_1",
        "accounts: and their key opens (sealed: `sealing`)"
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

pub(super) async fn accounts_are_found_by_their_owners_address_as_it_changes(store: &dyn TaskStore) {
    use crate::kernel::ids::Email;
    let email = |e: &str| Email::parse(e).expect("email");
    // Addresses of this run only (the table is shared by scenarios and runs).
    let tag = crate::kernel::ids::new_ulid(base()).to_string().to_ascii_lowercase();
    let first = email(&format!("owner-{tag}@gym.example"));
    let second = email(&format!("new-{tag}@gym.example"));
    let mut account = sample_account(base());
    account.settings.owner_email = Some(first.clone());
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("create");
    let mut other = sample_account(base());
    other.settings.owner_email = Some(email(&format!("OWNER-{tag}@Gym.Example")));
    store.create_account(&other, &format!("hash-{}", other.id)).await.expect("create");
    let mut both = vec![account.id, other.id];
    both.sort();
    assert_eq!(
        store.accounts_for_owner_email(&first).await.expect("lookup"),
        both,
        "owner index: an address names every account it owns, whatever its case"
    );
    assert!(store.accounts_for_owner_email(&second).await.expect("lookup").is_empty());

    account.settings.owner_email = Some(second.clone());
    account.version += 1;
    store.save_account(&account).await.expect("save");
    assert_eq!(store.accounts_for_owner_email(&second).await.expect("lookup"), vec![account.id]);
    assert_eq!(
        store.accounts_for_owner_email(&first).await.expect("lookup"),
        vec![other.id],
        "owner index: the old address no longer finds the account"
    );
    account.settings.owner_email = None;
    account.version += 1;
    store.save_account(&account).await.expect("save");
    assert!(store.accounts_for_owner_email(&second).await.expect("lookup").is_empty());
}

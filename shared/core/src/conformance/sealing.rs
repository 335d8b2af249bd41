//! The conformance of [`SecretStore`]: a gym's PushPress key and an outbound webhook
//! endpoint's secret are kept sealed — what the store hands back names neither in clear,
//! however it is read — and open again, for their own account only, where they are used.
//!
//! [`SecretStore`]: crate::ports::SecretStore

use std::collections::BTreeSet;

use crate::kernel::sealed::{Secret, SecretContext};
use crate::members::connector::ConnectorCredentials;
use crate::owner::account::WebhookSecret;
use crate::owner::outbound_webhook::{EventType, WebhookEndpoint};
use crate::ports::TaskStore;
use crate::testing::sample_account;

use super::base;

const KEY: &str = "pp_live_sealed_4f1c9a";
const ENDPOINT_SECRET: &str = "whsec_c2VhbGVkLWVuZHBvaW50LXNlY3JldA==";

pub(super) async fn a_gyms_secrets_are_kept_sealed_and_open_where_used(store: &dyn TaskStore) {
    let mut account = sample_account(base());
    account.pushpress = Some(ConnectorCredentials::new(KEY, Some("co_1".into())).expect("credentials"));
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("create");
    let read = store.get_account(account.id).await.expect("get").expect("present");
    let credentials = read.pushpress.clone().expect("kept");
    assert!(credentials.api_key().is_sealed(), "sealed: {:?}", credentials.api_key());
    assert_eq!(credentials.company_id(), Some("co_1"));
    let as_read = serde_json::to_string(&read).expect("json");
    assert!(!as_read.contains(KEY), "the account as read holds no key in clear");
    let listed = serde_json::to_string(&store.list_accounts().await.expect("list")).expect("json");
    assert!(!listed.contains(KEY), "nor as listed");
    let context = SecretContext::pushpress_key(account.id);
    assert_eq!(store.open_secret(credentials.api_key(), &context).await.expect("open"), KEY);
    let other = sample_account(base());
    assert!(
        store
            .open_secret(credentials.api_key(), &SecretContext::pushpress_key(other.id))
            .await
            .is_err(),
        "another account's key does not open as this one's"
    );
    // Saved again as read (sealed), it is not sealed twice; saved with a new key, that one is.
    let mut again = read.clone();
    again.version += 1;
    store.save_account(&again).await.expect("save as read");
    let mut renewed = store.get_account(account.id).await.expect("get").expect("present");
    assert_eq!(renewed.pushpress, read.pushpress, "kept as it was");
    renewed.pushpress = Some(ConnectorCredentials::new("pp_live_second", None).expect("credentials"));
    renewed.version += 1;
    store.save_account(&renewed).await.expect("save a new key");
    let read = store.get_account(account.id).await.expect("get").expect("present");
    let key = read.pushpress.expect("kept");
    assert!(key.api_key().is_sealed());
    assert_eq!(store.open_secret(key.api_key(), &context).await.expect("open"), "pp_live_second");

    let endpoint = WebhookEndpoint::new(
        crate::kernel::ids::new_ulid(base()),
        account.id,
        "https://hooks.example.com/openloop".into(),
        BTreeSet::from([EventType::TaskClosed]),
        WebhookSecret::new(ENDPOINT_SECRET),
        base(),
    );
    store.create_endpoint(&endpoint).await.expect("create endpoint");
    let stored = store.get_endpoint(account.id, endpoint.id).await.expect("get").expect("present");
    assert!(stored.secret.is_sealed(), "the endpoint's secret is sealed");
    let listed = serde_json::to_string(&store.list_endpoints(account.id).await.expect("list")).expect("json");
    assert!(!listed.contains(ENDPOINT_SECRET), "no endpoint secret in clear");
    let context = SecretContext::webhook_endpoint(account.id, endpoint.id);
    assert_eq!(store.open_secret(&stored.secret, &context).await.expect("open"), ENDPOINT_SECRET);
    let mut saved = stored.clone();
    saved.version += 1;
    saved.failures = 1;
    store.save_endpoint(&saved).await.expect("save endpoint");
    let stored = store.get_endpoint(account.id, endpoint.id).await.expect("get").expect("present");
    assert_eq!(store.open_secret(&stored.secret, &context).await.expect("open"), ENDPOINT_SECRET);
    // An open secret opens as it is (one read in clear from before sealing).
    assert_eq!(
        store.open_secret(&Secret::open("as-read"), &context).await.expect("open"),
        "as-read"
    );
}

//! A gym's secrets in the DynamoDB table, read as an operator would read the items: the
//! PushPress key and an outbound webhook endpoint's secret are nowhere in clear — sealed by the
//! emulator's KMS (envelope encryption, `openloop_aws::kms`) — and read back through the store
//! they open; an item written in clear before sealing (an older deployment's) is still read, and
//! its next write seals it.

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::AttributeValue;
use openloop_aws::dynamo::DynamoStore;
use openloop_aws::keys::{PK, PROFILE_SK, SK, account_pk, webhook_endpoint_sk};
use openloop_core::kernel::sealed::SecretContext;
use openloop_core::members::connector::ConnectorCredentials;
use openloop_core::owner::account::WebhookSecret;
use openloop_core::owner::outbound_webhook::{EventType, WebhookEndpoint};
use openloop_core::ports::{AccountStore, SecretStore, WebhookStore};
use openloop_core::testing::sample_account;
use openloop_tests::Scratch;

const KEY: &str = "pp_live_in_the_table_7c1d";
const LEGACY_KEY: &str = "pp_live_from_before_sealing_2b9e";
const ENDPOINT_SECRET: &str = "whsec_ZW5kcG9pbnQtc2VjcmV0LWluLXRoZS10YWJsZQ==";

/// The item at `sk` of `account`'s partition, as DynamoDB holds it, in words.
async fn raw(clients: &openloop_edge::config::Clients, table: &str, pk: String, sk: &str) -> String {
    let item = clients
        .dynamodb
        .get_item()
        .table_name(table)
        .key(PK, AttributeValue::S(pk))
        .key(SK, AttributeValue::S(sk.to_owned()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("get_item: {e:?}"))
        .item
        .unwrap_or_else(|| panic!("the item {sk}"));
    format!("{item:?}")
}

#[tokio::test]
async fn the_stored_items_hold_no_secret_in_clear_and_an_item_from_before_sealing_is_read_and_then_sealed() {
    let scratch = Scratch::new("sealed");
    let (config, clients) = scratch.provision().await;
    let key_arn = config.kms_key_id.clone().expect("the emulator's KMS key");
    let store =
        DynamoStore::new(clients.dynamodb.clone(), config.table.clone()).with_keyring(openloop_edge::config::keyring(&config, &clients));

    let mut account = sample_account(openloop_tests::morning(1));
    account.pushpress = Some(ConnectorCredentials::new(KEY, Some("co_7".into())).expect("credentials"));
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("create");
    let item = raw(&clients, &config.table, account_pk(account.id), PROFILE_SK).await;
    assert!(!item.contains(KEY), "the account item holds the key in clear: {item}");
    assert!(
        item.contains("sealed") && item.contains(&key_arn),
        "sealed under the KMS key: {item}"
    );
    let read = store.get_account(account.id).await.expect("get").expect("present");
    let credentials = read.pushpress.clone().expect("kept");
    let context = SecretContext::pushpress_key(account.id);
    assert_eq!(store.open_secret(credentials.api_key(), &context).await.expect("open"), KEY);

    let endpoint = WebhookEndpoint::new(
        openloop_core::kernel::ids::new_ulid(openloop_tests::morning(1)),
        account.id,
        "https://hooks.example.com/openloop".into(),
        BTreeSet::from([EventType::TaskClosed]),
        WebhookSecret::new(ENDPOINT_SECRET),
        openloop_tests::morning(1),
    );
    store.create_endpoint(&endpoint).await.expect("endpoint");
    let item = raw(&clients, &config.table, account_pk(account.id), &webhook_endpoint_sk(endpoint.id)).await;
    assert!(
        !item.contains(ENDPOINT_SECRET) && !item.contains("ZW5kcG9pbnQ"),
        "the endpoint item holds its secret in clear: {item}"
    );
    let stored = store.get_endpoint(account.id, endpoint.id).await.expect("get").expect("present");
    assert_eq!(
        store
            .open_secret(&stored.secret, &SecretContext::webhook_endpoint(account.id, endpoint.id))
            .await
            .expect("open"),
        ENDPOINT_SECRET
    );

    // An item an older deployment wrote: the key in clear.
    let mut legacy = clients
        .dynamodb
        .get_item()
        .table_name(&config.table)
        .key(PK, AttributeValue::S(account_pk(account.id)))
        .key(SK, AttributeValue::S(PROFILE_SK.into()))
        .send()
        .await
        .expect("get_item")
        .item
        .expect("the account item");
    let mut pushpress = legacy
        .get("pushpress")
        .and_then(|v| v.as_m().ok())
        .cloned()
        .expect("its pushpress map");
    pushpress.insert("api_key".into(), AttributeValue::S(LEGACY_KEY.into()));
    legacy.insert("pushpress".into(), AttributeValue::M(pushpress));
    clients
        .dynamodb
        .put_item()
        .table_name(&config.table)
        .set_item(Some(legacy))
        .send()
        .await
        .expect("put the legacy item");
    let read = store
        .get_account(account.id)
        .await
        .expect("the legacy item reads")
        .expect("present");
    let credentials = read.pushpress.clone().expect("kept");
    assert_eq!(credentials.company_id(), Some("co_7"));
    assert_eq!(
        store
            .open_secret(credentials.api_key(), &context)
            .await
            .expect("a key in clear opens as it is"),
        LEGACY_KEY
    );
    let mut next = read.clone();
    next.settings.daily_send_limit = 7;
    next.version += 1;
    store.save_account(&next).await.expect("the next write");
    let item = raw(&clients, &config.table, account_pk(account.id), PROFILE_SK).await;
    assert!(!item.contains(LEGACY_KEY), "sealed on its next write: {item}");
    let read = store.get_account(account.id).await.expect("get").expect("present");
    let credentials = read.pushpress.expect("kept");
    assert!(credentials.api_key().is_sealed());
    assert_eq!(store.open_secret(credentials.api_key(), &context).await.expect("open"), LEGACY_KEY);
    assert!(
        store
            .open_secret(
                credentials.api_key(),
                &SecretContext::pushpress_key(sample_account(openloop_tests::morning(1)).id)
            )
            .await
            .is_err(),
        "KMS opens it for its own account only (the encryption context)"
    );
}

/// The platform's secrets at start-up, from the emulator's Secrets Manager and SSM as from
/// AWS's: a secret by ARN or name, a SecureString parameter by `ssm:/name`; one that is not
/// there is an error naming it.
#[tokio::test]
async fn the_platforms_secrets_are_read_from_secrets_manager_and_ssm() {
    let config = openloop_tests::test_config();
    let clients = openloop_tests::clients(&config).await;
    let name = format!("{}/signing-key", openloop_tests::unique_prefix("secrets"));
    let manager = openloop_aws::aws_json::JsonService::new(clients.sdk_config().clone(), "secretsmanager", "secretsmanager");
    let created = manager
        .call(
            "CreateSecret",
            &serde_json::json!({"Name": name, "SecretString": "signing-key-in-the-manager"}),
        )
        .await
        .expect("answered")
        .expect("created");
    let arn = created["ARN"].as_str().expect("its ARN").to_owned();
    let ssm = openloop_aws::aws_json::JsonService::new(clients.sdk_config().clone(), "ssm", "AmazonSSM");
    let parameter = format!("/{name}-param");
    ssm.call(
        "PutParameter",
        &serde_json::json!({"Name": parameter, "Value": "token-in-ssm", "Type": "SecureString"}),
    )
    .await
    .expect("answered")
    .expect("put");
    let secrets = clients.platform_secrets();
    assert_eq!(secrets.value(&arn).await.expect("by ARN"), "signing-key-in-the-manager");
    assert_eq!(secrets.value(&name).await.expect("by name"), "signing-key-in-the-manager");
    assert_eq!(secrets.value(&format!("ssm:{parameter}")).await.expect("SSM"), "token-in-ssm");
    let missing = secrets.value("no-such-secret").await.expect_err("missing");
    assert!(missing.contains("no-such-secret"), "{missing}");
}

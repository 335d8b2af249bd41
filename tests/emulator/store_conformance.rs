//! The store conformance suite against DynamoDB (the in-memory store runs it in core).

use openloop_aws::dynamo::DynamoStore;
use openloop_aws::provision::{Names, provision};
use openloop_tests::{clients, test_config, unique_prefix};

#[tokio::test]
async fn the_dynamodb_store_conforms() {
    let config = test_config();
    let clients = clients(&config).await;
    let names = Names::from_prefix(&unique_prefix("conformance"));
    provision(&clients, &names, "mail.openloop.local")
        .await
        .unwrap_or_else(|e| panic!("provision: {e}"));
    // Provisioning twice changes nothing.
    provision(&clients, &names, "mail.openloop.local")
        .await
        .unwrap_or_else(|e| panic!("provision again: {e}"));
    openloop_core::conformance::run_all(&DynamoStore::new(clients.dynamodb.clone(), names.table)).await;
}

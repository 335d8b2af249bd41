//! The store conformance suite against DynamoDB (the in-memory store runs it in core).

use openloop_aws::dynamo::DynamoStore;
use openloop_tests::Scratch;

#[tokio::test]
async fn the_dynamodb_store_conforms() {
    let scratch = Scratch::new("conformance");
    scratch.provision().await;
    // Provisioning twice changes nothing.
    let (config, clients) = scratch.provision().await;
    openloop_core::conformance::run_all(&DynamoStore::new(clients.dynamodb.clone(), config.table)).await;
}

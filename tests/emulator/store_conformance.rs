//! The store conformance suite against DynamoDB (the in-memory store runs it in core): one
//! test per scenario, all on one scratch table.
//!
//! One table rather than one per test, because provisioning is what costs on the emulator: a
//! scratch (table, queues, bus, bucket) takes about 0.45 s to make and remove, more than most
//! scenarios take to run, and the emulator applies DynamoDB requests one at a time, so running
//! the tests in parallel hides little of it. Measured: 12-15 s for the suite with a scratch
//! per test, 4-6 s with one shared. The scenarios make their own accounts and ids, so they
//! may share the table. It is made by the first test that needs it and removed when the last
//! one holding it ends, so it never outlives the suite.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use openloop_aws::dynamo::DynamoStore;
use openloop_core::conformance::{Backend, scenario};
use openloop_core::ports::TaskStore;
use openloop_edge::config::Config;
use openloop_tests::Scratch;
use tokio::sync::OnceCell;

/// The scratch the running tests share, and its configuration once provisioned.
struct SharedScratch {
    scratch: Scratch,
    provisioned: OnceCell<Config>,
}

/// Held weakly, so the scratch is dropped (and deprovisioned) with the last test using it.
static SHARED: Mutex<Weak<SharedScratch>> = Mutex::new(Weak::new());

/// A test's store on the shared table. Each test has a runtime of its own, so each makes its
/// own clients: the SDK's connections belong to the runtime that opened them.
struct ScratchStore {
    store: DynamoStore,
    shared: Arc<SharedScratch>,
}

impl Backend for ScratchStore {
    fn store(&self) -> &dyn TaskStore {
        &self.store
    }
}

async fn scratch_store() -> ScratchStore {
    let shared = {
        let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        slot.upgrade().unwrap_or_else(|| {
            let shared = Arc::new(SharedScratch {
                scratch: Scratch::new("conformance"),
                provisioned: OnceCell::new(),
            });
            *slot = Arc::downgrade(&shared);
            shared
        })
    };
    let config = shared
        .provisioned
        .get_or_init(|| async { shared.scratch.provision().await.0 })
        .await;
    let clients = openloop_tests::clients(config).await;
    ScratchStore {
        // Sealing with the emulator's KMS (`sealing` scenarios).
        store: DynamoStore::new(clients.dynamodb.clone(), config.table.clone())
            .with_keyring(openloop_edge::config::keyring(config, &clients)),
        shared: shared.clone(),
    }
}

openloop_core::store_conformance_tests!(scratch_store().await);

/// Provisioning again, as a deploy does, leaves a table in use as it was: the other scenarios
/// are running on this one meanwhile, and one more runs after.
#[tokio::test]
async fn provisioning_twice_changes_nothing() {
    let backend = scratch_store().await;
    backend.shared.scratch.provision().await;
    scenario::tasks::a_stale_write_changes_nothing(backend.store()).await;
}

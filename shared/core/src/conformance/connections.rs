//! The conformance of [`ConnectionStore`]: one versioned connection per account, its secret
//! kept, a stale write refused, deleted once.
//!
//! [`ConnectionStore`]: crate::ports::ConnectionStore

use crate::kernel::error::Conflict;
use crate::kernel::ids::AccountId;
use crate::members::source::{CheckinKind, PageCursor};
use crate::owner::account::WebhookSecret;
use crate::owner::connection::{Connection, ImportPhase, ImportProgress, WebhookSubscription};
use crate::ports::TaskStore;

use super::{base, is_conflict};

/// The connection is written under its version and read back whole.
pub(super) async fn a_connection_is_versioned_per_account_and_deleted_once(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    assert_eq!(store.connection(account).await.expect("read"), None, "connection: none until saved");
    let mut connection = Connection {
        plans: [("pln_1".to_owned(), "Unlimited".to_owned())].into(),
        company_id: Some("cmp_1".into()),
        company_name: Some("Renegade".into()),
        subscription: Some(WebhookSubscription {
            id: "wh_1".into(),
            url: "https://openloop.example/webhooks/pushpress-v3/a".into(),
            event_types: vec!["customer.created".into()],
            signing_secret: WebhookSecret::new("sec_1"),
        }),
        import: Some(ImportProgress::start(ulid::Ulid::new(), base())),
        last_sync_at: None,
        last_error: None,
        version: 1,
    };
    store.save_connection(account, &connection).await.expect("create");
    assert!(
        is_conflict(store.save_connection(account, &connection).await, Conflict::Version),
        "connection: created once"
    );
    let mut progress = connection.import.clone().expect("import");
    progress.phase = ImportPhase::Checkins(CheckinKind::Appointment);
    progress.cursor = PageCursor {
        page: 3,
        next: Some("cursor-3".into()),
    };
    progress.plan_ids.insert("pln_1".into());
    progress.members = 2000;
    connection.import = Some(progress);
    connection.version = 2;
    store.save_connection(account, &connection).await.expect("update");
    let stale = Connection {
        last_error: Some("stale".into()),
        ..connection.clone()
    };
    assert!(
        is_conflict(store.save_connection(account, &stale).await, Conflict::Version),
        "connection: a stale write changes nothing"
    );
    assert_eq!(store.connection(account).await.expect("read"), Some(connection.clone()));
    assert_eq!(store.connection(other).await.expect("read"), None, "connection: per account");
    assert!(store.delete_connection(account).await.expect("delete"));
    assert!(
        !store.delete_connection(account).await.expect("delete again"),
        "connection: deleted once"
    );
    assert_eq!(store.connection(account).await.expect("read"), None);
    connection.version = 1;
    store.save_connection(account, &connection).await.expect("connect again from 1");
}

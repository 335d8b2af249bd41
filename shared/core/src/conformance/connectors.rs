//! The conformance of [`ConnectorHealthStore`]: connector health counts failures, degrades once
//! and recovers.
//!
//! [`ConnectorHealthStore`]: crate::ports::ConnectorHealthStore

use jiff::SignedDuration;

use crate::kernel::ids::AccountId;
use crate::ports::TaskStore;

use super::base;

/// Spec §34.2: consecutive failures per account and connector, one degradation, a recovery.
pub(super) async fn connector_health_counts_failures_degrades_once_and_recovers(store: &dyn TaskStore) {
    use crate::members::connector::{ConnectorHealth, HealthChange};
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    assert_eq!(
        store.connector_health(account, "pushpress").await.expect("read"),
        ConnectorHealth::default(),
        "connector: healthy until told otherwise"
    );
    let minute = SignedDuration::from_mins(1);
    let mut changes = Vec::new();
    for i in 0..6 {
        let (health, change) = store
            .record_connector_call(account, "pushpress", false, base() + minute * i, 5)
            .await
            .expect("record failure");
        assert_eq!(health.consecutive_failures, u32::try_from(i + 1).expect("small"));
        changes.push(change);
    }
    assert_eq!(
        changes.iter().filter(|c| **c == HealthChange::Degraded).count(),
        1,
        "connector: degraded exactly once"
    );
    assert_eq!(changes[4], HealthChange::Degraded, "connector: at the fifth failure");
    let health = store.connector_health(account, "pushpress").await.expect("read");
    assert_eq!(
        (health.degraded_since, health.last_failure_at),
        (Some(base() + minute * 4), Some(base() + minute * 5))
    );
    assert_eq!(
        store.connector_health(other, "pushpress").await.expect("read"),
        ConnectorHealth::default(),
        "connector: per account"
    );
    assert_eq!(
        store.connector_health(account, "other").await.expect("read"),
        ConnectorHealth::default(),
        "connector: per connector"
    );
    let later = base() + SignedDuration::from_hours(1);
    let (health, change) = store
        .record_connector_call(account, "pushpress", true, later, 5)
        .await
        .expect("record success");
    assert_eq!(change, HealthChange::Recovered, "connector: a success ends the degradation");
    assert_eq!(
        (health.consecutive_failures, health.last_success_at, health.degraded_since),
        (0, Some(later), None)
    );
    assert_eq!(store.connector_health(account, "pushpress").await.expect("read"), health);
    let (_, change) = store
        .record_connector_call(account, "pushpress", true, later + minute, 5)
        .await
        .expect("record success");
    assert_eq!(change, HealthChange::None, "connector: recovered once");
}

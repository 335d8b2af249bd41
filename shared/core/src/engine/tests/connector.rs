//! The connector's degradation rules on the in-memory store with a scripted
//! connector: a touch is never sent on member data that could not be refreshed, failures back
//! off, the fifth in a row degrades the connector with one alert, and a success ends it.

use std::sync::Mutex;

use super::*;
use crate::kernel::ids::AccountId;
use crate::members::connector::{Connector, ConnectorCredentials, ConnectorError, ConnectorMember};
use crate::ports::Clock;
use crate::testing::RecordingBus;

/// A connector that is down or answers with `member`, and counts its calls.
#[derive(Default)]
pub(super) struct FakeConnector {
    down: Mutex<bool>,
    member: Mutex<Option<ConnectorMember>>,
    calls: Mutex<u32>,
    /// No process-wide key: only accounts with their own credentials are served.
    accounts_only: bool,
    /// The API key each call carried (`None`: the process-wide one).
    keys: Mutex<Vec<Option<String>>>,
    /// Webhook subscriptions made at this fake.
    subscriptions: Mutex<Vec<crate::members::source::Subscription>>,
}

impl FakeConnector {
    pub(super) fn set_down(&self, down: bool) {
        *self.down.lock().expect("lock") = down;
    }
    pub(super) fn calls(&self) -> u32 {
        *self.calls.lock().expect("lock")
    }
}

#[async_trait::async_trait]
impl Connector for FakeConnector {
    fn name(&self) -> &'static str {
        "pushpress"
    }
    fn serves(&self, credentials: Option<&ConnectorCredentials>) -> bool {
        credentials.is_some() || !self.accounts_only
    }
    async fn member(
        &self,
        _: AccountId,
        credentials: Option<&ConnectorCredentials>,
        _: &MemberId,
        _: Timestamp,
    ) -> Result<Option<ConnectorMember>, ConnectorError> {
        *self.calls.lock().expect("lock") += 1;
        self.keys
            .lock()
            .expect("lock")
            .push(credentials.map(|c| c.expose_api_key().unwrap_or("<sealed>").to_owned()));
        if *self.down.lock().expect("lock") {
            return Err(ConnectorError::Unavailable("503 after retries".into()));
        }
        Ok(self.member.lock().expect("lock").clone())
    }
    fn source(&self) -> Option<&dyn crate::members::source::MemberSource> {
        Some(self)
    }
}

pub(super) async fn with_connector() -> (World, Arc<FakeConnector>, Arc<RecordingBus>) {
    let mut w = world().await;
    let connector = Arc::new(FakeConnector::default());
    let bus = Arc::new(RecordingBus::default());
    w.engine.connector = Some(connector.clone());
    w.engine.bus = bus.clone();
    (w, connector, bus)
}

async fn reasons(w: &World, task: &Task) -> Vec<String> {
    let history = w.store.task_history(w.account.id, task.id).await.expect("read").expect("task");
    history.log.into_iter().map(|l| l.reason).collect()
}

/// Given a connector that is down, when an approved task's first touch comes due, then the
/// touch waits (logged with the reason) and nothing is sent on the old data.
#[tokio::test]
async fn a_touch_waits_while_the_connector_cannot_refresh_the_member() {
    let (w, connector, _) = with_connector().await;
    connector.set_down(true);
    let task = w.approved("churn_risk", "m_down").await;
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "nothing sent on data that could not be refreshed");
    let after = w.task(&task).await;
    assert_eq!(after.status, TaskStatus::Ready);
    assert!(after.next_action_at.is_some_and(|at| at > w.clock.now()), "deferred, not dropped");
    assert!(reasons(&w, &task).await.contains(&"connector_unavailable".to_owned()));
    let health = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert_eq!(health.consecutive_failures, 1);
}

/// Given a connector that keeps failing, when touches keep coming due, then calls back off
/// (no call inside the backoff), the fifth failure in a row degrades it with exactly one
/// alert, and once it answers again the touch goes out and the health is reset.
#[tokio::test]
async fn repeated_failures_back_off_degrade_once_and_recover() {
    let (w, connector, bus) = with_connector().await;
    connector.set_down(true);
    let task = w.approved("churn_risk", "m_flaky").await;
    w.run().await;
    assert_eq!(connector.calls(), 1);
    // Inside the backoff: the touch is deferred without asking the connector.
    w.clock.advance(SignedDuration::from_secs(20));
    w.engine.execute(&w.item(&task)).await.expect("execute");
    assert_eq!(connector.calls(), 1, "no call inside the backoff");
    for _ in 0..8 {
        w.clock.advance(SignedDuration::from_mins(31));
        w.run().await;
    }
    assert!(w.mailer.sent().is_empty());
    let health = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert!(health.is_degraded() && health.consecutive_failures >= 5, "{health:?}");
    let alerts = bus.published(crate::owner::alert::ALERT_EVENT);
    assert_eq!(alerts.len(), 1, "one alert for one degradation: {alerts:?}");
    assert_eq!(alerts[0]["code"], "connector_degraded");
    assert!(reasons(&w, &task).await.contains(&"connector_backoff".to_owned()));

    connector.set_down(false);
    w.clock.advance(SignedDuration::from_mins(31));
    w.run().await;
    // By now it is afternoon: the first touch waits for the next morning hours (spec §29.3).
    let due = w.run_when_due(&task).await;
    assert_eq!(w.local(due).hour(), 8, "{due}");
    assert_eq!(w.mailer.sent().len(), 1, "sent once the connector answers");
    let health = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert_eq!((health.consecutive_failures, health.is_degraded()), (0, false));
}

/// Given a member whose projected facts say nothing new, when the connector says they checked
/// in after the task was made, then the stale guard completes the churn task without a mail.
#[tokio::test]
async fn fresh_data_from_the_connector_resolves_a_task_the_projection_missed() {
    let (w, connector, _) = with_connector().await;
    let input = w.new_task("churn_risk", "m_fresh").await;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    w.clock.advance(days(1));
    *connector.member.lock().expect("lock") = Some(ConnectorMember {
        checkins: vec![w.clock.now() - SignedDuration::from_hours(2)],
        ..ConnectorMember::default()
    });
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    assert!(w.mailer.sent().is_empty());
    let after = w.task(&task).await;
    assert_eq!(
        (after.status, after.outcome.as_deref(), after.outcome_reason.as_deref()),
        (
            TaskStatus::Completed,
            Some("self_resolved"),
            Some("member_checked_in_before_outreach")
        )
    );
    assert_eq!(connector.calls(), 1);
}

/// Given a healthy connector, when touches go out, then its successes are not written on
/// every call (the health item is written at most once an interval).
#[tokio::test]
async fn a_healthy_connector_costs_no_write_per_touch() {
    let (w, _connector, _) = with_connector().await;
    w.approved("churn_risk", "m_h1").await;
    w.run().await;
    let first = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert_eq!(first.last_success_at, Some(w.clock.now()));
    w.clock.advance(SignedDuration::from_mins(10));
    w.approved("churn_risk", "m_h2").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2);
    let second = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert_eq!(second, first, "the second success inside the interval wrote nothing");
}

/// Given a connector without a process-wide key, an account that brought no PushPress key of
/// its own is not connected: its touches go out on the projected facts, with no call and no
/// failure counted. Once the owner sets a key, the calls for its members carry it; removing
/// it (`null`) disconnects the account again.
#[tokio::test]
async fn an_account_is_refreshed_with_its_own_key_and_only_when_it_has_one() {
    let mut w = world().await;
    let connector = Arc::new(FakeConnector {
        accounts_only: true,
        ..FakeConnector::default()
    });
    w.engine.connector = Some(connector.clone());
    let first = w.approved("churn_risk", "m_nokey").await;
    w.run().await;
    assert_eq!(
        (connector.calls(), w.mailer.sent().len()),
        (0, 1),
        "not connected: sent on the projection"
    );
    let health = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert_eq!(health.consecutive_failures, 0, "no key is not a failure");
    assert_eq!(w.task(&first).await.status, TaskStatus::Waiting);

    let patch: super::super::SettingsPatch =
        serde_json::from_value(serde_json::json!({"pushpress": {"api_key": "pp_own_key", "company_id": "co_7"}})).expect("patch");
    w.engine.update_settings(w.account.id, patch).await.expect("set key");
    assert_eq!(connector.subscriptions.lock().expect("lock").len(), 1, "connecting subscribes");
    let stored = w.store.get_account(w.account.id).await.expect("read").expect("account");
    assert_eq!(stored.pushpress.as_ref().and_then(|c| c.company_id()), Some("co_7"));
    assert!(!format!("{stored:?}").contains("pp_own_key"), "the account's Debug redacts the key");
    w.approved("payment_recovery", "m_key").await;
    w.run().await;
    assert_eq!(*connector.keys.lock().expect("lock"), vec![Some("pp_own_key".to_owned())]);

    let patch: super::super::SettingsPatch = serde_json::from_value(serde_json::json!({"pushpress": null})).expect("patch");
    w.engine.update_settings(w.account.id, patch).await.expect("remove key");
    assert!(
        connector.subscriptions.lock().expect("lock").is_empty(),
        "disconnecting unsubscribes"
    );
    let stored = w.store.get_account(w.account.id).await.expect("read").expect("account");
    assert!(stored.pushpress.is_none(), "null removes the key");
    // A key with a space is refused where the body is read, by the key's bounded type.
    let refused = serde_json::from_value::<super::super::SettingsPatch>(serde_json::json!({"pushpress": {"api_key": "has space"}}));
    assert!(
        refused.as_ref().is_err_and(|e| e.to_string().contains("invalid_pushpress")),
        "{refused:?}"
    );
}

/// As a member source, an empty gym that takes every key and keeps its subscriptions.
#[async_trait::async_trait]
impl crate::members::source::MemberSource for FakeConnector {
    async fn company(&self, _: &ConnectorCredentials) -> Result<crate::members::source::Company, ConnectorError> {
        Ok(crate::members::source::Company {
            id: "co_7".into(),
            name: "Fake gym".into(),
            timezone: None,
        })
    }
    async fn customers(
        &self,
        _: &ConnectorCredentials,
        _: &crate::members::source::PageCursor,
    ) -> Result<crate::members::source::Page<crate::members::source::Customer>, ConnectorError> {
        Ok(crate::members::source::Page { items: vec![], next: None })
    }
    async fn enrollments(
        &self,
        _: &ConnectorCredentials,
        _: &crate::members::source::PageCursor,
    ) -> Result<crate::members::source::Page<crate::members::source::Enrollment>, ConnectorError> {
        Ok(crate::members::source::Page { items: vec![], next: None })
    }
    async fn checkins(
        &self,
        _: &ConnectorCredentials,
        _: crate::members::source::CheckinKind,
        _: Timestamp,
        _: &crate::members::source::PageCursor,
    ) -> Result<crate::members::source::Page<crate::members::source::Checkin>, ConnectorError> {
        Ok(crate::members::source::Page { items: vec![], next: None })
    }
    async fn plan(&self, _: &ConnectorCredentials, _: &str) -> Result<Option<crate::members::source::Plan>, ConnectorError> {
        Ok(None)
    }
    async fn subscriptions(&self, _: &ConnectorCredentials) -> Result<Vec<crate::members::source::Subscription>, ConnectorError> {
        Ok(self.subscriptions.lock().expect("lock").clone())
    }
    async fn subscribe(
        &self,
        _: &ConnectorCredentials,
        url: &str,
        event_types: &[&str],
    ) -> Result<crate::members::source::Subscription, ConnectorError> {
        let made = crate::members::source::Subscription {
            id: format!("wh_{url}"),
            url: url.to_owned(),
            event_types: event_types.iter().map(|t| (*t).to_owned()).collect(),
            signing_secret: Some("fake_secret".into()),
        };
        self.subscriptions.lock().expect("lock").push(made.clone());
        Ok(made)
    }
    async fn unsubscribe(&self, _: &ConnectorCredentials, id: &str) -> Result<(), ConnectorError> {
        self.subscriptions.lock().expect("lock").retain(|s| s.id != id);
        Ok(())
    }
}

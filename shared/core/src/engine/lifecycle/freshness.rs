//! The connector's part in the stale guard: before a touch, ask the member-data
//! connector for the member as they are now — unless it is in its backoff — and never send on
//! data that could not be refreshed. Without a configured connector the projected facts are
//! used as they are.

use jiff::{SignedDuration, Timestamp};

use super::Engine;
use crate::kernel::ids::AccountId;
use crate::kernel::limits::CONNECTOR_DEGRADED_AFTER;
use crate::members::connector::{ConnectorError, ConnectorHealth, HealthChange, refresh};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::alert::{ALERT_EVENT, Alert, Severity};
use crate::owner::recurring::ACCOUNT_WIDE_MEMBER;
use crate::task::Task;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::transition::Why;

/// The facts the stale guard reads, or why the touch must wait.
pub(in crate::engine) enum Fresh {
    Facts(Option<Box<MemberFacts>>),
    Defer { until: Timestamp, why: Why },
}

/// The earliest a deferred touch comes back.
const MIN_DEFERRAL: SignedDuration = SignedDuration::from_mins(1);

impl Engine {
    /// The member's facts for `task`'s next touch: the projected ones (`stored`), brought up
    /// to date by the connector when one is configured and serves the account — with the
    /// account's own credentials when it has them.
    pub(in crate::engine) async fn fresh_facts(
        &self,
        account: &Account,
        task: &Task,
        stored: Option<MemberFacts>,
        now: Timestamp,
    ) -> Result<Fresh, EngineError> {
        let Some(connector) = self.connector.as_ref().filter(|c| c.serves(account.pushpress.as_ref())) else {
            return Ok(Fresh::Facts(stored.map(Box::new)));
        };
        if task.member.id.as_str() == ACCOUNT_WIDE_MEMBER {
            return Ok(Fresh::Facts(stored.map(Box::new)));
        }
        let name = connector.name();
        let health = self.store.connector_health(task.account_id, name).await?;
        if !health.allows_call(now) {
            return Ok(defer(name, &health, now, Reason::ConnectorBackoff, "in its backoff".into()));
        }
        let credentials = match self.opened_pushpress(account).await {
            Ok(credentials) => credentials,
            // The key's keyring out of reach is the connector out of reach: the touch waits.
            Err(e) => return Ok(defer(name, &health, now, Reason::ConnectorUnavailable, e.to_string())),
        };
        let answer = connector
            .member(task.account_id, credentials.as_ref(), &task.member.id, task.created_at)
            .await;
        let health = self
            .record_connector_result(task.account_id, name, &health, answer.as_ref().err(), now)
            .await?;
        match answer {
            Ok(fresh) => Ok(Fresh::Facts(
                match fresh {
                    Some(fresh) => Some(refresh(stored, &task.member.id, &fresh, now)),
                    None => stored,
                }
                .map(Box::new),
            )),
            Err(e) => Ok(defer(name, &health, now, Reason::ConnectorUnavailable, e.to_string())),
        }
    }

    /// The account's own PushPress credentials with the key opened, for a call to PushPress
    /// (the only reason to open it): the store opens the sealed key (`kernel::sealed`).
    pub(in crate::engine) async fn opened_pushpress(
        &self,
        account: &Account,
    ) -> Result<Option<crate::members::connector::ConnectorCredentials>, EngineError> {
        let Some(credentials) = account.pushpress.as_ref() else {
            return Ok(None);
        };
        let context = crate::kernel::sealed::SecretContext::pushpress_key(account.id);
        let key = self.store.open_secret(credentials.api_key(), &context).await?;
        Ok(Some(credentials.opened(key)))
    }

    /// Keep the account's connector health after a call: a failure counts (the
    /// one that degrades the connector raises the alert), a success resets it when worth a
    /// write. The health after the call.
    pub(in crate::engine) async fn record_connector_result(
        &self,
        account: AccountId,
        name: &str,
        health: &ConnectorHealth,
        error: Option<&ConnectorError>,
        now: Timestamp,
    ) -> Result<ConnectorHealth, EngineError> {
        let Some(e) = error else {
            if !health.success_worth_recording(now) {
                return Ok(health.clone());
            }
            let (health, change) = self
                .store
                .record_connector_call(account, name, true, now, CONNECTOR_DEGRADED_AFTER)
                .await?;
            if change == HealthChange::Recovered {
                tracing::info!(account = %account, connector = name, "connector recovered");
            }
            return Ok(health);
        };
        let (health, change) = self
            .store
            .record_connector_call(account, name, false, now, CONNECTOR_DEGRADED_AFTER)
            .await?;
        tracing::warn!(account = %account, connector = name, error = %e, failures = health.consecutive_failures, "connector call failed");
        if change == HealthChange::Degraded {
            self.raise(Alert {
                code: "connector_degraded",
                severity: Severity::Critical,
                account_id: Some(account),
                detail: format!("{name} failed {} times in a row; touches wait for it", health.consecutive_failures),
                action: "check the connector's status and the account's API access",
                at: now,
            })
            .await;
        }
        Ok(health)
    }

    /// Log and publish an alert. A bus failure is logged; the alert's log line
    /// stands either way.
    pub(crate) async fn raise(&self, alert: Alert) {
        // At the level its severity says, the account as the API and the dashboard write it.
        let account = alert.account_id.map(|a| a.to_string()).unwrap_or_default();
        match alert.severity {
            Severity::Critical => tracing::error!(code = alert.code, account = %account, detail = %alert.detail, "alert"),
            Severity::Warning => tracing::warn!(code = alert.code, account = %account, detail = %alert.detail, "alert"),
            Severity::Info => tracing::info!(code = alert.code, account = %account, detail = %alert.detail, "alert"),
        }
        let detail = serde_json::to_value(&alert).unwrap_or_default();
        if let Err(e) = self.bus.publish(ALERT_EVENT, detail).await {
            tracing::warn!(code = alert.code, error = %e, "alert not published");
        }
    }
}

pub(in crate::engine) fn defer(name: &str, health: &ConnectorHealth, now: Timestamp, reason: Reason, what: String) -> Fresh {
    let until = health.next_attempt_at().unwrap_or(now).max(now + MIN_DEFERRAL);
    let degraded = health.degraded_since.map(|at| format!(", degraded since {at}")).unwrap_or_default();
    let detail = format!(
        "{name} {what} ({} failure(s) in a row{degraded}); nothing is sent on member data that could not be refreshed; next try {until}",
        health.consecutive_failures
    );
    Fresh::Defer {
        until,
        why: Why::new(reason).detail(detail),
    }
}

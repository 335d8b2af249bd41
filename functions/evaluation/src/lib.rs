//! The evaluation function: fired by the EventBridge
//! rule on `TaskClosed` (that task's account, source `post_task`) and by a weekly schedule
//! (every account, `weekly_batch`). The account's closed tasks of the last 30 days go to the
//! evaluator; each finding is stored once as a pending suggestion for the owner. A monthly
//! schedule (`detail-type` `MonthlyEvaluation`) runs the cross-business evaluation of the
//! month just ended. Thin: the event read, an engine call, its report logged.

use serde::Deserialize;

use openloop_core::engine::{Engine, EvaluationReport, NetworkReport};
use openloop_core::kernel::ids::AccountId;
use openloop_core::task::error::EngineError;

/// What fired the function: a `TaskClosed` event's detail names its account; a scheduled
/// event (or anything else) runs the weekly evaluation of every account.
#[derive(Debug, Default, Deserialize)]
pub struct Trigger {
    #[serde(default, rename = "detail-type")]
    pub detail_type: Option<String>,
    #[serde(default)]
    pub detail: Option<serde_json::Value>,
}

/// The `detail-type` the monthly schedule's input names.
pub const MONTHLY: &str = "MonthlyEvaluation";

impl Trigger {
    /// Whether this is the monthly schedule.
    pub fn is_monthly(&self) -> bool {
        self.detail_type.as_deref() == Some(MONTHLY)
    }

    /// The account of a `TaskClosed` event.
    fn closed_task_account(&self) -> Option<AccountId> {
        if self.detail_type.as_deref() != Some("TaskClosed") {
            return None;
        }
        let raw = self.detail.as_ref()?.get("account_id")?.as_str()?;
        raw.parse().ok()
    }
}

/// The cross-business evaluation of the month before the one `now` is in (UTC).
pub async fn handle_monthly(engine: &Engine) -> Result<NetworkReport, EngineError> {
    let month = previous_month(engine.now());
    // The engine logs the run's figures (`evaluate_network`).
    let report = engine.evaluate_network(&month).await?;
    Ok(report)
}

/// `YYYY-MM` of the month before `now`'s (UTC).
pub fn previous_month(now: jiff::Timestamp) -> String {
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let last_of_previous = today.first_of_month().yesterday().unwrap_or(today);
    last_of_previous.strftime("%Y-%m").to_string()
}

pub async fn handle(engine: &Engine, trigger: &Trigger) -> Result<EvaluationReport, EngineError> {
    let report = match trigger.closed_task_account() {
        Some(account) => {
            let (tasks, suggested) = engine.evaluate_account(account, "post_task").await?;
            EvaluationReport {
                accounts: 1,
                tasks,
                suggested,
                failed: 0,
            }
        }
        None => engine.evaluate_accounts().await?,
    };
    tracing::info!(
        accounts = report.accounts,
        tasks = report.tasks,
        suggested = report.suggested,
        failed = report.failed,
        "evaluation"
    );
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_closed_event_names_its_account_and_a_schedule_names_none() {
        let account = AccountId::generate(jiff::Timestamp::UNIX_EPOCH);
        let closed: Trigger = serde_json::from_value(serde_json::json!({
            "detail-type": "TaskClosed", "source": "openloop", "detail": {"account_id": account.to_string(), "task_id": "x"}
        }))
        .expect("event");
        assert_eq!(closed.closed_task_account(), Some(account));
        let scheduled: Trigger = serde_json::from_value(serde_json::json!({
            "detail-type": "Scheduled Event", "source": "aws.events", "detail": {}
        }))
        .expect("event");
        assert_eq!(scheduled.closed_task_account(), None);
        assert!(!scheduled.is_monthly());
        let monthly: Trigger = serde_json::from_value(serde_json::json!({"detail-type": MONTHLY})).expect("event");
        assert!(monthly.is_monthly());
    }

    #[test]
    fn the_monthly_run_evaluates_the_month_just_ended() {
        assert_eq!(previous_month("2026-11-01T02:00:00Z".parse().expect("time")), "2026-10");
        assert_eq!(previous_month("2027-01-15T00:00:00Z".parse().expect("time")), "2026-12");
    }
}

//! The evaluation function locally: what the EventBridge rule on `TaskClosed` and the weekly
//! schedule do in AWS. The engine's bus is wrapped so each `TaskClosed` it publishes is also
//! kept here; `/_local/run` evaluates the account of each (once per account per run) and, when
//! the week has turned on the test clock, every account; when the month has turned, the
//! cross-business evaluation of the month just ended ([`Monthly`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use jiff::SignedDuration;

use openloop_core::engine::{Engine, EvaluationReport};
use openloop_core::ports::EventBus;
use openloop_core::task::error::EngineError;

pub const WEEK: SignedDuration = SignedDuration::from_hours(24 * 7);

/// A bus that keeps the account of every `TaskClosed` and passes everything on.
pub struct ClosedTasks {
    inner: Mutex<Arc<dyn EventBus>>,
    accounts: Mutex<BTreeSet<String>>,
}

impl ClosedTasks {
    pub fn new(inner: Arc<dyn EventBus>) -> Self {
        Self {
            inner: Mutex::new(inner),
            accounts: Mutex::new(BTreeSet::new()),
        }
    }

    /// Pass events on to `bus` from now on.
    pub fn forward_to(&self, bus: Arc<dyn EventBus>) {
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = bus;
    }

    fn take(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.accounts.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[async_trait]
impl EventBus for ClosedTasks {
    async fn publish(&self, detail_type: &str, detail: serde_json::Value) -> Result<(), String> {
        if detail_type == "TaskClosed"
            && let Some(account) = detail.get("account_id").and_then(|a| a.as_str())
        {
            self.accounts.lock().unwrap_or_else(|e| e.into_inner()).insert(account.to_owned());
        }
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
        inner.publish(detail_type, detail).await
    }
}

/// Evaluate the accounts whose tasks closed, and every account when `weekly`; `None` when
/// there was nothing to do.
pub async fn run(engine: &Engine, closed: &ClosedTasks, weekly: bool) -> Result<Option<EvaluationReport>, EngineError> {
    let mut report = EvaluationReport::default();
    let accounts = closed.take();
    if accounts.is_empty() && !weekly {
        return Ok(None);
    }
    for account in accounts {
        let trigger: openloop_fn_evaluation::Trigger = serde_json::from_value(serde_json::json!({
            "detail-type": "TaskClosed", "detail": {"account_id": account}
        }))
        .map_err(|e| EngineError::Dependency(e.to_string()))?;
        let one = openloop_fn_evaluation::handle(engine, &trigger).await?;
        report.accounts += one.accounts;
        report.tasks += one.tasks;
        report.suggested += one.suggested;
    }
    if weekly {
        let all = openloop_fn_evaluation::handle(engine, &openloop_fn_evaluation::Trigger::default()).await?;
        report.accounts += all.accounts;
        report.tasks += all.tasks;
        report.suggested += all.suggested;
        report.failed += all.failed;
    }
    Ok(Some(report))
}

/// The monthly schedule under the test clock: due once each time the clock enters a new
/// month (UTC), for the month just ended — as the 1st-of-the-month rule fires in AWS.
pub struct Monthly {
    last: Mutex<String>,
}

impl Monthly {
    /// Not due until the clock leaves the month the runtime started in.
    pub fn new(now: jiff::Timestamp) -> Self {
        Self {
            last: Mutex::new(openloop_fn_evaluation::previous_month(now)),
        }
    }

    /// Run the cross-business evaluation if the month turned since the last one.
    pub async fn run(&self, engine: &Engine) -> Result<Option<openloop_core::engine::NetworkReport>, EngineError> {
        let month = openloop_fn_evaluation::previous_month(engine.now());
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if *last == month {
                return Ok(None);
            }
            *last = month;
        }
        openloop_fn_evaluation::handle_monthly(engine).await.map(Some)
    }
}

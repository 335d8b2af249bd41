//! The analysis function (EventBridge, every 6 hours): the risk scan over every account's
//! member facts, creating tasks within the flood limits.

use jiff::SignedDuration;
use openloop_core::engine::{AnalysisReport, Engine};
use openloop_core::task::error::EngineError;

/// The schedule's period (`rate(6 hours)` in the template; the local runtime fires it when
/// the test clock has passed the next slot).
pub const PERIOD: SignedDuration = openloop_core::kernel::limits::ANALYSIS_PERIOD;

pub async fn handle(engine: &Engine) -> Result<AnalysisReport, EngineError> {
    let report = engine.analyze().await?;
    tracing::info!(
        accounts = report.accounts.len(),
        created = report.created,
        failed_accounts = report.failed_accounts,
        paused = report.paused,
        "analysis"
    );
    Ok(report)
}

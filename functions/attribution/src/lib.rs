//! The attribution function (EventBridge, every hour, spec §9): closed tasks inside their
//! verification windows are valued, their provisional outcomes confirmed or downgraded, and
//! late wins credited. Thin: one engine call, its report logged and returned.

use openloop_core::engine::{AttributionReport, Engine};
use openloop_core::error::EngineError;

pub async fn handle(engine: &Engine) -> Result<AttributionReport, EngineError> {
    let report = engine.attribute().await?;
    tracing::info!(?report, "attribution");
    Ok(report)
}

//! The tick function (EventBridge, every minute): the global pause, then the due index →
//! the work queues, each item delayed to wake at its second.

use jiff::SignedDuration;
use openloop_core::engine::{Engine, TickReport};
use openloop_core::error::EngineError;

/// The schedule's period: the tick enqueues what falls due before the next one.
pub const PERIOD: SignedDuration = SignedDuration::from_mins(1);

pub async fn handle(engine: &Engine, lookahead: SignedDuration) -> Result<TickReport, EngineError> {
    let report = engine.tick(lookahead).await?;
    tracing::info!(?report, "tick");
    Ok(report)
}

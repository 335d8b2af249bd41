//! The tick function (EventBridge, every minute): the global pause, then the due index →
//! the work queues, each item delayed to wake at its second.

use jiff::SignedDuration;
use openloop_core::engine::{Engine, TickReport, Wake};
use openloop_core::task::error::EngineError;

/// The schedule's period: the tick enqueues what falls due before the next one.
pub const PERIOD: SignedDuration = SignedDuration::from_mins(1);

/// In Lambda: `Wake::AtTheirSecond { period: PERIOD }`; the local runtime uses `Wake::Now`.
pub async fn handle(engine: &Engine, wake: Wake) -> Result<TickReport, EngineError> {
    let report = engine.tick(wake).await?;
    let due: usize = report.enqueued.values().sum();
    // One line when the tick handed something out; an idle minute is a debug line.
    if due > 0 || report.truncated || report.owner_digests > 0 || report.paused {
        tracing::info!(
            due,
            truncated = report.truncated,
            owner_digests = report.owner_digests,
            paused = report.paused,
            "tick"
        );
    } else {
        tracing::debug!("tick: nothing due");
    }
    // The platform's due work per minute, as CloudWatch metrics (EMF).
    openloop_edge::emf::emit(&openloop_edge::emf::line(
        "tick",
        engine.now(),
        &[
            ("WorkEnqueued", due as f64),
            ("TickTruncated", f64::from(u8::from(report.truncated))),
        ],
    ));
    Ok(report)
}

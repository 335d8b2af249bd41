//! The attribution function (EventBridge, every hour, spec §9): closed tasks inside their
//! verification windows are valued, their provisional outcomes confirmed or downgraded, and
//! late wins credited. Then, on the same schedule, the daily metrics: every
//! account's new decisions folded into its day, the alerts of §28.4 raised, and the run's
//! counts written as one CloudWatch EMF line; and each owner's daily digest. Thin: engine calls, their reports logged.

use openloop_core::engine::{AttributionReport, Engine};
use openloop_core::task::error::EngineError;
use openloop_edge::emf;

pub async fn handle(engine: &Engine) -> Result<AttributionReport, EngineError> {
    let report = engine.attribute().await?;
    tracing::info!(
        watched = report.watched,
        valued = report.valued,
        confirmed = report.confirmed,
        downgraded = report.downgraded,
        late_wins = report.late_wins,
        failed = report.failed,
        "attribution"
    );
    // Attribution is done either way; a failed metrics run folds the same decisions next hour.
    match engine.record_metrics().await {
        Ok(metrics) => {
            tracing::info!(
                accounts = metrics.accounts,
                decisions = metrics.decisions,
                alerts = metrics.alerts.len(),
                "metrics"
            );
            let extra = [
                ("AttributionValued", report.valued as f64),
                ("AttributionDowngraded", report.downgraded as f64),
                ("AttributionFailures", report.failed as f64),
                ("Alerts", metrics.alerts.len() as f64),
                ("Accounts", metrics.accounts as f64),
            ];
            emf::emit(&emf::counts_line("attribution", engine.now(), &metrics.folded, &extra));
        }
        Err(e) => tracing::warn!(error = %e, "metrics run failed"),
    }
    // After the fold, which the owners' daily digests read (spec §35.2).
    match engine.send_daily_digests().await {
        Ok(made) => tracing::info!(made, "daily digests"),
        Err(e) => tracing::warn!(error = %e, "daily digests not made this run"),
    }
    // Message experiments: a win offered (or kept), one past its time limit ended.
    match engine.decide_experiments().await {
        Ok(run) => tracing::info!(
            won = run.won,
            kept = run.kept,
            ended = run.ended,
            failed = run.failed,
            "experiments decided"
        ),
        Err(e) => tracing::warn!(error = %e, "experiments not decided this run"),
    }
    // Each account's send hours, chosen again once a day from what its sends led to.
    match engine.choose_send_hours().await {
        Ok(run) => tracing::info!(checked = run.checked, chosen = run.chosen, failed = run.failed, "send hours"),
        Err(e) => tracing::warn!(error = %e, "send hours not chosen this run"),
    }
    // Gyms' own sending domains waiting for their DNS records (spec §33.1).
    match engine.check_sending_domains().await {
        Ok(asked) => tracing::info!(asked, "sending domains checked"),
        Err(e) => tracing::warn!(error = %e, "sending domains not checked this run"),
    }
    Ok(report)
}

//! The hourly metrics fold and its alerts (§28.4) on the in-memory store.

use super::*;
use crate::kernel::limits::{METRICS_SETTLE, local_date};
use crate::owner::alert::ALERT_EVENT;
use crate::ports::Clock;
use crate::testing::RecordingBus;

/// Given a day of work, when the metrics run, then the account's day holds what its decisions
/// say; when they run again with nothing new, nothing is counted twice.
#[tokio::test]
async fn the_fold_counts_each_decision_once_into_the_accounts_day() {
    let w = world().await;
    w.approved("churn_risk", "m_m1").await;
    w.approved("churn_risk", "m_m2").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 2);
    w.clock.advance(METRICS_SETTLE + SignedDuration::from_mins(1));
    let report = w.engine.record_metrics().await.expect("metrics");
    let today = local_date(w.clock.now(), &w.account.settings.time_zone());
    let day = w.store.daily_metrics(w.account.id, today).await.expect("read");
    assert_eq!((day.tasks_created, day.owner_approvals, day.messages_sent), (2, 2, 2), "{day:?}");
    assert_eq!(report.folded.messages_sent, 2);
    let again = w.engine.record_metrics().await.expect("metrics");
    assert_eq!(again.decisions, 0);
    assert_eq!(
        w.store.daily_metrics(w.account.id, today).await.expect("read"),
        day,
        "nothing counted twice"
    );
    // A decision made after the watermark is folded by the next run.
    w.engine
        .cancel(
            w.account.id,
            w.store.list_tasks(w.account.id, &Default::default()).await.expect("list").0[0].id,
        )
        .await
        .expect("cancel");
    w.clock.advance(METRICS_SETTLE + SignedDuration::from_mins(1));
    w.engine.record_metrics().await.expect("metrics");
    let after = w.store.daily_metrics(w.account.id, today).await.expect("read");
    assert_eq!((after.tasks_cancelled, after.messages_sent), (1, 2));
}

/// Given an account that made nothing and completed nothing for two weeks, when the metrics
/// run on a day with decisions, then the stalled-onboarding alert is raised once that day.
#[tokio::test]
async fn an_alert_is_raised_once_a_day_on_the_bus() {
    let mut w = world().await;
    let bus = Arc::new(RecordingBus::default());
    w.engine.bus = bus.clone();
    w.clock.advance(days(15));
    let task = w.approved("churn_risk", "m_stall").await;
    w.clock.advance(METRICS_SETTLE + SignedDuration::from_mins(1));
    w.engine.record_metrics().await.expect("metrics");
    w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    w.clock.advance(METRICS_SETTLE + SignedDuration::from_mins(1));
    w.engine.record_metrics().await.expect("metrics");
    let alerts = bus.published(ALERT_EVENT);
    let stalled: Vec<_> = alerts.iter().filter(|a| a["code"] == "onboarding_stalled").collect();
    assert_eq!(stalled.len(), 1, "{alerts:?}");
    assert_eq!(stalled[0]["account_id"], serde_json::json!(w.account.id));
}

/// Spec §28.4: a gym's AI spend above $10 a day alerts us — once that day, however many runs
/// see it; the spend is the day's AI calls at the configured model's cost per call.
#[tokio::test]
async fn a_days_ai_spend_above_the_threshold_alerts_exactly_once() {
    let mut w = world().await;
    let bus = Arc::new(RecordingBus::default());
    w.engine.bus = bus.clone();
    w.engine.config.ai_pricing = crate::owner::metrics::AiPricing {
        per_call_usd: 0.15,
        alert_daily_usd: 10.0,
    };
    let today = local_date(w.clock.now(), &w.account.settings.time_zone());
    let ai_cost = |bus: &RecordingBus| {
        bus.published(ALERT_EVENT)
            .into_iter()
            .filter(|a| a["code"] == "ai_cost")
            .collect::<Vec<_>>()
    };
    // 66 calls at $0.15: $9.90, not above $10.
    for _ in 0..66 {
        w.store
            .count_ai_call(w.account.id, today, 1000)
            .await
            .expect("count")
            .expect("under the cap");
    }
    w.engine.record_metrics().await.expect("metrics");
    assert!(ai_cost(&bus).is_empty(), "$9.90 is under the threshold");
    // The 67th: $10.05.
    w.store.count_ai_call(w.account.id, today, 1000).await.expect("count");
    w.clock.advance(SignedDuration::from_mins(60));
    w.engine.record_metrics().await.expect("metrics");
    let raised = ai_cost(&bus);
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert!(raised[0]["detail"].as_str().is_some_and(|d| d.contains("$10.05")), "{}", raised[0]);
    for _ in 0..3 {
        w.store.count_ai_call(w.account.id, today, 1000).await.expect("count");
        w.clock.advance(SignedDuration::from_mins(60));
        w.engine.record_metrics().await.expect("metrics");
    }
    assert_eq!(ai_cost(&bus).len(), 1, "deduplicated for the day");
}

/// The overview's revenue chart starts with the month the gym was made in: no empty months
/// from before it existed (issue 45: "months before the gym existed are not shown").
#[tokio::test]
async fn the_revenue_chart_has_no_month_before_the_gym_was_made() {
    let w = world().await;
    let months = |o: &crate::engine::learning::scorecard::Overview| o.revenue_by_month.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>();
    let first = w.engine.overview(w.account.id, 12, "2026-11-01").await.expect("overview");
    assert_eq!(months(&first), vec!["2026-11".to_owned()], "made this month");
    w.clock.set(day0() + days(45));
    let later = w.engine.overview(w.account.id, 12, "2026-11-01").await.expect("overview");
    assert_eq!(months(&later), vec!["2026-11".to_owned(), "2026-12".to_owned()]);
}

//! The conformance of [`MetricsStore`]: daily metrics are added once, with their watermark, and
//! read by range.
//!
//! [`MetricsStore`]: crate::ports::MetricsStore

use jiff::SignedDuration;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::ports::TaskStore;

use super::base;

/// Spec §28.3: a fold's additions and its watermark are one conditional write.
pub(super) async fn daily_metrics_are_added_with_their_watermark_once(store: &dyn TaskStore) {
    use crate::owner::metrics::{DailyMetrics, MetricsCursor};
    let account = AccountId::generate(base());
    let day = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let next = day.tomorrow().expect("date");
    assert_eq!(store.metrics_cursor(account).await.expect("read"), MetricsCursor::default());
    assert_eq!(store.daily_metrics(account, day).await.expect("read"), DailyMetrics::default());
    let sent = DailyMetrics {
        messages_sent: 2,
        tasks_created: 1,
        ai_calls: 7,
        ..DailyMetrics::default()
    };
    let first = MetricsCursor {
        through: Some(base()),
        totals: sent.clone(),
        alerted: [("escalation_rate".to_owned(), day)].into(),
        version: 1,
    };
    store
        .save_metrics(
            account,
            &first,
            &[
                (day, sent.clone()),
                (
                    next,
                    DailyMetrics {
                        member_replies: 1,
                        ..DailyMetrics::default()
                    },
                ),
            ],
        )
        .await
        .expect("first fold");
    assert_eq!(store.metrics_cursor(account).await.expect("read"), first);
    // A run that read the cursor before the first one wrote changes nothing.
    let stale = MetricsCursor {
        through: Some(base() + SignedDuration::from_hours(1)),
        ..first.clone()
    };
    assert!(
        matches!(
            store.save_metrics(account, &stale, &[(day, sent.clone())]).await,
            Err(StoreError::Conflict(Conflict::Version))
        ),
        "metrics: a stale fold is refused"
    );
    assert_eq!(
        store.daily_metrics(account, day).await.expect("read"),
        sent,
        "metrics: and adds nothing"
    );
    let second = MetricsCursor {
        version: 2,
        through: Some(base() + SignedDuration::from_hours(1)),
        ..first.clone()
    };
    let more = DailyMetrics {
        messages_sent: 3,
        ai_calls: 9,
        ..DailyMetrics::default()
    };
    store.save_metrics(account, &second, &[(day, more)]).await.expect("second fold");
    let after = store.daily_metrics(account, day).await.expect("read");
    assert_eq!(
        (after.messages_sent, after.tasks_created, after.ai_calls),
        (5, 1, 9),
        "metrics: counts add up, AI calls are the counter's reading"
    );
    let third = MetricsCursor {
        version: 3,
        ..second.clone()
    };
    store
        .save_metrics(
            account,
            &third,
            &[(
                day,
                DailyMetrics {
                    member_replies: 1,
                    ..DailyMetrics::default()
                },
            )],
        )
        .await
        .expect("third fold");
    assert_eq!(
        store.daily_metrics(account, day).await.expect("read").ai_calls,
        9,
        "metrics: a fold without AI calls keeps them"
    );
    assert_eq!(store.daily_metrics(account, next).await.expect("read").member_replies, 1);
    assert_eq!(
        store.daily_metrics(AccountId::generate(base()), day).await.expect("read"),
        DailyMetrics::default(),
        "metrics: per account"
    );
    assert_eq!(store.ai_calls(account, day).await.expect("read"), 0);
    store.count_ai_call(account, day, 10).await.expect("count");
    assert_eq!(
        store.ai_calls(account, day).await.expect("read"),
        1,
        "metrics: the AI counter is readable"
    );
}

/// The owner's metrics read: the stored days between two dates, oldest first, in one read —
/// never the watermark item, never another account's days.
pub(super) async fn daily_metrics_are_read_by_range_without_the_watermark(store: &dyn TaskStore) {
    use crate::owner::metrics::{DailyMetrics, MetricsCursor};
    let account = AccountId::generate(base());
    let day = |d: i8| jiff::civil::date(2026, 10, d);
    let sent = |n: u32| DailyMetrics {
        messages_sent: n,
        ..DailyMetrics::default()
    };
    let cursor = MetricsCursor {
        through: Some(base()),
        version: 1,
        ..MetricsCursor::default()
    };
    let days = [(day(1), sent(1)), (day(9), sent(9)), (day(10), sent(10)), (day(31), sent(31))];
    store.save_metrics(account, &cursor, &days).await.expect("fold");
    let other = AccountId::generate(base());
    store.save_metrics(other, &cursor, &[(day(9), sent(99))]).await.expect("fold");
    let read = store.metrics_days(account, day(2), day(31)).await.expect("range");
    assert_eq!(
        read.iter().map(|(d, m)| (*d, m.messages_sent)).collect::<Vec<_>>(),
        vec![(day(9), 9), (day(10), 10), (day(31), 31)],
        "metrics range: the stored days inside the range, oldest first, this account's only"
    );
    assert_eq!(
        store.metrics_days(account, day(1), day(1)).await.expect("one day").len(),
        1,
        "metrics range: a one-day range"
    );
    assert!(
        store.metrics_days(account, day(2), day(8)).await.expect("empty").is_empty(),
        "metrics range: days never counted are left out"
    );
}

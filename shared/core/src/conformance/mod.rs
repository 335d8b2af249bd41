//! The store conformance suite: one set of scenarios every [`TaskStore`] must pass — the
//! in-memory store in unit tests, the DynamoDB store against the emulator — so the two can
//! never drift. Each scenario makes its own account and ids, so they can share a table.
//! Each backend runs every scenario as a test of its own through
//! [`store_conformance_tests!`](crate::store_conformance_tests).

use jiff::{SignedDuration, Timestamp};

use crate::error::{Conflict, StoreError};
use crate::ids::{AccountId, Email, MemberId, TaskId, new_ulid};
use crate::limits::DUE_INDEX_SHARDS;
use crate::member::{MemberFacts, SendLedger};
use crate::ports::{SendEffect, TaskCommit, TaskQuery, TaskStore};
use crate::reason::Reason;
use crate::task::{ConversationMessage, OutboundMessage, OutboundStatus, Role, Task, TaskStatus};
use crate::testing::{at, sample_account, sample_task_for};
use crate::transition::{Why, created, record, transition};
use crate::work::due_shard;

/// What a backend's tests make for each scenario: its store, and with it whatever must live as
/// long as the store does (the DynamoDB tests' hold on their scratch table, say).
pub trait Backend {
    fn store(&self) -> &dyn TaskStore;
}

impl<S: TaskStore> Backend for S {
    fn store(&self) -> &dyn TaskStore {
        self
    }
}

/// One `#[tokio::test]` per scenario, named after it, each on a [`Backend`] of its own made by
/// the given expression (it may `.await`): `openloop_core::store_conformance_tests!(MemoryStore::new());`
/// Failures are independent, and cargo runs the scenarios in parallel.
///
/// The list of scenarios is written here, once. It also makes [`scenario`], the only way to
/// reach a scenario from outside this module, so a scenario left out of the list is dead
/// code, which `clippy -D warnings` refuses.
///
/// [`Backend`]: crate::conformance::Backend
/// [`scenario`]: crate::conformance::scenario
#[macro_export]
macro_rules! store_conformance_tests {
    ($backend:expr) => {
        $crate::store_conformance_tests!(@listed tests $backend);
    };
    // The list, handed to the rule named `$then` with the rest of the arguments.
    (@listed $then:ident $($args:tt)*) => {
        $crate::store_conformance_tests!(@$then [
            accounts_are_created_once_and_saved_under_their_version,
            one_active_task_per_member_and_type,
            a_members_active_tasks_are_read_through_their_guards,
            a_stale_write_changes_nothing,
            history_is_complete_and_in_order,
            the_due_index_holds_what_is_scheduled_and_pages,
            reservations_enforce_every_guarantee_atomically,
            webhook_ids_are_claimed_once,
            member_facts_are_versioned,
            suppressions_are_per_account,
            task_lists_are_scoped_filtered_and_paged,
            snapshots_hold_everything_the_gates_read,
            recurring_templates_are_versioned_and_due_when_enabled,
            the_attribution_index_holds_watched_closed_tasks_and_revisions_keep_the_guard,
            the_activity_feed_lists_an_accounts_decisions_newest_first,
            ai_calls_are_counted_per_account_and_day_up_to_the_limit,
            creation_counters_limit_and_count_in_the_same_write,
            member_facts_are_listed_per_account_in_pages,
            closing_a_task_writes_its_learning_record_in_the_same_commit,
            owner_notices_are_listed_newest_first_and_each_digest_entry_is_taken_once,
            connector_health_counts_failures_degrades_once_and_recovers,
            daily_metrics_are_added_with_their_watermark_once,
            an_action_is_claimed_once_and_a_failed_one_again,
            daily_metrics_are_read_by_range_without_the_watermark,
        ] $($args)*);
    };
    (@tests [$($scenario:ident,)*] $backend:expr) => {
        $(
            #[tokio::test]
            async fn $scenario() {
                let backend = $backend;
                $crate::conformance::scenario::$scenario($crate::conformance::Backend::store(&backend)).await;
            }
        )*
    };
    (@scenarios [$($scenario:ident,)*]) => {
        /// Every scenario of the suite, by name; `store_conformance_tests!` runs each as a test.
        pub mod scenario {
            $(
                pub async fn $scenario(store: &dyn $crate::ports::TaskStore) {
                    super::$scenario(store).await;
                }
            )*
        }
    };
}

store_conformance_tests!(@listed scenarios);

/// The owner's metrics read: the stored days between two dates, oldest first, in one read —
/// never the watermark item, never another account's days.
async fn daily_metrics_are_read_by_range_without_the_watermark(store: &dyn TaskStore) {
    use crate::metrics::{DailyMetrics, MetricsCursor};
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

/// Spec §32.2: an action's key is claimed by one caller; a finished record stays, a failed
/// one may be claimed again; records are listed per task and account.
async fn an_action_is_claimed_once_and_a_failed_one_again(store: &dyn TaskStore) {
    use crate::action::{Action, ActionClaim, ActionRecord, ActionState, ActionType, idempotency_key};
    let account = AccountId::generate(base());
    let task = TaskId::generate(base());
    let record = |slot: &str, tag: &str| ActionRecord {
        account_id: account,
        task_id: task,
        key: idempotency_key(task, ActionType::TagMember, slot),
        member_id: member("m_action"),
        action: Action::TagMember { tag: tag.into() },
        state: ActionState::Started,
        result: None,
        error: None,
        started_at: base(),
        finished_at: None,
    };
    let first = record("0", "vip");
    assert_eq!(store.claim_action(&first).await.expect("claim"), ActionClaim::Claimed);
    match store.claim_action(&record("0", "other")).await.expect("claim") {
        ActionClaim::Existing(existing) => assert_eq!(*existing, first, "actions: the first claim stands"),
        ActionClaim::Claimed => panic!("actions: a key is claimed once"),
    }
    let done = ActionRecord {
        state: ActionState::Done,
        result: Some(serde_json::json!({"ok": true})),
        finished_at: Some(base() + SignedDuration::from_secs(1)),
        ..first.clone()
    };
    store.finish_action(&done).await.expect("finish");
    assert!(
        matches!(store.claim_action(&first).await.expect("claim"), ActionClaim::Existing(e) if *e == done),
        "actions: a done action is never claimed again"
    );
    let failed = ActionRecord {
        state: ActionState::Failed,
        error: Some("503".into()),
        ..record("1", "vip")
    };
    assert_eq!(store.claim_action(&record("1", "vip")).await.expect("claim"), ActionClaim::Claimed);
    store.finish_action(&failed).await.expect("finish");
    assert_eq!(
        store.claim_action(&record("1", "vip")).await.expect("claim"),
        ActionClaim::Claimed,
        "actions: a failed action may be tried again"
    );
    let listed = store.task_actions(account, task).await.expect("list");
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0], done);
    assert_eq!(listed[1].state, ActionState::Started);
    assert!(
        store
            .task_actions(AccountId::generate(base()), task)
            .await
            .expect("list")
            .is_empty(),
        "actions: per account"
    );
    assert!(
        store
            .task_actions(account, TaskId::generate(base()))
            .await
            .expect("list")
            .is_empty(),
        "actions: per task"
    );
}

/// Spec §28.3: a fold's additions and its watermark are one conditional write.
async fn daily_metrics_are_added_with_their_watermark_once(store: &dyn TaskStore) {
    use crate::metrics::{DailyMetrics, MetricsCursor};
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

/// Spec §34.2: consecutive failures per account and connector, one degradation, a recovery.
async fn connector_health_counts_failures_degrades_once_and_recovers(store: &dyn TaskStore) {
    use crate::connector::{ConnectorHealth, HealthChange};
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    assert_eq!(
        store.connector_health(account, "pushpress").await.expect("read"),
        ConnectorHealth::default(),
        "connector: healthy until told otherwise"
    );
    let minute = SignedDuration::from_mins(1);
    let mut changes = Vec::new();
    for i in 0..6 {
        let (health, change) = store
            .record_connector_call(account, "pushpress", false, base() + minute * i, 5)
            .await
            .expect("record failure");
        assert_eq!(health.consecutive_failures, u32::try_from(i + 1).expect("small"));
        changes.push(change);
    }
    assert_eq!(
        changes.iter().filter(|c| **c == HealthChange::Degraded).count(),
        1,
        "connector: degraded exactly once"
    );
    assert_eq!(changes[4], HealthChange::Degraded, "connector: at the fifth failure");
    let health = store.connector_health(account, "pushpress").await.expect("read");
    assert_eq!(
        (health.degraded_since, health.last_failure_at),
        (Some(base() + minute * 4), Some(base() + minute * 5))
    );
    assert_eq!(
        store.connector_health(other, "pushpress").await.expect("read"),
        ConnectorHealth::default(),
        "connector: per account"
    );
    assert_eq!(
        store.connector_health(account, "other").await.expect("read"),
        ConnectorHealth::default(),
        "connector: per connector"
    );
    let later = base() + SignedDuration::from_hours(1);
    let (health, change) = store
        .record_connector_call(account, "pushpress", true, later, 5)
        .await
        .expect("record success");
    assert_eq!(change, HealthChange::Recovered, "connector: a success ends the degradation");
    assert_eq!(
        (health.consecutive_failures, health.last_success_at, health.degraded_since),
        (0, Some(later), None)
    );
    assert_eq!(store.connector_health(account, "pushpress").await.expect("read"), health);
    let (_, change) = store
        .record_connector_call(account, "pushpress", true, later + minute, 5)
        .await
        .expect("record success");
    assert_eq!(change, HealthChange::None, "connector: recovered once");
}

/// Spec 003: every close writes the learning record with the close, a revision rewrites it,
/// and the cross-tenant side holds the shared part only.
async fn closing_a_task_writes_its_learning_record_in_the_same_commit(store: &dyn TaskStore) {
    let mut account = sample_account(base());
    account.settings.profile.business_type = Some("yoga studio".into());
    store
        .create_account(&account, &format!("learn-{}", account.id))
        .await
        .expect("create_account");
    // Closed in a month no other scenario uses, so the cross-tenant month holds only these.
    let closed_at = at("2030-01-15T18:00:00Z");
    let month = "2030-01";
    let mut closed = Vec::new();
    for name in ["m_learn_1", "m_learn_2"] {
        let task = new_task(store, account.id, name, TaskStatus::Waiting).await;
        let (mut sent, log) = record(&task, base() + SignedDuration::from_hours(1), Why::new(Reason::MessageSent));
        sent.touch = 1;
        sent.execution_started_at = Some(base() + SignedDuration::from_hours(1));
        sent.thread.push(crate::task::ThreadMessage {
            message_id: format!("{name}@mail.example"),
            provider_message_id: None,
        });
        store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
        assert_eq!(
            store.interaction_outcome(account.id, sent.id).await.expect("read"),
            None,
            "learning: an open task has no record"
        );
        let (done, log) = transition(
            &sent,
            TaskStatus::Completed,
            closed_at,
            Why::new(Reason::GoalSignalPaymentSucceeded).outcome("recovered"),
        )
        .expect("valid");
        let stale = TaskCommit {
            expected_version: done.version - 2,
            ..TaskCommit::new(done.clone(), log.clone())
        };
        assert!(store.commit(&stale).await.is_err(), "learning: a stale close is refused");
        assert_eq!(
            store.interaction_outcome(account.id, sent.id).await.expect("read"),
            None,
            "learning: a refused close writes no record"
        );
        store.commit(&TaskCommit::new(done.clone(), log)).await.expect("close");
        let expected = crate::interaction::InteractionOutcome::of(&done, Some(&account.settings));
        assert_eq!(
            store.interaction_outcome(account.id, done.id).await.expect("read"),
            expected,
            "learning: the close wrote the record"
        );
        closed.push(done);
    }
    // Attribution values the first one later: the record follows.
    let mut valued = closed[0].clone();
    valued.attributed_value = Some(174.0);
    let (valued, log) = record(
        &valued,
        closed_at + SignedDuration::from_hours(1),
        Why::new(Reason::RevenueAttributed),
    );
    store.commit(&TaskCommit::new(valued.clone(), log)).await.expect("revise");
    let record_now = store
        .interaction_outcome(account.id, valued.id)
        .await
        .expect("read")
        .expect("record");
    assert_eq!(
        (record_now.private.attributed_value, record_now.shared.attributed_value),
        (Some(174.0), Some(150.0)),
        "learning: a revision rewrites the record (shared value rounded)"
    );
    assert_eq!(
        store
            .interaction_outcome(AccountId::generate(base()), valued.id)
            .await
            .expect("read"),
        None,
        "learning: another account cannot read it"
    );
    let mut shared = Vec::new();
    let mut cursor = None;
    loop {
        let (page, next) = store.shared_outcomes(month, 1, cursor).await.expect("shared_outcomes");
        assert!(page.len() <= 1, "learning: the limit is respected");
        shared.extend(page);
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(
        shared.len(),
        2,
        "learning: one cross-tenant record per closed task, revisions replace"
    );
    assert!(shared.iter().any(|r| r.attributed_value == Some(150.0)));
    let text = serde_json::to_string(&shared).expect("json");
    for task in &closed {
        for secret in [task.id.to_string(), account.id.to_string(), task.member.id.as_str().to_owned()] {
            assert!(!text.contains(&secret), "learning: {secret} crossed tenants");
        }
    }
    assert!(
        shared.iter().all(|r| r.business_type.as_deref() == Some("yoga studio")),
        "learning: the business type at the close"
    );
}

async fn owner_notices_are_listed_newest_first_and_each_digest_entry_is_taken_once(store: &dyn TaskStore) {
    use crate::owner_notice::{NoticeDelivery, NoticeKind, OwnerNotice};
    let account = AccountId(new_ulid(base()));
    let other = AccountId(new_ulid(base()));
    let notice = |account: AccountId, minutes: i64, digest_at: Option<Timestamp>| OwnerNotice {
        id: new_ulid(base() + SignedDuration::from_mins(minutes)),
        account_id: account,
        at: base() + SignedDuration::from_mins(minutes),
        kind: if digest_at.is_some() {
            NoticeKind::LateReply
        } else {
            NoticeKind::Escalation
        },
        task_id: Some(TaskId::generate(base())),
        member_id: Some(member("m_notice")),
        title: format!("notice at +{minutes} min"),
        detail: "detail".into(),
        delivery: if digest_at.is_some() {
            NoticeDelivery::Digest
        } else {
            NoticeDelivery::Email
        },
        digest_at,
    };
    let digest = base() + SignedDuration::from_hours(3);
    let first = notice(account, 1, None);
    let second = notice(account, 2, Some(digest));
    let third = notice(account, 3, Some(digest + SignedDuration::from_hours(4)));
    let foreign = notice(other, 4, Some(digest));
    for n in [&first, &second, &third, &foreign] {
        store.put_notice(n).await.expect("put notice");
    }
    assert!(
        is_conflict(store.put_notice(&first).await, Conflict::AlreadyExists),
        "notices: the same notice twice must conflict"
    );

    let (page, cursor) = store.list_notices(account, 2, None).await.expect("list notices");
    assert_eq!(
        page,
        vec![third.clone(), second.clone()],
        "notices: newest first, scoped to the account"
    );
    let cursor = cursor.expect("notices: a second page");
    let (rest, _) = store.list_notices(account, 2, Some(cursor)).await.expect("list notices");
    assert_eq!(rest, vec![first.clone()], "notices: the next page");

    let ours = |list: Vec<OwnerNotice>| {
        list.into_iter()
            .filter(|n| n.account_id == account)
            .map(|n| n.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ours(store.due_notices(digest - SignedDuration::from_mins(1), 100).await.expect("due")),
        vec![],
        "digest: not yet due"
    );
    assert_eq!(
        ours(store.due_notices(digest, 100).await.expect("due")),
        vec![second.id],
        "digest: only what is due"
    );
    assert!(
        store
            .due_notices(digest, 100)
            .await
            .expect("due")
            .iter()
            .any(|n| n.id == foreign.id),
        "digest: every account's due notices"
    );
    assert!(
        store.claim_notice(account, second.id).await.expect("claim"),
        "digest: the first claim wins"
    );
    assert!(
        !store.claim_notice(account, second.id).await.expect("claim"),
        "digest: taken once only"
    );
    assert!(
        !store.claim_notice(account, first.id).await.expect("claim"),
        "digest: an immediate notice is never waiting"
    );
    assert_eq!(
        ours(store.due_notices(digest, 100).await.expect("due")),
        vec![],
        "digest: a taken notice leaves the index"
    );
    let (page, _) = store.list_notices(account, 10, None).await.expect("list notices");
    let taken = page.iter().find(|n| n.id == second.id).expect("the taken notice stays in the feed");
    assert_eq!((taken.digest_at, taken.delivery), (None, NoticeDelivery::Digest));
    assert!(store.claim_notice(other, foreign.id).await.expect("claim"));
}

async fn ai_calls_are_counted_per_account_and_day_up_to_the_limit(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    let day = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let next_day = day.tomorrow().expect("date");
    assert_eq!(store.count_ai_call(account, day, 2).await.expect("count"), Some(1));
    assert_eq!(store.count_ai_call(account, day, 2).await.expect("count"), Some(2));
    assert_eq!(
        store.count_ai_call(account, day, 2).await.expect("count"),
        None,
        "ai calls: the limit holds"
    );
    assert_eq!(
        store.count_ai_call(account, day, 3).await.expect("count"),
        Some(3),
        "a raised limit allows more"
    );
    assert_eq!(
        store.count_ai_call(account, next_day, 2).await.expect("count"),
        Some(1),
        "ai calls: per day"
    );
    assert_eq!(
        store.count_ai_call(other, day, 2).await.expect("count"),
        Some(1),
        "ai calls: per account"
    );
    // Other daily allowances count the same way, each under its own name.
    assert_eq!(store.count_daily(account, "late_reply", day, 1).await.expect("count"), Some(1));
    assert_eq!(
        store.count_daily(account, "late_reply", day, 1).await.expect("count"),
        None,
        "daily: the limit holds"
    );
    assert_eq!(
        store.count_daily(account, "member_opted_out", day, 1).await.expect("count"),
        Some(1),
        "daily: per name"
    );
    assert_eq!(
        store.count_daily(account, "late_reply", next_day, 1).await.expect("count"),
        Some(1),
        "daily: per day"
    );
    assert_eq!(
        store.count_daily(other, "late_reply", day, 1).await.expect("count"),
        Some(1),
        "daily: per account"
    );
    assert_eq!(store.ai_calls(account, day).await.expect("read"), 3, "the AI counter is its own");
}

fn base() -> Timestamp {
    at("2026-11-02T14:00:00Z")
}

fn member(name: &str) -> MemberId {
    MemberId::parse(name).unwrap_or_else(|e| panic!("{e}"))
}

async fn new_task(store: &dyn TaskStore, account: AccountId, member_name: &str, status: TaskStatus) -> Task {
    let task = sample_task_for(account, member(member_name), status, base());
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .unwrap_or_else(|e| panic!("create_task: {e:?}"));
    task
}

fn is_conflict(r: Result<(), StoreError>, kind: Conflict) -> bool {
    matches!(r, Err(StoreError::Conflict(c)) if c == kind)
}

async fn accounts_are_created_once_and_saved_under_their_version(store: &dyn TaskStore) {
    let account = sample_account(base());
    let hash = format!("hash-{}", account.id);
    store.create_account(&account, &hash).await.expect("create account");
    assert!(
        is_conflict(store.create_account(&account, &hash).await, Conflict::AlreadyExists),
        "accounts: duplicate create must conflict"
    );
    assert_eq!(store.account_for_token(&hash).await.expect("token"), Some(account.id));
    assert_eq!(store.account_for_token("unknown").await.expect("token"), None);
    let mut changed = store.get_account(account.id).await.expect("get").expect("present");
    assert_eq!(changed, account, "accounts: round trip");
    changed.settings.daily_send_limit = 5;
    changed.pushpress = Some(crate::connector::ConnectorCredentials::new("pp_key_1", Some("co_1".into())).expect("credentials"));
    changed.version += 1;
    store.save_account(&changed).await.expect("save");
    assert_eq!(
        store.get_account(account.id).await.expect("get").and_then(|a| a.pushpress),
        changed.pushpress,
        "accounts: the account's own connector credentials are kept"
    );
    assert!(
        is_conflict(store.save_account(&changed).await, Conflict::Version),
        "accounts: saving the same version twice must conflict"
    );
    assert_eq!(
        store
            .get_account(account.id)
            .await
            .expect("get")
            .map(|a| a.settings.daily_send_limit),
        Some(5)
    );
    assert!(store.list_accounts().await.expect("list").iter().any(|a| a.id == account.id));
}

async fn one_active_task_per_member_and_type(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let first = new_task(store, account, "m_guard", TaskStatus::PendingReview).await;
    let second = sample_task_for(account, member("m_guard"), TaskStatus::PendingReview, base());
    assert!(
        matches!(
            store
                .create_task(&second, &created(&second, Why::new(Reason::ManualModeRequiresReview)), &[])
                .await,
            Err(StoreError::Conflict(Conflict::ActiveTask))
        ),
        "guard: a second active task for the member and type must conflict"
    );
    assert_eq!(
        store.get_task(account, second.id).await.expect("get"),
        None,
        "guard: the refused task must not exist"
    );
    assert_eq!(
        store
            .active_task(account, &member("m_guard"), "payment_recovery")
            .await
            .expect("active"),
        Some(first.id)
    );
    let (closed, log) = transition(&first, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerSkipped)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    assert_eq!(
        store
            .active_task(account, &member("m_guard"), "payment_recovery")
            .await
            .expect("active"),
        None,
        "guard: closing frees it"
    );
    store
        .create_task(&second, &created(&second, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("guard: a new task after closing");
}

async fn a_members_active_tasks_are_read_through_their_guards(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    let payment = new_task(store, account, "m_mine", TaskStatus::Ready).await;
    let mut churn = sample_task_for(account, member("m_mine"), TaskStatus::Waiting, base());
    churn.task_type = "churn_risk".into();
    store
        .create_task(&churn, &created(&churn, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    // A member whose id starts with the first one's, and the same member in another account.
    new_task(store, account, "m_mine2", TaskStatus::Ready).await;
    new_task(store, other, "m_mine", TaskStatus::Ready).await;
    let ids = |tasks: Vec<Task>| tasks.into_iter().map(|t| t.id).collect::<Vec<_>>();
    let mut expected = vec![payment.id, churn.id];
    expected.sort();
    assert_eq!(
        ids(store.member_active_tasks(account, &member("m_mine")).await.expect("read")),
        expected,
        "member tasks: exactly the member's own, in this account"
    );
    let (closed, log) = transition(&payment, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    assert_eq!(
        ids(store.member_active_tasks(account, &member("m_mine")).await.expect("read")),
        vec![churn.id],
        "member tasks: a closed task is no longer listed"
    );
    assert!(
        store
            .member_active_tasks(account, &member("m_none"))
            .await
            .expect("read")
            .is_empty()
    );
    let missing = TaskId::generate(base());
    let foreign = new_task(store, other, "m_foreign", TaskStatus::Ready).await;
    assert_eq!(
        ids(store
            .get_tasks(account, &[churn.id, missing, foreign.id, payment.id])
            .await
            .expect("read")),
        vec![churn.id, payment.id],
        "get_tasks: in the order asked, this account's only, missing ones left out"
    );
}

async fn a_stale_write_changes_nothing(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_stale", TaskStatus::PendingReview).await;
    let (approved, log) = transition(&task, TaskStatus::Ready, base(), Why::new(Reason::OwnerApproved)).expect("valid");
    store.commit(&TaskCommit::new(approved.clone(), log)).await.expect("first write");
    let (skipped, log) = transition(&task, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerSkipped)).expect("valid");
    assert!(
        is_conflict(store.commit(&TaskCommit::new(skipped, log)).await, Conflict::Version),
        "locking: a write from a stale read must conflict"
    );
    let history = store.task_history(account, task.id).await.expect("history").expect("present");
    assert_eq!(history.task, approved, "locking: the stale write changed the task");
    assert_eq!(history.log.len(), 2, "locking: the stale write's log entry was written");
}

async fn history_is_complete_and_in_order(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let task = new_task(store, account, "m_hist", TaskStatus::Ready).await;
    let mut current = task.clone();
    let mut expected_messages = Vec::new();
    for i in 0..3 {
        let now = base() + SignedDuration::from_mins(i);
        let (next, log) = record(
            &current,
            now,
            Why::new([Reason::SendReserved, Reason::MessageSent, Reason::MemberReplied][i as usize]),
        );
        let message = ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::System,
            content: format!("message {i}"),
        };
        expected_messages.push(message.content.clone());
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.push(message);
        store.commit(&commit).await.expect("commit");
        current = next;
    }
    let history = store.task_history(account, task.id).await.expect("history").expect("present");
    let reasons: Vec<_> = history.log.iter().map(|l| l.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["manual_mode_requires_review", "send_reserved", "message_sent", "member_replied"],
        "history: log oldest first"
    );
    assert_eq!(
        history.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>(),
        expected_messages,
        "history: conversation oldest first"
    );
    assert_eq!(history.task.version, task.version + 3);
    assert!(
        store
            .task_history(AccountId::generate(base()), task.id)
            .await
            .expect("history")
            .is_none(),
        "history: another account's task is not found"
    );
}

async fn the_due_index_holds_what_is_scheduled_and_pages(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    // A distinctive time, far from other scenarios' schedules.
    let when = at("2001-01-01T00:00:00Z");
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut task = sample_task_for(account, member(&format!("m_due_{i}")), TaskStatus::Ready, when);
        task.next_action_at = Some(when + SignedDuration::from_secs(i));
        store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        ids.push(task);
    }
    let mine = |entries: &[crate::work::DueEntry]| {
        entries
            .iter()
            .filter(|e| e.account_id == account)
            .map(|e| e.task_id)
            .collect::<Vec<TaskId>>()
    };
    let mut found = Vec::new();
    for shard in 0..DUE_INDEX_SHARDS {
        let mut cursor = None;
        loop {
            let (entries, next) = store.due(shard, when + SignedDuration::from_secs(3), 1, cursor).await.expect("due");
            assert!(entries.len() <= 1, "due: the limit is respected");
            for entry in entries.iter().filter(|e| e.account_id == account) {
                assert_eq!(due_shard(&entry.task_id, DUE_INDEX_SHARDS), shard, "due: entry in the wrong shard");
            }
            found.extend(mine(&entries));
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    found.sort();
    let mut expected: Vec<TaskId> = ids.iter().take(4).map(|t| t.id).collect();
    expected.sort();
    assert_eq!(found, expected, "due: exactly the tasks due by `until`, across pages");
    // Closing a task takes it out of the index.
    let (closed, log) = transition(&ids[0], TaskStatus::Cancelled, when, Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(closed, log)).await.expect("close");
    let shard = due_shard(&ids[0].id, DUE_INDEX_SHARDS);
    let (entries, _) = store
        .due(shard, when + SignedDuration::from_secs(10), 1000, None)
        .await
        .expect("due");
    assert!(!mine(&entries).contains(&ids[0].id), "due: a closed task left the index");
}

fn outbound(task: &Task, touch: u32, status: OutboundStatus) -> OutboundMessage {
    OutboundMessage {
        task_id: task.id,
        touch,
        status,
        to: task
            .member
            .email
            .clone()
            .unwrap_or_else(|| Email::parse("x@example.com").unwrap_or_else(|e| panic!("{e}"))),
        subject: "Hello".into(),
        message_id: format!("{}@example.com", new_ulid(base())),
        provider_id: None,
        provider_message_id: None,
        reserved_at: base(),
        sent_at: None,
    }
}

async fn reservations_enforce_every_guarantee_atomically(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let task = new_task(store, account, "m_send", TaskStatus::Ready).await;
    let m = member("m_send");
    let reserve = |task: &Task, touch: u32, ledger_version: u64, daily_limit: u32| {
        let (next, log) = record(task, base(), Why::new(Reason::SendReserved));
        let mut ledger = SendLedger::default();
        ledger.sends.insert(format!("{}#{touch}", task.id), base());
        ledger.version = ledger_version;
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.send = Some(SendEffect::Reserve {
            outbound: outbound(task, touch, OutboundStatus::Reserved),
            member_id: task.member.id.clone(),
            ledger,
            daily_date: date,
            daily_limit,
        });
        (next, commit)
    };
    let (reserved, commit) = reserve(&task, 0, 1, 2);
    store.commit(&commit).await.expect("first reservation");
    assert_eq!(store.daily_sends(account, date).await.expect("daily"), 1);
    let (_, ledger) = store.get_member(account, &m).await.expect("member").expect("ledger exists");
    assert_eq!(ledger.version, 1);

    // The same touch again: refused, and nothing of it applied.
    let (_, again) = reserve(&reserved, 0, 2, 10);
    assert!(
        is_conflict(store.commit(&again).await, Conflict::OutboundExists),
        "reserve: a touch is reserved once"
    );
    assert_eq!(
        store.get_task(account, task.id).await.expect("get").map(|t| t.version),
        Some(reserved.version),
        "reserve: refused commit changed the task"
    );
    assert_eq!(
        store.daily_sends(account, date).await.expect("daily"),
        1,
        "reserve: refused commit counted a send"
    );

    // A ledger read before another send: refused.
    let (_, stale) = reserve(&reserved, 1, 1, 10);
    assert!(
        is_conflict(store.commit(&stale).await, Conflict::MemberLedger),
        "reserve: a stale ledger must conflict"
    );

    // The daily counter at its limit: refused.
    let other = new_task(store, account, "m_send_2", TaskStatus::Ready).await;
    let (after_other, commit) = reserve(&other, 0, 1, 2);
    store.commit(&commit).await.expect("second send of the day");
    let (_, full) = reserve(&reserved, 1, 2, 2);
    assert!(
        is_conflict(store.commit(&full).await, Conflict::DailyLimit),
        "reserve: the daily limit holds"
    );
    assert_eq!(store.daily_sends(account, date).await.expect("daily"), 2);

    // A refused send gives everything back, and the touch may be reserved again.
    let (released, log) = record(&after_other, base(), Why::new(Reason::SendRejected));
    let mut release = TaskCommit::new(released.clone(), log);
    release.send = Some(SendEffect::Release {
        outbound: outbound(&other, 0, OutboundStatus::Failed),
        member_id: member("m_send_2"),
        ledger_key: format!("{}#0", other.id),
        daily_date: date,
    });
    store.commit(&release).await.expect("release");
    assert_eq!(
        store.daily_sends(account, date).await.expect("daily"),
        1,
        "release: the daily counter is given back"
    );
    let (_, retry) = reserve(&released, 0, 3, 2);
    store.commit(&retry).await.expect("a failed touch may be reserved again");

    // Recording the send keeps the thread's ids.
    let (sent_task, log) = record(&reserved, base(), Why::new(Reason::MessageSent));
    let mut sent = outbound(&task, 0, OutboundStatus::Sent);
    sent.provider_message_id = Some("ses-1@us-east-1.amazonses.com".into());
    sent.sent_at = Some(base());
    let mut commit = TaskCommit::new(sent_task, log);
    commit.send = Some(SendEffect::Record { outbound: sent.clone() });
    store.commit(&commit).await.expect("record");
    let stored = store.outbound(account, task.id).await.expect("outbound");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].status, OutboundStatus::Sent);
    assert_eq!(stored[0].provider_message_id, sent.provider_message_id);

    // …and where replies to it belong: by the task, and by either Message-ID in any case.
    assert_eq!(store.task_account(task.id).await.expect("route"), Some(account));
    assert_eq!(
        store.task_account(other.id).await.expect("route"),
        None,
        "never mailed, never routed"
    );
    for id in [sent.message_id.clone(), "SES-1@us-east-1.amazonses.com".into()] {
        assert_eq!(
            store.message_route(&id).await.expect("route"),
            Some((account, task.id)),
            "route of {id}"
        );
    }
    assert_eq!(store.message_route("nobody@example.com").await.expect("route"), None);
}

async fn webhook_ids_are_claimed_once(store: &dyn TaskStore) {
    let id = format!("msg_{}", new_ulid(base()));
    let later = base() + SignedDuration::from_hours(1);
    assert!(store.claim_webhook("pushpress:test", &id, base(), later).await.expect("claim"));
    assert!(
        !store.claim_webhook("pushpress:test", &id, base(), later).await.expect("claim"),
        "webhooks: a repeat is a duplicate"
    );
    assert!(
        store.claim_webhook("pushpress:other", &id, base(), later).await.expect("claim"),
        "webhooks: sources are separate"
    );
    store.release_webhook("pushpress:test", &id).await.expect("release");
    assert!(
        store.claim_webhook("pushpress:test", &id, base(), later).await.expect("claim"),
        "webhooks: a released claim can be made again"
    );
    assert!(
        store
            .claim_webhook(
                "pushpress:test",
                &id,
                later + SignedDuration::from_secs(1),
                later + SignedDuration::from_hours(1)
            )
            .await
            .expect("claim"),
        "webhooks: an expired claim counts as absent"
    );
}

async fn member_facts_are_versioned(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let m = member("m_facts");
    assert!(store.get_member(account, &m).await.expect("get").is_none());
    let mut facts = MemberFacts::new(m.clone());
    facts.first_name = Some("Sarah".into());
    facts.version = 1;
    store.save_member_facts(account, &facts).await.expect("first save");
    assert!(
        matches!(
            store.save_member_facts(account, &facts).await,
            Err(StoreError::Conflict(Conflict::MemberFacts))
        ),
        "facts: same version twice must conflict"
    );
    let (stored, ledger) = store.get_member(account, &m).await.expect("get").expect("present");
    assert_eq!(stored.first_name.as_deref(), Some("Sarah"));
    assert_eq!(ledger, SendLedger::default());
}

async fn suppressions_are_per_account(store: &dyn TaskStore) {
    let (a, b) = (AccountId::generate(base()), AccountId::generate(base()));
    let email = Email::parse("stop@example.com").expect("email");
    store.put_suppression(a, &email, "owner", base()).await.expect("put");
    assert!(store.is_suppressed(a, &email).await.expect("get"));
    assert!(
        !store.is_suppressed(b, &email).await.expect("get"),
        "suppression: scoped to the account"
    );
    assert!(store.delete_suppression(a, &email).await.expect("delete"));
    assert!(!store.delete_suppression(a, &email).await.expect("delete"));
    assert!(!store.is_suppressed(a, &email).await.expect("get"));
}

async fn task_lists_are_scoped_filtered_and_paged(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(
            new_task(
                store,
                account,
                &format!("m_list_{i}"),
                if i % 2 == 0 { TaskStatus::PendingReview } else { TaskStatus::Ready },
            )
            .await
            .id,
        );
    }
    new_task(store, AccountId::generate(base()), "m_list_0", TaskStatus::PendingReview).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let (tasks, next) = store
            .list_tasks(
                account,
                &TaskQuery {
                    limit: 2,
                    cursor,
                    ..TaskQuery::default()
                },
            )
            .await
            .expect("list");
        assert!(tasks.len() <= 2);
        seen.extend(tasks.iter().map(|t| t.id));
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let mut newest_first = made.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first, "list: every task of the account, newest first, across pages");
    let (pending, _) = store
        .list_tasks(
            account,
            &TaskQuery {
                status: Some(TaskStatus::PendingReview),
                limit: 50,
                ..TaskQuery::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(pending.len(), 3, "list: status filter");
    let (one, _) = store
        .list_tasks(
            account,
            &TaskQuery {
                member_id: Some(member("m_list_1")),
                limit: 50,
                ..TaskQuery::default()
            },
        )
        .await
        .expect("list");
    assert_eq!(one.iter().map(|t| t.id).collect::<Vec<_>>(), vec![made[1]], "list: member filter");
    assert!(matches!(
        store
            .list_tasks(
                account,
                &TaskQuery {
                    cursor: Some("not-a-cursor".into()),
                    limit: 5,
                    ..TaskQuery::default()
                }
            )
            .await,
        Err(StoreError::InvalidCursor)
    ));
}

async fn snapshots_hold_everything_the_gates_read(store: &dyn TaskStore) {
    let account = sample_account(base());
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    let task = new_task(store, account.id, "m_snap", TaskStatus::Ready).await;
    let email = task.member.email.clone().expect("email");
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let empty = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert_eq!(empty.account.as_ref().map(|a| a.id), Some(account.id));
    assert!(!empty.suppressed && empty.ledger == SendLedger::default() && empty.daily_sends(date) == 0);
    assert!(empty.facts.is_none(), "snapshot: no facts for an unknown member");

    let (next, log) = record(&task, base(), Why::new(Reason::SendReserved));
    let mut commit = TaskCommit::new(next, log);
    let ledger = SendLedger {
        sends: [(format!("{}#0", task.id), base())].into_iter().collect(),
        version: 1,
    };
    let yesterday = date.yesterday().expect("date");
    commit.send = Some(SendEffect::Reserve {
        outbound: outbound(&task, 0, OutboundStatus::Reserved),
        member_id: task.member.id.clone(),
        ledger: ledger.clone(),
        daily_date: yesterday,
        daily_limit: 5,
    });
    store.commit(&commit).await.expect("reserve");
    store.put_suppression(account.id, &email, "owner", base()).await.expect("suppress");
    let mut facts = crate::member::MemberFacts::new(task.member.id.clone());
    facts.payment_failing = true;
    facts.version = 1;
    store.save_member_facts(account.id, &facts).await.expect("facts");
    let full = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert!(full.suppressed, "snapshot: suppression");
    assert_eq!(full.ledger, ledger, "snapshot: the member's ledger");
    assert!(
        full.facts.as_ref().is_some_and(|f| f.payment_failing),
        "snapshot: the member's facts"
    );
    assert_eq!(
        (full.daily_sends(yesterday), full.daily_sends(date)),
        (1, 0),
        "snapshot: counters of the days around"
    );
    assert!(!full.system.global_pause);
}

async fn recurring_templates_are_versioned_and_due_when_enabled(store: &dyn TaskStore) {
    use crate::recurring::RecurringTemplate;
    let account = AccountId(new_ulid(base()));
    let other = AccountId(new_ulid(base()));
    let template = |account: AccountId, next_at: Timestamp| RecurringTemplate {
        id: new_ulid(base()),
        account_id: account,
        task_type: "monthly_churn_analysis".into(),
        member_id: crate::recurring::account_wide_member(),
        goal: "Monthly churn report".into(),
        cron: "0 8 1 * *".into(),
        enabled: true,
        max_instances: 12,
        instances_created: 0,
        next_at: Some(next_at),
        last_triggered_at: None,
        created_at: base(),
        version: 1,
    };
    let soon = template(account, base() + SignedDuration::from_mins(1));
    let later = template(account, base() + SignedDuration::from_hours(48));
    let elsewhere = template(other, base());
    for t in [&soon, &later, &elsewhere] {
        store.save_template(t).await.expect("save template");
    }
    assert!(
        is_conflict(store.save_template(&soon).await, Conflict::Version),
        "templates: creating twice must conflict"
    );
    let ours = |list: Vec<RecurringTemplate>| {
        list.into_iter()
            .filter(|t| t.account_id == account || t.account_id == other)
            .map(|t| t.id)
            .collect::<Vec<_>>()
    };
    let due = ours(store.due_templates(base() + SignedDuration::from_mins(5), 100).await.expect("due"));
    assert_eq!(
        due,
        vec![elsewhere.id, soon.id],
        "templates: due across accounts, soonest first, not the later one"
    );

    // Spawning advances it; a second writer with the same read loses.
    let advanced = RecurringTemplate {
        instances_created: 1,
        next_at: Some(base() + SignedDuration::from_hours(24 * 30)),
        version: 2,
        ..soon.clone()
    };
    store.save_template(&advanced).await.expect("advance");
    assert!(
        is_conflict(store.save_template(&advanced).await, Conflict::Version),
        "templates: stale advance"
    );
    let disabled = RecurringTemplate {
        enabled: false,
        next_at: None,
        version: 3,
        ..advanced.clone()
    };
    store.save_template(&disabled).await.expect("disable");
    let due = ours(
        store
            .due_templates(base() + SignedDuration::from_hours(24 * 365), 100)
            .await
            .expect("due"),
    );
    assert_eq!(due, vec![elsewhere.id, later.id], "templates: disabled ones are never due");

    let listed = store.list_templates(account).await.expect("list");
    assert_eq!(listed.len(), 2, "templates: listed per account");
    assert!(listed.iter().any(|t| t.id == soon.id && t.version == 3 && !t.enabled));
    assert!(store.delete_template(account, later.id).await.expect("delete"));
    assert!(!store.delete_template(account, later.id).await.expect("delete again"));
    assert!(
        !store.delete_template(account, elsewhere.id).await.expect("other account's"),
        "templates: scoped by account"
    );
    assert_eq!(store.list_templates(account).await.expect("list").len(), 1);
}

async fn churn_task(store: &dyn TaskStore, account: AccountId, member_name: &str) -> Task {
    let mut task = sample_task_for(account, member(member_name), TaskStatus::Waiting, base());
    task.task_type = "churn_risk".into();
    task.touch = 1;
    task.execution_started_at = Some(base());
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    task
}

async fn the_attribution_index_holds_watched_closed_tasks_and_revisions_keep_the_guard(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let closed_at = base() + SignedDuration::from_hours(24 * 14);
    // Closed unanswered after writing: watched for a late win. Closed by the owner: not.
    let unanswered = churn_task(store, account, "m_attr_1").await;
    let (unanswered, log) = transition(
        &unanswered,
        TaskStatus::Cancelled,
        closed_at,
        Why::new(Reason::BudgetTimeExpired).outcome("unresponsive"),
    )
    .expect("valid");
    assert!(unanswered.attribution_until.is_some());
    store.commit(&TaskCommit::new(unanswered.clone(), log)).await.expect("close");
    let handled = churn_task(store, account, "m_attr_2").await;
    let (handled, log) = transition(
        &handled,
        TaskStatus::Completed,
        closed_at,
        Why::new(Reason::OwnerResolved).outcome("owner_handled"),
    )
    .expect("valid");
    store.commit(&TaskCommit::new(handled, log)).await.expect("close");
    let still_open = churn_task(store, account, "m_attr_3").await;
    let mut found = Vec::new();
    for shard in 0..DUE_INDEX_SHARDS {
        let mut cursor = None;
        loop {
            let (tasks, next) = store.attribution_watch(shard, 1, cursor).await.expect("attribution_watch");
            assert!(tasks.len() <= 1, "attribution: the limit is respected");
            for task in tasks.iter().filter(|t| t.account_id == account) {
                assert_eq!(
                    due_shard(&task.id, DUE_INDEX_SHARDS),
                    shard,
                    "attribution: entry in the wrong shard"
                );
                found.push(task.clone());
            }
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    assert_eq!(
        found,
        vec![unanswered.clone()],
        "attribution: exactly the watched closed task, as stored"
    );
    let (due, _) = store
        .due(
            due_shard(&still_open.id, DUE_INDEX_SHARDS),
            base() + SignedDuration::from_hours(24),
            1000,
            None,
        )
        .await
        .expect("due");
    assert!(
        due.iter().all(|e| e.task_id != unanswered.id),
        "attribution: a watched task is not due work"
    );

    // A newer task of the member and type holds the guard; revising the closed one keeps it.
    let newer = churn_task(store, account, "m_attr_1").await;
    let mut won = unanswered.clone();
    won.outcome = Some("engaged_late".into());
    won.attributed_value = Some(150.0);
    won.attribution_until = None;
    let (won, log) = record(&won, closed_at, Why::new(Reason::GoalSignalAfterClose));
    store
        .commit(&TaskCommit::new(won.clone(), log))
        .await
        .expect("attribution: a closed task can be revised");
    assert_eq!(
        store.active_task(account, &member("m_attr_1"), "churn_risk").await.expect("active"),
        Some(newer.id),
        "attribution: revising a closed task leaves the newer task's guard"
    );
    assert_eq!(store.get_task(account, won.id).await.expect("get"), Some(won.clone()));
    let (tasks, _) = store
        .attribution_watch(due_shard(&won.id, DUE_INDEX_SHARDS), 1000, None)
        .await
        .expect("attribution_watch");
    assert!(tasks.iter().all(|t| t.id != won.id), "attribution: a settled task left the index");
}

async fn the_activity_feed_lists_an_accounts_decisions_newest_first(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let first = new_task(store, account, "m_act_1", TaskStatus::PendingReview).await;
    let (approved, log) = transition(
        &first,
        TaskStatus::Ready,
        base() + SignedDuration::from_secs(60),
        Why::new(Reason::OwnerApproved),
    )
    .expect("valid");
    store.commit(&TaskCommit::new(approved, log)).await.expect("approve");
    let second = new_task(store, account, "m_act_2", TaskStatus::PendingReview).await;
    let (skipped, log) = transition(
        &second,
        TaskStatus::Cancelled,
        base() + SignedDuration::from_secs(120),
        Why::new(Reason::OwnerSkipped),
    )
    .expect("valid");
    store.commit(&TaskCommit::new(skipped, log)).await.expect("skip");
    new_task(store, AccountId::generate(base()), "m_act_1", TaskStatus::PendingReview).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let (page, next) = store.activity(account, 2, cursor).await.expect("activity");
        assert!(page.len() <= 2, "activity: the limit is respected");
        seen.extend(page);
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let reasons: Vec<&str> = seen.iter().map(|e| e.entry.reason.as_str()).collect();
    assert_eq!(seen.len(), 4, "activity: every entry of the account, no other's: {reasons:?}");
    assert_eq!(reasons[0], "owner_skipped", "activity: newest first");
    assert!(seen.windows(2).all(|w| w[0].sort_key() > w[1].sort_key()), "activity: newest first");
    let skip = &seen[0];
    assert_eq!(
        (skip.task_id, skip.task_type.as_str(), &skip.member_id),
        (second.id, "payment_recovery", &member("m_act_2"))
    );
    assert_eq!(skip.entry.to_status, TaskStatus::Cancelled);
}

/// The flood and amplification counters (spec §7.9, §7.13): checked and moved in the same
/// write as the task, given back when a task closes, and a refused task leaves no trace.
async fn creation_counters_limit_and_count_in_the_same_write(store: &dyn TaskStore) {
    use crate::flood::{AgentQuota, CreationQuota};
    let account = AccountId::generate(base());
    let today: jiff::civil::Date = "2026-11-02".parse().expect("date");
    let tomorrow: jiff::civil::Date = "2026-11-03".parse().expect("date");
    let quota = |date, daily, active| CreationQuota {
        date: Some(date),
        counters_expire_at: base() + SignedDuration::from_hours(72),
        daily_max: Some(daily),
        active_max: Some(active),
        agent: None,
    };
    let make = |name: &str, task_type: &str| {
        let mut task = sample_task_for(account, member(name), TaskStatus::PendingReview, base());
        task.task_type = task_type.into();
        task
    };
    let create = |task: Task, quota: CreationQuota| async move {
        let log = created(&task, Why::new(Reason::ManualModeRequiresReview));
        store.create_task_within(&task, &log, &[], &quota).await
    };
    let counts = |date| async move { store.creation_counts(account, date).await.expect("counts") };

    let t1 = make("m_c1", "payment_recovery");
    create(t1.clone(), quota(today, 3, 2)).await.expect("first");
    create(make("m_c2", "payment_recovery"), quota(today, 3, 2)).await.expect("second");
    let t3 = make("m_c3", "payment_recovery");
    assert!(
        is_conflict(create(t3.clone(), quota(today, 3, 2)).await, Conflict::ActiveTasks),
        "counters: the open-task cap refuses"
    );
    assert_eq!(
        store.get_task(account, t3.id).await.expect("get"),
        None,
        "counters: nothing of a refused task"
    );
    assert_eq!(
        store
            .active_task(account, &member("m_c3"), "payment_recovery")
            .await
            .expect("guard"),
        None
    );
    let c = counts(today).await;
    assert_eq!((c.created, c.open), (2, 2), "counters: a refusal counts nothing");

    let (closed, log) = transition(&t1, TaskStatus::Cancelled, base(), Why::new(Reason::OwnerSkipped)).expect("valid");
    store.commit(&TaskCommit::new(closed.clone(), log)).await.expect("close");
    // A later record on the closed task (attribution, say) gives nothing back twice.
    let (noted, log) = record(&closed, base(), Why::new(Reason::LateReplyOwnerNotified));
    store.commit(&TaskCommit::new(noted, log)).await.expect("note");
    assert_eq!(counts(today).await.open, 1, "counters: closing gives back the place, once");
    create(t3, quota(today, 3, 2)).await.expect("third after a close");
    assert!(
        is_conflict(
            create(make("m_c4", "payment_recovery"), quota(today, 3, 9)).await,
            Conflict::DailyTasks
        ),
        "counters: the day's cap refuses"
    );
    create(make("m_c4", "payment_recovery"), quota(tomorrow, 3, 9))
        .await
        .expect("a new day");
    assert_eq!((counts(today).await.created, counts(tomorrow).await.created), (3, 1));

    let agent = |name: &str, daily, per_member| CreationQuota {
        agent: Some(AgentQuota {
            member: member(name),
            daily_max: daily,
            member_max: per_member,
        }),
        ..quota(tomorrow, 50, 50)
    };
    create(make("m_c5", "payment_recovery"), agent("m_c5", 2, 1)).await.expect("agent");
    assert!(
        is_conflict(
            create(make("m_c5", "win_back"), agent("m_c5", 2, 1)).await,
            Conflict::MemberAgentTasks
        ),
        "counters: the agent's per-member cap refuses"
    );
    create(make("m_c6", "payment_recovery"), agent("m_c6", 2, 1))
        .await
        .expect("agent, other member");
    assert!(
        is_conflict(
            create(make("m_c7", "payment_recovery"), agent("m_c7", 2, 1)).await,
            Conflict::AgentTasks
        ),
        "counters: the agent's daily cap refuses"
    );
    let c = counts(tomorrow).await;
    assert_eq!((c.created, c.agent_created, c.open), (3, 2, 5));
    // The unlimited path still counts open tasks, so the cap sees them.
    new_task(store, account, "m_c8", TaskStatus::PendingReview).await;
    assert_eq!(counts(tomorrow).await.open, 6);
}

/// The risk scan's read (spec §18.2): every member of the account with facts, in member-id
/// order, page by page, and nobody else's.
async fn member_facts_are_listed_per_account_in_pages(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    for (acct, name) in [
        (account, "m_l3"),
        (account, "m_l1"),
        (other, "m_l0"),
        (account, "m_l2"),
        (account, "m_l5"),
        (account, "m_l4"),
    ] {
        let mut facts = MemberFacts::new(member(name));
        facts.first_name = Some(name.to_uppercase());
        facts.version = 1;
        store.save_member_facts(acct, &facts).await.expect("facts");
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let (page, next) = store.list_member_facts(account, 2, cursor).await.expect("list members");
        assert!(page.len() <= 2, "members: a page holds at most its limit");
        seen.extend(page.into_iter().map(|f| (f.member_id.to_string(), f.first_name)));
        pages += 1;
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages < 10, "members: the cursor must end");
    }
    let expected: Vec<(String, Option<String>)> = ["m_l1", "m_l2", "m_l3", "m_l4", "m_l5"]
        .iter()
        .map(|m| (m.to_string(), Some(m.to_uppercase())))
        .collect();
    assert_eq!(seen, expected, "members: every one of the account's, in order, once");
    assert!(
        matches!(
            store.list_member_facts(account, 2, Some("not a cursor!".into())).await,
            Err(StoreError::InvalidCursor)
        ),
        "members: a foreign cursor is refused"
    );
}

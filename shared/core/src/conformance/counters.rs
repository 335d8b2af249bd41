//! The conformance of [`Counters`]: AI calls and task creations are counted per account and
//! day, atomically, never past their limit.
//!
//! [`Counters`]: crate::ports::Counters

use jiff::SignedDuration;

use crate::kernel::error::Conflict;
use crate::kernel::ids::AccountId;
use crate::ports::TaskStore;
use crate::task::commit::TaskCommit;
use crate::task::reason::Reason;
use crate::task::transition::{Why, created, record, transition};
use crate::task::{Task, TaskStatus};
use crate::testing::sample_task_for;

use super::{base, is_conflict, member, new_task};

pub(super) async fn ai_calls_are_counted_per_account_and_day_up_to_the_limit(store: &dyn TaskStore) {
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

/// The flood and amplification counters: checked and moved in the same
/// write as the task, given back when a task closes, and a refused task leaves no trace.
pub(super) async fn creation_counters_limit_and_count_in_the_same_write(store: &dyn TaskStore) {
    use crate::task::flood::{AgentQuota, CreationQuota};
    let account = AccountId::generate(base());
    let today: jiff::civil::Date = "2026-11-02".parse().expect("date");
    let tomorrow: jiff::civil::Date = "2026-11-03".parse().expect("date");
    let quota = |date, daily, active| CreationQuota {
        date: Some(date),
        counters_expire_at: base() + SignedDuration::from_hours(72),
        daily_max: Some(daily),
        active_max: Some(active),
        agent: None,
        once: None,
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

pub(super) async fn sends_are_summed_over_a_range_of_days_in_one_read(store: &dyn TaskStore) {
    use crate::members::member::SendLedger;
    use crate::task::OutboundStatus;
    use crate::task::commit::SendEffect;
    let account = AccountId::generate(base());
    let day = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let next_day = day.tomorrow().expect("date");
    for (i, date) in [day, day, next_day].into_iter().enumerate() {
        let task = new_task(store, account, &format!("m_sends_{i}"), TaskStatus::Ready).await;
        let (next, log) = record(&task, base(), Why::new(Reason::SendReserved));
        let mut ledger = SendLedger::default();
        ledger.sends.insert(format!("{}#1", task.id), base());
        ledger.version = 1;
        let mut commit = TaskCommit::new(next, log);
        commit.send = Some(SendEffect::Reserve {
            outbound: super::outbound(&task, 1, OutboundStatus::Reserved),
            member_id: task.member.id.clone(),
            ledger,
            daily_date: date,
            daily_limit: 10,
        });
        store.commit(&commit).await.expect("reserve");
    }
    assert_eq!(store.sends_between(account, day, next_day).await.expect("sends"), 3);
    assert_eq!(store.sends_between(account, day, day).await.expect("sends"), 2);
    assert_eq!(store.sends_between(account, next_day, next_day).await.expect("sends"), 1);
    let later = next_day.tomorrow().expect("date");
    assert_eq!(store.sends_between(account, later, later).await.expect("sends"), 0);
    assert_eq!(
        store
            .sends_between(AccountId::generate(base()), day, next_day)
            .await
            .expect("sends"),
        0
    );
}

pub(super) async fn texts_and_segments_are_counted_per_account_and_day_up_to_the_limit(store: &dyn TaskStore) {
    use crate::owner::sms::TextCounts;
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    let day = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let next_day = day.tomorrow().expect("date");
    assert_eq!(
        store.count_text(account, day, 2, 2).await.expect("count"),
        Some(TextCounts { texts: 1, segments: 2 })
    );
    assert_eq!(
        store.count_text(account, day, 1, 2).await.expect("count"),
        Some(TextCounts { texts: 2, segments: 3 })
    );
    assert_eq!(store.count_text(account, day, 1, 2).await.expect("count"), None, "the limit holds");
    assert_eq!(
        store.count_text(account, next_day, 3, 2).await.expect("count"),
        Some(TextCounts { texts: 1, segments: 3 }),
        "per day"
    );
    assert_eq!(
        store.count_text(other, day, 1, 2).await.expect("count"),
        Some(TextCounts { texts: 1, segments: 1 }),
        "per account"
    );
    assert_eq!(
        store.texts_between(account, day, next_day).await.expect("sum"),
        TextCounts { texts: 3, segments: 6 },
        "a range of days, summed"
    );
    assert_eq!(store.texts_between(account, next_day, next_day).await.expect("sum").texts, 1);
}

/// A creation that names an episode claims it in its own write: the task and the claim are
/// both written or neither; a second creation naming the episode writes nothing; a creation
/// refused by a limit claims nothing; an expired claim is no claim.
pub(super) async fn an_episode_is_claimed_with_its_task_or_not_at_all(store: &dyn TaskStore) {
    use crate::task::flood::{CreationQuota, OnceClaim};
    let account = AccountId::generate(base());
    let today: jiff::civil::Date = "2026-11-02".parse().expect("date");
    let claim = |key: &str, now| OnceClaim {
        source: "analysis".into(),
        key: format!("{account}/{key}"),
        now,
        expires_at: now + SignedDuration::from_hours(24),
    };
    let quota = |daily, key: &str| CreationQuota {
        once: Some(claim(key, base())),
        ..CreationQuota::for_creation(today, base(), crate::task::TriggerType::CronAnalysis, &member("m_e1"), Some(daily))
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
    let claimed = |key: &str, at| {
        let id = format!("{account}/{key}");
        async move { store.is_claimed("analysis", &id, at).await.expect("is_claimed") }
    };

    assert!(!claimed("e1", base()).await, "episode: nothing claimed yet");
    let first = make("m_e1", "churn_risk");
    create(first.clone(), quota(5, "e1")).await.expect("the first finder");
    assert!(claimed("e1", base()).await, "episode: claimed with its task");
    let second = make("m_e2", "churn_risk");
    assert!(
        is_conflict(create(second.clone(), quota(5, "e1")).await, Conflict::Claimed),
        "episode: a second finder is refused"
    );
    assert_eq!(
        store.get_task(account, second.id).await.expect("get"),
        None,
        "episode: nothing of it written"
    );

    // Refused by the day's cap (one creation so far today): the episode stays unclaimed.
    let refused = make("m_e3", "churn_risk");
    assert!(
        is_conflict(create(refused, quota(1, "e3")).await, Conflict::DailyTasks),
        "episode: the cap refuses"
    );
    assert!(!claimed("e3", base()).await, "episode: a refused creation claims nothing");

    // A day on, the claim has expired: the episode may be acted on again.
    let later = base() + SignedDuration::from_hours(25);
    assert!(!claimed("e1", later).await, "episode: an expired claim is no claim");
    let again = CreationQuota {
        once: Some(claim("e1", later)),
        ..CreationQuota::for_creation(
            "2026-11-03".parse().expect("date"),
            later,
            crate::task::TriggerType::CronAnalysis,
            &member("m_e2"),
            None,
        )
    };
    create(second, again).await.expect("after the claim expired");

    // A commit's claim (a delivered reply's): written with the commit, and a second commit
    // naming it writes nothing.
    let extras = crate::ports::CommitExtras {
        claim: Some(claim("reply-1", base())),
        ..Default::default()
    };
    let (noted, log) = record(&first, base(), Why::new(Reason::MemberReplied));
    store
        .commit_with(&TaskCommit::new(noted.clone(), log), &extras)
        .await
        .expect("the reply");
    assert!(claimed("reply-1", base()).await, "claim: written with its commit");
    let (again, log) = record(&noted, base(), Why::new(Reason::MemberReplied));
    assert!(
        is_conflict(store.commit_with(&TaskCommit::new(again, log), &extras).await, Conflict::Claimed),
        "claim: the same delivery again is refused"
    );
    let stored = store.get_task(account, first.id).await.expect("get").expect("task");
    assert_eq!(stored.version, noted.version, "claim: a refused commit writes nothing");
}

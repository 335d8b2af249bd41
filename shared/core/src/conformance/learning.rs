//! The conformance of [`LearningStore`]: closing a task writes its learning record in the same
//! commit.
//!
//! [`LearningStore`]: crate::ports::LearningStore

use jiff::SignedDuration;

use crate::kernel::ids::AccountId;
use crate::ports::TaskStore;
use crate::task::TaskStatus;
use crate::task::commit::TaskCommit;
use crate::task::reason::Reason;
use crate::task::transition::{Why, record, transition};
use crate::testing::{at, sample_account};

use super::{base, new_task};

/// Spec 003: every close writes the learning record with the close, a revision rewrites it,
/// and the cross-tenant side holds the shared part only.
pub(super) async fn closing_a_task_writes_its_learning_record_in_the_same_commit(store: &dyn TaskStore) {
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
        let expected = crate::learning::interaction::InteractionOutcome::of(&done, Some(&account.settings))
            .map(|r| r.contributed_by(account.webhook_secret.expose().as_bytes()));
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
    assert!(
        shared[0].contributor.is_some() && shared[0].contributor == shared[1].contributor,
        "learning: one pseudonym per contributing account"
    );
    let text = serde_json::to_string(&shared).expect("json");
    for task in &closed {
        for secret in [task.id.to_string(), account.id.to_string(), task.member.id.as_str().to_owned()] {
            assert!(!text.contains(&secret), "learning: {secret} crossed tenants");
        }
    }
    assert!(
        shared.iter().all(|r| r.business_type.as_deref() == Some("yoga_studio")),
        "learning: the business type at the close, as a tag"
    );
    // The evaluator's window: the account's records of tasks made since a time, by task id.
    let recent = store
        .recent_outcomes(account.id, base() - SignedDuration::from_hours(1), 10)
        .await
        .expect("recent");
    let mut ids: Vec<_> = recent.iter().map(|r| r.private.task_id).collect();
    ids.sort_unstable();
    let mut expected: Vec<_> = closed.iter().map(|t| t.id).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "learning: the window holds the account's closed tasks");
    let later = store
        .recent_outcomes(account.id, base() + SignedDuration::from_hours(1), 10)
        .await
        .expect("recent");
    assert!(later.is_empty(), "learning: tasks made before the window are left out");
    let elsewhere = store
        .recent_outcomes(AccountId::generate(base()), base() - SignedDuration::from_hours(1), 10)
        .await
        .expect("recent");
    assert!(elsewhere.is_empty(), "learning: per account");
}

/// An account whose owner turned contributing off keeps its own record, and
/// nothing of it reaches the cross-tenant set.
pub(super) async fn an_account_that_does_not_share_keeps_its_record_out_of_the_cross_tenant_set(store: &dyn TaskStore) {
    let mut account = sample_account(base());
    account.settings.share_learning = false;
    store
        .create_account(&account, &format!("learn-private-{}", account.id))
        .await
        .expect("create_account");
    // A month no other scenario uses.
    let closed_at = at("2031-03-10T18:00:00Z");
    let task = new_task(store, account.id, "m_private", TaskStatus::Waiting).await;
    let (done, log) = transition(&task, TaskStatus::Cancelled, closed_at, Why::new(Reason::OwnerCancelled)).expect("valid");
    store.commit(&TaskCommit::new(done.clone(), log)).await.expect("close");
    assert!(
        store.interaction_outcome(account.id, done.id).await.expect("read").is_some(),
        "learning: the account keeps its own record"
    );
    let (shared, _) = store.shared_outcomes("2031-03", 100, None).await.expect("shared");
    assert!(shared.is_empty(), "learning: nothing crosses tenants: {shared:?}");
}

//! The conformance of [`Idempotency`]: a webhook id and an action key are each claimed once.
//!
//! [`Idempotency`]: crate::ports::Idempotency

use jiff::SignedDuration;

use crate::kernel::ids::{AccountId, TaskId, new_ulid};
use crate::ports::TaskStore;

use super::{base, member};

pub(super) async fn webhook_ids_are_claimed_once(store: &dyn TaskStore) {
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

/// Spec §32.2: an action's key is claimed by one caller; a finished record stays, a failed
/// one may be claimed again; records are listed per task and account.
pub(super) async fn an_action_is_claimed_once_and_a_failed_one_again(store: &dyn TaskStore) {
    use crate::task::action::{Action, ActionClaim, ActionRecord, ActionState, ActionType, idempotency_key};
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

//! The conformance of [`TemplateStore`]: recurring templates are versioned, scoped by account,
//! and due only when enabled.
//!
//! [`TemplateStore`]: crate::ports::TemplateStore

use jiff::{SignedDuration, Timestamp};

use crate::kernel::error::Conflict;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::ports::TaskStore;

use super::{base, is_conflict};

pub(super) async fn recurring_templates_are_versioned_and_due_when_enabled(store: &dyn TaskStore) {
    use crate::owner::recurring::RecurringTemplate;
    let account = AccountId(new_ulid(base()));
    let other = AccountId(new_ulid(base()));
    let template = |account: AccountId, next_at: Timestamp| RecurringTemplate {
        id: new_ulid(base()),
        account_id: account,
        task_type: "monthly_churn_analysis".into(),
        member_id: crate::owner::recurring::account_wide_member(),
        goal: "Monthly churn report".into(),
        cron: "0 8 1 * *".into(),
        enabled: true,
        max_instances: 12,
        instances_created: 0,
        next_at: Some(next_at),
        last_triggered_at: None,
        created_at: base(),
        version: 1,
        paused: false,
        runs: Vec::new(),
        notify: Default::default(),
        backoff: Default::default(),
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

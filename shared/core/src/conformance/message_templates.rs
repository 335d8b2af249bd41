//! The conformance of [`MessageTemplateStore`]: one template per account, type and touch,
//! replaced by a later write, listed whole (every key at its largest), removed once, and
//! every account has its own.
//!
//! [`MessageTemplateStore`]: crate::ports::MessageTemplateStore

use crate::conversation::messages::{self, MAX_BODY_SOURCE_CHARS, MAX_SUBJECT_SOURCE_CHARS, OwnerTemplate};
use crate::kernel::ids::AccountId;
use crate::ports::TaskStore;

use super::base;

fn template(task_type: &str, touch: &str, subject: &str, body: &str) -> OwnerTemplate {
    OwnerTemplate {
        task_type: task_type.into(),
        touch: touch.into(),
        subject: subject.into(),
        body: body.into(),
        variants: Vec::new(),
        updated_at: base(),
    }
}

/// The owner's own templates.
pub(super) async fn an_owners_message_templates_are_kept_per_account_type_and_touch(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    assert!(store.message_templates(account).await.expect("list").is_empty());
    assert_eq!(store.message_template(account, "churn_risk", "first").await.expect("get"), None);

    let first = template(
        "churn_risk",
        "first",
        "Hey {{ member.first_name }}",
        "{{ greeting }},\n\nSee you soon.",
    );
    store.put_message_template(account, &first).await.expect("put");
    assert_eq!(
        store.message_template(account, "churn_risk", "first").await.expect("get"),
        Some(first.clone())
    );
    assert_eq!(
        store.message_template(account, "churn_risk", "follow_up_1").await.expect("get"),
        None,
        "message templates: per touch"
    );
    assert_eq!(
        store.message_template(account, "win_back", "first").await.expect("get"),
        None,
        "message templates: per type"
    );
    let replaced = template("churn_risk", "first", "Checking in", "{{ greeting }},\n\nHow are you?");
    store.put_message_template(account, &replaced).await.expect("replace");
    assert_eq!(
        store.message_template(account, "churn_risk", "first").await.expect("get"),
        Some(replaced),
        "message templates: a later write replaces"
    );
    assert!(
        store.message_templates(other).await.expect("list").is_empty(),
        "message templates: per account"
    );
    assert_eq!(store.message_template(other, "churn_risk", "first").await.expect("get"), None);

    // Every key at its largest (multi-byte text), listed whole.
    let subject = "é".repeat(MAX_SUBJECT_SOURCE_CHARS);
    let body = "ü".repeat(MAX_BODY_SOURCE_CHARS);
    let keys = messages::keys();
    for (task_type, touch) in &keys {
        store
            .put_message_template(account, &template(task_type, touch, &subject, &body))
            .await
            .expect("put the largest");
    }
    let listed = store.message_templates(account).await.expect("list");
    assert_eq!(listed.len(), keys.len(), "message templates: every one listed");
    assert!(listed.iter().all(|t| t.subject == subject && t.body == body));

    assert!(store.delete_message_template(account, "churn_risk", "first").await.expect("delete"));
    assert!(
        !store.delete_message_template(account, "churn_risk", "first").await.expect("again"),
        "message templates: removed once"
    );
    assert_eq!(store.message_template(account, "churn_risk", "first").await.expect("get"), None);
    assert_eq!(store.message_templates(account).await.expect("list").len(), keys.len() - 1);
}

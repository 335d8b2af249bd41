//! The conformance of [`SuggestionStore`]: a fingerprint is suggested once per account (even
//! after its suggestion was decided), a suggestion is decided under its version, and the
//! lists are per account and status, newest first.
//!
//! [`SuggestionStore`]: crate::ports::SuggestionStore

use serde_json::json;

use crate::kernel::error::Conflict;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::learning::suggestion::{ProposedChange, Strength, Suggestion, SuggestionDraft, SuggestionKind, SuggestionStatus};
use crate::ports::TaskStore;

use super::{base, is_conflict};

fn suggestion(account: AccountId, fingerprint: &str, minutes: i64) -> Suggestion {
    let at = base() + jiff::SignedDuration::from_mins(minutes);
    let draft = SuggestionDraft {
        kind: SuggestionKind::Memory,
        title: "Send in the evening".into(),
        body: "12 of 12 answered".into(),
        evidence: json!({"evening": {"sent": 12, "replied": 12, "reply_rate": 0.75}}),
        strength: Strength::Strong,
        confidence: 80,
        fingerprint: fingerprint.into(),
        change: ProposedChange::Memory {
            content: "Members answer in the evening.".into(),
            category: Some("pattern".into()),
        },
    };
    Suggestion::new(account, draft, "weekly_batch", new_ulid(at), at)
}

/// Never the same suggestion twice.
pub(super) async fn a_finding_is_suggested_once_and_listed_by_status_per_account(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let first = suggestion(account, "memory:send_time:evening>morning", 0);
    assert!(store.create_suggestion(&first).await.expect("create"), "suggestions: made");
    assert_eq!(
        store.get_suggestion(account, first.id).await.expect("read"),
        Some(first.clone()),
        "suggestions: every field kept"
    );
    let again = suggestion(account, "memory:send_time:evening>morning", 1);
    assert!(
        !store.create_suggestion(&again).await.expect("create"),
        "suggestions: the same fingerprint is not suggested twice"
    );
    assert!(store.get_suggestion(account, again.id).await.expect("read").is_none());
    let second = suggestion(account, "prompt:message_length:under_600", 2);
    assert!(store.create_suggestion(&second).await.expect("create"));
    let pending = store.list_suggestions(account, SuggestionStatus::Pending, 10).await.expect("list");
    assert_eq!(
        pending.iter().map(|s| s.id).collect::<Vec<_>>(),
        [second.id, first.id],
        "suggestions: newest first"
    );

    let mut dismissed = first.clone();
    dismissed.status = SuggestionStatus::Dismissed;
    dismissed.version = 2;
    store.save_suggestion(&dismissed).await.expect("decide");
    assert!(
        is_conflict(store.save_suggestion(&dismissed).await, Conflict::Version),
        "suggestions: decided under the version read"
    );
    let pending = store.list_suggestions(account, SuggestionStatus::Pending, 10).await.expect("list");
    assert_eq!(pending.iter().map(|s| s.id).collect::<Vec<_>>(), [second.id]);
    let listed = store
        .list_suggestions(account, SuggestionStatus::Dismissed, 10)
        .await
        .expect("list");
    assert_eq!(listed, [dismissed.clone()], "suggestions: listed under their new status");
    assert!(
        !store
            .create_suggestion(&suggestion(account, "memory:send_time:evening>morning", 3))
            .await
            .expect("create"),
        "suggestions: a dismissed finding is not suggested again"
    );

    let elsewhere = AccountId::generate(base());
    assert!(
        store
            .list_suggestions(elsewhere, SuggestionStatus::Pending, 10)
            .await
            .expect("list")
            .is_empty()
    );
    assert!(
        store
            .create_suggestion(&suggestion(elsewhere, "memory:send_time:evening>morning", 4))
            .await
            .expect("create"),
        "suggestions: fingerprints are per account"
    );
}

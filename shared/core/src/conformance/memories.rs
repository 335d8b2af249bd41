//! The conformance of [`BusinessMemoryStore`]: an account's memories are one versioned book —
//! written only over the version read, every field kept, one per account — and the send
//! snapshot carries it.
//!
//! [`BusinessMemoryStore`]: crate::ports::BusinessMemoryStore

use crate::kernel::error::Conflict;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::kernel::limits;
use crate::owner::business_memory::{BusinessMemory, MemoryBook, MemorySource};
use crate::ports::TaskStore;

use super::{base, is_conflict, member};

fn memory(account: AccountId, i: usize) -> BusinessMemory {
    BusinessMemory {
        id: new_ulid(base()),
        account_id: account,
        member_id: (i % 2 == 1).then(|| member("m_remembered")),
        // The largest memory a book may hold, so a full book is checked against the item limit.
        content: format!("{i:04} {}", "é".repeat((limits::MAX_MEMORY_BYTES - 5) / 2)),
        category: Some("preference".into()),
        source: MemorySource::OwnerEdit,
        confidence: 80,
        created_at: base(),
        expires_at: Some(base() + jiff::SignedDuration::from_hours(24)),
        last_confirmed_at: Some(base()),
    }
}

/// Memories stored per account, capped, and read with the send gates.
pub(super) async fn a_memory_book_is_versioned_per_account_and_in_the_send_snapshot(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    assert_eq!(store.memory_book(account).await.expect("read"), MemoryBook::default());
    let full = MemoryBook {
        memories: (0..limits::MAX_MEMORIES_PER_ACCOUNT).map(|i| memory(account, i)).collect(),
        version: 1,
    };
    store.save_memory_book(account, &full).await.expect("a full book fits one record");
    assert_eq!(store.memory_book(account).await.expect("read"), full, "memories: every field kept");
    assert!(
        is_conflict(store.save_memory_book(account, &full).await, Conflict::Version),
        "memories: a book is written only over the version it was read at"
    );
    let mut next = full.clone();
    next.memories.truncate(1);
    next.version = 2;
    store.save_memory_book(account, &next).await.expect("next version");
    let snapshot = store
        .send_snapshot(
            account,
            &member("m_remembered"),
            None,
            base().to_zoned(jiff::tz::TimeZone::UTC).date(),
        )
        .await
        .expect("snapshot");
    assert_eq!(snapshot.memories, next, "memories: in the send snapshot");
    let elsewhere = AccountId::generate(base());
    assert!(
        store.memory_book(elsewhere).await.expect("read").memories.is_empty(),
        "memories: per account"
    );
    let stale = MemoryBook { version: 2, ..full };
    assert!(
        is_conflict(store.save_memory_book(elsewhere, &stale).await, Conflict::Version),
        "memories: a first book is version 1"
    );
}

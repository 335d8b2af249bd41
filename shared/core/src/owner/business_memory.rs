//! Business memories (Self-Improving System spec): short facts about one business, or one of
//! its members, that every future prompt of that account reads ("members here take two-week
//! breaks in August", "Dan prefers texts after 6pm"). Always private to the account: nothing
//! here is ever shared across tenants. Owner-written or owner-approved; an expired memory is
//! kept but no longer read.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, MemberId};
use crate::kernel::limits;

/// Who wrote the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MemorySource {
    /// The owner wrote it.
    Owner,
    /// Learned from the owner's edits to drafts.
    OwnerEdit,
    /// Proposed by the agent or the evaluator and approved by the owner.
    Agent,
    Evaluator,
}

/// The category of a fact members ask about (price, first class, hours, parking, what to
/// bring): a member's question one of them clearly answers is answered with it, as written.
pub const FAQ_CATEGORY: &str = "faq";

/// The account-wide facts among `memories` that answer members' questions, active at `now`,
/// as the owner wrote them.
pub fn faq_facts(memories: &[BusinessMemory], now: Timestamp) -> Vec<String> {
    memories
        .iter()
        .filter(|m| m.member_id.is_none() && m.is_active(now))
        .filter(|m| m.category.as_deref().is_some_and(|c| c.trim().eq_ignore_ascii_case(FAQ_CATEGORY)))
        .map(|m| m.content.trim().to_owned())
        .collect()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusinessMemory {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    /// Set for a fact about one member; `None` for the whole business.
    #[serde(default)]
    pub member_id: Option<MemberId>,
    pub content: String,
    /// A soft label ("preference", "context", "pattern", "business_profile"), or
    /// [`FAQ_CATEGORY`] for a fact that answers members' questions.
    #[serde(default)]
    pub category: Option<String>,
    pub source: MemorySource,
    /// 0–100.
    pub confidence: u8,
    pub created_at: Timestamp,
    #[serde(default)]
    pub expires_at: Option<Timestamp>,
    /// When an outcome or the owner last confirmed it (spec 003: memories not confirmed by
    /// recent outcomes are flagged for review); `created_at` until then.
    #[serde(default)]
    pub last_confirmed_at: Option<Timestamp>,
}

impl BusinessMemory {
    /// Whether prompts read it at `now`.
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }

    pub fn validate(&self) -> Result<(), InvalidInput> {
        let content = self.content.trim();
        if content.is_empty() || content.chars().count() > limits::MAX_MEMORY_CHARS {
            return Err(content_refused());
        }
        if self.content.len() > limits::MAX_MEMORY_BYTES {
            return Err(InvalidInput::new(
                "invalid_memory",
                format!("a memory is at most {} bytes of UTF-8", limits::MAX_MEMORY_BYTES),
            ));
        }
        if self
            .category
            .as_deref()
            .is_some_and(|c| c.trim().is_empty() || c.chars().count() > limits::MAX_MEMORY_CATEGORY_CHARS)
        {
            return Err(InvalidInput::new(
                "invalid_memory",
                format!("a category is 1 to {} characters", limits::MAX_MEMORY_CATEGORY_CHARS),
            ));
        }
        crate::kernel::text::single_line("invalid_memory", "a category", self.category.as_deref().unwrap_or_default())?;
        if self.confidence > 100 {
            return Err(InvalidInput::new("invalid_memory", "confidence is 0 to 100"));
        }
        Ok(())
    }
}

/// The memories a prompt reads: active ones only, the member's own first, then the most
/// confident and most recent, at most [`limits::MAX_PROMPT_MEMORIES`].
pub fn for_prompt(memories: &[BusinessMemory], now: Timestamp) -> Vec<&BusinessMemory> {
    let mut active: Vec<&BusinessMemory> = memories.iter().filter(|m| m.is_active(now)).collect();
    active.sort_by_key(|m| std::cmp::Reverse((m.member_id.is_some(), m.confidence, m.created_at)));
    active.truncate(limits::MAX_PROMPT_MEMORIES);
    active
}

/// An account's memories, kept as one versioned record: the cap is checked and the book
/// written over the version it was read at, so two owners adding at once cannot pass it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryBook {
    #[serde(default)]
    pub memories: Vec<BusinessMemory>,
    /// 0 for a book never written.
    #[serde(default)]
    pub version: u64,
}

impl MemoryBook {
    /// Add `memory` (validated). A full book first lets go of its expired memories (the
    /// longest expired first); still full, the memory is refused and nothing changes.
    pub fn add(&mut self, memory: BusinessMemory, now: Timestamp) -> Result<(), InvalidInput> {
        memory.validate()?;
        if self.memories.len() >= limits::MAX_MEMORIES_PER_ACCOUNT {
            self.memories.sort_by_key(|m| m.expires_at.filter(|at| *at <= now).is_none());
            let expired = self.memories.iter().filter(|m| !m.is_active(now)).count();
            let excess = self.memories.len() + 1 - limits::MAX_MEMORIES_PER_ACCOUNT;
            if expired < excess {
                self.memories.sort_by_key(|m| m.created_at);
                return Err(InvalidInput::new(
                    "memory_limit",
                    format!(
                        "an account keeps at most {} memories: delete one first",
                        limits::MAX_MEMORIES_PER_ACCOUNT
                    ),
                ));
            }
            self.memories.drain(..excess);
        }
        self.memories.push(memory);
        self.memories.sort_by_key(|m| m.created_at);
        Ok(())
    }

    /// Take out the memory `id`; `None` if the book has none.
    pub fn remove(&mut self, id: ulid::Ulid) -> Option<BusinessMemory> {
        let at = self.memories.iter().position(|m| m.id == id)?;
        Some(self.memories.remove(at))
    }

    /// What a prompt about `member` may read: the account-wide memories and that member's
    /// own (another member's never), active or not ([`for_prompt`] chooses).
    pub fn about(&self, member: Option<&MemberId>) -> Vec<BusinessMemory> {
        self.memories
            .iter()
            .filter(|m| m.member_id.is_none() || m.member_id.as_ref() == member)
            .cloned()
            .collect()
    }
}

/// A memory's content out of bounds, as the owner reads it.
pub fn content_refused() -> InvalidInput {
    InvalidInput::new(
        "invalid_memory",
        format!("a memory is 1 to {} characters", limits::MAX_MEMORY_CHARS),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::at;

    fn memory(content: &str, created: &str, expires: Option<&str>) -> BusinessMemory {
        BusinessMemory {
            id: crate::kernel::ids::new_ulid(at(created)),
            account_id: AccountId::generate(at(created)),
            member_id: None,
            content: content.into(),
            category: None,
            source: MemorySource::Owner,
            confidence: 100,
            created_at: at(created),
            expires_at: expires.map(at),
            last_confirmed_at: None,
        }
    }

    #[test]
    fn a_full_book_refuses_a_memory_until_one_has_expired() {
        let now = at("2026-11-10T12:00:00Z");
        let mut book = MemoryBook::default();
        for i in 0..limits::MAX_MEMORIES_PER_ACCOUNT {
            let expires = (i == 3).then_some("2026-11-09T00:00:00Z");
            book.add(memory(&format!("fact {i}"), "2026-11-01T00:00:00Z", expires), now)
                .expect("room");
        }
        book.add(memory("one more", "2026-11-02T00:00:00Z", None), now)
            .expect("the expired one makes room");
        assert!(!book.memories.iter().any(|m| m.content == "fact 3"), "the expired memory went");
        let refused = book.add(memory("and another", "2026-11-02T00:00:00Z", None), now);
        assert_eq!(refused.map_err(|e| e.code), Err("memory_limit".to_owned()));
        assert_eq!(book.memories.len(), limits::MAX_MEMORIES_PER_ACCOUNT);
    }

    #[test]
    fn a_prompt_about_one_member_never_reads_another_members_memories() {
        let now = "2026-11-01T00:00:00Z";
        let mut book = MemoryBook::default();
        let ana = MemberId::parse("m_ana").expect("id");
        let bo = MemberId::parse("m_bo").expect("id");
        for (content, member) in [("everyone", None), ("about ana", Some(ana.clone())), ("about bo", Some(bo))] {
            let mut m = memory(content, now, None);
            m.member_id = member;
            book.add(m, at(now)).expect("add");
        }
        let read: Vec<String> = book.about(Some(&ana)).into_iter().map(|m| m.content).collect();
        assert_eq!(read, ["everyone", "about ana"]);
    }
}

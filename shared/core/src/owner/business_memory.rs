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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusinessMemory {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    /// Set for a fact about one member; `None` for the whole business.
    #[serde(default)]
    pub member_id: Option<MemberId>,
    pub content: String,
    /// A soft label ("preference", "context", "pattern", "business_profile").
    #[serde(default)]
    pub category: Option<String>,
    pub source: MemorySource,
    /// 0–100.
    pub confidence: u8,
    pub created_at: Timestamp,
    #[serde(default)]
    pub expires_at: Option<Timestamp>,
}

impl BusinessMemory {
    /// Whether prompts read it at `now`.
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }

    pub fn validate(&self) -> Result<(), InvalidInput> {
        let content = self.content.trim();
        if content.is_empty() || content.chars().count() > limits::MAX_MEMORY_CHARS {
            return Err(InvalidInput::new(
                "invalid_memory",
                format!("a memory is 1 to {} characters", limits::MAX_MEMORY_CHARS),
            ));
        }
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

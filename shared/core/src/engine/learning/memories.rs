//! Business memories: what the owner — or an accepted
//! suggestion — teaches the agent about the business or one member. Kept per account in one
//! versioned book under a cap; every AI call of a task reads the active ones about the
//! business and its member ([`Engine::prompt_memories`]), and the task records which it used.

use jiff::Timestamp;
use serde::Deserialize;

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId, new_ulid};
use crate::owner::business_memory::{self, BusinessMemory, MemoryBook, MemorySource};
use crate::task::error::EngineError;

/// Lost version races before a write gives up.
const RACES: usize = 8;

/// `POST /api/v1/memories`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewMemory {
    /// At most 1,500 bytes too.
    pub content: crate::kernel::texts::MemoryContent,
    #[serde(default)]
    pub member_id: Option<MemberId>,
    #[serde(default)]
    pub category: Option<crate::kernel::texts::MemoryCategory>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub expires_at: Option<Timestamp>,
}

/// What a prompt read: the memories handed to the builder, and the ids of the stored ones
/// among those it shows (what the task view reports).
#[derive(Clone, Debug, Default)]
pub(crate) struct PromptMemories {
    pub memories: Vec<BusinessMemory>,
    pub used: Vec<ulid::Ulid>,
}

impl PromptMemories {
    /// The stored memories of `book` about `member`, and the member's annotations beside
    /// them (Openloop's own notes, not stored memories: never counted as used).
    pub(crate) fn from_book(book: &MemoryBook, member: Option<&MemberId>, annotations: Vec<BusinessMemory>, now: Timestamp) -> Self {
        let mut memories = book.about(member);
        let stored = memories.len();
        memories.extend(annotations);
        let used = business_memory::for_prompt(&memories, now)
            .into_iter()
            .filter(|m| memories[..stored].iter().any(|s| s.id == m.id))
            .map(|m| m.id)
            .collect();
        Self { memories, used }
    }
}

impl Engine {
    /// The account's memories, newest first (expired ones too: the owner sees `expires_at`).
    pub async fn list_memories(&self, account: AccountId) -> Result<Vec<BusinessMemory>, EngineError> {
        let mut memories = self.store.memory_book(account).await?.memories;
        memories.reverse();
        Ok(memories)
    }

    /// The owner's memory (`source: owner`, full confidence).
    pub async fn add_memory(&self, account: AccountId, input: NewMemory) -> Result<BusinessMemory, EngineError> {
        let now = self.clock.now();
        if input.expires_at.is_some_and(|at| at <= now) {
            return Err(InvalidInput::new("invalid_memory", "expires_at must be in the future").into());
        }
        let memory = BusinessMemory {
            id: new_ulid(now),
            account_id: account,
            member_id: input.member_id,
            content: input.content.trim().to_owned(),
            category: input.category.map(|c| c.trim().to_owned()),
            source: MemorySource::Owner,
            confidence: 100,
            created_at: now,
            expires_at: input.expires_at,
            last_confirmed_at: None,
        };
        self.save_memory(memory).await
    }

    /// Add `memory` to its account's book, under the cap, over the version read.
    pub(crate) async fn save_memory(&self, memory: BusinessMemory) -> Result<BusinessMemory, EngineError> {
        memory.validate()?;
        let account = memory.account_id;
        self.change_memories(account, |book, now| book.add(memory.clone(), now).map_err(EngineError::from))
            .await?;
        tracing::info!(%account, memory = %memory.id, source = ?memory.source, "business memory saved");
        Ok(memory)
    }

    /// Delete one memory; not found if the account has none of that id.
    pub async fn delete_memory(&self, account: AccountId, id: ulid::Ulid) -> Result<BusinessMemory, EngineError> {
        let removed = self
            .change_memories(account, |book, _| book.remove(id).ok_or(EngineError::NotFound { what: "memory" }))
            .await?;
        tracing::info!(%account, memory = %id, "business memory deleted");
        Ok(removed)
    }

    /// Read the book, change it, write it over the version read (again on a lost race).
    async fn change_memories<T>(
        &self,
        account: AccountId,
        mut change: impl FnMut(&mut MemoryBook, Timestamp) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        for _ in 0..RACES {
            let now = self.clock.now();
            let mut book = self.store.memory_book(account).await?;
            let out = change(&mut book, now)?;
            book.version += 1;
            match self.store.save_memory_book(account, &book).await {
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                other => other?,
            }
            return Ok(out);
        }
        Err(EngineError::StaleVersion)
    }

    /// What every AI call about `member` reads: the account's memories about the business
    /// and that member (one read), with the member's annotations.
    pub(crate) async fn prompt_memories(
        &self,
        account: AccountId,
        member: Option<&MemberId>,
        now: Timestamp,
    ) -> Result<PromptMemories, EngineError> {
        let book = self.store.memory_book(account).await?;
        let annotations = match member {
            Some(member) => self.annotation_memories(account, member, now).await?,
            None => Vec::new(),
        };
        Ok(PromptMemories::from_book(&book, member, annotations, now))
    }
}

//! [`SuggestionStore`] in memory: suggestions by account and id, and the fingerprints made.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::learning::suggestion::{Suggestion, SuggestionStatus};
use crate::ports::SuggestionStore;

use super::MemoryStore;

#[async_trait]
impl SuggestionStore for MemoryStore {
    async fn create_suggestion(&self, suggestion: &Suggestion) -> Result<bool, StoreError> {
        let mut s = self.lock()?;
        let key = (suggestion.account_id, suggestion.fingerprint.clone());
        if s.fingerprints.contains(&key) {
            return Ok(false);
        }
        if s.suggestions.contains_key(&(suggestion.account_id, suggestion.id)) {
            return Err(StoreError::Conflict(Conflict::AlreadyExists));
        }
        s.fingerprints.insert(key);
        s.suggestions.insert((suggestion.account_id, suggestion.id), suggestion.clone());
        Ok(true)
    }

    async fn get_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<Suggestion>, StoreError> {
        Ok(self.lock()?.suggestions.get(&(account, id)).cloned())
    }

    async fn save_suggestion(&self, suggestion: &Suggestion) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let key = (suggestion.account_id, suggestion.id);
        match s.suggestions.get(&key) {
            Some(stored) if stored.version + 1 == suggestion.version => {
                s.suggestions.insert(key, suggestion.clone());
                Ok(())
            }
            _ => Err(StoreError::Conflict(Conflict::Version)),
        }
    }

    async fn list_suggestions(&self, account: AccountId, status: SuggestionStatus, limit: usize) -> Result<Vec<Suggestion>, StoreError> {
        Ok(self
            .lock()?
            .suggestions
            .range((account, ulid::Ulid::nil())..=(account, ulid::Ulid::from_parts(u64::MAX, u128::MAX)))
            .rev()
            .map(|(_, s)| s)
            .filter(|s| s.status == status)
            .take(limit)
            .cloned()
            .collect())
    }
}

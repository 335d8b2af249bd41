//! [`SuggestionStore`] on DynamoDB: `SUGGESTION#{id}` items under the account, on GSI2 by
//! account and status (`SUGGESTIONS#{a}#{status}`, newest first), created in one transaction
//! with the `SUGGESTED#{fingerprint}` claim that keeps a finding from being suggested twice.

use std::collections::HashMap;

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::learning::suggestion::{Suggestion, SuggestionStatus};
use openloop_core::ports::SuggestionStore;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, Item};

fn suggestion_item(suggestion: &Suggestion) -> Result<Item, StoreError> {
    let mut item = keyed(
        suggestion,
        account_pk(suggestion.account_id),
        suggestion_sk(suggestion.id),
        "suggestion",
    )?;
    item.insert(
        GSI2PK.into(),
        s(suggestions_gsi2pk(suggestion.account_id, suggestion.status.as_str())),
    );
    item.insert(GSI2SK.into(), s(suggestion.id.to_string()));
    Ok(item)
}

#[async_trait]
impl SuggestionStore for DynamoStore {
    async fn create_suggestion(&self, suggestion: &Suggestion) -> Result<bool, StoreError> {
        let claim: Item = HashMap::from([
            (PK.into(), s(account_pk(suggestion.account_id))),
            (SK.into(), s(suggestion_fingerprint_sk(&suggestion.fingerprint))),
            (KIND.into(), s("suggestion_fingerprint")),
            ("suggestion_id".into(), s(suggestion.id.to_string())),
        ]);
        match self
            .transact(vec![
                (self.put_new(claim)?, Some(Conflict::AlreadyExists)),
                (self.put_new(suggestion_item(suggestion)?)?, Some(Conflict::Version)),
            ])
            .await
        {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(Conflict::AlreadyExists)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn get_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Option<Suggestion>, StoreError> {
        self.get(account_pk(account), &suggestion_sk(id)).await?.map(from_item).transpose()
    }

    async fn save_suggestion(&self, suggestion: &Suggestion) -> Result<(), StoreError> {
        self.put_conditional(
            suggestion_item(suggestion)?,
            "#v = :v",
            &[("#v", "version")],
            vec![(":v", n(suggestion.version.saturating_sub(1)))],
            Conflict::Version,
        )
        .await
    }

    async fn list_suggestions(&self, account: AccountId, status: SuggestionStatus, limit: usize) -> Result<Vec<Suggestion>, StoreError> {
        let (items, _) = self
            .index_page(
                Some(GSI2),
                GSI2PK,
                suggestions_gsi2pk(account, status.as_str()),
                None,
                false,
                limit,
                None,
            )
            .await?;
        items.into_iter().map(from_item).collect()
    }
}

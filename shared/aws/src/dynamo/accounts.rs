//! [`AccountStore`] on DynamoDB: the account item (`PROFILE`, listed under GSI2 `ACCOUNTS`, and
//! under GSI1 `OWNER#{address}` while it names an owner's address),
//! its API token item, and `SYSTEM/CONFIG`.

use std::collections::HashMap;

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, Email};
use openloop_core::owner::account::{Account, SystemConfig};
use openloop_core::owner::sign_in::owner_email_key;
use openloop_core::ports::AccountStore;
use openloop_core::ports::sealing::sealed_account;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, Item};

#[async_trait]
impl AccountStore for DynamoStore {
    async fn create_account(&self, account: &Account, api_token_hash: &str) -> Result<(), StoreError> {
        let item = account_item(&*sealed_account(self.keyring.as_ref(), account).await?)?;
        let token: Item = HashMap::from([
            (PK.into(), s(token_pk(api_token_hash))),
            (SK.into(), s(TOKEN_SK)),
            (KIND.into(), s("api_token")),
            ("account_id".into(), s(account.id.to_string())),
        ]);
        self.transact(vec![
            (self.put_new(item)?, Some(Conflict::AlreadyExists)),
            (self.put_new(token)?, Some(Conflict::AlreadyExists)),
        ])
        .await
    }

    async fn get_account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        self.get(account_pk(id), PROFILE_SK).await?.map(from_item).transpose()
    }

    async fn account_for_token(&self, api_token_hash: &str) -> Result<Option<AccountId>, StoreError> {
        let Some(item) = self.get(token_pk(api_token_hash), TOKEN_SK).await? else {
            return Ok(None);
        };
        let id = item.get("account_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok());
        Ok(id)
    }

    async fn accounts_for_owner_email(&self, email: &Email) -> Result<Vec<AccountId>, StoreError> {
        let items = self
            .query_all(Some(GSI1), GSI1PK, owner_email_gsi1pk(&owner_email_key(email)), None, true)
            .await?;
        let mut found: Vec<AccountId> = items
            .iter()
            .filter_map(|i| i.get(PK).and_then(|v| v.as_s().ok()))
            .filter_map(|pk| pk.strip_prefix("ACCT#").and_then(|a| a.parse().ok()))
            .collect();
        found.sort();
        Ok(found)
    }

    async fn save_account(&self, account: &Account) -> Result<(), StoreError> {
        let item = account_item(&*sealed_account(self.keyring.as_ref(), account).await?)?;
        self.put_conditional(
            item,
            "#v = :v",
            &[("#v", "version")],
            vec![(":v", n(account.version.saturating_sub(1)))],
            Conflict::Version,
        )
        .await
    }

    async fn list_accounts(&self) -> Result<Vec<Account>, StoreError> {
        let items = self.query_all(Some(GSI2), GSI2PK, ACCOUNTS_GSI2PK.into(), None, true).await?;
        items.into_iter().map(from_item).collect()
    }

    async fn system_config(&self) -> Result<SystemConfig, StoreError> {
        Ok(self
            .get(SYSTEM_PK.into(), CONFIG_SK)
            .await?
            .map(from_item)
            .transpose()?
            .unwrap_or_default())
    }

    async fn save_system_config(&self, config: &SystemConfig) -> Result<(), StoreError> {
        self.put(keyed(config, SYSTEM_PK.into(), CONFIG_SK.into(), "system_config")?).await
    }
}

/// The account's item; its secrets must be sealed already (`sealing.rs`).
pub(super) fn account_item(account: &Account) -> Result<Item, StoreError> {
    let mut item = keyed(account, account_pk(account.id), PROFILE_SK.into(), "account")?;
    item.insert(GSI2PK.into(), s(ACCOUNTS_GSI2PK));
    item.insert(GSI2SK.into(), s(account.id.to_string()));
    // The owner-address index rides on the account item itself, so every save keeps it true.
    if let Some(email) = &account.settings.owner_email {
        item.insert(GSI1PK.into(), s(owner_email_gsi1pk(&owner_email_key(email))));
        item.insert(GSI1SK.into(), s(account_pk(account.id)));
    }
    Ok(item)
}

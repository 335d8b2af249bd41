//! [`CredentialStore`] on DynamoDB: the API token item (`TOKEN#{hash}`) carries `retires_at`
//! once rotated out; a rotation is one transaction of the new token, the old one's retirement
//! and the account item over its version.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::owner::account::Account;
use openloop_core::owner::credentials::TokenHolder;
use openloop_core::ports::CredentialStore;

use crate::keys::*;

use super::accounts::account_item;
use super::items::{n, s};
use super::{DynamoStore, Item};

fn build_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(format!("request not built: {e}").into())
}

#[async_trait]
impl CredentialStore for DynamoStore {
    async fn api_token(&self, api_token_hash: &str) -> Result<Option<TokenHolder>, StoreError> {
        let Some(item) = self.get(token_pk(api_token_hash), TOKEN_SK).await? else {
            return Ok(None);
        };
        let Some(account_id) = item.get("account_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()) else {
            return Ok(None);
        };
        let retires_at = item
            .get("retires_at")
            .and_then(|v| v.as_s().ok())
            .and_then(|v| v.parse::<Timestamp>().ok());
        Ok(Some(TokenHolder { account_id, retires_at }))
    }

    async fn rotate_api_token(&self, account: &Account, old_hash: &str, new_hash: &str, old_until: Timestamp) -> Result<(), StoreError> {
        let saved = Put::builder()
            .table_name(&self.table)
            .set_item(Some(account_item(
                &*openloop_core::ports::sealing::sealed_account(self.keyring.as_ref(), account).await?,
            )?))
            .condition_expression("#v = :v")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":v", n(account.version.saturating_sub(1)))
            .build()
            .map_err(build_error)?;
        let token: Item = HashMap::from([
            (PK.into(), s(token_pk(new_hash))),
            (SK.into(), s(TOKEN_SK)),
            (KIND.into(), s("api_token")),
            ("account_id".into(), s(account.id.to_string())),
        ]);
        let retire = Update::builder()
            .table_name(&self.table)
            .key(PK, s(token_pk(old_hash)))
            .key(SK, s(TOKEN_SK))
            .update_expression("SET retires_at = :t")
            .condition_expression("account_id = :a")
            .expression_attribute_values(":t", s(old_until.to_string()))
            .expression_attribute_values(":a", s(account.id.to_string()))
            .build()
            .map_err(build_error)?;
        self.transact(vec![
            (TransactWriteItem::builder().put(saved).build(), Some(Conflict::Version)),
            (self.put_new(token)?, Some(Conflict::AlreadyExists)),
            (TransactWriteItem::builder().update(retire).build(), Some(Conflict::Version)),
        ])
        .await
    }
}

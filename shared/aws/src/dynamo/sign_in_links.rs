//! [`SignInLinkStore`] on DynamoDB: one item per link (`SIGNIN#{token hash}`), removed by the
//! table's TTL a day after it expires; redeemed by one conditional update.

use std::collections::HashMap;

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::sign_in::SignInLink;
use openloop_core::ports::SignInLinkStore;

use crate::keys::*;

use super::items::{n, s};
use super::{DynamoStore, Item, unavailable};

#[async_trait]
impl SignInLinkStore for DynamoStore {
    async fn create_sign_in_link(&self, link: &SignInLink) -> Result<(), StoreError> {
        let expires = link.expires_at.as_second();
        let item: Item = HashMap::from([
            (PK.into(), s(sign_in_pk(&link.token_hash))),
            (SK.into(), s(SIGN_IN_SK)),
            (KIND.into(), s("sign_in_link")),
            ("account_id".into(), s(link.account_id.to_string())),
            ("expires_at".into(), n(expires)),
            ("used".into(), aws_sdk_dynamodb::types::AttributeValue::Bool(false)),
            (TTL.into(), n(expires + 86_400)),
        ]);
        self.put_conditional(item, "attribute_not_exists(PK)", &[], Vec::new(), Conflict::AlreadyExists)
            .await
    }

    async fn redeem_sign_in_link(&self, token_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError> {
        self.count();
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(sign_in_pk(token_hash)))
            .key(SK, s(SIGN_IN_SK))
            .update_expression("SET used = :true")
            .condition_expression("attribute_exists(PK) AND used = :false AND expires_at > :now")
            .expression_attribute_values(":true", aws_sdk_dynamodb::types::AttributeValue::Bool(true))
            .expression_attribute_values(":false", aws_sdk_dynamodb::types::AttributeValue::Bool(false))
            .expression_attribute_values(":now", n(now.as_second()))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
            .send()
            .await;
        match out {
            Ok(out) => Ok(out
                .attributes
                .and_then(|a| a.get("account_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))),
            // Unknown, used or expired: the same answer.
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(None),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn sign_in_link_account(&self, token_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError> {
        let Some(item) = self.get(sign_in_pk(token_hash), SIGN_IN_SK).await? else {
            return Ok(None);
        };
        let used = item.get("used").and_then(|v| v.as_bool().ok()).copied().unwrap_or(true);
        let expires = item
            .get("expires_at")
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(i64::MIN);
        if used || expires <= now.as_second() {
            return Ok(None);
        }
        Ok(item.get("account_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))
    }
}
